package io.ehrelay.internal.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.WeakHashMap;

import net.sf.ehcache.CacheManager;
import net.sf.ehcache.config.CacheConfiguration;
import net.sf.ehcache.config.Configuration;
import net.sf.ehcache.config.FactoryConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds replication factories of different families in one CacheManager's configuration (stock RMI, the old
 * JGroups module, each ehrelay transport), which Ehcache accepts without a word and which then fail at every
 * flush or find no node; logs each mismatch once as an ERROR naming the cache, the class found and the class to
 * put there. Each configuration is checked once, by whichever ehrelay factory runs first (docs/migration.md,
 * "Mixed clusters"). Thread-safe.
 */
public final class MixedFactories {

    private static final Logger LOG = LoggerFactory.getLogger(MixedFactories.class);

    /** The configurations checked already (identity: {@link Configuration} does not override equals). */
    private static final Map<Configuration, Boolean> CHECKED = Collections.synchronizedMap(new WeakHashMap<>());

    /** The four kinds of replication factory, by the suffix every family gives their class names. */
    enum Role {
        PROVIDER("CacheManagerPeerProviderFactory", "cacheManagerPeerProviderFactory"),
        LISTENER("CacheManagerPeerListenerFactory", "cacheManagerPeerListenerFactory"),
        REPLICATOR("CacheReplicatorFactory", "cacheEventListenerFactory"),
        BOOTSTRAP("BootstrapCacheLoaderFactory", "bootstrapCacheLoaderFactory");

        final String suffix;
        final String element;

        Role(String suffix, String element) {
            this.suffix = suffix;
            this.element = element;
        }
    }

    private MixedFactories() {
    }

    /** Checks the configuration of {@code cacheManager} (once per configuration). */
    public static void check(CacheManager cacheManager) {
        if (cacheManager != null) {
            check(cacheManager.getName(), cacheManager.getConfiguration());
        }
    }

    /**
     * For the replicator and bootstrap factories, which see only their properties: checks the CacheManagers this
     * thread is constructing (it holds their monitor), if any.
     */
    public static void checkConstructing() {
        for (CacheManager cm : CacheManager.ALL_CACHE_MANAGERS) {
            if (Thread.holdsLock(cm)) {
                check(cm);
            }
        }
    }

    private static void check(String cacheManagerName, Configuration configuration) {
        if (configuration == null || CHECKED.put(configuration, Boolean.TRUE) != null) {
            return;
        }
        try {
            for (String line : problems(cacheManagerName, configuration)) {
                LOG.error(line);
            }
        } catch (RuntimeException e) {
            // a configuration API that differs from the one read here: the check is a help, never a failure
            LOG.debug("ehrelay: could not compare the replication factories of CacheManager {}", cacheManagerName, e);
        }
    }

