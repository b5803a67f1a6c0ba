package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import io.ehrelay.internal.config.DiscoveryConfig;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import net.sf.ehcache.config.CacheConfiguration;
import net.sf.ehcache.config.Configuration;
import net.sf.ehcache.config.ConfigurationFactory;
import net.sf.ehcache.config.FactoryConfiguration;
import net.sf.ehcache.util.PropertyUtil;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The files of {@code docs/containers.md} — {@code ehcache.xml}, {@code compose.yaml}, {@code kubernetes.yaml} —
 * are read as Ehcache, Compose and Kubernetes read them, and their settings cross-checked: the DNS name each one
 * gives the nodes is the name its platform answers with every member (the Compose service; the headless Service
 * in its namespace), the listener's port is the one exposed and probed, the secret is mounted where
 * {@code clusterSecret} reads it. How nodes behave with these settings is {@link DnsContainersIT}'s: containers
 * sharing one DNS name, for real. Nothing here starts a node (no DNS is asked).
 */
class ContainersGuideTest {

    private static final Path DIR = Path.of(System.getProperty("basedir", ".")).resolve("../docs/containers")
            .normalize();

    /** The guide's ehcache.xml as Ehcache reads it, with the system properties a container sets. */
    private static Configuration ehcacheXml(String nodeName, String dnsName) throws Exception {
        System.setProperty("ehrelay.nodeName", nodeName);
        System.setProperty("ehrelay.dnsName", dnsName);
        try (InputStream in = Files.newInputStream(DIR.resolve("ehcache.xml"))) {
            return ConfigurationFactory.parseConfiguration(in);
        } finally {
            System.clearProperty("ehrelay.nodeName");
            System.clearProperty("ehrelay.dnsName");
        }
    }

    private static Properties properties(FactoryConfiguration<?> f) {
        return PropertyUtil.parseProperties(f.getProperties(), f.getPropertySeparator());
    }

    /**
     * The DNS configuration the provider reads from the file (the provider's own parser), the secret read from a
     * file of this test's where the container's mount would be.
     */
    private static DiscoveryConfig discovery(Configuration c) throws Exception {
        Properties p = properties(c.getCacheManagerPeerProviderFactoryConfiguration().get(0));
        Path secret = Files.createTempFile("ehrelay-secret", "");
        try {
            Files.writeString(secret, "a-long-random-secret-shared-by-the-cluster\n");
            p.setProperty("clusterSecret", "file:" + secret);
            return NodeConfig.read(new PropertyReader("TcpCacheManagerPeerProviderFactory", p), "peers").discovery();
        } finally {
            Files.delete(secret);
        }
    }

    private static String secretPath(Configuration c) {
        String secret = properties(c.getCacheManagerPeerProviderFactoryConfiguration().get(0))
                .getProperty("clusterSecret");
        assertThat(secret).as("clusterSecret read from a mounted file").startsWith("file:");
        return secret.substring("file:".length());
    }

    private static int listenerPort(Configuration c) {
        return Integer.parseInt(properties(c.getCacheManagerPeerListenerFactoryConfigurations().get(0))
                .getProperty("port"));
    }

    /** {@code -Dname=value} from a JAVA_TOOL_OPTIONS value. */
    private static String systemProperty(String javaToolOptions, String name) {
        for (String option : javaToolOptions.trim().split("\\s+")) {
            if (option.startsWith("-D" + name + "=")) {
                return option.substring(name.length() + 3);
            }
        }
        throw new AssertionError("JAVA_TOOL_OPTIONS sets no " + name + ": " + javaToolOptions);
    }

