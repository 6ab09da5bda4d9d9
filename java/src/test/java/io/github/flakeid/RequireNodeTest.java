package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * FLAKEID_REQUIRE_NODE=true is the engine's to read, so {@code Generator.builder().build()}
 * honours it as the CLI and the adapters do; {@code nodeOrigin()} is the engine's decision. A
 * JVM cannot set its own environment: each check runs in a JVM of its own ({@link #main}) with
 * the variables set.
 */
class RequireNodeTest {
  /** The child: builds with no node id, then with one, and prints what happened. */
  public static void main(String[] args) {
    try (Generator g = Generator.builder().build()) {
      System.out.println("built node " + g.node() + " (" + g.nodeOrigin() + ")");
    } catch (ConfigException e) {
      System.out.println("refused " + e.field() + ": " + e.getMessage());
    }
    try (Generator g = Generator.builder().node(3).build()) {
      System.out.println("given node " + g.node() + " (" + g.nodeOrigin() + ")");
    }
  }

  /** The child's output, run with {@code env}. */
  private static String child(Map<String, String> env) throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    ProcessBuilder pb =
        new ProcessBuilder(
                java.toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                RequireNodeTest.class.getName())
            .redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  @Test
  void aBuildWithNoNodeIdIsRefused() throws Exception {
    String out = child(Map.of("FLAKEID_REQUIRE_NODE", "true"));
    assertTrue(out.contains("refused node: ") && out.contains("require_node"), out);
    assertTrue(out.contains("FLAKEID_NODE"), out);
    assertTrue(out.contains("given node 3 (explicit)"), out);
  }

  /** No node id in a guard directory named explicitly (the one line a container needs). */
  @Test
  void theNodeOriginIsTheEngines(@TempDir Path guard) throws Exception {
    String out = child(Map.of("FLAKEID_HOST_GUARD", guard.toString()));
    assertTrue(out.matches("(?s).*built node [0-9]+ \\(host\\).*"), out);
    assertTrue(out.contains("given node 3 (explicit)"), out);
  }
}
