package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ApiTest {
  @Test
  void aFirstId() {
    try (Generator gen = Generator.builder().datacenter(1).worker(2).build()) {
      // The engine stamps from a cached millisecond that may lag the true time by the
      // cache thread's wake-up latency (docs/design.md, "The clock"): a few ms on a
      // loaded machine, so "now-ish" is checked with a second's slack.
      long before = System.currentTimeMillis() - 1000;
      long id = gen.nextId();
      Parts p = FlakeId.decompose(id);
      assertEquals(1, p.datacenter());
      assertEquals(2, p.worker());
      assertEquals(34, gen.node());
      assertEquals(Layout.SNOWFLAKE, gen.layout());
      assertTrue(p.timestampMs() >= before && p.timestampMs() <= System.currentTimeMillis(), p.toString());
      assertEquals(Instant.ofEpochMilli(p.timestampMs()), p.instant());
      long[] ids = gen.nextIds(1000);
      assertTrue(ids[0] > id);
      for (int i = 1; i < ids.length; i++) assertTrue(ids[i] > ids[i - 1]);
      assertEquals(0, gen.nextIds(0).length);
      // The core's batch range, checked before the array is allocated.
      for (int n : new int[] {-1, (1 << 27) + 1, Integer.MAX_VALUE}) {
        ConfigException e = assertThrows(ConfigException.class, () -> gen.nextIds(n));
        assertEquals("n", e.field());
        assertTrue(e.getMessage().contains("n must be in 0..=134217728, got " + n), e.getMessage());
      }
    }
  }

  @Test
  void closedGeneratorsRefuse() {
    Generator gen = Generator.builder().build();
    gen.nextId();
    gen.close();
    gen.close(); // twice is fine
    assertThrows(IllegalStateException.class, gen::nextId);
    assertThrows(IllegalStateException.class, () -> gen.nextIds(2));
    // flakeid's own refusal, not the arena's: the check comes before the call.
    assertEquals("flakeid: the generator is closed", assertThrows(IllegalStateException.class, gen::stats).getMessage());
  }

  @Test
  void exceptionsAreTyped() {
    ConfigException e = assertThrows(ConfigException.class, () -> Generator.builder().worker(32).build());
    assertEquals("worker", e.field());
    assertEquals(ErrorKind.CONFIG, e.kind());
    assertEquals("invalid configuration: worker must be in 0..=31, got 32", e.getMessage());
    assertEquals("node", assertThrows(ConfigException.class, () -> Generator.builder().node(1).worker(2).build()).field().replace("worker", "node").replace("datacenter", "node"));
    ConfigException wait =
        assertThrows(ConfigException.class, () -> Generator.builder().maxWait(Duration.ofMillis(-1)).build());
    assertEquals("max_wait_ms", wait.field());
    IdParseException p = assertThrows(IdParseException.class, () -> FlakeId.decode("12x", Encoding.DECIMAL));
    assertEquals(2, p.position());
    assertThrows(ConfigException.class, () -> Layout.preset("nope"));
    assertTrue(FlakeIdException.class.isAssignableFrom(IdParseException.class));
  }

  /** Every status the library names maps to an ErrorKind, and every ErrorKind is one it names. */
  @Test
  void errorKindsAreExhaustive() {
    for (int s = 1; s < 1000; s++) {
      String name = Native.statusName(s);
      if (name.equals("unknown")) continue;
      ErrorKind k = ErrorKind.of(s);
      if (s < 100) {
        assertEquals(s, k.status(), "status " + s + " (" + name + ") has no ErrorKind: add it");
        assertEquals(name, k.label());
      } else {
        assertEquals(ErrorKind.INTERNAL, k);
      }
      FlakeIdException e = FlakeIdException.of(s, "m", "f", 1, 2);
      assertEquals(k, e.kind());
      assertNotEquals(FlakeIdException.class, e.getClass(), "status " + s + " has no exception class");
    }
    for (ErrorKind k : ErrorKind.values()) assertNotEquals("unknown", Native.statusName(k.status()), k.name());
    assertEquals(8, Set.of(ErrorKind.values()).size());
  }

  /** Failures on many threads at once: each sees its own details (they are per thread). */
  @Test
  void errorDetailsArePerThread() throws InterruptedException {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread[] threads = new Thread[8];
    for (int w = 0; w < threads.length; w++) {
      int pos = w % 4;
      threads[w] = Thread.ofVirtual().start(() -> {
        for (int i = 0; i < 2000; i++) {
          try {
            FlakeId.decode("0".repeat(pos) + "!", Encoding.DECIMAL);
            failure.set(new AssertionError("decoded"));
          } catch (IdParseException e) {
            if (e.position() != pos) failure.set(new AssertionError("position " + e.position() + ", want " + pos));
          }
        }
      });
    }
    for (Thread t : threads) t.join();
    if (failure.get() != null) throw new AssertionError(failure.get());
  }

  @Test
  void layoutsAndOptions() {
    try (Generator g = Generator.builder().layout(Layout.SONYFLAKE).node(0x1234).build()) {
      Parts p = FlakeId.decompose(g.nextId(), Layout.SONYFLAKE);
      assertEquals(0x1234, p.node());
      assertEquals(0, p.datacenter());
      assertEquals(0x1234, p.worker());
    }
    // Seed 001's vector.
    assertEquals(910499571847892992L, Layout.SNOWFLAKE.composeParts(1505914988849L, 17, 25, 0));
    Layout custom = Layout.custom(41, 0, 0, 22, 1, 1288834974657L, Order.TIME_NODE_SEQ);
    assertEquals(22, custom.sequenceBits());
    assertEquals((1L << 22) - 1, custom.maxSequence());
    assertEquals("18446744073709551615", FlakeId.encode(-1L, Encoding.DECIMAL));
  }

  @Test
  void manualClock() {
    ManualClock clock = ManualClock.create(1_700_000_000_000L, 0);
    try (Generator g = Generator.builder().clock(clock).node(3).build()) {
      clock.close(); // the generator keeps the clock's time
      assertEquals(1_700_000_000_000L, FlakeId.decompose(g.nextId()).timestampMs());
    }
  }

  @Test
  void stats() {
    Generator g;
    try (ManualClock clock = ManualClock.create(1_700_000_000_000L, 0)) {
      g = Generator.builder().clock(clock).node(3).build();
      g.nextIds(7);
      clock.set(1_700_000_000_000L - 25);
      assertThrows(ClockMovedBackwardsException.class, g::nextId);
      // The clock is still 25 ms behind the last ID: that is the lead.
      assertEquals(
          new Stats(7, 0, Duration.ZERO, Duration.ofMillis(25), 1, Duration.ofMillis(25), Optional.empty(), Optional.empty()),
          g.stats());
    }
    g.close();
    assertThrows(IllegalStateException.class, g::stats);
  }

  @Test
  void versionIsTheWorkspaces() {
    String pom = System.getProperty("flakeid.version.pom");
    assertEquals(pom, FlakeId.version(), "java/pom.xml's <version> and Cargo.toml's differ");
  }
}
