package io.ehrelay.hessian;

import java.nio.ByteBuffer;
import java.security.KeyManagementException;
import java.security.SecureRandom;
import java.util.function.BiConsumer;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLContextSpi;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;

/**
 * An {@link SSLContext} whose engines report a failed TLS handshake — for the HTTPS listener with
 * {@code tlsClientAuth=true}: a caller that presents no certificate, or one the trust store does not trust. The
 * JDK's HTTP server does the handshake itself and only closes the connection; its engines come from the context
 * of its {@code HttpsConfigurator}, so the report is made here, once per engine. Everything else is the wrapped
 * context's and engine's.
 */
final class HandshakeWatch {

    private HandshakeWatch() {
    }

    /**
     * @param failed told the engine's peer ({@code host:port}, as the server named it) and the failure, once per
     *               engine, on the thread doing the handshake
     */
    static SSLContext watch(SSLContext context, BiConsumer<String, SSLHandshakeException> failed) {
        return new SSLContext(new Spi(context, failed), context.getProvider(), context.getProtocol()) {
        };
    }

    private static final class Spi extends SSLContextSpi {
        private final SSLContext context;
        private final BiConsumer<String, SSLHandshakeException> failed;

        Spi(SSLContext context, BiConsumer<String, SSLHandshakeException> failed) {
            this.context = context;
            this.failed = failed;
        }

        @Override
        protected void engineInit(KeyManager[] km, TrustManager[] tm, SecureRandom sr) throws KeyManagementException {
            throw new KeyManagementException("already initialized");
        }

        @Override
        protected SSLSocketFactory engineGetSocketFactory() {
            return context.getSocketFactory();
        }

        @Override
        protected SSLServerSocketFactory engineGetServerSocketFactory() {
            return context.getServerSocketFactory();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine() {
            return new Engine(context.createSSLEngine(), failed);
        }

        @Override
        protected SSLEngine engineCreateSSLEngine(String host, int port) {
            return new Engine(context.createSSLEngine(host, port), failed);
        }

        @Override
        protected SSLSessionContext engineGetServerSessionContext() {
            return context.getServerSessionContext();
        }

        @Override
        protected SSLSessionContext engineGetClientSessionContext() {
            return context.getClientSessionContext();
        }

        @Override
        protected SSLParameters engineGetDefaultSSLParameters() {
            return context.getDefaultSSLParameters();
        }

        @Override
        protected SSLParameters engineGetSupportedSSLParameters() {
            return context.getSupportedSSLParameters();
        }
    }

    /** Delegates everything; reports the first {@link SSLHandshakeException} of {@code wrap} or {@code unwrap}. */
    private static final class Engine extends SSLEngine {
        private final SSLEngine engine;
        private final BiConsumer<String, SSLHandshakeException> failed;
        private volatile boolean reported;

        Engine(SSLEngine engine, BiConsumer<String, SSLHandshakeException> failed) {
            super(engine.getPeerHost(), engine.getPeerPort());
            this.engine = engine;
            this.failed = failed;
        }

        private SSLException report(SSLException e) {
            if (e instanceof SSLHandshakeException && !reported) {
                reported = true;
                failed.accept(getPeerHost() + ":" + getPeerPort(), (SSLHandshakeException) e);
            }
            return e;
        }

        @Override
        public SSLEngineResult wrap(ByteBuffer[] srcs, int offset, int length, ByteBuffer dst) throws SSLException {
            try {
                return engine.wrap(srcs, offset, length, dst);
            } catch (SSLException e) {
                throw report(e);
            }
        }

        @Override
        public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer[] dsts, int offset, int length) throws SSLException {
            try {
                return engine.unwrap(src, dsts, offset, length);
            } catch (SSLException e) {
                throw report(e);
            }
        }

        @Override
        public Runnable getDelegatedTask() {
            return engine.getDelegatedTask();
        }

        @Override
        public void closeInbound() throws SSLException {
            engine.closeInbound();
        }

        @Override
        public boolean isInboundDone() {
            return engine.isInboundDone();
        }

        @Override
        public void closeOutbound() {
            engine.closeOutbound();
        }

        @Override
        public boolean isOutboundDone() {
            return engine.isOutboundDone();
        }

        @Override
        public String[] getSupportedCipherSuites() {
            return engine.getSupportedCipherSuites();
        }

        @Override
        public String[] getEnabledCipherSuites() {
            return engine.getEnabledCipherSuites();
        }

        @Override
        public void setEnabledCipherSuites(String[] suites) {
            engine.setEnabledCipherSuites(suites);
        }

        @Override
        public String[] getSupportedProtocols() {
            return engine.getSupportedProtocols();
        }

        @Override
        public String[] getEnabledProtocols() {
            return engine.getEnabledProtocols();
        }

        @Override
        public void setEnabledProtocols(String[] protocols) {
            engine.setEnabledProtocols(protocols);
        }

        @Override
        public SSLSession getSession() {
            return engine.getSession();
        }

        @Override
        public SSLSession getHandshakeSession() {
            return engine.getHandshakeSession();
        }

        @Override
        public void beginHandshake() throws SSLException {
            try {
                engine.beginHandshake();
            } catch (SSLException e) {
                throw report(e);
            }
        }

        @Override
        public SSLEngineResult.HandshakeStatus getHandshakeStatus() {
            return engine.getHandshakeStatus();
        }

        @Override
        public void setUseClientMode(boolean mode) {
            engine.setUseClientMode(mode);
        }

        @Override
        public boolean getUseClientMode() {
            return engine.getUseClientMode();
        }

        @Override
        public void setNeedClientAuth(boolean need) {
            engine.setNeedClientAuth(need);
        }

        @Override
        public boolean getNeedClientAuth() {
            return engine.getNeedClientAuth();
        }

        @Override
        public void setWantClientAuth(boolean want) {
            engine.setWantClientAuth(want);
        }

        @Override
        public boolean getWantClientAuth() {
            return engine.getWantClientAuth();
        }

        @Override
        public void setEnableSessionCreation(boolean flag) {
            engine.setEnableSessionCreation(flag);
        }

        @Override
        public boolean getEnableSessionCreation() {
            return engine.getEnableSessionCreation();
        }

        @Override
        public SSLParameters getSSLParameters() {
            return engine.getSSLParameters();
        }

        @Override
        public void setSSLParameters(SSLParameters params) {
            engine.setSSLParameters(params);
        }

        @Override
        public String toString() {
            return engine.toString();
        }
    }
}
