package io.ehrelay.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Every shared metric name is one that {@code docs/metrics.md} documents, and no two constants share a name. */
class MetricNamesTest {

    @Test
    void everyNameIsDocumented_once() throws Exception {
        String doc = new String(Files.readAllBytes(Path.of("..", "docs", "metrics.md")), StandardCharsets.UTF_8);
        List<String> names = new ArrayList<>();
        for (Field f : MetricNames.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
                names.add((String) f.get(null));
            }
        }
        assertThat(names).hasSizeGreaterThan(10).doesNotHaveDuplicates();
        for (String name : names) {
            assertThat(doc).as("docs/metrics.md documents %s", name).contains("`" + name + "`");
        }
    }
}
