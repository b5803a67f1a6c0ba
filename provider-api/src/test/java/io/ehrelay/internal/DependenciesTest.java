package io.ehrelay.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;

import net.sf.ehcache.CacheException;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

class DependenciesTest {

    @Test
    void theBuiltClassPath_hasEverythingEhrelayCalls() {
        Dependencies.check(Dependencies.NEEDS, getClass().getClassLoader());
    }

    @Test
    void aJarWithoutAMethodWeCall_failsAtStartNamingTheJarAndTheFix() {
        Dependencies.Need missingMethod = new Dependencies.Need("org.slf4j:slf4j-api 1.6 or later",
                "org.slf4j.LoggerFactory", "getLoggerThatDoesNotExist", "java.lang.Class");
        assertThatThrownBy(() -> Dependencies.check(Arrays.asList(missingMethod), getClass().getClassLoader()))
                .isInstanceOf(CacheException.class)
                .hasMessageStartingWith("ehrelay cannot start: it needs org.slf4j:slf4j-api 1.6 or later")
                .hasMessageContaining("slf4j-api") // the jar's location
                .hasMessageContaining(".jar")
                .hasMessageContaining("org.slf4j.LoggerFactory.getLoggerThatDoesNotExist(java.lang.Class)");
    }

    @Test
    void aMissingLibrary_isNamedWithTheDependencyToAdd() {
        Dependencies.Need absent = new Dependencies.Need("com.example:absent 1.0", "com.example.Absent", null);
        Dependencies.Need alsoAbsent = new Dependencies.Need("com.example:absent 1.0", "com.example.Other", null);
        assertThatThrownBy(() -> Dependencies.check(Arrays.asList(absent, alsoAbsent), getClass().getClassLoader()))
                .isInstanceOf(CacheException.class)
                .hasMessage("ehrelay cannot start: it needs com.example:absent 1.0, but com.example.Absent is not on "
                        + "the class path: add that dependency to the application");
    }

    @Test
    void theJarOfAClass_isNamed() {
        assertThat(Dependencies.where(Logger.class)).contains("slf4j-api");
    }
}
