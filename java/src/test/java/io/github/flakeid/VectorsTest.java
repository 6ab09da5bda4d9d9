package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.function.Executable;

/**
 * Every case of every file in tests/vectors through the Java API: the proof that Java
 * issues and reads exactly the IDs every other language does. An unknown file or
 * section fails (the vectors are the cross-language contract).
 */
class VectorsTest {
  static final Path DIR = Path.of(System.getProperty("flakeid.vectors", "../tests/vectors"));

  /** The sections of each file and what runs a case of each. */
  static final Map<String, Map<String, Consumer<JsonNode>>> FILES =
      Map.of(
          "layouts.json",
          Map.of(
              "presets", VectorsTest::preset,
              "invalid_layouts", VectorsTest::invalidLayout,
              "invalid_generators", VectorsTest::invalidGenerator),
          "compose.json",
          Map.of(
              "cases", VectorsTest::compose,
              "compose_errors", VectorsTest::composeError,
              "decompose_errors", VectorsTest::decomposeError,
              "ranges", VectorsTest::range),
          "encodings.json",
          Map.of(
              "cases", VectorsTest::encoding,
              "decode_aliases", VectorsTest::alias,
              "bad", VectorsTest::badText),
          "timelines.json", Map.of("timelines", VectorsTest::timeline),
          "options.json",
          Map.of(
              "options", VectorsTest::optionEntry, "cases", VectorsTest::option,
              "env_cases", VectorsTest::optionEnv, "settings_cases", VectorsTest::optionSettings),
          "seal.json", Map.of("groups", VectorsTest::sealGroup, "invalid", VectorsTest::sealInvalid),
          "uuid.json", UuidVectors.SECTIONS,
          "wide.json",
          Map.of(
              "functions", VectorsTest::wideFunction,
              "explicit_times", VectorsTest::explicitTime,
              "shifts", VectorsTest::shift));

  /**
   * The core's table of the 128-bit family's functions: the java column names a public
   * method, {@code Class.method} (null: the note says what does it here).
   */
  static void wideFunction(JsonNode c) {
    if (c.get("java").isNull()) {
      assertTrue(!str(c, "note").isEmpty(), "no Java method and no note: " + c);
      return;
    }
    String[] name = str(c, "java").split("\\.");
    Class<?> cls;
    try {
      cls = Class.forName("io.github.flakeid." + name[0]);
    } catch (ClassNotFoundException e) {
      throw new AssertionError(str(c, "java") + ": no class " + name[0], e);
    }
    assertTrue(
        java.util.Arrays.stream(cls.getMethods()).anyMatch(m -> m.getName().equals(name[1])),
        str(c, "java") + " (" + str(c, "what") + ") is not a public method");
  }

  /**
   * An explicit time ({@link UuidGenerator#uuidAt(long)}): the UUID's first 12 hex digits, version
   * 7 and RFC 9562's variant, no slot of the sequence taken; or the refusal.
   */
  static void explicitTime(JsonNode c) {
    JsonNode v = c.get("unix_ms");
    if (!v.canConvertToLong()) return; // past a long: Java cannot ask for it
    try (UuidGenerator g = UuidGenerator.builder().build()) {
      if (c.has("error")) {
        expectError(c, () -> g.uuidAt(v.asLong()));
        return;
      }
      java.util.UUID u = g.uuidAt(v.asLong());
      assertEquals(str(c, "time_hex"), String.format("%012x", u.getMostSignificantBits() >>> 16));
      assertTrue(u.version() == 7 && u.variant() == 2, u.toString());
      assertEquals(0, g.stats().idsIssued(), "an explicit time took a slot of the sequence");
    }
  }

  /** A shifted now: within [clock before, clock after] + the shift; or the refusal. */
  static void shift(JsonNode c) {
    long shift = num(c, "shift_ms");
    try (UuidGenerator g = UuidGenerator.builder().build()) {
      if (c.has("error")) {
        expectError(c, () -> g.uuidShifted(Duration.ofMillis(shift)));
        return;
      }
      long before = System.currentTimeMillis();
      java.util.UUID u = g.uuidShifted(Duration.ofMillis(shift));
      long after = System.currentTimeMillis();
      long ms = u.getMostSignificantBits() >>> 16;
      assertTrue(ms >= before + shift && ms <= after + shift, ms + " not in [" + before + ", " + after + "] + " + shift);
    }
  }

