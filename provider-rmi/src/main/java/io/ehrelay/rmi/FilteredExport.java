package io.ehrelay.rmi;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.rmi.Remote;
import java.rmi.RemoteException;
import java.rmi.server.RMIClientSocketFactory;
import java.rmi.server.RMIServerSocketFactory;
import java.rmi.server.UnicastRemoteObject;

import io.ehrelay.internal.codec.SerializationGuard;

/**
 * Exports a remote object whose call arguments pass a serialization filter before anything is deserialized.
 * Java 9 and later have this as public API ({@code UnicastRemoteObject.exportObject(..., ObjectInputFilter)});
 * Java 8 update 121 and later have the same mechanism (JEP 290) behind the JDK's own RMI server reference
 * ({@code sun.rmi.server.UnicastServerRef2} with a {@code sun.misc.ObjectInputFilter}), which this class uses
 * through reflection there. A JVM with neither is refused at start: exporting without a filter would let any
 * caller deserialize arbitrary classes. Stateless.
 */
final class FilteredExport {

    private FilteredExport() {
    }

    /**
     * Exports {@code object} on {@code port} with {@code filter}, an instance of
     * {@link SerializationGuard#jdkFilterInterface()}.
     */
    static Remote export(Remote object, int port, RMIClientSocketFactory csf, RMIServerSocketFactory ssf,
                         Object filter) throws RemoteException {
        Class<?> filterType = SerializationGuard.jdkFilterInterface();
        try {
            Method publicApi = publicExport(filterType);
            if (publicApi != null) {
                return (Remote) publicApi.invoke(null, object, port, csf, ssf, filter);
            }
            return exportThroughServerRef(object, port, csf, ssf, filterType, filter);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RemoteException) {
                throw (RemoteException) cause;
            }
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            throw new RemoteException("could not export " + object.getClass().getName(), cause);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new UnsupportedOperationException("this JVM (" + System.getProperty("java.version") + ") cannot "
                    + "export an RMI object with a serialization filter, which ehrelay's RMI listener requires: " + e,
                    e);
        }
    }

    /** The Java 9+ public method, or {@code null} on Java 8. */
    static Method publicExport(Class<?> filterType) {
        try {
            return UnicastRemoteObject.class.getMethod("exportObject", Remote.class, int.class,
                    RMIClientSocketFactory.class, RMIServerSocketFactory.class, filterType);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** Java 8u121+: {@code new UnicastServerRef2(port, csf, ssf, filter)} and UnicastRemoteObject's own export. */
    private static Remote exportThroughServerRef(Remote object, int port, RMIClientSocketFactory csf,
                                                 RMIServerSocketFactory ssf, Class<?> filterType, Object filter)
            throws ReflectiveOperationException {
        Class<?> refType = Class.forName("sun.rmi.server.UnicastServerRef2");
        Constructor<?> ctor = refType.getConstructor(int.class, RMIClientSocketFactory.class,
                RMIServerSocketFactory.class, filterType);
        Object ref = ctor.newInstance(port, csf, ssf, filter);
        Method export = UnicastRemoteObject.class.getDeclaredMethod("exportObject", Remote.class,
                Class.forName("sun.rmi.server.UnicastServerRef"));
        export.setAccessible(true);
        return (Remote) export.invoke(null, object, ref);
    }
}
