package io.github.flakeid;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Makes UUIDv7s ({@link UUID}), and ULIDs and TypeIDs of the same bits (RFC 9562 §6.2
 * method 1, a 16-bit counter: docs/design.md). Thread-safe: every ID it returns is
 * greater than every ID it returned before, across threads. Its options are the
 * engine's clock options, by name ({@link Builder#set}); it needs no node id.
 *
 * <pre>{@code
 * try (UuidGenerator g = UuidGenerator.builder().build()) {
 *   UUID id = g.nextUuid();
 * }
 * }</pre>
 */
public final class UuidGenerator extends NativeHandle {
  private UuidGenerator(Builder b) {
    super("generator", (call, out) -> make(call, out, b), UuidGenerator::free);
  }

  private static int make(Arena call, MemorySegment out, Builder b) throws Throwable {
    MemorySegment opts = options(call);
    try {
      for (Map.Entry<String, String> e : b.settings) setOption(opts, call, e.getKey(), e.getValue());
      if (b.clock != null) {
        Native.check((int) Native.UUID_OPTIONS_SET_CLOCK.invokeExact(opts, b.clock.handle()));
      }
      int status = (int) Native.UUID_GENERATOR_NEW.invokeExact(opts, out);
      if (b.clock != null) b.clock.keepAlive();
      return status;
    } finally {
      Native.UUID_OPTIONS_FREE.invokeExact(opts);
    }
  }

  private static MemorySegment options(Arena call) throws Throwable {
    MemorySegment out = call.allocate(ADDRESS);
    Native.check((int) Native.UUID_OPTIONS_NEW.invokeExact(out));
    return out.get(ADDRESS, 0);
  }

  private static void setOption(MemorySegment opts, Arena call, String name, String text) throws Throwable {
    Native.check((int) Native.UUID_OPTIONS_SET.invokeExact(opts, call.allocateFrom(name), call.allocateFrom(text)));
  }