  /** Files the C ABI cannot run, and why. */
  static final Map<String, String> NOT_IN_C_ABI =
      // Run by the core, the CLI and the service only: the C ABI has no auto-detecting decode.
      Map.of("decode_auto.json", "decode_auto: core, CLI and service only");

  @TestFactory
  Stream<DynamicTest> vectors() throws IOException {
    ObjectMapper json = new ObjectMapper();
    List<DynamicTest> tests = new ArrayList<>();
    List<Path> files;
    try (Stream<Path> s = Files.list(DIR)) {
      files = s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
    assertTrue(files.size() >= FILES.size(), "no vector files in " + DIR);
    for (Path path : files) {
      String name = path.getFileName().toString();
      if (NOT_IN_C_ABI.containsKey(name)) continue;
      Map<String, Consumer<JsonNode>> sections = FILES.get(name);
      if (sections == null) {
        tests.add(failing(name, "tests/vectors/" + name + " is not run by the Java tests: add it to VectorsTest.FILES"));
        continue;
      }
      JsonNode root = json.readTree(path.toFile());
      root.fieldNames().forEachRemaining(key -> {
        if (!key.equals("_comment") && !sections.containsKey(key)) {
          tests.add(failing(name + " " + key, name + ": unknown section " + key + ": teach VectorsTest to run it"));
        }
      });
      sections.forEach((section, run) -> {
        JsonNode cases = root.path(section);
        if (!cases.isArray() || cases.isEmpty()) {
          tests.add(failing(name + " " + section, name + ": section " + section + " missing or empty"));
        }
        for (int i = 0; i < cases.size(); i++) {
          JsonNode c = cases.get(i);
          tests.add(DynamicTest.dynamicTest(name + " " + section + "[" + i + "]", () -> run.accept(c)));
        }
      });
    }
    return tests.stream();
  }

  static DynamicTest failing(String name, String message) {
    return DynamicTest.dynamicTest(name, () -> fail(message));
  }

  // --- reading cases ---

  static long num(JsonNode c, String key) {
    JsonNode v = c.get(key);
    if (v == null || !v.isIntegralNumber()) fail("member " + key + " missing or not a number in " + c);
    return v.asLong();
  }

  static String str(JsonNode c, String key) {
    JsonNode v = c.get(key);
    if (v == null || !v.isTextual()) fail("member " + key + " missing or not a string in " + c);
    return v.asText();
  }

  /** IDs are decimal strings, up to 2^64 - 1 (Java: the same bits in a long). */
  static long id(String s) {
    return Long.parseUnsignedLong(s);
  }

  static Order order(String s) {
    return switch (s) {
      case "time|node|seq" -> Order.TIME_NODE_SEQ;
      case "time|seq|node" -> Order.TIME_SEQ_NODE;
      default -> throw new AssertionError("unknown order " + s);
    };
  }

  static Layout layout(JsonNode spec) {
    if (spec.isTextual()) return Layout.preset(spec.asText());
    return Layout.custom(
        (int) num(spec, "time_bits"),
        (int) num(spec, "datacenter_bits"),
        (int) num(spec, "worker_bits"),
        (int) num(spec, "sequence_bits"),
        num(spec, "tick_ms"),
        num(spec, "epoch_ms"),
        order(str(spec, "order")));
  }

  /** The call fails as the case says: kind, and field / by_ms / position when pinned. */
  static void expectError(JsonNode c, Executable call) {
    FlakeIdException e = assertThrows(FlakeIdException.class, call);
    String want = str(c, "error");
    assertEquals(want, e.kind().label(), e.getMessage());
    Class<?> type =
        switch (want) {
          case "config" -> ConfigException.class;
          case "clock_backwards" -> ClockMovedBackwardsException.class;
          case "time_exhausted" -> TimeExhaustedException.class;
          case "parse" -> IdParseException.class;
          case "fork" -> ForkException.class;
          case "lease" -> LeaseException.class;
          case "interrupted" -> WaitInterruptedException.class;
          default -> throw new AssertionError("unknown error kind " + want);
        };
    assertEquals(type, e.getClass());
    assertTrue(e.getMessage() != null && !e.getMessage().isEmpty(), "an error needs a message");
    if (c.has("field")) assertEquals(str(c, "field"), ((ConfigException) e).field(), e.getMessage());
    if (c.has("by_ms")) assertEquals(num(c, "by_ms"), ((ClockMovedBackwardsException) e).byMs());
    if (c.has("position")) assertEquals(num(c, "position"), ((IdParseException) e).position());
  }

  // --- layouts.json ---

  static void preset(JsonNode c) {
    Layout l = Layout.preset(str(c, "name"));
    assertEquals(l, Layout.preset(str(c, "name").toUpperCase(java.util.Locale.ROOT)));
    assertEquals(num(c, "time_bits"), l.timeBits());
    assertEquals(num(c, "datacenter_bits"), l.datacenterBits());
    assertEquals(num(c, "worker_bits"), l.workerBits());
    assertEquals(num(c, "node_bits"), l.nodeBits());
    assertEquals(num(c, "sequence_bits"), l.sequenceBits());
    assertEquals(num(c, "tick_ms"), l.tickMs());
    assertEquals(num(c, "epoch_ms"), l.epochMs());
    assertEquals(order(str(c, "order")), l.order());
    assertEquals(num(c, "last_timestamp_ms"), l.lastTimestampMs());
    assertEquals(id(str(c, "max_id")), l.maxId());
    Map<String, Layout> constants =
        Map.of("snowflake", Layout.SNOWFLAKE, "flake", Layout.FLAKE, "discord", Layout.DISCORD,
            "sonyflake", Layout.SONYFLAKE, "baidu", Layout.BAIDU, "instagram", Layout.INSTAGRAM,
            "js53", Layout.JS53);
    assertEquals(constants.get(str(c, "name")), l);
  }

  static void invalidLayout(JsonNode c) {
    expectError(c, () -> layout(c.get("layout")));
  }

  /** Sets option {@code key} to {@code v} through its typed Builder method; false when it has none. */
  static boolean setTyped(Generator.Builder b, String key, JsonNode v) {
    switch (key) {
      case "node" -> {
        if (v.isTextual()) b.nodeSource(v.asText());
        else b.node(v.asLong());
      }
      case "datacenter" -> b.datacenter(v.asLong());
      case "worker" -> b.worker(v.asLong());
      case "overflow" -> b.overflow(overflow(v.asText()));
      case "clock_backwards" -> b.clockBackwards(clockBackwards(v.asText()));
      case "max_borrow_ms" -> b.maxBorrow(Duration.ofMillis(v.asLong()));
      case "max_wait_ms" -> b.maxWait(Duration.ofMillis(v.asLong()));
      case "lease" -> b.lease(v.asText());
      case "lease_ttl_ms" -> b.leaseTtl(Duration.ofMillis(v.asLong()));
      case "max_sequence" -> b.maxSequence(v.asLong());
      case "state" -> b.state(v.asText());
      case "require_node" -> b.requireNode(v.asBoolean());
      default -> {
        return false;
      }
    }
    return true;
  }

  static void invalidGenerator(JsonNode c) {
    Generator.Builder b = Generator.builder().layout(layout(c.get("layout")));
    c.get("options").properties().forEach(e -> {
      if (!setTyped(b, e.getKey(), e.getValue())) fail("unknown option " + e.getKey() + " in the vector");
    });
    // Java's enums cannot hold the vectors' out-of-range names: check those by name.
    JsonNode o = c.get("options");
    if (o.has("overflow") && overflow(o.get("overflow").asText()) == null
        || o.has("clock_backwards") && clockBackwards(o.get("clock_backwards").asText()) == null) {
      assertThrows(IllegalArgumentException.class, () -> enumOf(o));
      return;
    }
    expectError(c, b::build);
  }

  /** Each option of the core's table and the Builder method that sets it. */
  static final Map<String, String> OPTION_METHODS =
      Map.ofEntries(
          Map.entry("datacenter", "datacenter"), Map.entry("worker", "worker"), Map.entry("node", "node"),
          Map.entry("layout", "layout"), Map.entry("overflow", "overflow"),
          Map.entry("clock_backwards", "clockBackwards"), Map.entry("max_borrow_ms", "maxBorrow"),
          Map.entry("max_wait_ms", "maxWait"), Map.entry("lease", "lease"), Map.entry("lease_ttl_ms", "leaseTtl"),
          Map.entry("max_sequence", "maxSequence"), Map.entry("clock", "clock"), Map.entry("state", "state"),
          Map.entry("require_node", "requireNode"));

  /**
   * Each option of the core's table has a Builder method or, with none of its own (every option
   * added after require_node), is a name Builder.set takes (the C library keeps it in
   * flakeid_options' by-name slots).
   */
  static void optionEntry(JsonNode c) {
    String method = OPTION_METHODS.get(c.get("name").asText());
    if (method == null) {
      assertTrue(
          Generator.optionNames().contains(c.get("name").asText()),
          "option " + c.get("name") + " has no Builder method and is no name Builder.set takes");
      return;
    }
    assertTrue(
        java.util.Arrays.stream(Generator.Builder.class.getMethods()).anyMatch(m -> m.getName().equals(method)),
        "Generator.Builder has no " + method);
  }

  /**
   * Every setter of Generator.Builder is an option of the core's table (OPTION_METHODS, held to
   * tests/vectors/options.json by optionEntry; nodeSource is the text form of node), so the typed
   * builder can neither miss an option nor grow one the engine lacks.
   */
  @Test
  void builderHoldsOnlyTheTable() {
    for (java.lang.reflect.Method m : Generator.Builder.class.getDeclaredMethods()) {
      if (!java.lang.reflect.Modifier.isPublic(m.getModifiers()) || m.getReturnType() != Generator.Builder.class) {
        continue;
      }
      assertTrue(
          OPTION_METHODS.containsValue(m.getName()) || m.getName().equals("nodeSource") || m.getName().equals("set"),
          "Generator.Builder." + m.getName() + " is no option of the core's table");
    }
  }

  /**
   * Every setting of the core's table (tests/vectors/options.json) goes through Builder.set, at
   * its default, into one generator that builds: a new option needs no Java method (the C library
   * keeps one with no field of its own in flakeid_options' by-name slots), and one set refuses
   * fails here.
   */
  @Test
  void setEveryOptionByName() throws IOException {
    JsonNode rows = new ObjectMapper().readTree(DIR.resolve("options.json").toFile()).get("options");
    try (ManualClock clock = ManualClock.create(1_700_000_000_000L, 0)) {
      Generator.Builder b = Generator.builder().clock(clock);
      int set = 0;
      for (JsonNode r : rows) {
        // Not from outside a program, no default text (node, lease, state), or needs another.
        if (!r.get("setting").asBoolean() || r.get("default").asText().isEmpty() || !r.get("requires").isNull()) {
          continue;
        }
        b.set(r.get("name").asText(), r.get("default").asText());
        set++;
      }
      try (Generator g = b.build()) {
        assertTrue(set >= 8 && g.node() == 0, set + " options set by name, node " + g.node());
      }
    }
  }

  /** The environment's options (name -> text) through Builder.set, with requireNode, on a manual clock. */
  static void optionEnv(JsonNode c) {
    try (ManualClock clock = ManualClock.create(1_700_000_000_000L, 0)) {
      Executable build = () -> {
        Generator.Builder b = Generator.builder().requireNode(true).clock(clock);
        for (String name : Generator.optionNames()) { // the table's order, as every binding applies them
          if (c.get("options").has(name)) b.set(name, c.get("options").get(name).asText());
        }
        b.build().close();
      };
      if (c.has("error")) expectError(c, build);
      else assertDoesNotThrow(build);
    }
  }

  /** A settings key set() refuses is named as every binding names it; optionNames() is the table's. */
  static void optionSettings(JsonNode c) {
    List<String> names = Generator.optionNames();
    if (c.has("names")) c.get("names").forEach(n -> assertTrue(names.contains(n.asText()), n + " not in " + names));
    if (!c.has("error")) return;
    FlakeIdException e = assertThrows(FlakeIdException.class, () -> {
      for (JsonNode k : c.get("keys")) {
        try {
          Generator.builder().set(k.asText(), "1");
        } catch (ConfigException x) {
          if (x.getMessage().contains("unknown setting")) throw x;
        }
      }
    });
    expectError(c, () -> { throw e; });
    assertTrue(e.getMessage().contains(str(c, "message_starts").replace("invalid configuration: ", "")), e.getMessage());
  }

  /**
   * The case again with every option through Builder.set, as text, on a manual clock: the path of
   * an option with no method of its own (the C library's by-name slots), so a slot the library
   * dropped fails the case's error here.
   */
  static void optionByName(JsonNode c) {
    try (ManualClock clock = ManualClock.create(1_700_000_000_000L, 0)) {
      Executable build = () -> {
        Generator.Builder b = Generator.builder().layout(layout(c.get("layout"))).clock(clock);
        c.get("options").properties().forEach(e -> b.set(e.getKey(), e.getValue().asText()));
        b.build().close();
      };
      if (c.has("error")) expectError(c, build);
      else assertDoesNotThrow(build, "by name");
    }
  }

  static void option(JsonNode c) {
    optionByName(c);
    Generator.Builder b = Generator.builder().layout(layout(c.get("layout")));
    Map<String, String> byName = new java.util.LinkedHashMap<>();
    c.get("options").properties().forEach(e -> {
      if (!setTyped(b, e.getKey(), e.getValue())) {
        byName.put(e.getKey(), e.getValue().asText()); // no Builder method: by name, as text
      }
    });
    JsonNode o = c.get("options");
    if (o.has("overflow") && overflow(o.get("overflow").asText()) == null
        || o.has("clock_backwards") && clockBackwards(o.get("clock_backwards").asText()) == null) {
      assertThrows(IllegalArgumentException.class, () -> enumOf(o));
      return;
    }
    Executable build = () -> {
      byName.forEach(b::set);
      b.build().close();
    };
    if (c.has("error")) expectError(c, build);
    else assertDoesNotThrow(build);
  }

  /** What a caller gets for a policy name the enum does not have. */
  static void enumOf(JsonNode o) {
    if (o.has("overflow")) Overflow.valueOf(o.get("overflow").asText().toUpperCase(java.util.Locale.ROOT));
    if (o.has("clock_backwards"))
      ClockBackwards.valueOf(o.get("clock_backwards").asText().toUpperCase(java.util.Locale.ROOT));
  }

  static Overflow overflow(String s) {
    return switch (s) {
      case "wait" -> Overflow.WAIT;
      case "borrow" -> Overflow.BORROW;
      default -> null;
    };
  }

  static ClockBackwards clockBackwards(String s) {
    return switch (s) {
      case "error" -> ClockBackwards.ERROR;
      case "wait" -> ClockBackwards.WAIT;
      case "monotonic" -> ClockBackwards.MONOTONIC;
      default -> null;
    };
  }

  // --- compose.json ---

  static void compose(JsonNode c) {
    Layout l = layout(c.get("layout"));
    long want = id(str(c, "id"));
    assertEquals(want, l.compose(num(c, "timestamp_ms"), num(c, "node"), num(c, "sequence")));
    assertEquals(want, l.composeParts(num(c, "timestamp_ms"), num(c, "datacenter"), num(c, "worker"), num(c, "sequence")));
    Parts expected = new Parts(num(c, "timestamp_ms"), num(c, "ticks"), num(c, "node"), num(c, "datacenter"),
        num(c, "worker"), num(c, "sequence"));
    assertEquals(expected, FlakeId.decompose(want, l));
    if (c.get("layout").asText().equals("snowflake")) {
      assertEquals(expected, FlakeId.decompose(want));
    }
  }

  static void composeError(JsonNode c) {
    Layout l = layout(c.get("layout"));
    expectError(c, () -> l.compose(num(c, "timestamp_ms"), num(c, "node"), num(c, "sequence")));
  }

  static void decomposeError(JsonNode c) {
    Layout l = layout(c.get("layout"));
    expectError(c, () -> l.decompose(id(str(c, "id"))));
  }

  static void range(JsonNode c) {
    Layout.IdRange r = layout(c.get("layout")).idRange(num(c, "start_ms"), num(c, "end_ms"));
    assertEquals(new Layout.IdRange(id(str(c, "first")), id(str(c, "last"))), r);
  }

  // --- encodings.json ---

  static void encoding(JsonNode c) {
    long id = id(str(c, "id"));
    for (Encoding e : Encoding.values()) {
      String want = str(c, e.name().toLowerCase(java.util.Locale.ROOT));
      assertEquals(want, FlakeId.encode(id, e), e.name());
      assertEquals(id, FlakeId.decode(want, e), e.name());
    }
    byte[] bytes = java.nio.ByteBuffer.allocate(8).putLong(id).array();
    assertArrayEquals(HexFormat.of().parseHex(str(c, "bytes")), bytes);
  }

  static void alias(JsonNode c) {
    Encoding e = Encoding.valueOf(str(c, "encoding").toUpperCase(java.util.Locale.ROOT));
    assertEquals(id(str(c, "id")), FlakeId.decode(str(c, "text"), e));
  }

  static void badText(JsonNode c) {
    Encoding e = Encoding.valueOf(str(c, "encoding").toUpperCase(java.util.Locale.ROOT));
    expectError(c, () -> FlakeId.decode(str(c, "text"), e));
  }

  // --- timelines.json ---

  static void timeline(JsonNode t) {
    try (ManualClock clock = ManualClock.create(num(t, "start_ms"), num(t, "auto_advance_ms"));
        Generator g =
            Generator.builder()
                .layout(layout(t.get("layout")))
                .node(num(t, "node"))
                .overflow(overflow(str(t, "overflow")))
                .clockBackwards(clockBackwards(str(t, "clock_backwards")))
                .maxBorrow(Duration.ofMillis(num(t, "max_borrow_ms")))
                .maxWait(Duration.ofMillis(num(t, "max_wait_ms")))
                .clock(clock)
                .build()) {
      assertEquals(num(t, "node"), g.node());
      int i = 0;
      for (JsonNode step : t.get("steps")) {
        String where = str(t, "name") + ", step " + i++ + " " + step;
        switch (str(step, "op")) {
          case "set" -> {
            clock.set(num(step, "ms"));
            continue;
          }
          case "next" -> {
            if (step.has("error")) expectError(step, g::nextId);
            else assertEquals(id(str(step, "id")), g.nextId(), where);
          }
          case "next_ids" -> {
            int n = (int) num(step, "n");
            if (step.has("error")) {
              expectError(step, () -> g.nextIds(n));
            } else {
              long[] want = new long[n];
              for (int k = 0; k < n; k++) want[k] = id(step.get("ids").get(k).asText());
              assertArrayEquals(want, g.nextIds(n), where);
            }
          }
          default -> fail(where + ": unknown op");
        }
        if (step.has("clock_ms")) assertEquals(num(step, "clock_ms"), clock.nowMs(), where);
      }
    }
  }

  // --- seal.json ---

  static Sealer sealer(JsonNode c) {
    HexFormat hex = HexFormat.of();
    byte[] tweak = c.has("tweak") ? hex.parseHex(str(c, "tweak")) : new byte[0];
    return Sealer.create(hex.parseHex(str(c, "key")), layout(c.get("layout")), tweak);
  }

  static void sealGroup(JsonNode g) {
    try (Sealer s = sealer(g)) {
      assertEquals(num(g, "bits"), s.bits());
      assertTrue(g.get("cases").size() > 0, "a group without cases");
      for (JsonNode c : g.get("cases")) {
        long id = id(str(c, "id"));
        long sealed = id(str(c, "sealed"));
        assertEquals(sealed, s.seal(id), "seal(" + str(c, "id") + ")");
        assertEquals(id, s.unseal(sealed), "unseal(" + str(c, "sealed") + ")");
      }
    }
  }

  static void sealInvalid(JsonNode c) {
    String op = str(c, "op");
    expectError(c, () -> {
      if (op.equals("new")) {
        sealer(c).close();
        return;
      }
      try (Sealer s = sealer(c)) {
        long id = id(str(c, "id"));
        if (op.equals("seal")) s.seal(id);
        else if (op.equals("unseal")) s.unseal(id);
        else fail("unknown op " + op);
      }
    });
  }
}
