package io.ehrelay.contract;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Self-signed PKCS12 key stores for TLS tests, made with the JDK's keytool (password {@code changeit}). */
public final class TestKeyStores {

    public static final String PASSWORD = "changeit";

    private TestKeyStores() {
    }

    /**
     * A fresh key store at {@code target/tls/<name>.p12} with one EC key for {@code commonName}, valid two days.
     *
     * @param subjectAltName e.g. {@code ip:127.0.0.1}, or {@code null}
     */
    public static Path selfSigned(String name, String commonName, String subjectAltName) throws Exception {
        Path dir = Files.createDirectories(Path.of("target", "tls"));
        Path store = dir.resolve(name + ".p12");
        Files.deleteIfExists(store);
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool")
                .toString(), "-genkeypair", "-alias", "node", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=" + commonName, "-validity", "2", "-storetype", "PKCS12",
                "-keystore", store.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD));
        if (subjectAltName != null) {
            cmd.addAll(List.of("-ext", "SAN=" + subjectAltName));
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + out);
        }
        return store.toAbsolutePath();
    }
}