  private static void free(MemorySegment g) {
    try {
      Native.UUID_GENERATOR_FREE.invokeExact(g);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** The names {@link Builder#set} takes, in the engine's order. */
  public static List<String> optionNames() {
    List<String> names = new ArrayList<>();
    try {
      for (long i = 0; ; i++) {
        MemorySegment n = (MemorySegment) Native.UUID_OPTION_NAME.invokeExact(i);
        if (n.equals(MemorySegment.NULL)) return names;
        names.add(n.reinterpret(64).getString(0));
      }
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A 16-byte out-parameter per thread, for {@link #nextUuid}. */
  private static final ThreadLocal<MemorySegment> SCRATCH =
      ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(Native.UUID_LEN, 8));

  /** The next UUIDv7: one call into the library. */
  public UUID nextUuid() {
    MemorySegment out = SCRATCH.get();
    call(h -> (int) Native.UUID_NEXT.invokeExact(h, out, (long) Native.UUID_LEN));
    return Uuids.uuid(out);
  }

  /**
   * {@code n} fresh UUIDv7s, increasing and in call order with this generator's other IDs, in one
   * call into the library; {@code n} past the batch limit is a {@link ConfigException} naming
   * {@code n}, as for {@link Generator#nextIds}.
   */
  public UUID[] nextUuids(int n) {
    Native.checkBatch(n); // the core's range, before allocating
    UUID[] out = new UUID[n];
    if (n == 0) return out;
    try (Arena call = Arena.ofConfined()) {
      long bytes = (long) n * Native.UUID_LEN;
      MemorySegment buf = call.allocate(bytes);
      call(h -> (int) Native.UUID_NEXT_MANY.invokeExact(h, buf, bytes, (long) n));
      for (int i = 0; i < n; i++) out[i] = Uuids.uuid(buf.asSlice((long) i * Native.UUID_LEN));
    }
    return out;
  }

  /**
   * A UUIDv7 of the Unix millisecond {@code unixMs} and 74 random bits: an explicit time, outside
   * the generator's sequence (not ordered after its earlier UUIDs, nor among others of that
   * millisecond). A time before 1970 or past the 48-bit field is a {@link ConfigException} naming
   * {@code unix_ms}.
   */
  public UUID uuidAt(long unixMs) {
    MemorySegment out = SCRATCH.get();
    call(h -> (int) Native.UUID_AT.invokeExact(h, unixMs, out, (long) Native.UUID_LEN));
    return Uuids.uuid(out);
  }

  /** {@link #uuidAt(long)} of an instant's millisecond (floored). */
  public UUID uuidAt(Instant at) {
    return uuidAt(millis(at.getEpochSecond(), at.getNano()));
  }

  /**
   * A UUIDv7 of the generator's clock now shifted by {@code shift} (negative: the past; whole
   * milliseconds, floored), as PostgreSQL 18's {@code uuidv7(shift)}: outside the sequence, as
   * {@link #uuidAt(long)}. A shifted time outside the 48-bit field is a {@link ConfigException}
   * naming {@code shift_ms}.
   */
  public UUID uuidShifted(Duration shift) {
    long ms = millis(shift.getSeconds(), shift.getNano());
    MemorySegment out = SCRATCH.get();
    call(h -> (int) Native.UUID_SHIFTED.invokeExact(h, ms, out, (long) Native.UUID_LEN));
    return Uuids.uuid(out);
  }

  /**
   * Seconds and nanoseconds (0..999,999,999, as {@link Instant} and {@link Duration} keep them)
   * in whole milliseconds, floored; seconds held within ±2^53 (far past the 48-bit field either
   * way, so the engine still refuses them).
   */
  private static long millis(long seconds, int nanos) {
    long s = Math.max(-(1L << 53), Math.min(1L << 53, seconds));
    return s * 1000 + nanos / 1_000_000;
  }

  /** The next ID as a ULID (the same bits as {@link #nextUuid}'s). */
  public String nextUlid() {
    return text(null);
  }

  /** The next ID as a TypeID with {@code prefix} (checked first: a bad prefix costs no ID). */
  public String nextTypeId(String prefix) {
    if (prefix == null) throw new NullPointerException("prefix");
    return text(prefix);
  }

  private String text(String prefix) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment buf = call.allocate(Native.TEXT_BUFFER);
      long len = Native.TEXT_BUFFER;
      if (prefix == null) {
        call(h -> (int) Native.ULID_NEXT.invokeExact(h, buf, len, MemorySegment.NULL));
      } else {
        MemorySegment p = call.allocateFrom(prefix);
        call(h -> (int) Native.TYPEID_NEXT.invokeExact(h, p, buf, len, MemorySegment.NULL));
      }
      return buf.getString(0);
    }
  }

  /** A snapshot of the generator's statistics. */
  public UuidStats stats() {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(Native.UUID_STATS);
      call(h -> (int) Native.UUID_GENERATOR_STATS.invokeExact(h, out, Native.UUID_STATS.byteSize()));
      return new UuidStats(
          field(out, "ids_issued"),
          field(out, "tick_waits"),
          Duration.ofMillis(field(out, "lead_ms")),
          field(out, "clock_rollbacks"),
          Duration.ofMillis(field(out, "max_rollback_ms")),
          field(out, "reseeds"));
    }
  }

  private static long field(MemorySegment stats, String name) {
    return stats.get(JAVA_LONG, Native.offset(Native.UUID_STATS, name));
  }

  /** Releases the generator; later calls throw {@link IllegalStateException}. Idempotent. */
  @Override
  public void close() {
    super.close();
  }

  /** The options of a {@link UuidGenerator}. */
  public static final class Builder {
    private ManualClock clock;
    private final List<Map.Entry<String, String>> settings = new ArrayList<>();

    private Builder() {}

    /**
     * Sets the option {@code name} ({@link #optionNames}: {@code overflow},
     * {@code clock_backwards}, {@code max_borrow_ms}, {@code max_wait_ms}) from text, by
     * the engine's rules: a node, layout or lease option, an unknown name or a malformed
     * value is a {@link ConfigException} naming it, thrown here. Ranges are checked by
     * {@link #build}.
     */
    public Builder set(String name, String text) {
      try (Arena call = Arena.ofConfined()) {
        MemorySegment opts = options(call);
        try {
          setOption(opts, call, name, text);
        } finally {
          Native.UUID_OPTIONS_FREE.invokeExact(opts);
        }
      } catch (Throwable t) {
        throw Native.rethrow(t);
      }
      settings.add(Map.entry(name, text));
      return this;
    }

    /** A manual clock, for deterministic tests. */
    public Builder clock(ManualClock clock) {
      this.clock = clock;
      return this;
    }

    public UuidGenerator build() {
      return new UuidGenerator(this);
    }
  }
}