    /** One line per mismatch (caches with the same one share it); empty when the families agree. */
    static List<String> problems(String cacheManagerName, Configuration configuration) {
        List<String> providers = new ArrayList<>();
        for (FactoryConfiguration<?> f : configuration.getCacheManagerPeerProviderFactoryConfiguration()) {
            String family = family(f.getFullyQualifiedClassPath(), Role.PROVIDER);
            if (family != null && !providers.contains(family)) {
                providers.add(family);
            }
        }
        String cm = "CacheManager '" + cacheManagerName + "'";
        // (class found, role) -> the caches that use it without a provider of its family
        Map<String, List<String>> strays = new LinkedHashMap<>();
        Map<String, Role> roles = new LinkedHashMap<>();
        for (Map.Entry<String, CacheConfiguration> c : caches(configuration).entrySet()) {
            for (Object o : c.getValue().getCacheEventListenerConfigurations()) {
                stray((FactoryConfiguration<?>) o, Role.REPLICATOR, c.getKey(), providers, strays, roles);
            }
            FactoryConfiguration<?> bootstrap = c.getValue().getBootstrapCacheLoaderFactoryConfiguration();
            if (bootstrap != null) {
                stray(bootstrap, Role.BOOTSTRAP, c.getKey(), providers, strays, roles);
            }
        }
        List<String> lines = new ArrayList<>();
        for (Map.Entry<String, List<String>> s : strays.entrySet()) {
            String cls = s.getKey();
            Role role = roles.get(cls);
            String family = family(cls, role);
            String consequence = role == Role.REPLICATOR ? "its puts are not replicated"
                    : "it does not bootstrap from peers";
            List<String> caches = s.getValue();
            String who = caches.size() == 1 ? caches.get(0) + " uses " : plural(caches) + " use ";
            if (caches.size() > 1) {
                consequence = consequence.replace("its puts are", "their puts are").replace("it does", "they do");
            }
            if (providers.isEmpty()) {
                lines.add("ehrelay: " + who + cls + " but " + cm + " has no cacheManagerPeerProviderFactory: "
                        + consequence + "; add a cacheManagerPeerProviderFactory of class " + family
                        + Role.PROVIDER.suffix);
            } else {
                String ehrelayProvider = firstEhrelay(providers);
                String fix = ehrelayProvider != null
                        ? "use " + ehrelayProvider + role.suffix
                        : "use " + family + Role.PROVIDER.suffix + " as its cacheManagerPeerProviderFactory";
                lines.add("ehrelay: " + who + cls + " but " + cm + " replicates with " + providerList(providers)
                        + ": " + consequence + "; " + fix);
            }
        }
        for (FactoryConfiguration<?> f : configuration.getCacheManagerPeerListenerFactoryConfigurations()) {
            String cls = f.getFullyQualifiedClassPath();
            String family = family(cls, Role.LISTENER);
            if (family == null || providers.isEmpty() || providers.contains(family)) {
                continue; // an ehrelay listener without any provider is refused when the node starts
            }
            String ehrelayProvider = firstEhrelay(providers);
            String fix;
            if (ehrelayProvider == null) {
                fix = "use " + family + Role.PROVIDER.suffix + " as its cacheManagerPeerProviderFactory";
            } else if (ehrelayProvider.endsWith("JGroups")) {
                fix = "remove it (JGroups has no cacheManagerPeerListenerFactory: its channel listens)";
            } else {
                fix = "use " + ehrelayProvider + Role.LISTENER.suffix;
            }
            lines.add("ehrelay: " + cm + " has the cacheManagerPeerListenerFactory " + cls + " but replicates with "
                    + providerList(providers) + ": peers cannot replicate to it; " + fix);
        }
        return lines;
    }

    private static void stray(FactoryConfiguration<?> f, Role role, String cache, List<String> providers,
                              Map<String, List<String>> strays, Map<String, Role> roles) {
        String cls = f.getFullyQualifiedClassPath();
        String family = family(cls, role);
        if (family == null || providers.contains(family)) {
            return;
        }
        strays.computeIfAbsent(cls, k -> new ArrayList<>()).add(cache);
        roles.put(cls, role);
    }

    /** The configured caches, by name, then the default cache ({@code defaultCache}), as a message names them. */
    private static Map<String, CacheConfiguration> caches(Configuration configuration) {
        Map<String, CacheConfiguration> out = new LinkedHashMap<>();
        // by name: Ehcache keeps them in a hash map
        for (Map.Entry<String, CacheConfiguration> c
                : new TreeMap<>(configuration.getCacheConfigurations()).entrySet()) {
            out.put("cache '" + c.getKey() + "'", c.getValue());
        }
        if (configuration.getDefaultCacheConfiguration() != null) {
            out.put("defaultCache", configuration.getDefaultCacheConfiguration());
        }
        return out;
    }

    private static String plural(List<String> caches) {
        List<String> names = new ArrayList<>();
        for (String c : caches) {
            names.add(c.startsWith("cache ") ? c.substring("cache ".length()) : c);
        }
        return "caches " + String.join(", ", names);
    }

    /**
     * The family of a replication factory class: its name without the role's suffix, when it is stock Ehcache's
     * ({@code net.sf.ehcache.distribution.}) or ehrelay's ({@code io.ehrelay.}); else {@code null} (an
     * application's own listener, say).
     */
    static String family(String cls, Role role) {
        if (cls == null || !cls.endsWith(role.suffix)) {
            return null;
        }
        String family = cls.substring(0, cls.length() - role.suffix.length());
        return family.startsWith("io.ehrelay.") || family.startsWith("net.sf.ehcache.distribution.") ? family : null;
    }

    private static String firstEhrelay(List<String> providers) {
        for (String p : providers) {
            if (p.startsWith("io.ehrelay.")) {
                return p;
            }
        }
        return null;
    }

    private static String providerList(List<String> providers) {
        List<String> classes = new ArrayList<>();
        for (String p : providers) {
            classes.add(p + Role.PROVIDER.suffix);
        }
        return String.join(" and ", classes);
    }
}
