package io.github.flakeid;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * The only class that calls libflakeid (through {@code java.lang.foreign}); the rest
 * of the package converts. The struct layouts are derived here, once, from their
 * members in C order with C's alignment rule; {@code NativeLayoutTest} compiles a
 * program against {@code include/flakeid.h} and fails when a struct there differs
 * (a field added, moved or resized), so a header change cannot go unnoticed.
 */
final class Native {
  private Native() {}

  // --- struct layouts (include/flakeid.h) ---

  static final StructLayout LAYOUT =
      cStruct(
          "flakeid_layout",
          JAVA_INT.withName("time_bits"),
          JAVA_INT.withName("datacenter_bits"),
          JAVA_INT.withName("worker_bits"),
          JAVA_INT.withName("sequence_bits"),
          JAVA_LONG.withName("tick_ms"),
          JAVA_LONG.withName("epoch_ms"),
          JAVA_INT.withName("order"));

  static final StructLayout OPTIONS =
      cStruct(
          "flakeid_options",
          JAVA_LONG.withName("struct_size"), // size_t: the 64-bit platforms the jar ships for
          LAYOUT.withName("layout"),
          JAVA_LONG.withName("node"),
          JAVA_LONG.withName("datacenter"),
          JAVA_LONG.withName("worker"),
          ADDRESS.withName("node_source"),
          ADDRESS.withName("lease_url"),
          JAVA_INT.withName("overflow"),
          JAVA_INT.withName("clock_backwards"),
          JAVA_LONG.withName("max_borrow_ms"),
          JAVA_LONG.withName("max_wait_ms"),
          ADDRESS.withName("clock"),
          JAVA_LONG.withName("lease_ttl_ms"),
          JAVA_LONG.withName("max_sequence"),
          ADDRESS.withName("state"),
          JAVA_INT.withName("require_node"),
          // FLAKEID_OPTION_SLOTS: the options with no field of their own, set by name
          // (Builder.set); Java never writes them here.
          MemoryLayout.sequenceLayout(32, ADDRESS).withName("by_name"));

  static final StructLayout LIMITS =
      cStruct(
          "flakeid_layout_limits",
          JAVA_INT.withName("node_bits"),
          JAVA_INT.withName("total_bits"),
          JAVA_LONG.withName("max_node"),
          JAVA_LONG.withName("max_datacenter"),
          JAVA_LONG.withName("max_worker"),
          JAVA_LONG.withName("max_sequence"),
          JAVA_LONG.withName("max_id"),
          JAVA_LONG.withName("last_timestamp_ms"),
          JAVA_LONG.withName("signed_until_ms"));

  static final StructLayout PARTS =
      cStruct(
          "flakeid_parts",
          JAVA_LONG.withName("timestamp_ms"),
          JAVA_LONG.withName("ticks"),
          JAVA_LONG.withName("node"),
          JAVA_LONG.withName("datacenter"),
          JAVA_LONG.withName("worker"),
          JAVA_LONG.withName("sequence"));

  static final StructLayout STATS =
      cStruct(
          "flakeid_stats",
          JAVA_LONG.withName("struct_size"), // size_t: the 64-bit platforms the jar ships for
          JAVA_LONG.withName("ids_issued"),
          JAVA_LONG.withName("tick_waits"),
          JAVA_LONG.withName("tick_wait_us"),
          JAVA_LONG.withName("lead_ms"),
          JAVA_LONG.withName("clock_rollbacks"),
          JAVA_LONG.withName("max_rollback_ms"),
          ADDRESS.withName("lease_state"),
          JAVA_LONG.withName("lease_remaining_ms"));

  static final StructLayout UUID_STATS =
      cStruct(
          "flakeid_uuid_stats",
          JAVA_LONG.withName("struct_size"), // size_t: the 64-bit platforms the jar ships for
          JAVA_LONG.withName("ids_issued"),
          JAVA_LONG.withName("tick_waits"),
          JAVA_LONG.withName("lead_ms"),
          JAVA_LONG.withName("clock_rollbacks"),
          JAVA_LONG.withName("max_rollback_ms"),
          JAVA_LONG.withName("reseeds"));

  /** Every struct this class reads or writes, for NativeLayoutTest. */
  static final List<StructLayout> STRUCTS = List.of(LAYOUT, OPTIONS, LIMITS, PARTS, STATS, UUID_STATS);

  /** A C struct of these members: each at the next multiple of its alignment. */
  static StructLayout cStruct(String name, MemoryLayout... members) {
    List<MemoryLayout> out = new ArrayList<>();
    long offset = 0;
    long align = 1;
    for (MemoryLayout m : members) {
      long pad = -offset & (m.byteAlignment() - 1);
      if (pad > 0) out.add(MemoryLayout.paddingLayout(pad));
      out.add(m);
      offset += pad + m.byteSize();
      align = Math.max(align, m.byteAlignment());
    }
    long tail = -offset & (align - 1);
    if (tail > 0) out.add(MemoryLayout.paddingLayout(tail));
    return MemoryLayout.structLayout(out.toArray(MemoryLayout[]::new)).withName(name);
  }

