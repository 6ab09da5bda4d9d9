package io.github.flakeid;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * Sealed IDs (docs/sealing.md): a keyed, reversible map from IDs to IDs of the same
 * width, FF1 (NIST SP 800-38G) with AES over the layout's bits, the same construction
 * and vectors in every binding. A sealed ID hides when, where and how busily its ID was
 * made; it is deterministic, unordered and not authenticated.
 *
 * <pre>{@code
 * try (Sealer s = Sealer.create(key)) {        // key: 16, 24 or 32 bytes
 *   long sealed = s.seal(id);                  // same 63 bits, unordered
 *   long back = s.unseal(sealed);              // == id
 * }
 * }</pre>
 *
 * <p>Thread-safe. {@link #close} wipes the library's copy of the key; a sealer never
 * closed is freed (and wiped) once it is garbage. The key never appears in {@link
 * #toString} or an exception.
 */
public final class Sealer extends NativeHandle {
  private final int bits;

  private Sealer(byte[] key, Layout layout, byte[] tweak) {
    super("sealer", (call, out) -> make(call, out, key, orSnowflake(layout), tweak), Sealer::free);
    this.bits = orSnowflake(layout).totalBits();
  }

  private static Layout orSnowflake(Layout layout) {
    return layout == null ? Layout.SNOWFLAKE : layout;
  }

  private static int make(Arena call, MemorySegment out, byte[] key, Layout l, byte[] tweak) throws Throwable {
    // The key's bytes live in native memory only for this call, zeroed before the
    // confined arena frees them: the library keeps (and later wipes) its own copy.
    MemorySegment k = call.allocate(Math.max(key.length, 1));
    MemorySegment.copy(key, 0, k, JAVA_BYTE, 0, key.length);
    MemorySegment t = tweak.length == 0 ? MemorySegment.NULL : call.allocateFrom(JAVA_BYTE, tweak);
    try {
      return (int) Native.SEALER_NEW.invokeExact(k, (long) key.length, l.segment, t, (long) tweak.length, out);
    } finally {
      k.fill((byte) 0);
    }
  }

  /** A sealer for Snowflake IDs, without a tweak. */
  public static Sealer create(byte[] key) {
    return new Sealer(key, null, new byte[0]);
  }

  /**
   * A sealer for {@code layout}'s IDs (null: Snowflake) with a tweak, which seals the
   * same IDs differently under one key (for example one per table; empty: none). A key
   * not of 16, 24 or 32 bytes is a {@link ConfigException} naming {@code key}; a layout
   * of fewer than 20 bits, naming {@code layout}.
   */
  public static Sealer create(byte[] key, Layout layout, byte[] tweak) {
    return new Sealer(key, layout, tweak == null ? new byte[0] : tweak);
  }

  private static void free(MemorySegment s) {
    try {
      Native.SEALER_FREE.invokeExact(s);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /**
   * Seals {@code id} (in {@code [0, 2^bits())}, unsigned for 64-bit layouts); the result
   * is in the same range. An id out of range is a {@link ConfigException} naming {@code id}.
   */
  public long seal(long id) {
    return call(Native.SEALER_SEAL, id);
  }

  /** The inverse of {@link #seal}. Every number in range unseals to some ID. */
  public long unseal(long id) {
    return call(Native.SEALER_UNSEAL, id);
  }

  private long call(MethodHandle f, long id) {
    MemorySegment out = Native.scratch();
    call(h -> (int) f.invokeExact(h, id, out));
    return out.get(JAVA_LONG, 0);
  }

  /** The width of the IDs sealed: the layout's total bits. */
  public int bits() {
    return bits;
  }

  /** Frees the sealer and wipes its key. Calls in progress finish first. */
  @Override
  public void close() {
    super.close();
  }

  @Override
  public String toString() {
    return "Sealer[bits=" + bits + "]";
  }
}
