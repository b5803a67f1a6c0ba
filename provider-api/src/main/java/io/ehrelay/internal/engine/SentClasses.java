package io.ehrelay.internal.engine;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import io.ehrelay.internal.codec.AllowList;
import io.ehrelay.internal.codec.ClassWatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The classes this node serializes, per cache: the first class its own allow-list refuses is an ERROR on the
 * writing node (once per class and cache, with the {@code allowedClasses} that admits it); with
 * {@code learnAllowedClasses=true} every class sent beyond the JDK defaults is recorded and offered as one setting
 * ({@link #learnedSetting()}). Receivers never relax (docs/configuration.md). Thread-safe; one set lookup per
 * class written.
 */
final class SentClasses {

    private static final Logger LOG = LoggerFactory.getLogger(SentClasses.class);
    private static final AllowList JDK_DEFAULTS = AllowList.withDefaults(Collections.<String>emptyList());

    private final AllowList allowList;
    private final boolean learn;
    private final ConcurrentHashMap<String, ClassWatch> watches = new ConcurrentHashMap<>();
    private final Set<String> learned = ConcurrentHashMap.newKeySet();

    SentClasses(AllowList allowList, boolean learn) {
        this.allowList = allowList;
        this.learn = learn;
    }

    /** The watch for one cache's events (one per cache, kept). */
    ClassWatch forCache(String cacheName) {
        ClassWatch w = watches.get(cacheName);
        return w != null ? w : watches.computeIfAbsent(cacheName, this::newWatch);
    }

    private ClassWatch newWatch(String cacheName) {
        Set<Class<?>> seen = ConcurrentHashMap.newKeySet();
        return type -> {
            // a lock-free read first: Java 8's ConcurrentHashMap locks its bin on every add, present or not
            if (!seen.contains(type) && seen.add(type)) {
                firstSent(cacheName, type);
            }
        };
    }

    private void firstSent(String cacheName, Class<?> type) {
        Class<?> c = type;
        while (c.isArray()) {
            c = c.getComponentType();
        }
        if (c.isPrimitive()) {
            return;
        }
        String name = c.getName();
        if (learn && !JDK_DEFAULTS.allows(name)) {
            learned.add(name);
        }
        if (!allowList.allows(name)) {
            LOG.error("ehrelay: cache '{}' replicates class {}, which allowedClasses does not admit: nodes with this "
                    + "setting will not apply these events (they remove the entry instead, so they miss). Set on "
                    + "every node's cacheManagerPeerProviderFactory: {}", cacheName, name,
                    allowList.settingWith(Collections.singletonList(allowList.additionFor(name))));
        }
    }

    /** Whether {@code learnAllowedClasses} is on. */
    boolean learning() {
        return learn;
    }

    /**
     * The {@code allowedClasses} setting that admits every class sent so far beyond the JDK defaults (a preset
     * in place of the classes it admits), or an empty string when nothing beyond them was sent.
     */
    String learnedSetting() {
        Set<String> entries = new LinkedHashSet<>();
        Set<String> exact = new TreeSet<>();
        for (String name : new TreeSet<>(learned)) {
            String preset = AllowList.presetAdmitting(name);
            if (preset != null) {
                entries.add(preset);
            } else {
                exact.add(name);
            }
        }
        entries.addAll(exact);
        return entries.isEmpty() ? "" : "allowedClasses=" + String.join("|", entries);
    }
}