  static long offset(StructLayout s, String field) {
    return s.byteOffset(MemoryLayout.PathElement.groupElement(field));
  }

  // --- functions ---

  private static final Linker LINKER = Linker.nativeLinker();
  private static final SymbolLookup LIB = NativeLibrary.load();

  private static MethodHandle fn(String name, MemoryLayout ret, MemoryLayout... args) {
    MemorySegment sym =
        LIB.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libflakeid has no " + name));
    FunctionDescriptor d = ret == null ? FunctionDescriptor.ofVoid(args) : FunctionDescriptor.of(ret, args);
    return LINKER.downcallHandle(sym, d);
  }

  static final MethodHandle VERSION = fn("flakeid_version", ADDRESS);
  static final MethodHandle LAST_MESSAGE = fn("flakeid_last_error_message", ADDRESS);
  static final MethodHandle LAST_FIELD = fn("flakeid_last_error_field", ADDRESS);
  static final MethodHandle LAST_BY_MS = fn("flakeid_last_error_by_ms", JAVA_LONG);
  static final MethodHandle LAST_POSITION = fn("flakeid_last_error_position", JAVA_LONG);
  static final MethodHandle STATUS_NAME = fn("flakeid_status_name", ADDRESS, JAVA_INT);
  static final MethodHandle OPTIONS_DEFAULT = fn("flakeid_options_default", OPTIONS);
  static final MethodHandle GENERATOR_NEW = fn("flakeid_generator_new", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle GENERATOR_FREE = fn("flakeid_generator_free", null, ADDRESS);
  static final MethodHandle NEXT_ID = fn("flakeid_next_id", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle NEXT_IDS = fn("flakeid_next_ids", JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG);
  static final MethodHandle CHECK_BATCH = fn("flakeid_check_batch", JAVA_INT, JAVA_LONG);
  static final MethodHandle GENERATOR_CLOSE = fn("flakeid_generator_close", JAVA_INT, ADDRESS);
  static final MethodHandle LOCAL_NEW = fn("flakeid_local_new", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle LOCAL_FREE = fn("flakeid_local_free", null, ADDRESS);
  static final MethodHandle LOCAL_NEXT_ID = fn("flakeid_local_next_id", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle LOCAL_NEXT_IDS =
      fn("flakeid_local_next_ids", JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG);
  static final MethodHandle OPTIONS_SET = fn("flakeid_options_set", JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
  static final MethodHandle OPTION_NAME = fn("flakeid_option_name", ADDRESS, JAVA_LONG);
  static final MethodHandle CONFIGURED_TWICE = fn("flakeid_configured_twice", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle DATABASE_LEASE = fn("flakeid_database_lease", JAVA_INT, ADDRESS, ADDRESS, ADDRESS,
      JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle GENERATOR_NODE = fn("flakeid_generator_node", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle GENERATOR_NODE_ORIGIN =
      fn("flakeid_generator_node_origin", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle GENERATOR_STATS =
      fn("flakeid_generator_stats", JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG);
  static final MethodHandle GENERATOR_LAYOUT =
      fn("flakeid_generator_layout", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle CLOCK_NEW =
      fn("flakeid_manual_clock_new", JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS);
  static final MethodHandle CLOCK_SET = fn("flakeid_manual_clock_set", JAVA_INT, ADDRESS, JAVA_LONG);
  static final MethodHandle CLOCK_ADVANCE =
      fn("flakeid_manual_clock_advance", JAVA_INT, ADDRESS, JAVA_LONG);
  static final MethodHandle CLOCK_GET = fn("flakeid_manual_clock_get", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle CLOCK_FREE = fn("flakeid_manual_clock_free", null, ADDRESS);
  static final MethodHandle LAYOUT_PRESET = fn("flakeid_layout_preset", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle LAYOUT_CUSTOM =
      fn(
          "flakeid_layout_custom",
          JAVA_INT,
          JAVA_INT,
          JAVA_INT,
          JAVA_INT,
          JAVA_INT,
          JAVA_LONG,
          JAVA_LONG,
          JAVA_INT,
          ADDRESS);
  static final MethodHandle LAYOUT_LIMITS =
      fn("flakeid_layout_get_limits", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle DECOMPOSE = fn("flakeid_decompose", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle COMPOSE =
      fn("flakeid_compose", JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS);
  static final MethodHandle COMPOSE_PARTS =
      fn("flakeid_compose_parts", JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS);
  static final MethodHandle ID_RANGE =
      fn("flakeid_id_range", JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS);
  static final MethodHandle ENCODE =
      fn("flakeid_encode", JAVA_INT, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle DECODE = fn("flakeid_decode", JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS);

  static final MethodHandle SEALER_NEW =
      fn("flakeid_sealer_new", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle SEALER_SEAL = fn("flakeid_sealer_seal", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle SEALER_UNSEAL = fn("flakeid_sealer_unseal", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle SEALER_FREE = fn("flakeid_sealer_free", null, ADDRESS);

  // The 128-bit family (bindings/c/src/uuid.rs): 16 big-endian bytes, text with its length.
  static final MethodHandle UUID_OPTIONS_NEW = fn("flakeid_uuid_options_new", JAVA_INT, ADDRESS);
  static final MethodHandle UUID_OPTIONS_SET =
      fn("flakeid_uuid_options_set", JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
  static final MethodHandle UUID_OPTIONS_SET_CLOCK =
      fn("flakeid_uuid_options_set_clock", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle UUID_OPTIONS_FREE = fn("flakeid_uuid_options_free", null, ADDRESS);
  static final MethodHandle UUID_OPTION_NAME = fn("flakeid_uuid_option_name", ADDRESS, JAVA_LONG);
  static final MethodHandle UUID_GENERATOR_NEW = fn("flakeid_uuid_generator_new", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle UUID_GENERATOR_FREE = fn("flakeid_uuid_generator_free", null, ADDRESS);
  static final MethodHandle UUID_NEXT = fn("flakeid_uuid_next", JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG);
  static final MethodHandle UUID_NEXT_MANY =
      fn("flakeid_uuid_next_many", JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG);
  static final MethodHandle UUID_AT = fn("flakeid_uuid_at", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG);
  static final MethodHandle UUID_SHIFTED =
      fn("flakeid_uuid_shifted", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG);
  static final MethodHandle ULID_NEXT = fn("flakeid_ulid_next", JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle TYPEID_NEXT =
      fn("flakeid_typeid_next", JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle UUID_GENERATOR_STATS =
      fn("flakeid_uuid_generator_stats", JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG);
  static final MethodHandle UUID7_COMPOSE =
      fn("flakeid_uuid7_compose", JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG);
  static final MethodHandle UUID7_DECOMPOSE =
      fn("flakeid_uuid7_decompose", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS);
  static final MethodHandle UUID_VERSION = fn("flakeid_uuid_version", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle UUID7_TIMESTAMP_MS =
      fn("flakeid_uuid7_timestamp_ms", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle ULID_TIMESTAMP_MS =
      fn("flakeid_ulid_timestamp_ms", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle UUID7_RANGE =
      fn("flakeid_uuid7_range", JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG);
  static final MethodHandle UUID_PARSE = fn("flakeid_uuid_parse", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG);
  static final MethodHandle ULID_PARSE = fn("flakeid_ulid_parse", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG);
  static final MethodHandle TYPEID_PARSE =
      fn("flakeid_typeid_parse", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG);
  static final MethodHandle UUID_FORMAT =
      fn("flakeid_uuid_format", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle ULID_FORMAT =
      fn("flakeid_ulid_format", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle TYPEID_FORMAT =
      fn("flakeid_typeid_format", JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS);

  /** FLAKEID_UUID_LEN; FLAKEID_TYPEID_MAX_LEN + 1 (every text form and its NUL fits). */
  static final int UUID_LEN = 16;
  static final int TEXT_BUFFER = 91;

  /** FLAKEID_MAX_ENCODED_LEN + 1. */
  static final int ENCODE_BUFFER = 21;

  // --- errors ---

  /**
   * Throws the exception for a failed call. The details are per OS thread and must be
   * read right after the call, on the same thread: a platform thread is one; a virtual
   * thread stays mounted on its carrier between two downcalls with nothing blocking in
   * between (and is pinned to it during each).
   */
  static void check(int status) {
    if (status != 0) throw error(status);
  }

  static FlakeIdException error(int status) {
    try {
      String message = string((MemorySegment) LAST_MESSAGE.invokeExact());
      String field = string((MemorySegment) LAST_FIELD.invokeExact());
      long byMs = (long) LAST_BY_MS.invokeExact();
      long position = (long) LAST_POSITION.invokeExact();
      return FlakeIdException.of(status, message, field, byMs, position);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** {@code n} IDs that {@code fill} writes, {@code n} checked against the core's range before allocating. */
  static long[] filled(int n, java.util.function.Consumer<long[]> fill) {
    checkBatch(n);
    long[] ids = new long[n];
    fill.accept(ids);
    return ids;
  }

  /** The core's range for a batch of {@code n} IDs, checked before allocating it. */
  static void checkBatch(int n) {
    try {
      check((int) CHECK_BATCH.invokeExact((long) n));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static String statusName(int status) {
    try {
      return string((MemorySegment) STATUS_NAME.invokeExact(status));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static String version() {
    try {
      return string((MemorySegment) VERSION.invokeExact());
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** A NUL-terminated string owned by the library, or null. */
  static String string(MemorySegment p) {
    return p.equals(MemorySegment.NULL) ? null : p.reinterpret(Long.MAX_VALUE).getString(0);
  }

  /** For the invokeExact calls' {@code throws Throwable}: nothing else is thrown there. */
  static RuntimeException rethrow(Throwable t) {
    if (t instanceof RuntimeException r) return r;
    if (t instanceof Error e) throw e;
    return new IllegalStateException(t);
  }

  /** An 8-byte out-parameter per thread, for the single-ID calls. */
  private static final ThreadLocal<MemorySegment> SCRATCH =
      ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(JAVA_LONG));

  static MemorySegment scratch() {
    return SCRATCH.get();
  }
}
