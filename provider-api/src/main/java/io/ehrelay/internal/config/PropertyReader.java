package io.ehrelay.internal.config;

import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import io.ehrelay.config.InvalidConfigurationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Strict reader over the {@link Properties} Ehcache hands to a factory: every getter records its name as known,
 * and {@link #rejectUnknown()} fails on any other (a typo is an error, not a setting silently ignored); renamed
 * properties keep working through {@link #alias}. Keys and values are trimmed; an empty value means the default, as
 * in stock Ehcache (a typed one says so in a WARN). Not thread-safe: one reader per factory call.
 */
public final class PropertyReader {

    private static final Logger LOG = LoggerFactory.getLogger(PropertyReader.class);
    /** Old names already logged in this JVM ({@code old→new}): each is announced once. */
    private static final Set<String> ANNOUNCED = ConcurrentHashMap.newKeySet();

    private final String owner;
    private final Map<String, String> values = new LinkedHashMap<>();
    private final TreeSet<String> known = new TreeSet<>();
    /** New name → the old name the user wrote it as, for error messages. */
    private final Map<String, String> writtenAs = new HashMap<>();
    /** Typed properties given empty whose default was used, each announced once. */
    private final Set<String> emptyDefaults = new LinkedHashSet<>();

    /**
     * @param owner      who reads the properties, used in error messages (e.g. the factory's simple name)
     * @param properties the properties from {@code ehcache.xml}; {@code null} (no properties attribute) is empty
     */
    public PropertyReader(String owner, Properties properties) {
        this.owner = owner;
        if (properties != null) {
            for (String name : properties.stringPropertyNames()) {
                String value = properties.getProperty(name);
                values.put(name.trim(), value == null ? "" : value.trim());
            }
        }
    }

    public String owner() {
        return owner;
    }

    /**
     * Accepts {@code oldName}, a property's former name, for {@code newName}; call before reading {@code newName}.
     * A value given under the old name is read as the new one, and the first use of each old name in the JVM logs
     * one INFO naming the new one. Giving both names fails.
     *
     * @throws InvalidConfigurationException when both names are given
     */
    public PropertyReader alias(String oldName, String newName) {
        if (!values.containsKey(oldName)) {
            return this;
        }
        if (values.containsKey(newName)) {
            throw new InvalidConfigurationException("ehrelay " + owner + ": properties '" + oldName + "' and '"
                    + newName + "' are both given, but '" + oldName + "' is the former name of '" + newName
                    + "'; give only '" + newName + "'");
        }
        values.put(newName, values.remove(oldName));
        writtenAs.put(newName, oldName);
        announceRename(oldName, newName);
        return this;
    }

    /** Logs the rename at INFO the first time this JVM meets the old name; returns whether it did. */
    static boolean announceRename(String oldName, String newName) {
        if (!ANNOUNCED.add(oldName + "->" + newName)) {
            return false;
        }
        LOG.info("ehrelay: property {} is now called {}; {} still works until the next minor version",
                oldName, newName, oldName);
        return true;
    }

    /** Returns the raw value, or {@code null} when the property is absent or blank. */
    public String string(String name) {
        known.add(name);
        String v = values.get(name);
        return v == null || v.isEmpty() ? null : v;
    }

    /** A path that must name a readable file (e.g. a key store), or {@code null} when the property is absent. */
    public String file(String name, String what) {
        String v = string(name);
        if (v != null && !new File(v).isFile()) {
            throw invalid(name, v, "the path of a readable " + what + " file");
        }
        return v;
    }

    /**
     * The raw value of a typed property, or {@code null} when it is absent or empty. An empty value is Ehcache's
     * way of leaving a property unset ({@code socketTimeoutMillis=} in its own distributed configurations): the
     * caller uses its default and calls {@link #usedDefault} with it.
     */
    private String typed(String name) {
        known.add(name);
        String v = values.get(name);
        return v == null || v.isEmpty() ? null : v;
    }

    /**
     * The caller fell back on {@code defaultValue} for {@code name}: when the property was given empty, one WARN
     * (per property and reader) names it and the default used.
     */
    private void usedDefault(String name, Object defaultValue) {
        String v = values.get(name);
        if (v != null && v.isEmpty() && emptyDefaults.add(name)) {
            LOG.warn("ehrelay: property '{}' of {} is empty; using its default {}", written(name), owner,
                    defaultValue);
        }
    }

    /** The typed properties given empty that took their default, in the order they were read. */
    public Set<String> emptyDefaults() {
        return Collections.unmodifiableSet(emptyDefaults);
    }

    /**
     * Logs the WARN of a typed property given empty, for a factory that settles the default itself before a
     * reader sees its properties (e.g. RMI's {@code peerTimeoutMillis}).
     */
    public static void warnEmpty(String owner, String name, Object defaultValue) {
        LOG.warn("ehrelay: property '{}' of {} is empty; using its default {}", name, owner, defaultValue);
    }

    public String string(String name, String defaultValue) {
        String v = string(name);
        return v == null ? defaultValue : v;
    }

    public boolean bool(String name, boolean defaultValue) {
        String v = typed(name);
        if (v == null) {
            usedDefault(name, defaultValue);
            return defaultValue;
        }
        if (v.equalsIgnoreCase("true")) {
            return true;
        }
        if (v.equalsIgnoreCase("false")) {
            return false;
        }
        throw invalid(name, v, "true or false");
    }

    public int intIn(String name, int defaultValue, int min, int max) {
        return (int) longIn(name, defaultValue, min, max);
    }

    public long longIn(String name, long defaultValue, long min, long max) {
        String accepted = "a whole number from " + min + " to " + max;
        String v = typed(name);
        if (v == null) {
            usedDefault(name, defaultValue);
            return defaultValue;
        }
        long parsed;
        try {
            parsed = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw invalid(name, v, accepted);
        }
        if (parsed < min || parsed > max) {
            throw invalid(name, v, accepted);
        }
        return parsed;
    }

    /** A byte size: a whole number of bytes, or with a suffix {@code k}, {@code m} or {@code g} (powers of 1024). */
    public long bytesIn(String name, long defaultValue, long min, long max) {
        String accepted = "a byte size from " + min + " to " + max + " bytes, e.g. 65536, 512k, 64m or 1g";
        String v = typed(name);
        if (v == null) {
            usedDefault(name, byteSize(defaultValue));
            return defaultValue;
        }
        String digits = v.toLowerCase(Locale.ROOT);
        long unit = 1;
        char last = digits.charAt(digits.length() - 1);
        if (last == 'k' || last == 'm' || last == 'g') {
            unit = last == 'k' ? 1L << 10 : last == 'm' ? 1L << 20 : 1L << 30;
            digits = digits.substring(0, digits.length() - 1).trim();
        }
        long parsed;
        try {
            parsed = Math.multiplyExact(Long.parseLong(digits), unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw invalid(name, v, accepted);
        }
        if (parsed < min || parsed > max) {
            throw invalid(name, v, accepted);
        }
        return parsed;
    }

    /** One of the given lower-case words, compared case-insensitively. */
    public <E extends Enum<E>> E choice(String name, E defaultValue, Class<E> type) {
        List<String> words = new ArrayList<>();
        for (E e : type.getEnumConstants()) {
            words.add(e.name().toLowerCase(Locale.ROOT));
        }
        String accepted = "one of " + String.join(", ", words);
        String v = typed(name);
        if (v == null) {
            usedDefault(name, defaultValue == null ? "(none)" : defaultValue.name().toLowerCase(Locale.ROOT));
            return defaultValue;
        }
        for (E e : type.getEnumConstants()) {
            if (e.name().equalsIgnoreCase(v)) {
                return e;
            }
        }
        throw invalid(name, v, accepted);
    }

    /** A list separated by {@code |} (the stock {@code rmiUrls} separator) or {@code ;}; blanks are dropped. */
    public List<String> list(String name) {
        String v = string(name);
        if (v == null) {
            return Collections.emptyList();
        }
        List<String> out = new ArrayList<>();
        for (String part : v.split("[|;]")) {
            String p = part.trim();
            if (!p.isEmpty()) {
                out.add(p);
            }
        }
        return out;
    }

    /** Marks names as known without reading them (e.g. accepted for compatibility, handled elsewhere). */
    public void accept(String... names) {
        Collections.addAll(known, names);
    }

    /** The properties given that no part read (yet), name → value: what {@link #rejectUnknown()} would name. */
    public Map<String, String> unread() {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : values.entrySet()) {
            if (!known.contains(e.getKey())) {
                out.put(e.getKey(), e.getValue());
            }
        }
        return out;
    }

    /** Fails if any property given was not read by anyone. Call after every part has read its properties. */
    public void rejectUnknown() {
        List<String> unknown = new ArrayList<>();
        for (String name : values.keySet()) {
            if (!known.contains(name)) {
                unknown.add(name);
            }
        }
        if (!unknown.isEmpty()) {
            throw new InvalidConfigurationException("ehrelay " + owner + ": unknown propert"
                    + (unknown.size() == 1 ? "y " : "ies ") + unknown + "; accepted properties are " + known);
        }
    }

    /** An error naming the property as the user wrote it (its old name, when given under one). */
    public InvalidConfigurationException invalid(String name, String value, String accepted) {
        return new InvalidConfigurationException("ehrelay " + owner + ": property '" + written(name) + "' has value '"
                + value + "'; expected " + accepted);
    }

    /** The name the user wrote for {@code name}: its old name, when given under one. */
    private String written(String name) {
        return writtenAs.containsKey(name) ? writtenAs.get(name) : name;
    }

    /** A byte size as users write it: {@code 64m} rather than {@code 67108864} when it is a whole unit. */
    static String byteSize(long bytes) {
        if (bytes > 0 && bytes % (1L << 30) == 0) {
            return (bytes >> 30) + "g";
        }
        if (bytes > 0 && bytes % (1L << 20) == 0) {
            return (bytes >> 20) + "m";
        }
        if (bytes > 0 && bytes % (1L << 10) == 0) {
            return (bytes >> 10) + "k";
        }
        return Long.toString(bytes);
    }
}
