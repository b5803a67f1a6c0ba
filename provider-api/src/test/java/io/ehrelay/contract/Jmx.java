package io.ehrelay.contract;

import java.lang.management.ManagementFactory;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import io.ehrelay.metrics.ObjectNames;

/** Reads ehrelay metrics the way an operator does: by ObjectName from the platform MBeanServer. */
public final class Jmx {

    private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();

    private final String cacheManager;
    private final String transport;

    public Jmx(String cacheManager, String transport) {
        this.cacheManager = cacheManager;
        this.transport = transport;
    }

    public ObjectName cacheName(String cache, String metric) {
        return ObjectNames.of(ObjectNames.cacheMetric(cacheManager, transport, cache, metric));
    }

    public ObjectName managerName(String metric) {
        return ObjectNames.of(ObjectNames.cacheManagerMetric(cacheManager, transport, metric));
    }

    public long cacheCount(String cache, String metric) {
        return ((Number) attribute(cacheName(cache, metric), "Count")).longValue();
    }

    public long managerCount(String metric) {
        return ((Number) attribute(managerName(metric), "Count")).longValue();
    }

    public Number cacheGauge(String cache, String metric) {
        return (Number) attribute(cacheName(cache, metric), "Value");
    }

    public Number managerGauge(String metric) {
        return (Number) attribute(managerName(metric), "Value");
    }

    public static Object attribute(ObjectName name, String attribute) {
        try {
            return SERVER.getAttribute(name, attribute);
        } catch (Exception e) {
            throw new AssertionError("cannot read " + name + " " + attribute + ": " + e, e);
        }
    }

    public static boolean registered(ObjectName name) {
        return SERVER.isRegistered(name);
    }

    public static Set<ObjectName> query(String pattern) {
        try {
            return SERVER.queryNames(new ObjectName(pattern), null);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
