package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The docs' Java blocks (java/README.md, docs/*.md), each compiled and run as written.
 * tests/docs/blocks.py finds them, the one parser of fences and flags for every language
 * ({@code blocks.py extract java DIR}); a block fenced {@code java no_run} is not run.
 *
 * <p>A block that declares a class is compiled as it is; any other is the body of {@code main}
 * in a class that imports {@code io.github.flakeid.*}. Each runs in a folder holding the
 * seal.key docs/sealing.md's examples read. Compiler messages name the doc and its line.
 */
class DocBlocksTest {
  record Block(String file, String path, int line) {
    @Override
    public String toString() {
      return path + ":" + line;
    }
  }

  static final Pattern CLASS =
      Pattern.compile("^(?:public\\s+)?(?:final\\s+)?class\\s+(\\w+)", Pattern.MULTILINE);
  static final String WRAP_HEAD =
      "import io.github.flakeid.*;\n\npublic class DocBlock {\n"
          + "  public static void main(String[] args) throws Exception {\n";
  static final int WRAP_LINES = 4;

  /** What a block must print, beyond exiting 0 (by doc). */
  static final Map<String, BiConsumer<Path, String>> CHECKS =
      Map.of(
          // A sealed ID that unseals, with the key and tweak it used, to an ID of worker 1.
          "docs/sealing.md",
          (dir, out) -> {
            try {
              String hex = Files.readString(dir.resolve("seal.key")).replaceAll("\\s+", "");
              try (Sealer s =
                  Sealer.create(
                      HexFormat.of().parseHex(hex), null, "orders".getBytes(StandardCharsets.UTF_8))) {
                long id = s.unseal(Long.parseLong(out.trim()));
                assertEquals(1, FlakeId.decompose(id).worker(), "unsealed " + id + ": not a worker-1 ID");
              }
            } catch (java.io.IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          });

  @TestFactory
  Stream<DynamicTest> everyJavaBlockRuns(@TempDir Path dir) throws Exception {
    Path script = Path.of("..", "tests", "docs", "blocks.py");
    Assumptions.assumeTrue(Files.exists(script), "tests/docs/blocks.py not found (outside the repository)");
    String out = runProcess(dir, List.of("python3", script.toAbsolutePath().toString(), "extract", "java", dir.toString()));
    assertTrue(out.startsWith("0\n"), "blocks.py extract java: " + out);
    List<Block> blocks = new ArrayList<>();
    for (String row : Files.readAllLines(dir.resolve("index.tsv"))) {
      String[] f = row.split("\t");
      blocks.add(new Block(f[0], f[1], Integer.parseInt(f[2])));
    }
    assertTrue(blocks.size() >= 2, "Java blocks in the docs: " + blocks + ", want java/README.md's and docs/sealing.md's");
    return blocks.stream().map(b -> DynamicTest.dynamicTest(b.toString(), () -> run(b, dir)));
  }

  static void run(Block b, Path extracted) throws Exception {
    String code = Files.readString(extracted.resolve(b.file()));
    Matcher m = CLASS.matcher(code);
    boolean whole = m.find();
    String cls = whole ? m.group(1) : "DocBlock";
    String source = whole ? code : WRAP_HEAD + code + "  }\n}\n";
    int offset = whole ? 0 : WRAP_LINES; // source line - offset = line in the block
    Path dir = Files.createTempDirectory(extracted, "block-");
    Files.copy(extracted.resolve("seal.key"), dir.resolve("seal.key"));
    Path file = dir.resolve(cls + ".java");
    Files.writeString(file, source);
    String cp = System.getProperty("java.class.path");

    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
    try (StandardJavaFileManager fm = javac.getStandardFileManager(diags, null, StandardCharsets.UTF_8)) {
      boolean ok =
          javac
              .getTask(null, fm, diags, List.of("-cp", cp, "-d", dir.toString()), null, fm.getJavaFileObjects(file))
              .call();
      if (!ok) {
        StringBuilder msg = new StringBuilder(b + ": the Java block does not compile:");
        for (Diagnostic<? extends JavaFileObject> d : diags.getDiagnostics()) {
          if (d.getKind() == Diagnostic.Kind.ERROR) {
            long at = d.getLineNumber() - offset;
            msg.append("\n  ").append(b.path()).append(':').append(b.line() + at).append(": ")
                .append(d.getMessage(Locale.ROOT));
          }
        }
        fail(msg.toString());
      }
    }

    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String out =
        runProcess(dir, List.of(javaBin, "--enable-native-access=ALL-UNNAMED", "-cp", dir + File.pathSeparator + cp, cls));
    assertTrue(out.startsWith("0\n"), b + ": the Java block failed, exit " + out);
    BiConsumer<Path, String> check = CHECKS.get(b.path());
    if (check != null) check.accept(dir, out.substring(2));
  }

  /** Runs cmd in dir: "exit status\noutput" (stdout and stderr), killed after 60 s. */
  static String runProcess(Path dir, List<String> cmd) throws Exception {
    Path log = Files.createTempFile(dir, "out-", ".txt");
    Process p =
        new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
      return "timed out after 60 s\n" + Files.readString(log);
    }
    return p.exitValue() + "\n" + Files.readString(log);
  }
}
