package io.ehrelay.internal.metrics;

import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.MBeanRegistrationException;
import javax.management.MBeanServer;
import javax.management.NotCompliantMBeanException;
import javax.management.ObjectName;
import javax.management.StandardMBean;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.MetricRegistryListener;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import io.ehrelay.metrics.ObjectNames;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exposes every metric of a {@link MetricRegistry} — present and added later — as an MBean of one
 * {@link MBeanServer}, named by the metric's name (an ObjectName of {@link ObjectNames}), with the attributes
 * operators read from Dropwizard's JMX reporter (docs/metrics.md lists them). Written here rather than taken from
 * {@code metrics-jmx}, which exists only for metrics 4: this needs nothing of {@code metrics-core} beyond 3.0.
 * Public only because JMX introspects the MBean interfaces; not an API to call. Thread-safe.
 */
public final class JmxExport implements MetricRegistryListener {

    private static final Logger LOG = LoggerFactory.getLogger(JmxExport.class);
    private static final double DURATION_FACTOR = 1.0 / TimeUnit.MICROSECONDS.toNanos(1);
    private static final String RATE_UNIT = "events/second";
    private static final String DURATION_UNIT = TimeUnit.MICROSECONDS.toString().toLowerCase(Locale.US);

    private final MetricRegistry registry;
    private final MBeanServer server;
    private final Map<ObjectName, Boolean> registered = new ConcurrentHashMap<>();

    private JmxExport(MetricRegistry registry, MBeanServer server) {
        this.registry = registry;
        this.server = server;
    }

    /** Registers every metric of {@code registry} with {@code server}, and those added later, until {@link #stop}. */
    static JmxExport start(MetricRegistry registry, MBeanServer server) {
        JmxExport export = new JmxExport(registry, server);
        registry.addListener(export); // called back for the metrics already there too
        return export;
    }

    /** Unregisters every MBean this export registered. */
    void stop() {
        registry.removeListener(this);
        for (ObjectName name : registered.keySet()) {
            unregister(name);
        }
    }

    /** A metric's MBean: its ObjectName, as Dropwizard's reporter offers it. */
    public interface MetricMBean {
        ObjectName objectName();
    }

    public interface GaugeMBean extends MetricMBean {
        Object getValue();

        Number getNumber();
    }

    public interface CounterMBean extends MetricMBean {
        long getCount();
    }

    public interface HistogramMBean extends MetricMBean {
        long getCount();
        long getMin();
        long getMax();
        double getMean();
        double getStdDev();
        double get50thPercentile();
        double get75thPercentile();
        double get95thPercentile();
        double get98thPercentile();
        double get99thPercentile();
        double get999thPercentile();
        long[] values();
        long getSnapshotSize();
    }

    public interface MeterMBean extends MetricMBean {
        long getCount();
        double getMeanRate();
        double getOneMinuteRate();
        double getFiveMinuteRate();
        double getFifteenMinuteRate();
        String getRateUnit();
    }

    public interface TimerMBean extends MeterMBean {
        double getMin();
        double getMax();
        double getMean();
        double getStdDev();
        double get50thPercentile();
        double get75thPercentile();
        double get95thPercentile();
        double get98thPercentile();
        double get99thPercentile();
        double get999thPercentile();
        long[] values();
        String getDurationUnit();
    }

    private abstract static class Base implements MetricMBean {
        private final ObjectName name;

        Base(ObjectName name) {
            this.name = name;
        }

        @Override
        public ObjectName objectName() {
            return name;
        }
    }

    private static final class JmxGauge extends Base implements GaugeMBean {
        private final Gauge<?> gauge;

        JmxGauge(ObjectName name, Gauge<?> gauge) {
            super(name);
            this.gauge = gauge;
        }

        @Override
        public Object getValue() {
            return gauge.getValue();
        }

        @Override
        public Number getNumber() {
            Object v = gauge.getValue();
            return v instanceof Number ? (Number) v : 0;
        }
    }

    private static final class JmxCounter extends Base implements CounterMBean {
        private final Counter counter;

        JmxCounter(ObjectName name, Counter counter) {
            super(name);
            this.counter = counter;
        }

        @Override
        public long getCount() {
            return counter.getCount();
        }
    }

    private static final class JmxHistogram extends Base implements HistogramMBean {
        private final Histogram histogram;

        JmxHistogram(ObjectName name, Histogram histogram) {
            super(name);
            this.histogram = histogram;
        }

        @Override public long getCount() { return histogram.getCount(); }
        @Override public long getMin() { return histogram.getSnapshot().getMin(); }
        @Override public long getMax() { return histogram.getSnapshot().getMax(); }
        @Override public double getMean() { return histogram.getSnapshot().getMean(); }
        @Override public double getStdDev() { return histogram.getSnapshot().getStdDev(); }
        @Override public double get50thPercentile() { return histogram.getSnapshot().getMedian(); }
        @Override public double get75thPercentile() { return histogram.getSnapshot().get75thPercentile(); }
        @Override public double get95thPercentile() { return histogram.getSnapshot().get95thPercentile(); }
        @Override public double get98thPercentile() { return histogram.getSnapshot().get98thPercentile(); }
        @Override public double get99thPercentile() { return histogram.getSnapshot().get99thPercentile(); }
        @Override public double get999thPercentile() { return histogram.getSnapshot().get999thPercentile(); }
        @Override public long[] values() { return histogram.getSnapshot().getValues(); }
        @Override public long getSnapshotSize() { return histogram.getSnapshot().size(); }
    }

