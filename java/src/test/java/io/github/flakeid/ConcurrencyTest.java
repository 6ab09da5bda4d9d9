package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/** 8 threads x 1M IDs on one generator: no duplicate, and each thread's IDs increase. */
class ConcurrencyTest {
  static final int THREADS = 8;
  static final int PER_THREAD = Integer.getInteger("flakeid.stress.ids", 1_000_000);

  @ParameterizedTest
  @EnumSource(Overflow.class)
  void eightThreadsNoDuplicate(Overflow overflow) throws InterruptedException {
    try (Generator g =
        Generator.builder().node(5).overflow(overflow).maxBorrow(Duration.ofHours(1)).build()) {
      // Thread w mixes in batches of 1 + 7w.
      long[] all =
          Threads.issueAtOnce(THREADS, w -> Threads.mixed(PER_THREAD, 1 + 7 * w, 3, g::nextId, g::fill));
      assertEquals(5, FlakeId.decompose(all[0]).node());
    }
  }

  /** Closing while other threads call: IDs until the close, then IllegalStateException; no crash. */
  @Test
  void closeWhileInUse() throws InterruptedException {
    for (int round = 0; round < 20; round++) {
      Generator g = Generator.builder().node(1).overflow(Overflow.BORROW).build();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread[] threads = new Thread[4];
      for (int w = 0; w < threads.length; w++) {
        threads[w] = new Thread(() -> {
          try {
            while (true) g.nextId();
          } catch (IllegalStateException closed) {
            assertTrue(closed.getMessage().contains("closed"));
          } catch (Throwable t) {
            failure.set(t);
          }
        });
        threads[w].start();
      }
      Thread.sleep(2);
      g.close();
      for (Thread t : threads) t.join();
      if (failure.get() != null) throw new AssertionError(failure.get());
    }
  }
}
