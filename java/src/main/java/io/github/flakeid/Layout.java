package io.github.flakeid;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * How the 64 bits are split. Immutable; only the library makes one ({@link #preset},
 * {@link #custom}), so every Layout is valid.
 */
public final class Layout {
  public static final Layout SNOWFLAKE = preset("snowflake");
  public static final Layout FLAKE = preset("flake");
  public static final Layout DISCORD = preset("discord");
  public static final Layout SONYFLAKE = preset("sonyflake");
  public static final Layout BAIDU = preset("baidu");
  public static final Layout INSTAGRAM = preset("instagram");
  /** 41 time, 3 node, 9 sequence: 53 bits, so every ID is a safe JavaScript number. */
  public static final Layout JS53 = preset("js53");

  /** The C struct, filled once and only read afterwards (safe from any thread). */
  final MemorySegment segment;

  private final MemorySegment limits;

  private Layout(MemorySegment segment) {
    this.segment = segment;
    this.limits = Arena.ofAuto().allocate(Native.LIMITS);
    try {
      Native.check((int) Native.LAYOUT_LIMITS.invokeExact(segment, limits));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** {@code snowflake}, {@code flake}, {@code discord}, {@code sonyflake}, {@code baidu}, {@code instagram} or {@code js53} (any case). */
  public static Layout preset(String name) {
    MemorySegment out = Arena.ofAuto().allocate(Native.LAYOUT);
    try (Arena call = Arena.ofConfined()) {
      Native.check((int) Native.LAYOUT_PRESET.invokeExact(call.allocateFrom(name), out));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
    return new Layout(out);
  }

  /**
   * A custom layout, validated: a bad split is a {@link ConfigException} naming the
   * field and its allowed range. A layout with a single node field has datacenterBits 0.
   */
  public static Layout custom(
      int timeBits, int datacenterBits, int workerBits, int sequenceBits, long tickMs, long epochMs, Order order) {
    MemorySegment out = Arena.ofAuto().allocate(Native.LAYOUT);
    try {
      Native.check(
          (int)
              Native.LAYOUT_CUSTOM.invokeExact(
                  timeBits, datacenterBits, workerBits, sequenceBits, tickMs, epochMs, order.value, out));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
    return new Layout(out);
  }

  /** A copy of the struct a generator reports. */
  static Layout of(MemorySegment struct) {
    return new Layout(Arena.ofAuto().allocate(Native.LAYOUT).copyFrom(struct));
  }

  private int i(String field) {
    return segment.get(JAVA_INT, Native.offset(Native.LAYOUT, field));
  }

  private long l(String field) {
    return segment.get(JAVA_LONG, Native.offset(Native.LAYOUT, field));
  }

  private long limit(String field) {
    return limits.get(JAVA_LONG, Native.offset(Native.LIMITS, field));
  }

  public int timeBits() { return i("time_bits"); }
  public int datacenterBits() { return i("datacenter_bits"); }
  public int workerBits() { return i("worker_bits"); }
  public int sequenceBits() { return i("sequence_bits"); }
  /** datacenterBits + workerBits. */
  public int nodeBits() { return limits.get(JAVA_INT, Native.offset(Native.LIMITS, "node_bits")); }
  /** Bits used in all; IDs are below 2^totalBits. */
  public int totalBits() { return limits.get(JAVA_INT, Native.offset(Native.LIMITS, "total_bits")); }
  /** Milliseconds per tick (1; 10 for Sonyflake; 1000 for Baidu). */
  public long tickMs() { return l("tick_ms"); }
  /** The epoch, Unix milliseconds. */
  public long epochMs() { return l("epoch_ms"); }
  public Order order() { return Order.of(i("order")); }
  public long maxNode() { return limit("max_node"); }
  public long maxDatacenter() { return limit("max_datacenter"); }
  public long maxWorker() { return limit("max_worker"); }
  public long maxSequence() { return limit("max_sequence"); }
  /** The largest ID the layout can produce (as unsigned bits for the 64-bit flake layout). */
  public long maxId() { return limit("max_id"); }
  /** The last Unix millisecond the layout can represent. */
  public long lastTimestampMs() { return limit("last_timestamp_ms"); }
  /** The last Unix millisecond whose IDs leave bit 63 clear (fit a signed BIGINT). */
  public long signedUntilMs() { return limit("signed_until_ms"); }

  /** Takes an ID apart; an ID with bits above the layout's width is an {@link IdParseException}. */
  public Parts decompose(long id) {
    MemorySegment p = PARTS.get();
    try {
      Native.check((int) Native.DECOMPOSE.invokeExact(segment, id, p));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
    return new Parts(
        p.get(JAVA_LONG, P_TIMESTAMP), p.get(JAVA_LONG, P_TICKS), p.get(JAVA_LONG, P_NODE),
        p.get(JAVA_LONG, P_DATACENTER), p.get(JAVA_LONG, P_WORKER), p.get(JAVA_LONG, P_SEQUENCE));
  }

  private static final long P_TIMESTAMP = Native.offset(Native.PARTS, "timestamp_ms");
  private static final long P_TICKS = Native.offset(Native.PARTS, "ticks");
  private static final long P_NODE = Native.offset(Native.PARTS, "node");
  private static final long P_DATACENTER = Native.offset(Native.PARTS, "datacenter");
  private static final long P_WORKER = Native.offset(Native.PARTS, "worker");
  private static final long P_SEQUENCE = Native.offset(Native.PARTS, "sequence");

  private static final ThreadLocal<MemorySegment> PARTS =
      ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(Native.PARTS));

  /**
   * Builds an ID from a Unix-ms time (floored to its tick), a node id and a sequence;
   * out-of-range parts are a {@link ConfigException} (the time: {@link
   * TimeExhaustedException}), never a truncated ID.
   */
  public long compose(long timestampMs, long node, long sequence) {
    MemorySegment out = Native.scratch();
    try {
      Native.check((int) Native.COMPOSE.invokeExact(segment, timestampMs, node, sequence, out));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
    return out.get(JAVA_LONG, 0);
  }

  /** {@link #compose} with the node given as datacenter and worker. */
  public long composeParts(long timestampMs, long datacenter, long worker, long sequence) {
    MemorySegment out = Native.scratch();
    try {
      Native.check(
          (int) Native.COMPOSE_PARTS.invokeExact(segment, timestampMs, datacenter, worker, sequence, out));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
    return out.get(JAVA_LONG, 0);
  }

  /** The ID bounds of a time interval (inclusive), for {@code WHERE id BETWEEN first AND last}. */
  public IdRange idRange(long startMs, long endMs) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment first = call.allocate(JAVA_LONG);
      MemorySegment last = call.allocate(JAVA_LONG);
      Native.check((int) Native.ID_RANGE.invokeExact(segment, startMs, endMs, first, last));
      return new IdRange(first.get(JAVA_LONG, 0), last.get(JAVA_LONG, 0));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** The first and last ID of a time interval. */
  public record IdRange(long first, long last) {}

  @Override
  public boolean equals(Object o) {
    return o instanceof Layout other
        && timeBits() == other.timeBits()
        && datacenterBits() == other.datacenterBits()
        && workerBits() == other.workerBits()
        && sequenceBits() == other.sequenceBits()
        && tickMs() == other.tickMs()
        && epochMs() == other.epochMs()
        && order() == other.order();
  }

  @Override
  public int hashCode() {
    return Objects.hash(timeBits(), datacenterBits(), workerBits(), sequenceBits(), tickMs(), epochMs(), order());
  }

  @Override
  public String toString() {
    return "Layout[time " + timeBits() + ", datacenter " + datacenterBits() + ", worker " + workerBits()
        + ", sequence " + sequenceBits() + ", tick " + tickMs() + " ms, epoch " + epochMs() + ", " + order() + "]";
  }
}
