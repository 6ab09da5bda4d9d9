package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/** What the tests that issue from several threads share. */
final class Threads {
  private Threads() {}

  /** What one thread issues: its IDs, in the order it got them. */
  interface Issuer {
    long[] issue(int worker) throws Exception;
  }

  /**
   * Runs {@code issuer} on {@code threads} threads at once (worker 0, 1, …) and checks their IDs
   * as {@link #awaitIncreasingAndDistinct} does; returns all of them, sorted.
   */
  static long[] issueAtOnce(int threads, Issuer issuer) throws InterruptedException {
    long[][] got = new long[threads][];
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    Thread[] running = new Thread[threads];
    for (int w = 0; w < threads; w++) {
      int worker = w;
      running[w] = new Thread(() -> {
        try {
          start.await();
          got[worker] = issuer.issue(worker);
        } catch (Throwable t) {
          failure.set(t);
        }
      });
      running[w].start();
    }
    return awaitIncreasingAndDistinct(start, running, failure, got);
  }

  /**
   * {@code count} IDs from {@code next}, with a batch of {@code batchSize} from {@code fill} in
   * place of every {@code every}th call: order must hold across both.
   */
  static long[] mixed(int count, int batchSize, int every, LongSupplier next, Consumer<long[]> fill) {
    long[] ids = new long[count];
    long[] batch = new long[batchSize];
    int n = 0;
    while (n < count) {
      if (n % every == 0 && n + batch.length <= count) {
        fill.accept(batch);
        System.arraycopy(batch, 0, ids, n, batch.length);
        n += batch.length;
      } else {
        ids[n++] = next.getAsLong();
      }
    }
    return ids;
  }

  /**
   * Lets the started {@code threads} go ({@code start}), waits for them, rethrows the first
   * {@code failure}, and checks that each thread's IDs in {@code got} strictly increase and that no
   * ID was issued twice across them; returns all of them, sorted.
   */
  static long[] awaitIncreasingAndDistinct(
      CountDownLatch start, Thread[] threads, AtomicReference<Throwable> failure, long[][] got)
      throws InterruptedException {
    start.countDown();
    for (Thread t : threads) t.join();
    if (failure.get() != null) throw new AssertionError(failure.get());
    long[] all = Arrays.stream(got).flatMapToLong(Arrays::stream).toArray();
    for (int w = 0; w < got.length; w++) {
      long[] ids = got[w];
      for (int i = 1; i < ids.length; i++) {
        if (ids[i] <= ids[i - 1]) fail("thread " + w + ": ids[" + i + "] = " + ids[i] + " after " + ids[i - 1]);
      }
    }
    Arrays.parallelSort(all);
    for (int i = 1; i < all.length; i++) {
      if (all[i] == all[i - 1]) fail("ID " + all[i] + " issued twice");
    }
    return all;
  }

  /** What {@code call} threw on a thread of its own, or null. */
  static Throwable thrownOnAnotherThread(Runnable call) throws InterruptedException {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread other = new Thread(() -> {
      try {
        call.run();
      } catch (Throwable t) {
        thrown.set(t);
      }
    });
    other.start();
    other.join();
    return thrown.get();
  }
}
