package io.ehrelay.internal.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.NotCompliantMBeanException;
import javax.management.StandardMBean;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricFilter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.SlidingWindowReservoir;
import com.codahale.metrics.Timer;
import io.ehrelay.metrics.ObjectNames;
import io.ehrelay.spi.TransportMetrics;
import org.slf4j.LoggerFactory;

/**
 * The metrics of one CacheManager's replication, and of each of its caches, in one Dropwizard
 * {@link MetricRegistry} whose metric names are the JMX ObjectNames of {@link ObjectNames}. Counts recorded on
 * a {@link CacheMetrics} also add to the CacheManager's totals. Thread-safe.
 */
public final class ReplicationMetrics implements TransportMetrics {

    /** Latency and size distributions cover the most recent {@value #WINDOW} measurements. */
    static final int WINDOW = 2048;

    private final String cacheManager;
    private final String transport;
    private final MetricRegistry registry = new MetricRegistry();
    private final Map<String, CacheMetrics> caches = new ConcurrentHashMap<>();
    private final Map<MBeanServer, JmxExport> reporters = new ConcurrentHashMap<>();

    final DeferredMeter enqueued;
    final Meter sent;
    final Meter received;
    final Meter applied;
    final Meter dropped;
    final Meter failed;
    final Meter rejected;
    final Meter applyFailed;
    final Meter unencodable;
    final Meter notReplicated;
    final Meter invalidated;
    final Meter unknownCache;
    final Counter bytesSent;
    final Counter bytesReceived;
    final Counter queueEvents;
    final Counter queueBytes;
    final EventTimer sendLatency;
    final Timer syncRoundTrip;
    final EventTimer applyLatency;
    final Histogram batchEvents;
    final Histogram batchBytes;
    final Meter bootstraps;
    final Meter bootstrapFailures;
    final Timer bootstrapDuration;
    final Meter malformedFrames;

    /** MBeans with operations (not metrics), registered with every server the metrics are. */
    private final Map<String, StandardMBean> operations = new ConcurrentHashMap<>();

    public ReplicationMetrics(String cacheManager, String transport) {
        this.cacheManager = cacheManager;
        this.transport = transport;
        enqueued = deferredMeter(registry, name("enqueued"));
        sent = registry.meter(name("sent"));
        received = registry.meter(name("received"));
        applied = registry.meter(name("applied"));
        dropped = registry.meter(name("dropped"));
        failed = registry.meter(name("failed"));
        rejected = registry.meter(name("rejected"));
        applyFailed = registry.meter(name("applyFailed"));
        unencodable = registry.meter(name("unencodable"));
        notReplicated = registry.meter(name("notReplicated"));
        invalidated = registry.meter(name("invalidated"));
        unknownCache = registry.meter(name("unknownCache"));
        malformedFrames = registry.meter(name("malformedFrames"));
        bytesSent = registry.counter(name("bytesSent"));
        bytesReceived = registry.counter(name("bytesReceived"));
        queueEvents = registry.counter(name("queueEvents"));
        queueBytes = registry.counter(name("queueBytes"));
        sendLatency = eventTimer(registry, name("sendLatency"));
        syncRoundTrip = timer(registry, name("syncRoundTrip"));
        applyLatency = eventTimer(registry, name("applyLatency"));
        batchEvents = registry.register(name("batchEvents"), new Histogram(new SlidingWindowReservoir(WINDOW)));
        batchBytes = registry.register(name("batchBytes"), new Histogram(new SlidingWindowReservoir(WINDOW)));
        bootstraps = registry.meter(name("bootstraps"));
        bootstrapFailures = registry.meter(name("bootstrapFailures"));
        bootstrapDuration = timer(registry, name("bootstrapDuration"));
    }

    /**
     * A timer over a sliding window of recent measurements: O(1) per update (these are updated per event on
     * the replication path), and percentiles that describe now rather than the whole uptime.
     */
    static Timer timer(MetricRegistry registry, String name) {
        return registry.register(name, new Timer(new SlidingWindowReservoir(WINDOW)));
    }

