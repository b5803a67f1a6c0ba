package io.ehrelay.internal.config;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import io.ehrelay.config.InvalidConfigurationException;
import net.sf.ehcache.config.CacheConfiguration;
import net.sf.ehcache.config.Configuration;
import net.sf.ehcache.config.FactoryConfiguration;

/**
 * Finds a property given twice in the {@code properties} attribute of an ehrelay factory. Ehcache hands a factory
 * a {@link java.util.Properties} in which the last value silently wins ({@code queueMaxEvents=100000, ...,
 * queueMaxEvents=10}); the raw attribute, kept in the CacheManager's {@link Configuration}, still shows both.
 * Checked once per CacheManager, when its peer provider is created (before any cache is): the provider and
 * listener factories and the replicator and bootstrap factories of every configured cache and the default cache.
 */
public final class RepeatedKeys {

    private RepeatedKeys() {
    }

    /**
     * @param factoryPrefix the package whose factories are checked ({@code io.ehrelay.})
     * @throws InvalidConfigurationException naming the factory, where it is configured and the repeated property
     */
    public static void check(Configuration configuration, String factoryPrefix) {
        if (configuration == null) {
            return;
        }
        for (FactoryConfiguration<?> f : configuration.getCacheManagerPeerProviderFactoryConfiguration()) {
            check(f, "cacheManagerPeerProviderFactory", factoryPrefix);
        }
        for (FactoryConfiguration<?> f : configuration.getCacheManagerPeerListenerFactoryConfigurations()) {
            check(f, "cacheManagerPeerListenerFactory", factoryPrefix);
        }
        List<Map.Entry<String, CacheConfiguration>> caches = new ArrayList<>(
                configuration.getCacheConfigurations().entrySet());
        if (configuration.getDefaultCacheConfiguration() != null) {
            caches.add(new AbstractMap.SimpleEntry<>("(defaultCache)",
                    configuration.getDefaultCacheConfiguration()));
        }
        for (Map.Entry<String, CacheConfiguration> c : caches) {
            for (Object o : c.getValue().getCacheEventListenerConfigurations()) {
                check((FactoryConfiguration<?>) o, "cacheEventListenerFactory of cache " + c.getKey(), factoryPrefix);
            }
            FactoryConfiguration<?> bootstrap = c.getValue().getBootstrapCacheLoaderFactoryConfiguration();
            if (bootstrap != null) {
                check(bootstrap, "bootstrapCacheLoaderFactory of cache " + c.getKey(), factoryPrefix);
            }
        }
    }

    private static void check(FactoryConfiguration<?> f, String where, String factoryPrefix) {
        String cls = f.getFullyQualifiedClassPath();
        String raw = f.getProperties();
        if (cls == null || !cls.startsWith(factoryPrefix) || raw == null) {
            return;
        }
        String repeated = repeated(raw, f.getPropertySeparator());
        if (repeated != null) {
            throw new InvalidConfigurationException("ehrelay " + cls.substring(cls.lastIndexOf('.') + 1) + " ("
                    + where + "): property '" + repeated + "' is given more than once; give it once (Ehcache would "
                    + "keep only the last value)");
        }
    }

    /** The first key given twice in a raw {@code properties} attribute, or {@code null}. */
    static String repeated(String raw, String separator) {
        String sep = separator == null || separator.isEmpty() ? "," : separator;
        Set<String> seen = new HashSet<>();
        for (String part : raw.split(Pattern.quote(sep))) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            String key = key(p);
            if (!key.isEmpty() && !seen.add(key)) {
                return key;
            }
        }
        return null;
    }

    /**
     * The key of one {@code name=value} part, as {@link java.util.Properties} reads it: up to {@code =}, {@code :}
     * or a blank.
     */
    static String key(String part) {
        int end = 0;
        while (end < part.length() && "=: \t".indexOf(part.charAt(end)) < 0) {
            end++;
        }
        return part.substring(0, end);
    }
}
