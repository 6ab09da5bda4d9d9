package io.github.flakeid;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteOrder;
import java.util.UUID;

/**
 * The 128-bit family's text forms and bits (UUIDv7, RFC 9562; ULID; TypeID v0.3), by
 * the engine's rules: a {@link UUID} in, a {@link UUID} out. A ULID and a UUID are the
 * same 128 bits. Bad text is an {@link IdParseException} naming the 0-based position;
 * a bad TypeID prefix or compose part a {@link ConfigException} naming it.
 */
public final class Uuids {
  private Uuids() {}

  private static final ValueLayout.OfLong BE = JAVA_LONG.withOrder(ByteOrder.BIG_ENDIAN).withByteAlignment(1);

  /** A TypeID's parts: its prefix ("" for none) and its 128 bits. */
  public record TypeId(String prefix, UUID uuid) {}

  /** The first and last 128-bit values of a time range, for {@code WHERE id BETWEEN first AND last}. */
  public record Range(UUID first, UUID last) {}

  static MemorySegment bytes(Arena call, UUID u) {
    MemorySegment s = call.allocate(Native.UUID_LEN);
    s.set(BE, 0, u.getMostSignificantBits());
    s.set(BE, 8, u.getLeastSignificantBits());
    return s;
  }

  static UUID uuid(MemorySegment s) {
    return new UUID(s.get(BE, 0), s.get(BE, 8));
  }

  /** Text as the library takes it: UTF-8 bytes and their length (no NUL needed). */
  static MemorySegment text(Arena call, String text) {
    return call.allocateFrom(text);
  }

  static long length(MemorySegment text) {
    return text.byteSize() - 1;
  }

  private static UUID parse(MethodHandle parser, String text) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment t = text(call, text);
      MemorySegment out = call.allocate(Native.UUID_LEN);
      Native.check((int) parser.invokeExact(t, length(t), out, (long) Native.UUID_LEN));
      return uuid(out);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  private static String format(MethodHandle formatter, UUID u) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment buf = call.allocate(Native.TEXT_BUFFER);
      Native.check((int) formatter.invokeExact(bytes(call, u), (long) Native.UUID_LEN, buf, (long) Native.TEXT_BUFFER,
          MemorySegment.NULL));
      return buf.getString(0);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** Reads 8-4-4-4-12 text or its 32 hex digits, in any case. */
  public static UUID parseUuid(String text) {
    return parse(Native.UUID_PARSE, text);
  }

  /** Reads 26 Crockford base32 characters, any case ({@code I}/{@code L} are 1, {@code O} is 0; {@code U} refused). */
  public static UUID parseUlid(String text) {
    return parse(Native.ULID_PARSE, text);
  }

  /** Splits a TypeID at its last {@code _} into its prefix and its 128 bits. */
  public static TypeId parseTypeId(String text) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment t = text(call, text);
      MemorySegment prefix = call.allocate(Native.TEXT_BUFFER);
      MemorySegment out = call.allocate(Native.UUID_LEN);
      Native.check((int) Native.TYPEID_PARSE.invokeExact(t, length(t), prefix, (long) Native.TEXT_BUFFER,
          MemorySegment.NULL, out, (long) Native.UUID_LEN));
      return new TypeId(prefix.getString(0), uuid(out));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** The lowercase 8-4-4-4-12 text (the engine's; {@link UUID#toString} writes the same). */
  public static String formatUuid(UUID u) {
    return format(Native.UUID_FORMAT, u);
  }

  /** The same 128 bits as a ULID: 26 upper-case Crockford base32 characters. */
  public static String formatUlid(UUID u) {
    return format(Native.ULID_FORMAT, u);
  }

  /** {@code prefix_} and the lowercase ULID text (the text alone for an empty prefix); the prefix is checked. */
  public static String formatTypeId(String prefix, UUID u) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment buf = call.allocate(Native.TEXT_BUFFER);
      Native.check((int) Native.TYPEID_FORMAT.invokeExact(call.allocateFrom(prefix), bytes(call, u),
          (long) Native.UUID_LEN, buf, (long) Native.TEXT_BUFFER, MemorySegment.NULL));
      return buf.getString(0);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** The UUIDv7 of Unix millisecond {@code ms} with {@code randA} (12 bits) and {@code randB} (62 bits). */
  public static UUID composeUuid7(long ms, int randA, long randB) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(Native.UUID_LEN);
      Native.check((int) Native.UUID7_COMPOSE.invokeExact(ms, randA, randB, out, (long) Native.UUID_LEN));
      return uuid(out);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** The parts {@link #composeUuid7} took: {ms, randA, randB}; not a UUIDv7 is a parse error. */
  public static long[] decomposeUuid7(UUID u) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment ms = call.allocate(JAVA_LONG), a = call.allocate(JAVA_INT), b = call.allocate(JAVA_LONG);
      Native.check((int) Native.UUID7_DECOMPOSE.invokeExact(bytes(call, u), (long) Native.UUID_LEN, ms, a, b));
      return new long[] {ms.get(JAVA_LONG, 0), a.get(JAVA_INT, 0), b.get(JAVA_LONG, 0)};
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** The Unix millisecond a UUIDv7 carries; a UUID of another version is a parse error. */
  public static long timestampMs(UUID u) {
    return millis(Native.UUID7_TIMESTAMP_MS, u);
  }

  /** The Unix millisecond in a ULID's first 48 bits (any other bits). */
  public static long ulidTimestampMs(UUID u) {
    return millis(Native.ULID_TIMESTAMP_MS, u);
  }

  private static long millis(MethodHandle h, UUID u) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment ms = call.allocate(JAVA_LONG);
      Native.check((int) h.invokeExact(bytes(call, u), (long) Native.UUID_LEN, ms));
      return ms.get(JAVA_LONG, 0);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** The first and last value whose time is within {@code startMs..=endMs} (Unix ms). */
  public static Range range(long startMs, long endMs) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment first = call.allocate(Native.UUID_LEN), last = call.allocate(Native.UUID_LEN);
      Native.check((int) Native.UUID7_RANGE.invokeExact(startMs, endMs, first, last, (long) Native.UUID_LEN));
      return new Range(uuid(first), uuid(last));
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }
}
