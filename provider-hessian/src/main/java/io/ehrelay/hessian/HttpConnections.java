package io.ehrelay.hessian;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

import io.ehrelay.internal.Streams;
import io.ehrelay.spi.Clock;

/**
 * HTTP/1.1 POSTs to one endpoint over persistent connections, on the calling thread: the request goes out in one
 * write where it fits (headers and body, {@code TCP_NODELAY}), the caller reads the answer itself. No thread hops,
 * so a synchronous call costs one round trip. Connections idle longer than {@link #IDLE_MILLIS} are closed
 * instead of reused (servers drop idle ones; the JDK's after 30 s); a reused connection that fails before any
 * byte of the answer is retried once on a new one (the server never saw a complete request there). Answers with
 * {@code Content-Length} or chunked bodies, bounded by {@code maxBodyBytes}. Thread-safe.
 */
final class HttpConnections implements AutoCloseable {

    static final long IDLE_MILLIS = 10_000;
    private static final int MAX_HEADER_BYTES = 64 * 1024;
    private static final int BUFFER = 64 * 1024;

    /** An answer: status and body. */
    static final class Answer {
        final int status;
        final byte[] body;

        Answer(int status, byte[] body) {
            this.status = status;
            this.body = body;
        }
    }

    private final String host;
    private final int port;
    private final String target;
    private final byte[] fixedHeaders;
    private final SSLContext tls;
    private final int connectTimeoutMillis;
    private final int readTimeoutMillis;
    private final long maxBodyBytes;
    private final Clock clock;
    private final Deque<Connection> idle = new ConcurrentLinkedDeque<>();
    private volatile boolean closed;

    /**
     * @param url    {@code http(s)://host:port/path}
     * @param tls    for {@code https}: the context to connect with ({@code null}: the JDK default)
     * @param extraHeaders e.g. the cluster token, as {@code Name: value} lines without CRLF; may be empty
     * @param clock  the node's time source, for closing idle connections
     */
    private volatile Supplier<String> sessionHeader;

    HttpConnections(String url, SSLContext tls, String contentType, List<String> extraHeaders,
                    int connectTimeoutMillis, int readTimeoutMillis, long maxBodyBytes, Clock clock)
            throws IOException {
        this.clock = clock;
        URI uri = URI.create(url);
        boolean https = "https".equalsIgnoreCase(uri.getScheme());
        if (!https && !"http".equalsIgnoreCase(uri.getScheme())) {
            throw new IllegalArgumentException("not an http(s) URL: " + url);
        }
        this.host = uri.getHost();
        this.port = uri.getPort() > 0 ? uri.getPort() : https ? 443 : 80;
        this.target = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        try {
            this.tls = https ? (tls != null ? tls : SSLContext.getDefault()) : null;
        } catch (GeneralSecurityException e) {
            throw new IOException("no TLS context: " + e.getMessage(), e);
        }
        StringBuilder h = new StringBuilder();
        h.append("Host: ").append(uri.getRawAuthority()).append("\r\n");
        h.append("Content-Type: ").append(contentType).append("\r\n");
        for (String line : extraHeaders) {
            h.append(line).append("\r\n");
        }
        this.fixedHeaders = h.toString().getBytes(StandardCharsets.ISO_8859_1);
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.readTimeoutMillis = readTimeoutMillis;
        this.maxBodyBytes = maxBodyBytes;
    }

    /**
     * One more header line for every request from now on, made for each request (e.g. the session's credential),
     * or {@code null} for none.
     */
    void sessionHeader(Supplier<String> line) {
        sessionHeader = line;
    }

    private byte[] sessionHeaderBytes() {
        Supplier<String> line = sessionHeader;
        return line == null ? new byte[0] : (line.get() + "\r\n").getBytes(StandardCharsets.ISO_8859_1);
    }

    /** POSTs {@code body} and returns the answer; the connection goes back to the pool when it may be reused. */
    Answer post(byte[] body) throws IOException {
        return post(body, readTimeoutMillis);
    }

