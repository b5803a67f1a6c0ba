package io.ehrelay.metrics;

import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * The documented JMX names of ehrelay's metrics. All live in one domain, {@value #DOMAIN}:
 *
 * <pre>
 * io.ehrelay:type=CacheManager,cacheManager=&lt;cm&gt;,transport=&lt;t&gt;,name=&lt;metric&gt;
 * io.ehrelay:type=Cache,cacheManager=&lt;cm&gt;,transport=&lt;t&gt;,cache=&lt;cache&gt;,name=&lt;metric&gt;
 * io.ehrelay:type=Peer,cacheManager=&lt;cm&gt;,transport=&lt;t&gt;,peer=&lt;endpoint&gt;,name=&lt;metric&gt;
 * io.ehrelay:type=Convergence,cacheManager=&lt;cm&gt;,transport=&lt;t&gt;   (operation checkNow)
 * </pre>
 *
 * A value containing a character that JMX reserves ({@code , = : " * ? \n}) is quoted with
 * {@link ObjectName#quote}. The metric's name in the Dropwizard {@code MetricRegistry} is the same string.
 */
public final class ObjectNames {

    public static final String DOMAIN = "io.ehrelay";

    private ObjectNames() {
    }

    public static String cacheManagerMetric(String cacheManager, String transport, String metric) {
        return DOMAIN + ":type=CacheManager,cacheManager=" + value(cacheManager) + ",transport=" + value(transport)
                + ",name=" + value(metric);
    }

    public static String cacheMetric(String cacheManager, String transport, String cache, String metric) {
        return DOMAIN + ":type=Cache,cacheManager=" + value(cacheManager) + ",transport=" + value(transport)
                + ",cache=" + value(cache) + ",name=" + value(metric);
    }

    /** A metric of one peer as this node sees it. */
    public static String peerMetric(String cacheManager, String transport, String peer, String metric) {
        return DOMAIN + ":type=Peer,cacheManager=" + value(cacheManager) + ",transport=" + value(transport)
                + ",peer=" + value(peer) + ",name=" + value(metric);
    }

    /** The MBean whose operation {@code checkNow} runs an anti-entropy check with every peer. */
    public static String convergence(String cacheManager, String transport) {
        return DOMAIN + ":type=Convergence,cacheManager=" + value(cacheManager) + ",transport=" + value(transport);
    }

    public static ObjectName of(String name) {
        try {
            return new ObjectName(name);
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException("not an ObjectName: " + name, e);
        }
    }

    static String value(String v) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c == ',' || c == '=' || c == ':' || c == '"' || c == '*' || c == '?' || c == '\n' || c == '\\') {
                return ObjectName.quote(v);
            }
        }
        return v.isEmpty() ? ObjectName.quote(v) : v;
    }
}
