package io.ehrelay.testing;

import java.util.Properties;

/** Factory properties for tests, written as name, value, name, value… */
public final class TestProperties {

    private TestProperties() {
    }

    public static Properties of(String... namesAndValues) {
        if (namesAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("names and values come in pairs");
        }
        Properties p = new Properties();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            p.setProperty(namesAndValues[i], namesAndValues[i + 1]);
        }
        return p;
    }
}
