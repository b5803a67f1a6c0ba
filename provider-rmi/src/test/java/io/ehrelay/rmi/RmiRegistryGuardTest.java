package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.Serializable;
import java.rmi.Remote;
import java.rmi.RemoteException;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.util.Arrays;
import java.util.List;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The node's RMI registry as another process on this host finds it: a {@code bind} or {@code rebind} of
 * anything but a stub is refused before it is deserialized (the gadget's {@code readObject} never runs); an
 * {@code unbind}, or a {@code rebind} of a node's binding to another stub, is undone within about a second,
 * counted in {@code unauthorized}, and replication goes on.
 */
@Timeout(120)
class RmiRegistryGuardTest {

    private final ContractCluster cluster = new ContractCluster(RmiContractTest.FIXTURE);

    /** A remote object whose deserialization would leave a trace. */
    public static final class Gadget implements Remote, Serializable {
        private static final long serialVersionUID = 1L;
        static volatile boolean readObjectRan;

        private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
            readObjectRan = true;
            in.defaultReadObject();
        }
    }

    private static List<String> bound(Registry registry) {
        try {
            return Arrays.asList(registry.list());
        } catch (RemoteException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Remote lookup(Registry registry, String name) {
        try {
            return registry.lookup(name);
        } catch (Exception e) {
            return null;
        }
    }

    @AfterEach
    void stop() {
        cluster.close();
    }

    @Test
    void bindAndRebind_areRefusedBeforeDeserializing_andUnbindIsUndone() throws Exception {
        CacheManager a = cluster.start("a");
        CacheManager b = cluster.start("b");
        Registry registry = LocateRegistry.getRegistry("127.0.0.1", RmiUrls.port(cluster.endpoint(a)));
        Remote relay = registry.lookup(RelayRemote.BINDING);

        assertThatThrownBy(() -> registry.bind("intruder", new Gadget())).isInstanceOf(RemoteException.class);
        assertThatThrownBy(() -> registry.rebind("async", new Gadget())).isInstanceOf(RemoteException.class);
        assertThat(Gadget.readObjectRan).as("the gadget's readObject ran on the node").isFalse();
        assertThat(registry.list()).doesNotContain("intruder").contains("async", RelayRemote.BINDING);
        Remote cachePeer = registry.lookup("async");

        // a stub passes the filter (registries exist to hold stubs), but the node puts its own binding back
        registry.rebind("async", relay);
        registry.unbind(RelayRemote.BINDING);
        Await.until(() -> bound(registry).contains(RelayRemote.BINDING) && cachePeer.equals(lookup(registry, "async")),
                () -> "bindings put back");
        assertThat(cluster.jmx(a).managerCount("unauthorized")).isEqualTo(2);

        b.getCache("async").put(new Element("after", "unbind"));
        Await.until(() -> a.getCache("async").get("after") != null, () -> "replication after the repair");
    }
}