    /** As {@link #post(byte[])}, waiting at most {@code timeoutMillis} for each read of the answer. */
    Answer post(byte[] body, int timeoutMillis) throws IOException {
        return post(body, body.length, timeoutMillis);
    }

    /** As {@link #post(byte[], int)}, with the first {@code length} bytes of {@code body}. */
    Answer post(byte[] body, int length, int timeoutMillis) throws IOException {
        Connection c = idleConnection();
        boolean reused = c != null;
        if (c == null) {
            c = open();
        }
        try {
            c.socket.setSoTimeout(timeoutMillis);
            return exchange(c, body, length);
        } catch (StaleConnectionException e) {
            c.close();
            if (!reused) {
                throw e.getCause() instanceof IOException ? (IOException) e.getCause()
                        : new EOFException("connection to " + host + ":" + port + " closed before an answer");
            }
            Connection fresh = open();
            try {
                fresh.socket.setSoTimeout(timeoutMillis);
                return exchange(fresh, body, length);
            } catch (StaleConnectionException again) {
                fresh.close();
                throw new EOFException("connection to " + host + ":" + port + " closed before an answer");
            } catch (IOException | RuntimeException again) {
                fresh.close();
                throw again;
            }
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    private Connection idleConnection() {
        long now = clock.millis();
        for (Connection c = idle.pollFirst(); c != null; c = idle.pollFirst()) {
            if (now - c.idleSince < IDLE_MILLIS) {
                return c;
            }
            c.close();
        }
        return null;
    }

    private Connection open() throws IOException {
        if (closed) {
            throw new IOException("closed");
        }
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.setSoTimeout(readTimeoutMillis);
            s.connect(new InetSocketAddress(host, port), connectTimeoutMillis);
            if (tls != null) {
                SSLSocket ssl = (SSLSocket) tls.getSocketFactory().createSocket(s, host, port, true);
                SSLParameters p = ssl.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                ssl.setSSLParameters(p);
                ssl.setSoTimeout(readTimeoutMillis);
                ssl.startHandshake();
                s = ssl;
            }
            return new Connection(s);
        } catch (IOException | RuntimeException e) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already failing
            }
            throw e;
        }
    }

    private Answer exchange(Connection c, byte[] body, int bodyLength) throws IOException {
        byte[] head = ("POST " + target + " HTTP/1.1\r\nContent-Length: " + bodyLength + "\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        int first;
        try {
            c.out.write(head);
            c.out.write(fixedHeaders);
            c.out.write(sessionHeaderBytes());
            c.out.write('\r');
            c.out.write('\n');
            c.out.write(body, 0, bodyLength);
            c.out.flush();
            first = c.in.read();
        } catch (SocketTimeoutException e) {
            throw e; // the server may be working on it: not retried
        } catch (IOException e) {
            throw new StaleConnectionException(e); // reset or broken pipe before any answer
        }
        if (first < 0) {
            throw new StaleConnectionException(null);
        }
        String status = readLine(c.in, first);
        String[] parts = status.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP answer: " + abbreviate(status));
        }
        int code;
        try {
            code = Integer.parseInt(parts[1]);
        } catch (NumberFormatException e) {
            throw new IOException("not an HTTP status: " + abbreviate(status));
        }
        long length = -1;
        boolean chunked = false;
        boolean close = parts[0].equals("HTTP/1.0");
        int headerBytes = status.length();
        for (String line = readLine(c.in, c.in.read()); !line.isEmpty(); line = readLine(c.in, c.in.read())) {
            headerBytes += line.length();
            if (headerBytes > MAX_HEADER_BYTES) {
                throw new IOException("answer headers longer than " + MAX_HEADER_BYTES + " bytes");
            }
            int colon = line.indexOf(':');
            if (colon <= 0) {
                continue;
            }
            String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            if (name.equals("content-length")) {
                try {
                    length = Long.parseLong(value);
                } catch (NumberFormatException e) {
                    throw new IOException("bad Content-Length: " + abbreviate(value));
                }
            } else if (name.equals("transfer-encoding")) {
                chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
            } else if (name.equals("connection")) {
                close |= value.equalsIgnoreCase("close");
            }
        }
        byte[] answer;
        if (chunked) {
            answer = readChunked(c.in);
        } else if (length >= 0) {
            if (length > maxBodyBytes) {
                throw new IOException("answer of " + length + " bytes, limit " + maxBodyBytes);
            }
            answer = Streams.readExactly(c.in, (int) length);
            if (answer.length != length) {
                throw new EOFException("answer ended after " + answer.length + " of " + length + " bytes");
            }
        } else {
            answer = readToEnd(c.in);
            close = true;
        }
        if (close || closed) {
            c.close();
        } else {
            c.idleSince = clock.millis();
            idle.offerFirst(c);
        }
        return new Answer(code, answer);
    }

    private byte[] readChunked(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (true) {
            String sizeLine = readLine(in, in.read());
            int semi = sizeLine.indexOf(';');
            long size;
            try {
                size = Long.parseLong((semi < 0 ? sizeLine : sizeLine.substring(0, semi)).trim(), 16);
            } catch (NumberFormatException e) {
                throw new IOException("bad chunk size: " + abbreviate(sizeLine));
            }
            if (size == 0) {
                while (!readLine(in, in.read()).isEmpty()) {
                    // trailers
                }
                return out.toByteArray();
            }
            if (size < 0 || out.size() + size > maxBodyBytes) {
                throw new IOException("chunked answer longer than " + maxBodyBytes + " bytes");
            }
            byte[] chunk = Streams.readExactly(in, (int) size);
            if (chunk.length != size) {
                throw new EOFException("chunk ended early");
            }
            out.write(chunk);
            readLine(in, in.read());
        }
    }

    private byte[] readToEnd(InputStream in) throws IOException {
        byte[] all = Streams.readUpTo(in, (int) Math.min(Integer.MAX_VALUE - 8, maxBodyBytes + 1));
        if (all.length > maxBodyBytes) {
            throw new IOException("answer longer than " + maxBodyBytes + " bytes");
        }
        return all;
    }

    /** A line up to CRLF (or LF), starting with the byte already read. */
    private static String readLine(InputStream in, int first) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int b = first; ; b = in.read()) {
            if (b < 0) {
                throw new EOFException("answer ended inside its headers");
            }
            if (b == '\n') {
                int n = line.length();
                if (n > 0 && line.charAt(n - 1) == '\r') {
                    line.setLength(n - 1);
                }
                return line.toString();
            }
            if (line.length() >= MAX_HEADER_BYTES) {
                throw new IOException("answer header line longer than " + MAX_HEADER_BYTES + " bytes");
            }
            line.append((char) b);
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "…";
    }

    /** Closes the idle connections (e.g. after a failure); later calls open new ones. */
    void dropIdle() {
        for (Connection c = idle.pollFirst(); c != null; c = idle.pollFirst()) {
            c.close();
        }
    }

    /** Closes the idle connections; later calls fail, and connections in use close when their call ends. */
    @Override
    public void close() {
        closed = true;
        dropIdle();
    }

    /** The connection was closed by the server before any byte of the answer. */
    private static final class StaleConnectionException extends IOException {
        private static final long serialVersionUID = 1L;

        StaleConnectionException(IOException cause) {
            super("connection closed before an answer", cause);
        }
    }

    private static final class Connection {
        final Socket socket;
        final InputStream in;
        final OutputStream out;
        long idleSince;

        Connection(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new BufferedInputStream(socket.getInputStream(), BUFFER);
            this.out = new BufferedOutputStream(socket.getOutputStream(), BUFFER);
        }

        void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}
