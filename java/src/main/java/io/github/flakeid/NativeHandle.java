package io.github.flakeid;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.function.Consumer;

/**
 * The lifecycle every Java object over a library handle shares ({@link Generator},
 * {@link UuidGenerator}, {@link Sealer}): the native object, in a shared arena that
 * frees it (a call in progress keeps the arena open, so closing waits for the call);
 * the cleaner that frees it when its owner is garbage unclosed; the closed flag; and
 * the error a call after close throws.
 */
abstract class NativeHandle implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();

  /** Makes the native object: its address into {@code out}; returns the library's status. */
  @FunctionalInterface
  interface Make {
    int run(Arena call, MemorySegment out) throws Throwable;
  }

  /** One call into the library on the handle; returns its status. */
  @FunctionalInterface
  interface Call {
    int run(MemorySegment handle) throws Throwable;
  }

  /** What the closed error names: "generator", "sealer". */
  private final String what;

  private final Arena arena;
  final MemorySegment handle;
  private final Cleaner.Cleanable cleanable;
  private volatile boolean closed;

  /** Makes the object ({@code make}, in a confined arena for its arguments), freed by {@code free}. */
  NativeHandle(String what, Make make, Consumer<MemorySegment> free) {
    this.what = what;
    Arena arena = Arena.ofShared();
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(ADDRESS);
      Native.check(make.run(call, out));
      this.handle = out.get(ADDRESS, 0).reinterpret(arena, free);
    } catch (Throwable t) {
      arena.close();
      throw Native.rethrow(t);
    }
    this.arena = arena;
    this.cleanable = CLEANER.register(this, new ArenaRelease(arena));
  }

  /**
   * Runs one call on the open handle and checks its status. After close, or closed while
   * the call was being made (the shared arena refuses it), the closed error.
   */
  final void call(Call c) {
    if (closed) throw closedError();
    int status;
    try {
      status = c.run(handle);
    } catch (IllegalStateException e) {
      throw closedError();
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
    Native.check(status);
  }

  final boolean isClosed() {
    return closed;
  }

  /** Later calls throw the closed error; the object stays until {@link #free}. */
  final void markClosed() {
    closed = true;
  }

  /** Frees the native object, once calls in progress end. Idempotent. */
  final void free() {
    cleanable.clean();
  }

  /** Whether the native object was freed. */
  final boolean freed() {
    return !arena.scope().isAlive();
  }

  final IllegalStateException closedError() {
    return new IllegalStateException("flakeid: the " + what + " is closed");
  }

  /** Frees the object; calls in progress finish first, later calls throw. Idempotent. */
  @Override
  public void close() {
    markClosed();
    free();
  }
}