    private static class JmxMeter extends Base implements MeterMBean {
        private final Meter meter;

        JmxMeter(ObjectName name, Meter meter) {
            super(name);
            this.meter = meter;
        }

        @Override public long getCount() { return meter.getCount(); }
        @Override public double getMeanRate() { return meter.getMeanRate(); }
        @Override public double getOneMinuteRate() { return meter.getOneMinuteRate(); }
        @Override public double getFiveMinuteRate() { return meter.getFiveMinuteRate(); }
        @Override public double getFifteenMinuteRate() { return meter.getFifteenMinuteRate(); }
        @Override public String getRateUnit() { return RATE_UNIT; }
    }

    /** Durations in microseconds (the timers record nanoseconds); {@code values()} are the recorded nanoseconds. */
    private static final class JmxTimer extends Base implements TimerMBean {
        private final Timer timer;

        JmxTimer(ObjectName name, Timer timer) {
            super(name);
            this.timer = timer;
        }

        private Snapshot s() {
            return timer.getSnapshot();
        }

        @Override public long getCount() { return timer.getCount(); }
        @Override public double getMeanRate() { return timer.getMeanRate(); }
        @Override public double getOneMinuteRate() { return timer.getOneMinuteRate(); }
        @Override public double getFiveMinuteRate() { return timer.getFiveMinuteRate(); }
        @Override public double getFifteenMinuteRate() { return timer.getFifteenMinuteRate(); }
        @Override public String getRateUnit() { return RATE_UNIT; }
        @Override public double getMin() { return s().getMin() * DURATION_FACTOR; }
        @Override public double getMax() { return s().getMax() * DURATION_FACTOR; }
        @Override public double getMean() { return s().getMean() * DURATION_FACTOR; }
        @Override public double getStdDev() { return s().getStdDev() * DURATION_FACTOR; }
        @Override public double get50thPercentile() { return s().getMedian() * DURATION_FACTOR; }
        @Override public double get75thPercentile() { return s().get75thPercentile() * DURATION_FACTOR; }
        @Override public double get95thPercentile() { return s().get95thPercentile() * DURATION_FACTOR; }
        @Override public double get98thPercentile() { return s().get98thPercentile() * DURATION_FACTOR; }
        @Override public double get99thPercentile() { return s().get99thPercentile() * DURATION_FACTOR; }
        @Override public double get999thPercentile() { return s().get999thPercentile() * DURATION_FACTOR; }
        @Override public long[] values() { return s().getValues(); }
        @Override public String getDurationUnit() { return DURATION_UNIT; }
    }

    @Override
    public void onGaugeAdded(String name, Gauge<?> gauge) {
        ObjectName on = ObjectNames.of(name);
        register(on, new JmxGauge(on, gauge), GaugeMBean.class);
    }

    @Override
    public void onCounterAdded(String name, Counter counter) {
        ObjectName on = ObjectNames.of(name);
        register(on, new JmxCounter(on, counter), CounterMBean.class);
    }

    @Override
    public void onHistogramAdded(String name, Histogram histogram) {
        ObjectName on = ObjectNames.of(name);
        register(on, new JmxHistogram(on, histogram), HistogramMBean.class);
    }

    @Override
    public void onMeterAdded(String name, Meter meter) {
        ObjectName on = ObjectNames.of(name);
        register(on, new JmxMeter(on, meter), MeterMBean.class);
    }

    @Override
    public void onTimerAdded(String name, Timer timer) {
        ObjectName on = ObjectNames.of(name);
        register(on, new JmxTimer(on, timer), TimerMBean.class);
    }

    @Override public void onGaugeRemoved(String name) { unregister(ObjectNames.of(name)); }
    @Override public void onCounterRemoved(String name) { unregister(ObjectNames.of(name)); }
    @Override public void onHistogramRemoved(String name) { unregister(ObjectNames.of(name)); }
    @Override public void onMeterRemoved(String name) { unregister(ObjectNames.of(name)); }
    @Override public void onTimerRemoved(String name) { unregister(ObjectNames.of(name)); }

    private <T> void register(ObjectName name, T mbean, Class<T> type) {
        try {
            server.registerMBean(new StandardMBean(mbean, type), name);
            registered.put(name, Boolean.TRUE);
        } catch (InstanceAlreadyExistsException e) {
            LOG.warn("ehrelay: an MBean named {} is already registered (another CacheManager of the same name?); "
                    + "this one is not exposed", name);
        } catch (MBeanRegistrationException | NotCompliantMBeanException | RuntimeException e) {
            LOG.warn("ehrelay: could not register the MBean {}: {}", name, e.toString());
        }
    }

    private void unregister(ObjectName name) {
        if (registered.remove(name) == null) {
            return;
        }
        try {
            server.unregisterMBean(name);
        } catch (InstanceNotFoundException e) {
            // already gone
        } catch (MBeanRegistrationException | RuntimeException e) {
            LOG.warn("ehrelay: could not unregister the MBean {}: {}", name, e.toString());
        }
    }
}
