package io.github.flakeid;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;

/**
 * A clock that moves only when told to, for deterministic tests ({@link
 * Generator.Builder#clock}). Thread-safe. Generators built with it share its time, not
 * the handle: it may be closed before them.
 */
public final class ManualClock implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();

  private final Arena arena = Arena.ofShared();
  private final MemorySegment handle;
  private final Cleaner.Cleanable cleanable;

  private ManualClock(long startMs, long autoAdvanceMs) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(ADDRESS);
      Native.check((int) Native.CLOCK_NEW.invokeExact(startMs, autoAdvanceMs, out));
      handle = out.get(ADDRESS, 0).reinterpret(arena, ManualClock::free);
    } catch (Throwable t) {
      arena.close();
      throw Native.rethrow(t);
    }
    Arena a = arena;
    cleanable = CLEANER.register(this, () -> {
      if (a.scope().isAlive()) a.close();
    });
  }

  /**
   * A clock reading {@code startMs} (Unix ms). With {@code autoAdvanceMs > 0} it moves
   * forward by that much on every turn of a generator's wait loop, so waits end.
   */
  public static ManualClock create(long startMs, long autoAdvanceMs) {
    return new ManualClock(startMs, autoAdvanceMs);
  }

  private static void free(MemorySegment c) {
    try {
      Native.CLOCK_FREE.invokeExact(c);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  MemorySegment handle() {
    return handle;
  }

  void keepAlive() {
    java.lang.ref.Reference.reachabilityFence(this);
  }

  /** Sets the clock (it may move backwards, to test rollback policies). */
  public void set(long unixMs) {
    try {
      Native.check((int) Native.CLOCK_SET.invokeExact(handle, unixMs));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  public void advance(long ms) {
    try {
      Native.check((int) Native.CLOCK_ADVANCE.invokeExact(handle, ms));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** The clock's reading, Unix ms. */
  public long nowMs() {
    MemorySegment out = Native.scratch();
    try {
      Native.check((int) Native.CLOCK_GET.invokeExact(handle, out));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
    return out.get(JAVA_LONG, 0);
  }

  @Override
  public void close() {
    cleanable.clean();
  }
}
