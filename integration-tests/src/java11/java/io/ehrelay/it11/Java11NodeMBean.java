package io.ehrelay.it11;

/** What the Java 11 container suite asks of a {@link Java11Node}, over remote JMX. */
public interface Java11NodeMBean {

    /** {@code java.version} of the JVM the node runs on. */
    String getJavaVersion();

    void put(String cache, String key, String value);

    /** Puts a value of a class no allow-list admits ({@link Unlisted}). */
    void putUnlisted(String cache, String key);

    /** The value held, its {@code toString()}; {@code null} when absent. */
    String get(String cache, String key);

    void remove(String cache, String key);

    int size(String cache);

    /** How many peers Ehcache's provider lists for the cache (what a health check asks). */
    int peers(String cache);
}
