package io.github.flakeid;

import static io.github.flakeid.VectorsTest.expectError;
import static io.github.flakeid.VectorsTest.num;
import static io.github.flakeid.VectorsTest.str;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HexFormat;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

/** tests/vectors/uuid.json's sections, run by {@link VectorsTest}. */
final class UuidVectors {
  private UuidVectors() {}

  static final Map<String, Consumer<JsonNode>> SECTIONS =
      Map.of(
          "uuid7", UuidVectors::uuid7,
          "compose_errors", c -> expectError(c, () -> compose(c)),
          "conversions", UuidVectors::conversion,
          "text_aliases", UuidVectors::alias,
          "bad", UuidVectors::bad,
          "typeid_valid", UuidVectors::typeIdValid,
          "typeid_invalid", c -> expectError(c, () -> Uuids.parseTypeId(str(c, "typeid"))),
          "prefix_errors", UuidVectors::prefixError,
          "ranges", UuidVectors::range);

  static UUID compose(JsonNode c) {
    return Uuids.composeUuid7(num(c, "ms"), (int) num(c, "rand_a"), Long.parseUnsignedLong(str(c, "rand_b")));
  }

  static void uuid7(JsonNode c) {
    UUID u = compose(c);
    assertEquals(str(c, "uuid"), u.toString());
    assertEquals(str(c, "uuid"), Uuids.formatUuid(u));
    byte[] bytes = HexFormat.of().parseHex(str(c, "bytes"));
    assertEquals(u, new UUID(java.nio.ByteBuffer.wrap(bytes).getLong(0), java.nio.ByteBuffer.wrap(bytes).getLong(8)));
    assertEquals(7, u.version());
    assertEquals(2, u.variant());
    assertEquals(str(c, "ulid"), Uuids.formatUlid(u));
    assertEquals(str(c, "typeid"), Uuids.formatTypeId("user", u));
    assertEquals(u, Uuids.parseUlid(str(c, "ulid")));
    assertEquals(new Uuids.TypeId("user", u), Uuids.parseTypeId(str(c, "typeid")));
    long[] parts = Uuids.decomposeUuid7(u);
    assertEquals(num(c, "ms"), parts[0]);
    assertEquals(num(c, "rand_a"), parts[1]);
    assertEquals(Long.parseUnsignedLong(str(c, "rand_b")), parts[2]);
    assertEquals(num(c, "ms"), Uuids.timestampMs(u));
    assertEquals(num(c, "ms"), Uuids.ulidTimestampMs(u));
  }

  static void conversion(JsonNode c) {
    UUID u = Uuids.parseUuid(str(c, "uuid"));
    assertEquals(u, Uuids.parseUlid(str(c, "ulid")));
    assertEquals(str(c, "ulid"), Uuids.formatUlid(u));
  }

  static void alias(JsonNode c) {
    UUID got =
        switch (str(c, "kind")) {
          case "uuid" -> Uuids.parseUuid(str(c, "text"));
          case "ulid" -> Uuids.parseUlid(str(c, "text"));
          default -> throw new AssertionError("unknown kind");
        };
    assertEquals(str(c, "uuid"), got.toString());
  }

  static void bad(JsonNode c) {
    switch (str(c, "kind")) {
      case "uuid" -> expectError(c, () -> Uuids.parseUuid(str(c, "text")));
      case "ulid" -> expectError(c, () -> Uuids.parseUlid(str(c, "text")));
      default -> throw new AssertionError("unknown kind");
    }
  }

  static void typeIdValid(JsonNode c) {
    Uuids.TypeId t = Uuids.parseTypeId(str(c, "typeid"));
    assertEquals(str(c, "prefix"), t.prefix());
    assertEquals(str(c, "uuid"), t.uuid().toString());
    assertEquals(str(c, "typeid"), Uuids.formatTypeId(t.prefix(), t.uuid()));
  }

  static void prefixError(JsonNode c) {
    try (UuidGenerator g = UuidGenerator.builder().build()) {
      expectError(c, () -> g.nextTypeId(str(c, "prefix")));
      assertEquals(0, g.stats().idsIssued(), "a bad prefix cost an ID");
    }
  }

  static void range(JsonNode c) {
    Uuids.Range r = Uuids.range(num(c, "start_ms"), num(c, "end_ms"));
    assertEquals(str(c, "first"), r.first().toString());
    assertEquals(str(c, "last"), r.last().toString());
  }
}
