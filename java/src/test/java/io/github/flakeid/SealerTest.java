package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Sealed IDs beyond the shared vectors (VectorsTest runs seal.json). */
class SealerTest {
  static final byte[] KEY = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  @Test
  void roundTripsAndStaysInRange() {
    for (String name : List.of("snowflake", "discord", "sonyflake")) {
      Layout l = Layout.preset(name);
      try (Sealer s = Sealer.create(KEY, l, new byte[] {1, 2, 3})) {
        SplittableRandom r = new SplittableRandom(7);
        long max = l.maxId();
        for (int i = 0; i < 2000; i++) {
          long id = r.nextLong() & max;
          long sealed = s.seal(id);
          assertTrue(Long.compareUnsigned(sealed, max) <= 0, name + ": " + sealed);
          assertEquals(id, s.unseal(sealed), name);
        }
      }
    }
  }

  /** A 21-bit layout's sealing is a permutation of all 2^21 values. */
  @Test
  void isAPermutation() {
    Layout l = Layout.custom(9, 0, 4, 8, 1, 1288834974657L, Order.TIME_NODE_SEQ);
    try (Sealer s = Sealer.create(KEY, l, null)) {
      BitSet seen = new BitSet(1 << 21);
      for (long id = 0; id < 1 << 21; id++) {
        long sealed = s.seal(id);
        assertTrue(sealed >= 0 && sealed < 1 << 21 && !seen.get((int) sealed), "seal(" + id + ") = " + sealed);
        seen.set((int) sealed);
      }
    }
  }

  @Test
  void keyNeverShown() {
    byte[] key = HexFormat.of().parseHex("2b7e151628aed2a6abf7158809cf4f3c");
    try (Sealer s = Sealer.create(key)) {
      assertEquals("Sealer[bits=63]", s.toString());
    }
    byte[] shortKey = HexFormat.of().parseHex("2b7e151628aed2a6abf7158809cf4f");
    ConfigException e = assertThrows(ConfigException.class, () -> Sealer.create(shortKey));
    assertEquals("key", e.field());
    assertFalse(e.getMessage().toLowerCase().contains("2b7e15"), e.getMessage());
  }

  /** Closing while other threads seal: they finish or get IllegalStateException, never a crash. */
  @Test
  void closeUnderCalls() throws InterruptedException {
    Sealer s = Sealer.create(KEY);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      Thread th = new Thread(() -> {
        try {
          for (long i = 0; i < 20_000; i++) s.seal(i);
        } catch (IllegalStateException closed) {
          // expected once closed
        } catch (Throwable other) {
          failure.set(other);
        }
      });
      th.start();
      threads.add(th);
    }
    Thread.sleep(5);
    s.close();
    for (Thread th : threads) th.join();
    if (failure.get() != null) throw new AssertionError(failure.get());
    assertEquals("flakeid: the sealer is closed", assertThrows(IllegalStateException.class, () -> s.seal(1)).getMessage());
    s.close(); // twice: a no-op
  }
}
