import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The build's guard of the Java level a module runs on: fails when a class file is newer than allowed.
 *
 * <pre>java ClassFileLevel.java MAX_MAJOR PATH...</pre>
 *
 * MAX_MAJOR is the newest class-file major version allowed (52 = Java 8, 55 = Java 11). Each PATH is a
 * directory of classes, a jar, or a class path (entries separated by the platform's separator): a module's own
 * classes and its runtime dependencies, since a dependency compiled for a newer Java breaks the application as
 * surely as our own classes would. Multi-release entries (META-INF/versions/N) and module-info are skipped: an
 * older JVM never loads them. Run by exec-maven-plugin in process-classes (see the parent pom).
 */
public final class ClassFileLevel {

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: java ClassFileLevel.java MAX_MAJOR PATH...");
            System.exit(2);
        }
        int max = Integer.parseInt(args[0]);
        List<String> offenders = new ArrayList<>();
        int checked = 0;
        for (int i = 1; i < args.length; i++) {
            for (String entry : args[i].split(File.pathSeparator)) {
                if (entry.isEmpty()) {
                    continue;
                }
                Path p = Paths.get(entry);
                if (Files.isDirectory(p)) {
                    try (Stream<Path> files = Files.walk(p)) {
                        for (Path f : (Iterable<Path>) files.filter(ClassFileLevel::isClass)::iterator) {
                            checked++;
                            try (InputStream in = Files.newInputStream(f)) {
                                check(in, p.relativize(f).toString(), entry, max, offenders);
                            }
                        }
                    }
                } else if (Files.isRegularFile(p) && entry.endsWith(".jar")) {
                    try (ZipFile zip = new ZipFile(p.toFile())) {
                        for (Enumeration<? extends ZipEntry> e = zip.entries(); e.hasMoreElements(); ) {
                            ZipEntry z = e.nextElement();
                            if (isClass(z.getName())) {
                                checked++;
                                try (InputStream in = zip.getInputStream(z)) {
                                    check(in, z.getName(), entry, max, offenders);
                                }
                            }
                        }
                    }
                }
            }
        }
        if (!offenders.isEmpty()) {
            System.err.println("class files newer than major version " + max + " (" + javaOf(max) + "):");
            offenders.stream().limit(20).forEach(o -> System.err.println("  " + o));
            if (offenders.size() > 20) {
                System.err.println("  ... " + (offenders.size() - 20) + " more");
            }
            System.exit(1);
        }
        System.out.println("class-file level: " + checked + " classes checked, none newer than " + max + " ("
                + javaOf(max) + ")");
    }

    private static boolean isClass(Path f) {
        return isClass(f.toString().replace(File.separatorChar, '/'));
    }

    private static boolean isClass(String name) {
        return name.endsWith(".class") && !name.endsWith("module-info.class") && !name.contains("META-INF/versions/");
    }

    private static void check(InputStream in, String name, String where, int max, List<String> offenders)
            throws IOException {
        DataInputStream d = new DataInputStream(in);
        if (d.readInt() != 0xCAFEBABE) {
            return;
        }
        d.readUnsignedShort(); // minor
        int major = d.readUnsignedShort();
        if (major > max) {
            offenders.add(name + " is " + major + " (" + javaOf(major) + ") in " + where);
        }
    }

    private static String javaOf(int major) {
        return "Java " + (major - 44);
    }
}
