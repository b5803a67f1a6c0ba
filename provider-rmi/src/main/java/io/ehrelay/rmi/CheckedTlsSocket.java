package io.ehrelay.rmi;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import javax.net.ssl.SSLSocket;

/**
 * A TLS connection whose decrypted input is checked: RMI gets this socket, everything else is the TLS
 * socket's.
 */
final class CheckedTlsSocket extends Socket {
    private final SSLSocket tls;
    private final CheckedCalls.Factory checks;
    private CheckedCalls checked;

    CheckedTlsSocket(SSLSocket tls, CheckedCalls.Factory checks) {
        this.tls = tls;
        this.checks = checks;
    }

    @Override
    public synchronized InputStream getInputStream() throws IOException {
        if (checked == null) {
            checked = checks.open(tls.getInputStream(), tls.getInetAddress());
        }
        return checked;
    }

    @Override
    public OutputStream getOutputStream() throws IOException {
        return tls.getOutputStream();
    }

    @Override
    public void close() throws IOException {
        tls.close();
    }

    @Override
    public InetAddress getInetAddress() {
        return tls.getInetAddress();
    }

    @Override
    public InetAddress getLocalAddress() {
        return tls.getLocalAddress();
    }

    @Override
    public int getPort() {
        return tls.getPort();
    }

    @Override
    public int getLocalPort() {
        return tls.getLocalPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        return tls.getRemoteSocketAddress();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return tls.getLocalSocketAddress();
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        tls.setSoTimeout(timeout);
    }

    @Override
    public int getSoTimeout() throws SocketException {
        return tls.getSoTimeout();
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
        tls.setTcpNoDelay(on);
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
        return tls.getTcpNoDelay();
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
        tls.setKeepAlive(on);
    }

    @Override
    public boolean getKeepAlive() throws SocketException {
        return tls.getKeepAlive();
    }

    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
        tls.setSoLinger(on, linger);
    }

    @Override
    public int getSoLinger() throws SocketException {
        return tls.getSoLinger();
    }

    @Override
    public void shutdownInput() throws IOException {
        tls.shutdownInput();
    }

    @Override
    public void shutdownOutput() throws IOException {
        tls.shutdownOutput();
    }

    @Override
    public boolean isConnected() {
        return tls.isConnected();
    }

    @Override
    public boolean isBound() {
        return tls.isBound();
    }

    @Override
    public boolean isClosed() {
        return tls.isClosed();
    }

    @Override
    public boolean isInputShutdown() {
        return tls.isInputShutdown();
    }

    @Override
    public boolean isOutputShutdown() {
        return tls.isOutputShutdown();
    }

    @Override
    public String toString() {
        return tls.toString();
    }
}
