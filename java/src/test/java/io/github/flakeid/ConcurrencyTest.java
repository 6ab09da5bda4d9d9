package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
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
      long[][] got = new long[THREADS][];
      AtomicReference<Throwable> failure = new AtomicReference<>();
      CountDownLatch start = new CountDownLatch(1);
      Thread[] threads = new Thread[THREADS];
      for (int w = 0; w < THREADS; w++) {
        int worker = w;
        threads[w] = new Thread(() -> {
          long[] ids = new long[PER_THREAD];
          long[] batch = new long[1 + 7 * worker]; // thread w mixes in batches of 1 + 7w
          try {
            start.await();
            int n = 0;
            while (n < PER_THREAD) {
              if (n % 3 == 0 && n + batch.length <= PER_THREAD) {
                g.fill(batch);
                System.arraycopy(batch, 0, ids, n, batch.length);
                n += batch.length;
              } else {
                ids[n++] = g.nextId();
              }
            }
            got[worker] = ids;
          } catch (Throwable t) {
            failure.set(t);
          }
        });
        threads[w].start();
      }
      start.countDown();
      for (Thread t : threads) t.join();
      if (failure.get() != null) throw new AssertionError(failure.get());
      long[] all = new long[THREADS * PER_THREAD];
      for (int w = 0; w < THREADS; w++) {
        long[] ids = got[w];
        for (int i = 1; i < ids.length; i++) {
          if (ids[i] <= ids[i - 1]) fail("thread " + w + ": ids[" + i + "] = " + ids[i] + " after " + ids[i - 1]);
        }
        System.arraycopy(ids, 0, all, w * PER_THREAD, PER_THREAD);
      }
      Arrays.parallelSort(all);
      for (int i = 1; i < all.length; i++) {
        if (all[i] == all[i - 1]) fail("ID " + all[i] + " issued twice");
      }
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