    /** A meter marked once per event on the application's thread ({@link DeferredMeter}). */
    static DeferredMeter deferredMeter(MetricRegistry registry, String name) {
        return registry.register(name, new DeferredMeter());
    }

    /** A timer whose count and rates are of events, and whose samples may each stand for several. */
    static EventTimer eventTimer(MetricRegistry registry, String name) {
        return registry.register(name, new EventTimer());
    }

    String name(String metric) {
        return ObjectNames.cacheManagerMetric(cacheManager, transport, metric);
    }

    public String cacheManagerName() {
        return cacheManager;
    }

    public String transport() {
        return transport;
    }

    /** The registry, for applications that attach their own reporters. */
    public MetricRegistry registry() {
        return registry;
    }

    /** The metrics of one cache, registered on first use. */
    public CacheMetrics cache(String cacheName) {
        CacheMetrics m = caches.get(cacheName);
        return m != null ? m : caches.computeIfAbsent(cacheName, n -> new CacheMetrics(this, n));
    }

    /** Registers a CacheManager-level gauge. */
    @Override
    public <T> void gauge(String metric, Supplier<T> value) {
        registry.register(name(metric), (Gauge<T>) value::get);
    }

    /** Registers (or returns the existing) CacheManager-level meter: for transport-specific counts. */
    @Override
    public Count count(String metric) {
        Meter m = meter(metric);
        return new Count() {
            @Override
            public void mark() {
                m.mark();
            }

            @Override
            public long value() {
                return m.getCount();
            }
        };
    }

    public Meter meter(String metric) {
        return registry.meter(name(metric));
    }

    public void markBytesSent(long n) {
        bytesSent.inc(n);
    }

    public void markBytesReceived(long n) {
        bytesReceived.inc(n);
    }

    /** A frame a transport could not parse (bad magic, oversized, truncated): nothing of it was applied. */
    @Override
    public void markMalformedFrame() {
        malformedFrames.mark();
        rejected.mark();
    }

    /** An event for a cache this node does not have: dropped, never creates the cache. */
    public void markUnknownCache() {
        unknownCache.mark();
        dropped.mark();
    }

    /** An event rejected (allow-list or limits) whose cache is unknown here, so only the total counts it. */
    @Override
    public void markRejected() {
        rejected.mark();
    }

    public void markBatch(int events, int bytes) {
        batchEvents.update(events);
        batchBytes.update(bytes);
    }

    /** Exposes every metric, present and future, as an MBean of {@code server}; idempotent per server. */
    public void registerWith(MBeanServer server) {
        reporters.computeIfAbsent(server, s -> {
            for (Map.Entry<String, StandardMBean> e : operations.entrySet()) {
                registerOperations(s, e.getKey(), e.getValue());
            }
            return JmxExport.start(registry, s);
        });
    }

    /** Adds an MBean with operations, named {@code objectName}, to every server the metrics are exposed on. */
    public <T> void addOperations(String objectName, T implementation, Class<T> type) {
        StandardMBean bean;
        try {
            bean = new StandardMBean(implementation, type);
        } catch (NotCompliantMBeanException e) {
            throw new IllegalArgumentException(e);
        }
        operations.put(objectName, bean);
        for (MBeanServer server : reporters.keySet()) {
            registerOperations(server, objectName, bean);
        }
    }

    private static void registerOperations(MBeanServer server, String objectName, StandardMBean b) {
        try {
            server.registerMBean(b, ObjectNames.of(objectName));
        } catch (JMException | RuntimeException e) {
            LoggerFactory.getLogger(ReplicationMetrics.class).warn("ehrelay: could not register the MBean "
                    + "{}: {}", objectName, e.toString());
        }
    }

    /** Unregisters every MBean and removes all metrics. */
    public void close() {
        for (MBeanServer server : reporters.keySet()) {
            for (String name : operations.keySet()) {
                try {
                    server.unregisterMBean(ObjectNames.of(name));
                } catch (JMException | RuntimeException e) {
                    // not registered there, or already gone
                }
            }
        }
        operations.clear();
        reporters.values().forEach(JmxExport::stop);
        reporters.clear();
        registry.removeMatching(MetricFilter.ALL);
        caches.clear();
    }
}
