package io.github.flakeid;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/** Decoding and text forms of IDs, for IDs made by any flakeid binding. */
public final class FlakeId {
  private FlakeId() {}

  /** Takes an ID apart under the Snowflake layout. */
  public static Parts decompose(long id) {
    return Layout.SNOWFLAKE.decompose(id);
  }

  /** Takes an ID apart under a layout. */
  public static Parts decompose(long id, Layout layout) {
    return layout.decompose(id);
  }

  /** The ID's text form (IDs are unsigned 64-bit: {@code -1L} is 18446744073709551615). */
  public static String encode(long id, Encoding encoding) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment buf = call.allocate(Native.ENCODE_BUFFER);
      MemorySegment len = call.allocate(JAVA_LONG);
      Native.check((int) Native.ENCODE.invokeExact(id, encoding.value, buf, (long) Native.ENCODE_BUFFER, len));
      return buf.getString(0);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** Parses a text form; bad text is an {@link IdParseException} with the position. */
  public static long decode(String text, Encoding encoding) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    try (Arena call = Arena.ofConfined()) {
      MemorySegment in = call.allocate(Math.max(1, bytes.length));
      MemorySegment.copy(bytes, 0, in, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, bytes.length);
      MemorySegment out = call.allocate(JAVA_LONG);
      Native.check((int) Native.DECODE.invokeExact(in, (long) bytes.length, encoding.value, out));
      return out.get(JAVA_LONG, 0);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** The version of the native library ("0.1.0"). */
  public static String version() {
    return Native.version();
  }
}
