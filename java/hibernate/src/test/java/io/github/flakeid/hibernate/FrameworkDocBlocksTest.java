package io.github.flakeid.hibernate;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/frameworks.md's Java blocks (fenced {@code java frameworks}): whole classes,
 * compiled against this module's test class path and run in a JVM of their own, with
 * JDBC_DATABASE_URL naming the fixture's PostgreSQL and FLAKEID_NODE set, as the doc
 * tells a reader to run them. This module runs the blocks that use no Spring (on
 * Hibernate 7); java/spring's SpringDocBlocksTest, the ones that do (on Spring Boot's
 * Hibernate).
 */
public class FrameworkDocBlocksTest {
  private static final Pattern CLASS = Pattern.compile("(?m)^public\\s+(?:final\\s+)?class\\s+(\\w+)");
  private static final Pattern PACKAGE = Pattern.compile("(?m)^package\\s+([\\w.]+);");

  /** Whether this module runs the block. */
  protected boolean mine(String code) {
    return !code.contains("import org.springframework.");
  }

  @TestFactory
  public Stream<DynamicTest> everyJavaFrameworksBlockRuns(@TempDir Path dir) throws Exception {
    Path script = Path.of("..", "..", "tests", "docs", "blocks.py").toAbsolutePath();
    Process p = new ProcessBuilder("python3", script.toString(), "extract", "java", dir.toString(), "--frameworks")
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor() == 0, "blocks.py extract: " + out);
    List<String[]> blocks = new ArrayList<>();
    for (String row : Files.readAllLines(dir.resolve("index.tsv"))) {
      String[] b = row.split("\t");
      if (mine(Files.readString(dir.resolve(b[0])))) blocks.add(b);
    }
    assertTrue(!blocks.isEmpty(), "no `java frameworks` block for " + getClass().getSimpleName() + " in docs/frameworks.md");
    return blocks.stream().map(b -> DynamicTest.dynamicTest(b[1] + ":" + b[2], () -> run(dir, b)));
  }

  static void run(Path extracted, String[] block) throws Exception {
    String code = Files.readString(extracted.resolve(block[0]));
    Matcher m = CLASS.matcher(code);
    if (!m.find()) fail(block[1] + ":" + block[2] + ": a `java frameworks` block is a whole public class");
    Matcher pkg = PACKAGE.matcher(code);
    String main = (pkg.find() ? pkg.group(1) + "." : "") + m.group(1);
    Path dir = Files.createTempDirectory(extracted, "block-");
    Path file = dir.resolve(m.group(1) + ".java");
    Files.writeString(file, code);
    String cp = System.getProperty("java.class.path");
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int rc = javac.run(null, null, null, "-cp", cp, "-d", dir.toString(), file.toString());
    assertTrue(rc == 0, block[1] + ":" + block[2] + ": the block does not compile (javac above)");

    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp", dir + File.pathSeparator + cp, main)
        .directory(dir.toFile()).redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.put("JDBC_DATABASE_URL", jdbcUrl());
    env.put("FLAKEID_NODE", "7");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail(block[1] + ":" + block[2] + ": timed out\n" + out);
    }
    assertTrue(p.exitValue() == 0, block[1] + ":" + block[2] + ": the block failed:\n" + out);
  }

  /** FLAKEID_TEST_POSTGRES_URL (postgres://user:password@host:port/db) as a JDBC URL. */
  static String jdbcUrl() {
    return TestDb.jdbcUrl();
  }
}
