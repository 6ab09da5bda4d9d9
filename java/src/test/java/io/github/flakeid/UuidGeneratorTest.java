package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The 128-bit generator from Java: java.util.UUID out, monotonic, options by name, refusals. */
class UuidGeneratorTest {
  static final long T0 = 1_764_000_000_000L;

  /** UUIDv7s compare as unsigned 128-bit numbers (UUID.compareTo is signed per half). */
  static int compare(UUID a, UUID b) {
    int hi = Long.compareUnsigned(a.getMostSignificantBits(), b.getMostSignificantBits());
    return hi != 0 ? hi : Long.compareUnsigned(a.getLeastSignificantBits(), b.getLeastSignificantBits());
  }

  @Test
  void monotonicWithinOneMillisecond() {
    try (ManualClock clock = ManualClock.create(T0, 0);
        UuidGenerator g = UuidGenerator.builder().clock(clock).set("max_borrow_ms", "10").build()) {
      UUID prev = null;
      for (int i = 0; i < 70_000; i++) {
        UUID u = g.nextUuid();
        assertEquals(7, u.version());
        if (prev != null) assertTrue(compare(prev, u) < 0, i + ": " + u + " after " + prev);
        prev = u;
      }
      assertEquals(T0 + 1, Uuids.timestampMs(prev), "65,536 in a millisecond, then the next");
      UuidStats s = g.stats();
      assertEquals(70_000, s.idsIssued());
      assertEquals(Duration.ofMillis(1), s.lead());
      assertEquals(0, s.reseeds());
      assertEquals(26, g.nextUlid().length());
      String tid = g.nextTypeId("order");
      assertTrue(tid.startsWith("order_") && tid.length() == 32, tid);
      clock.set(T0 - 5000);
      ClockMovedBackwardsException e = assertThrows(ClockMovedBackwardsException.class, g::nextUuid);
      assertTrue(e.byMs() > 0);
    }
  }

  @Test
  void aBatchFollowsTheCallsAroundIt() {
    try (ManualClock clock = ManualClock.create(T0, 0);
        UuidGenerator g = UuidGenerator.builder().clock(clock).set("max_borrow_ms", "10").build()) {
      UUID before = g.nextUuid();
      UUID[] batch = g.nextUuids(70_000);
      UUID after = g.nextUuid();
      UUID prev = before;
      for (UUID u : batch) {
        assertTrue(compare(prev, u) < 0, u + " after " + prev);
        assertEquals(7, u.version());
        prev = u;
      }
      assertTrue(compare(prev, after) < 0);
      assertEquals(0, g.nextUuids(0).length);
      ConfigException e = assertThrows(ConfigException.class, () -> g.nextUuids(Integer.MAX_VALUE));
      assertEquals("n", e.field());
      assertEquals(70_002, g.stats().idsIssued());
    }
  }

  @Test
  void optionsAreTheEngines() {
    assertEquals(List.of("overflow", "clock_backwards", "max_borrow_ms", "max_wait_ms"), UuidGenerator.optionNames());
    UuidGenerator.Builder b = UuidGenerator.builder();
    for (String[] c : new String[][] {
        {"node", "3", "node"}, {"layout", "sonyflake", "layout"}, {"overflow", "sometimes", "overflow"},
        {"max_wait_ms", "soon", "max_wait_ms"}, {"workerId", "1", "options"}}) {
      ConfigException e = assertThrows(ConfigException.class, () -> b.set(c[0], c[1]));
      assertEquals(c[2], e.field(), e.getMessage());
    }
    b.set("max_borrow_ms", "1000000000000");
    ConfigException e = assertThrows(ConfigException.class, b::build);
    assertEquals("max_borrow_ms", e.field());
  }

  @Test
  void threadsNeverRepeat() throws InterruptedException {
    try (UuidGenerator g = UuidGenerator.builder().build()) {
      int threads = 8, per = 20_000;
      UUID[][] got = new UUID[threads][per];
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread[] ts = new Thread[threads];
      for (int w = 0; w < threads; w++) {
        int k = w;
        ts[w] = new Thread(() -> {
          try {
            for (int i = 0; i < per; i++) got[k][i] = g.nextUuid();
          } catch (Throwable t) {
            failure.set(t);
          }
        });
        ts[w].start();
      }
      for (Thread t : ts) t.join();
      assertNull(failure.get());
      Set<UUID> all = new HashSet<>();
      for (UUID[] ids : got) {
        for (int i = 0; i < ids.length; i++) {
          if (i > 0) assertTrue(compare(ids[i - 1], ids[i]) < 0, "each thread's IDs increase");
          all.add(ids[i]);
        }
      }
      assertEquals(threads * per, all.size());
    }
  }

  @Test
  void parsersRefuseWithThePosition() {
    IdParseException e = assertThrows(IdParseException.class,
        () -> Uuids.parseUuid("017f22e2-79b0-7cc3-98c4-dc0c0c07398g"));
    assertEquals(35, e.position());
    e = assertThrows(IdParseException.class, () -> Uuids.parseUlid("8ZZZZZZZZZZZZZZZZZZZZZZZZZ"));
    assertEquals(0, e.position());
    e = assertThrows(IdParseException.class, () -> Uuids.parseTypeId("user_01FWHE4YDGFK1SHH6W1G60EECF"));
    assertTrue(e.position() >= 5, e.getMessage());
    assertThrows(IdParseException.class, () -> Uuids.timestampMs(UUID.randomUUID()), "a v4 has no time");
    assertThrows(ConfigException.class, () -> Uuids.formatTypeId("User", UUID.randomUUID()));
    assertThrows(ConfigException.class, () -> Uuids.composeUuid7(0, 4096, 0));
    UUID u = Uuids.parseUuid("017F22E279B07CC398C4DC0C0C07398F");
    assertEquals("017f22e2-79b0-7cc3-98c4-dc0c0c07398f", u.toString());
    assertEquals(1645557742000L, Uuids.timestampMs(u));
  }

  @Test
  void closedGeneratorsRefuse() {
    UuidGenerator g = UuidGenerator.builder().build();
    g.nextUuid();
    g.close();
    g.close();
    assertEquals("flakeid: the generator is closed", assertThrows(IllegalStateException.class, g::nextUuid).getMessage());
    assertThrows(IllegalStateException.class, g::nextUlid);
    assertThrows(IllegalStateException.class, g::stats);
    assertFalse(UuidGenerator.optionNames().isEmpty());
  }
}
