package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Per-thread handles ({@link Generator#local}) beside the generator they issue for. */
class LocalGeneratorTest {
  static final int THREADS = 8; // 0..5 on a handle of their own, 6 and 7 on the generator
  static final int PER_THREAD = Integer.getInteger("flakeid.stress.ids", 1_000_000) / 4;

  /** No ID twice across handles and the generator; each thread's IDs strictly increase. */
  @ParameterizedTest
  @EnumSource(Overflow.class)
  void handlesAndTheGeneratorNeverRepeat(Overflow overflow) throws InterruptedException {
    long node = overflow == Overflow.WAIT ? 590 : 591;
    try (Generator g =
        Generator.builder().node(node).overflow(overflow).maxBorrow(Duration.ofHours(1)).build()) {
      long[] all = Threads.issueAtOnce(THREADS, w -> {
        if (w >= 6) return Threads.mixed(PER_THREAD, 1 + 5 * w, 4, g::nextId, g::fill);
        try (LocalGenerator local = g.local()) {
          return Threads.mixed(PER_THREAD, 1 + 5 * w, 4, local::nextId, local::fill);
        }
      });
      assertEquals(node, FlakeId.decompose(all[0]).node());
    }
  }

  /** Virtual threads, each with a handle (thread-per-request): each one's IDs increase, none repeats. */
  @Test
  void virtualThreadPerRequest() throws InterruptedException {
    try (Generator g = Generator.builder().node(592).overflow(Overflow.BORROW).build()) {
      int requests = 64;
      long[][] got = new long[requests][];
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread[] threads = new Thread[requests];
      for (int r = 0; r < requests; r++) {
        int req = r;
        threads[r] = Thread.ofVirtual().start(() -> {
          try (LocalGenerator local = g.local()) {
            long[] ids = new long[2000];
            for (int i = 0; i < ids.length; i++) {
              ids[i] = local.nextId();
              if (i % 50 == 0) Thread.yield(); // may resume on another carrier
            }
            got[req] = ids;
          } catch (Throwable t) {
            failure.set(t);
          }
        });
      }
      for (Thread t : threads) t.join();
      if (failure.get() != null) throw new AssertionError(failure.get());
      long[] all = Arrays.stream(got).flatMapToLong(Arrays::stream).toArray();
      for (long[] ids : got) {
        for (int i = 1; i < ids.length; i++) assertTrue(ids[i] > ids[i - 1]);
      }
      Arrays.sort(all);
      for (int i = 1; i < all.length; i++) {
        if (all[i] == all[i - 1]) fail("ID " + all[i] + " issued twice");
      }
    }
  }

  /**
   * A closed generator stops its handles (the library's error, naming generator), lets its
   * node id go at once though a handle is open, and is freed by the last handle's close.
   */
  @Test
  void closedGenerator() {
    Generator g = Generator.builder().node(593).build();
    LocalGenerator local = g.local();
    local.nextId();
    // A second generator on node 593 shares its counter: no error, no repeat.
    try (Generator second = Generator.builder().node(593).build()) {
      long a = g.nextId();
      assertTrue(second.nextId() > a, "one node id's counter");
    }
    g.close();
    ConfigException e = assertThrows(ConfigException.class, local::nextId);
    assertEquals("generator", e.field());
    e = assertThrows(ConfigException.class, () -> local.fill(new long[3]));
    assertEquals("generator", e.field());
    assertThrows(IllegalStateException.class, g::local);
    assertThrows(IllegalStateException.class, g::nextId);
    try (Generator again = Generator.builder().node(593).build()) {
      again.nextId(); // another generator on the node id, with the closed one's handle open
    }
    assertTrue(!g.freed(), "freed under an open handle");
    local.close();
    assertTrue(g.freed(), "not freed by its last handle's close");
    g.close(); // twice: nothing
  }

  /** A closed handle throws IllegalStateException and issues nothing; its generator goes on. */
  @Test
  void useAfterClose() {
    try (Generator g = Generator.builder().node(594).build()) {
      LocalGenerator local = g.local();
      assertSame(g, local.generator());
      long a = local.nextId();
      local.close();
      local.close();
      assertThrows(IllegalStateException.class, local::nextId);
      long[] ids = {7, 7};
      assertThrows(IllegalStateException.class, () -> local.fill(ids));
      assertArrayEquals(new long[] {7, 7}, ids);
      assertThrows(IllegalStateException.class, () -> local.nextIds(2));
      assertTrue(g.nextId() > a);
    }
  }

  /** Another thread's call or close throws WrongThreadException and issues nothing. */
  @Test
  void confinedToItsThread() throws InterruptedException {
    try (Generator g = Generator.builder().node(595).build()) {
      LocalGenerator local = g.local();
      long a = local.nextId();
      Throwable thrown = Threads.thrownOnAnotherThread(local::nextId);
      assertTrue(thrown instanceof WrongThreadException, String.valueOf(thrown));
      thrown = Threads.thrownOnAnotherThread(local::close);
      assertTrue(thrown instanceof WrongThreadException, String.valueOf(thrown));
      assertTrue(local.nextId() > a);
      local.close();
    }
  }

  /** The batch size is the core's rule, checked before allocating; a batch continues the handle's IDs. */
  @Test
  void batches() {
    try (Generator g = Generator.builder().node(596).overflow(Overflow.BORROW).build();
        LocalGenerator local = g.local()) {
      for (int n : new int[] {-1, (1 << 27) + 1}) {
        ConfigException e = assertThrows(ConfigException.class, () -> local.nextIds(n));
        assertEquals("n", e.field());
      }
      assertEquals(0, local.nextIds(0).length);
      long first = local.nextId();
      long[] ids = local.nextIds(1000);
      assertTrue(ids[0] > first);
      for (int i = 1; i < ids.length; i++) assertTrue(ids[i] > ids[i - 1]);
    }
  }

  /** A handle dropped unclosed is freed once it is garbage, and the closed generator with it. */
  @Test
  void droppedUnclosed() throws InterruptedException {
    Generator g = Generator.builder().node(597).build();
    g.local().nextId();
    g.close();
    for (int i = 0; !g.freed(); i++) {
      if (i == 500) fail("the dropped handle was never freed");
      System.gc();
      Thread.sleep(10);
    }
  }
}