    @Test
    @SuppressWarnings("unchecked")
    void composeFile_namesItsServiceAsThePeers_exposesTheListener_andMountsTheSecret() throws Exception {
        Map<String, Object> compose = new Yaml().load(Files.readString(DIR.resolve("compose.yaml")));
        Map<String, Object> services = (Map<String, Object>) compose.get("services");
        assertThat(services).hasSize(1);
        String service = services.keySet().iterator().next();
        Map<String, Object> app = (Map<String, Object>) services.get(service);
        String options = (String) ((Map<String, Object>) app.get("environment")).get("JAVA_TOOL_OPTIONS");

        String dnsName = systemProperty(options, "ehrelay.dnsName");
        assertThat(dnsName).as("Docker's DNS answers a service's name with every replica").isEqualTo(service);
        Configuration c = ehcacheXml(systemProperty(options, "ehrelay.nodeName"), dnsName);
        assertThat(discovery(c).mode()).isEqualTo(DiscoveryConfig.Mode.DNS);
        assertThat(discovery(c).dnsName()).isEqualTo(service);
        assertThat((List<Object>) app.get("expose")).map(String::valueOf)
                .contains(String.valueOf(listenerPort(c)));
        List<Map<String, Object>> secrets = (List<Map<String, Object>>) app.get("secrets");
        assertThat(secrets).extracting(s -> s.get("target")).containsExactly(secretPath(c));
        String secretName = (String) secrets.get(0).get("source");
        assertThat(((Map<String, Object>) compose.get("secrets"))).containsKey(secretName);
        assertThat(((Map<String, Object>) app.get("deploy")).get("replicas")).isEqualTo(3);
        for (String network : (List<String>) app.get("networks")) {
            Map<String, Object> n = (Map<String, Object>) ((Map<String, Object>) compose.get("networks")).get(network);
            assertThat(n.get("internal")).as("the replicas' network leads nowhere else").isEqualTo(true);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void kubernetesFile_aHeadlessServiceOverTheDeploymentsPods_isTheDnsName_andPortsAndSecretMatch() throws Exception {
        List<Map<String, Object>> docs = new ArrayList<>();
        for (Object d : new Yaml().loadAll(Files.readString(DIR.resolve("kubernetes.yaml")))) {
            docs.add((Map<String, Object>) d);
        }
        Map<String, Object> service = docs.stream().filter(d -> "Service".equals(d.get("kind"))).findFirst()
                .orElseThrow();
        Map<String, Object> deployment = docs.stream().filter(d -> "Deployment".equals(d.get("kind"))).findFirst()
                .orElseThrow();
        Map<String, Object> svcMeta = (Map<String, Object>) service.get("metadata");
        Map<String, Object> svcSpec = (Map<String, Object>) service.get("spec");
        assertThat(svcSpec.get("clusterIP")).as("headless: the name answers with every pod").isEqualTo("None");
        assertThat(svcSpec.get("publishNotReadyAddresses")).as("a starting pod finds the others").isEqualTo(true);

        Map<String, Object> depSpec = (Map<String, Object>) deployment.get("spec");
        Map<String, Object> template = (Map<String, Object>) depSpec.get("template");
        Map<String, Object> labels = (Map<String, Object>) ((Map<String, Object>) template.get("metadata"))
                .get("labels");
        assertThat(labels).containsAllEntriesOf((Map<String, Object>) svcSpec.get("selector"));
        assertThat(((Map<String, Object>) deployment.get("metadata")).get("namespace"))
                .isEqualTo(svcMeta.get("namespace"));
        Map<String, Object> rolling = (Map<String, Object>) ((Map<String, Object>) depSpec.get("strategy"))
                .get("rollingUpdate");
        assertThat(rolling.get("maxUnavailable")).as("a new pod bootstraps before an old one stops").isEqualTo(0);

        Map<String, Object> container = ((List<Map<String, Object>>) ((Map<String, Object>) template.get("spec"))
                .get("containers")).get(0);
        String options = null;
        for (Map<String, Object> env : (List<Map<String, Object>>) container.get("env")) {
            if ("JAVA_TOOL_OPTIONS".equals(env.get("name"))) {
                options = (String) env.get("value");
            }
        }
        assertThat(options).isNotNull();
        String dnsName = systemProperty(options, "ehrelay.dnsName");
        assertThat(dnsName).as("the headless Service's name in its namespace")
                .isEqualTo(svcMeta.get("name") + "." + svcMeta.get("namespace") + ".svc.cluster.local");
        Configuration c = ehcacheXml("pod-0", dnsName);
        assertThat(discovery(c).dnsName()).isEqualTo(dnsName);

        int port = listenerPort(c);
        Map<String, Object> svcPort = ((List<Map<String, Object>>) svcSpec.get("ports")).get(0);
        assertThat(svcPort.get("port")).isEqualTo(port);
        assertThat(svcPort.get("targetPort")).isEqualTo(port);
        assertThat(((List<Map<String, Object>>) container.get("ports")).get(0).get("containerPort")).isEqualTo(port);
        assertThat(((Map<String, Object>) ((Map<String, Object>) container.get("readinessProbe")).get("tcpSocket"))
                .get("port")).isEqualTo(port);

        Map<String, Object> mount = ((List<Map<String, Object>>) container.get("volumeMounts")).get(0);
        assertThat(mount.get("mountPath")).isEqualTo(secretPath(c));
        Map<String, Object> volume = ((List<Map<String, Object>>) ((Map<String, Object>) template.get("spec"))
                .get("volumes")).get(0);
        assertThat(volume.get("name")).isEqualTo(mount.get("name"));
        assertThat(((Map<String, Object>) volume.get("secret")).get("secretName")).isNotNull();
    }

    @Test
    void ehcacheXml_replicatesItsCache_andBootstrapsIt_overTcp() throws Exception {
        Configuration c = ehcacheXml("node", "ehrelay.default.svc.cluster.local");
        assertThat(c.getCacheManagerPeerProviderFactoryConfiguration().get(0).getFullyQualifiedClassPath())
                .isEqualTo("io.ehrelay.tcp.TcpCacheManagerPeerProviderFactory");
        assertThat(c.getName()).isEqualTo("node");
        CacheConfiguration users = c.getCacheConfigurations().get("users");
        List<?> listeners = users.getCacheEventListenerConfigurations(); // Ehcache 2: a raw List
        assertThat(listeners).extracting(f -> ((FactoryConfiguration<?>) f)
                .getFullyQualifiedClassPath()).containsExactly("io.ehrelay.tcp.TcpCacheReplicatorFactory");
        assertThat(users.getBootstrapCacheLoaderFactoryConfiguration().getFullyQualifiedClassPath())
                .isEqualTo("io.ehrelay.tcp.TcpBootstrapCacheLoaderFactory");
        assertThat(discovery(c).dnsIntervalMillis()).isEqualTo(5000);
    }
}
