package io.ehrelay.internal.engine;

import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.codec.ByteSink;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.Clock;
import io.ehrelay.testing.TestProperties;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.config.CacheConfiguration;
import net.sf.ehcache.config.Configuration;
import org.slf4j.LoggerFactory;

/** A real CacheManager with caches "a" and "b", node settings and metrics, for the engine's unit tests. */
final class EngineTestKit implements AutoCloseable {

    final CacheManager cacheManager;
    final ReplicationMetrics metrics;
    final NodeConfig config;
    final RateLimitedLog warn;

    /** @param nodeProperties provider properties as name, value, name, value… */
    EngineTestKit(String... nodeProperties) {
        Configuration c = new Configuration().name("engine-" + System.nanoTime());
        c.addCache(new CacheConfiguration("a", 1000));
        c.addCache(new CacheConfiguration("b", 1000));
        cacheManager = CacheManager.newInstance(c);
        metrics = new ReplicationMetrics(cacheManager.getName(), "unit");
        config = NodeConfig.read(new PropertyReader("test", TestProperties.of(nodeProperties)), "peers");
        warn = new RateLimitedLog(LoggerFactory.getLogger(EngineTestKit.class), 10_000, Clock.SYSTEM);
    }

    /** A sequenced batch of already encoded events. */
    static byte[] batch(long stream, long seq, int flags, byte[]... events) {
        ByteSink out = new ByteSink(256);
        out.write(EventCodec.batchHeader(0), 0, EventCodec.BATCH_HEADER_BYTES);
        for (byte[] e : events) {
            out.write(e, 0, e.length);
        }
        EventCodec.putBatchHeader(out, 0, events.length, flags, stream, seq);
        byte[] bytes = new byte[out.position()];
        out.view().get(bytes);
        return bytes;
    }

    @Override
    public void close() {
        metrics.close();
        cacheManager.shutdown();
    }
}
