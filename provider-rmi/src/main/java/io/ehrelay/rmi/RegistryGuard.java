package io.ehrelay.rmi;

import java.io.InvalidClassException;
import java.io.Serializable;
import java.rmi.AlreadyBoundException;
import java.rmi.NotBoundException;
import java.rmi.Remote;
import java.rmi.RemoteException;
import java.rmi.registry.Registry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the node's RMI registry to the bindings it made: {@link #install()} sets the JDK's registry filter
 * ({@value #PROPERTY}) to {@link #STUBS_ONLY} before this JVM's first registry exists (unless set already),
 * {@link #probe} says in one WARN at start when an earlier registry keeps it from holding, and {@link #repair}
 * puts back, every half second, a binding another process unbound or replaced (counted and logged). Why: see
 * docs/operations.md, "The RMI registry". Thread-safe.
 */
final class RegistryGuard {

    static final String PROPERTY = "sun.rmi.registry.registryFilter";
    /**
     * What a registry may deserialize: a remote stub (a dynamic proxy with RMI's invocation handler, implementing
     * the remote interfaces of ehrelay, stock Ehcache, the JMX connector or the registry, with the client socket
     * factories of the JDK, Ehcache and ehrelay) and the numbers and strings of its reference, within small
     * limits (the JDK's own registry limits no longer apply once this filter allows a class); nothing else.
     * Lookups and lists carry no class at all.
     */
    static final String STUBS_ONLY = "maxdepth=20;maxrefs=200;maxarray=64;maxbytes=65536;"
            + "java.lang.reflect.Proxy;jdk.proxy*;com.sun.proxy.*;"
            + "java.rmi.server.RemoteObjectInvocationHandler;java.rmi.server.RemoteObject;java.rmi.server.UID;"
            + "java.rmi.server.ObjID;java.lang.String;java.lang.Number;java.lang.Integer;java.lang.Long;"
            + "java.rmi.Remote;java.rmi.registry.Registry;javax.management.remote.rmi.RMIServer;"
            + "net.sf.ehcache.distribution.CachePeer;io.ehrelay.rmi.RelayRemote;"
            + "javax.rmi.ssl.SslRMIClientSocketFactory;net.sf.ehcache.distribution.ConfigurableRMIClientSocketFactory;"
            + "io.ehrelay.rmi.TimeoutClientSocketFactory;io.ehrelay.rmi.TlsClientSocketFactory;!*";

    /** Bound by value in {@link #probe}: a registry that deserializes it would deserialize any such class. */
    private static final class Probe implements Remote, Serializable {
        private static final long serialVersionUID = 1L;
    }
    private static final String PROBE = "ehrelay.registry-probe";
    private static final Logger LOG = LoggerFactory.getLogger(RegistryGuard.class);

    private final Map<String, Remote> bindings = new ConcurrentHashMap<>();
    private final Registry registry;
    private final Runnable onRepair;

    /** @param onRepair called once per binding put back (to count it) */
    RegistryGuard(Registry registry, Runnable onRepair) {
        this.registry = registry;
        this.onRepair = onRepair;
    }

    /** Sets the JDK's registry filter to {@link #STUBS_ONLY} unless the property is set already. */
    static synchronized void install() {
        if (System.getProperty(PROPERTY) == null) {
            System.setProperty(PROPERTY, STUBS_ONLY);
        }
    }

    /**
     * Binds a remote object that is not a stub through {@code remote} (this node's registry as another process
     * sees it) and checks that the registry refused to deserialize it.
     *
     * @return whether the registry refuses such binds
     */
    boolean probe(Registry remote) {
        try {
            remote.bind(PROBE, new Probe());
        } catch (RemoteException | AlreadyBoundException e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof InvalidClassException) {
                    return true; // "filter status: REJECTED"
                }
            }
            LOG.debug("ehrelay: could not probe the RMI registry's filter: {}", e.toString());
            return true;
        }
        try {
            registry.unbind(PROBE);
        } catch (RemoteException | NotBoundException e) {
            // gone already
        }
        LOG.warn("ehrelay: this JVM's RMI registries deserialize whatever remote object another process on this "
                + "host binds (a registry was created before ehrelay's, or {} admits such classes): start the JVM "
                + "with -D{}=\"{}\" so that they take nothing but stubs", PROPERTY, PROPERTY, STUBS_ONLY);
        return false;
    }

    /** Binds {@code stub} under {@code name} and keeps it there. */
    synchronized void bind(String name, Remote stub) throws RemoteException {
        bindings.put(name, stub);
        registry.rebind(name, stub);
    }

    /** Unbinds {@code name} and stops keeping it. */
    synchronized void unbind(String name) {
        bindings.remove(name);
        try {
            registry.unbind(name);
        } catch (NotBoundException | RemoteException e) {
            // already gone
        }
    }

    /** Puts back every binding of the node that is missing or was replaced; returns how many. */
    synchronized int repair() {
        int repaired = 0;
        for (Map.Entry<String, Remote> b : bindings.entrySet()) {
            Remote bound;
            try {
                bound = registry.lookup(b.getKey());
            } catch (NotBoundException e) {
                bound = null;
            } catch (RemoteException e) {
                continue;
            }
            if (bound != b.getValue() && bindings.get(b.getKey()) == b.getValue()) {
                try {
                    registry.rebind(b.getKey(), b.getValue());
                } catch (RemoteException e) {
                    continue;
                }
                repaired++;
                onRepair.run();
                LOG.warn("ehrelay: another process {} this node's RMI registry binding '{}'; put it back",
                        bound == null ? "removed" : "replaced", b.getKey());
            }
        }
        return repaired;
    }
}
