package io.github.flakeid;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;

/**
 * A per-thread handle on a {@link Generator} ({@link Generator#local}): it issues the
 * generator's IDs from runs of slots it reserves, with no atomic step on the generator
 * per ID, under every rule of the generator (the same layout and node id, the fork,
 * close and lease checks on every call, the borrow bound, the clock-backwards policy,
 * {@link Generator#stats}). No ID repeats one of the generator's or of another
 * handle's; each handle's IDs strictly increase.
 *
 * <p>Confined to the thread that took it, as a confined {@link Arena} is: a call from
 * another thread throws {@link WrongThreadException} and issues nothing. A virtual
 * thread keeps its handle as it moves between carriers. Take one per request thread, or
 * one per pooled thread in a {@link ThreadLocal}:
 *
 * <pre>{@code
 * try (LocalGenerator local = gen.local()) {
 *   long a = local.nextId();
 *   long b = local.nextId(); // b > a
 * }
 * }</pre>
 *
 * <p>Close it when done (one that is never closed is freed once it is garbage); a closed
 * handle throws {@link IllegalStateException}. Once its generator is closed, its calls
 * throw the library's {@link ConfigException} naming {@code generator}.
 */
public final class LocalGenerator implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();

  private final Generator generator;

  /** The C handle, global scope: only its owner calls through it, and it lives until close. */
  private final MemorySegment handle;

  private final Thread owner;
  private final Cleaner.Cleanable cleanable;
  private boolean closed; // the owner's alone

  LocalGenerator(Generator generator, MemorySegment handle) {
    this.generator = generator;
    this.handle = handle;
    this.owner = Thread.currentThread();
    this.cleanable = CLEANER.register(this, new Free(generator, handle));
  }

  /** Frees the C handle, then lets the generator know (it may be waiting to be freed). */
  private record Free(Generator generator, MemorySegment handle) implements Runnable {
    @Override
    public void run() {
      try {
        Native.LOCAL_FREE.invokeExact(handle);
      } catch (Throwable t) {
        throw Native.rethrow(t);
      }
      generator.localFreed();
    }
  }

  private void enter() {
    if (Thread.currentThread() != owner) {
      throw new WrongThreadException(
          "flakeid: a LocalGenerator is used by the thread that took it (" + owner + ")");
    }
    if (closed) throw new IllegalStateException("flakeid: the LocalGenerator is closed");
  }

  /** The next ID: one call into the library, from the handle's run. */
  public long nextId() {
    enter();
    MemorySegment out = Native.scratch();
    int status;
    try {
      status = (int) Native.LOCAL_NEXT_ID.invokeExact(handle, out);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    } finally {
      Reference.reachabilityFence(this); // not freed by the cleaner during the call
    }
    Native.check(status);
    return out.get(JAVA_LONG, 0);
  }

  /** {@code n} fresh IDs, increasing and above every ID the handle issued before, in one call. */
  public long[] nextIds(int n) {
    return Native.filled(n, this::fill);
  }

  /** Fills {@code ids} with fresh IDs, increasing and above every ID the handle issued before. */
  public void fill(long[] ids) {
    enter();
    try (Arena call = Arena.ofConfined()) {
      MemorySegment buf = ids.length == 0 ? MemorySegment.NULL : call.allocate(JAVA_LONG, ids.length);
      Native.check((int) Native.LOCAL_NEXT_IDS.invokeExact(handle, buf, (long) ids.length));
      MemorySegment.copy(buf, JAVA_LONG, 0, ids, 0, ids.length);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The generator this handle issues for. */
  public Generator generator() {
    return generator;
  }

  /**
   * Frees the handle (its unused slots stop counting in {@link Generator#stats}); later
   * calls throw {@link IllegalStateException}. Closing twice does nothing. From its
   * owner thread only ({@link WrongThreadException} otherwise).
   */
  @Override
  public void close() {
    if (Thread.currentThread() != owner) {
      throw new WrongThreadException(
          "flakeid: a LocalGenerator is closed by the thread that took it (" + owner + ")");
    }
    closed = true;
    cleanable.clean();
  }
}
