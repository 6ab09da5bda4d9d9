package io.github.flakeid.springwire;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flakeid.FlakeId;
import io.github.flakeid.Generator;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.orm.jpa.HibernateJpaAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two real JVMs on one host, each a Spring Boot app with the starter (the same
 * classpath as this test): with {@code flakeid.node=5} the second is refused at start
 * with the core's host-guard message, carried to Java's ConfigException; with a
 * {@code file://} lease both run, on distinct node ids, and issue no ID twice.
 */
class TwoJvmsTest {
  static final int IDS = 10_000;

  @EnableAutoConfiguration(exclude = {DataSourceAutoConfiguration.class, HibernateJpaAutoConfiguration.class})
  public static class App {}

  /**
   * A child JVM: starts the app with its arguments as properties; prints READY and its
   * node id, or REFUSED and the root cause; on "go" writes {@link #IDS} IDs of the
   * starter's generator to the file named by the property {@code test.out}.
   */
  public static void main(String[] args) throws IOException {
    ConfigurableApplicationContext ctx;
    try {
      ctx = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE).properties(args).run();
    } catch (RuntimeException e) {
      Throwable root = e;
      while (root.getCause() != null) root = root.getCause();
      System.out.println("REFUSED " + root.getClass().getName() + ": " + root.getMessage().replace('\n', ' '));
      System.exit(3);
      return;
    }
    Generator gen = ctx.getBean(Generator.class);
    System.out.println("READY " + gen.node());
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    if ("go".equals(in.readLine())) {
      StringBuilder out = new StringBuilder();
      for (int i = 0; i < IDS; i++) out.append(gen.nextId()).append('\n');
      Files.writeString(Path.of(ctx.getEnvironment().getProperty("test.out")), out);
      System.out.println("DONE");
    }
    in.readLine(); // until the parent closes stdin
    ctx.close();
  }

  record Child(Process process, BufferedReader out, PrintWriter in, String first) {
    void go() {
      in.println("go");
      in.flush();
    }

    String next() throws IOException {
      return out.readLine();
    }

    void end() throws InterruptedException {
      in.close();
      if (!process.waitFor(60, TimeUnit.SECONDS)) process.destroyForcibly();
    }
  }

  static Child start(String... props) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp", cp,
        TwoJvmsTest.class.getName(), "--spring.main.banner-mode=off", "--logging.level.root=WARN"));
    for (String p : props) cmd.add("--" + p);
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String first = null;
    for (String line; (line = out.readLine()) != null; ) {
      if (line.startsWith("READY ") || line.startsWith("REFUSED ")) {
        first = line;
        break;
      }
    }
    return new Child(p, out, new PrintWriter(p.getOutputStream(), true, StandardCharsets.UTF_8), first);
  }

  static List<Long> ids(Path file) throws IOException {
    return Files.readAllLines(file).stream().map(Long::parseLong).toList();
  }

  @Test
  void oneFixedNodeIdServesOneJvmTheSecondIsRefusedAtStart(@TempDir Path dir) throws Exception {
    Child a = start("flakeid.node=5", "test.out=" + dir.resolve("a"));
    try {
      assertThat(a.first()).isEqualTo("READY 5");
      Child b = start("flakeid.node=5", "test.out=" + dir.resolve("b"));
      try {
        assertThat(b.first()).startsWith("REFUSED io.github.flakeid.ConfigException")
            .contains("node id 5 of this layout is already in use on this host by process " + a.process().pid());
        assertThat(b.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(b.process().exitValue()).isEqualTo(3);
      } finally {
        b.end();
      }
      a.go();
      assertThat(a.next()).isEqualTo("DONE");
    } finally {
      a.end();
    }
    List<Long> got = ids(dir.resolve("a"));
    assertThat(got).hasSize(IDS).doesNotHaveDuplicates();
    assertThat(got).allMatch(id -> FlakeId.decompose(id).node() == 5);
  }

  @Test
  void withAFileLeaseBothRunOnTheirOwnNodeIds(@TempDir Path dir) throws Exception {
    String lease = "flakeid.lease=file://" + dir.resolve("leases");
    Files.createDirectories(dir.resolve("leases"));
    bothRunOnTheirOwnNodeIds(dir, lease);
  }

  /** No node id configured: each JVM takes a free one on the host. */
  @Test
  void withNoNodeIdBothRunOnTheirOwnNodeIds(@TempDir Path dir) throws Exception {
    bothRunOnTheirOwnNodeIds(dir, "test.none=1");
  }

  static void bothRunOnTheirOwnNodeIds(Path dir, String setting) throws Exception {
    Child a = start(setting, "test.out=" + dir.resolve("a"));
    Child b = start(setting, "test.out=" + dir.resolve("b"));
    try {
      assertThat(a.first()).startsWith("READY ");
      assertThat(b.first()).startsWith("READY ").isNotEqualTo(a.first());
      a.go();
      b.go();
      assertThat(a.next()).isEqualTo("DONE");
      assertThat(b.next()).isEqualTo("DONE");
    } finally {
      a.end();
      b.end();
    }
    List<Long> all = new ArrayList<>(ids(dir.resolve("a")));
    all.addAll(ids(dir.resolve("b")));
    assertThat(all).hasSize(2 * IDS);
    Set<Long> distinct = new HashSet<>(all);
    assertThat(all.size() - distinct.size()).as("IDs issued twice").isZero();
    Set<Long> nodesA = new HashSet<>();
    ids(dir.resolve("a")).forEach(id -> nodesA.add(FlakeId.decompose(id).node()));
    Set<Long> nodesB = new HashSet<>();
    ids(dir.resolve("b")).forEach(id -> nodesB.add(FlakeId.decompose(id).node()));
    assertThat(nodesA).hasSize(1);
    assertThat(nodesB).hasSize(1).doesNotContainAnyElementsOf(nodesA);
  }
}
