package io.github.flakeid;

/** Text forms of an ID ({@code flakeid_encoding}). */
public enum Encoding {
  /** Base 10, unpadded (up to 20 characters). */
  DECIMAL(0),
  /** 16 lowercase hex digits. */
  HEX(1),
  /** 13 Crockford base32 characters (decoding ignores case, reads I/L as 1, O as 0). */
  BASE32(2),
  /** 11 characters of 0-9A-Za-z. */
  BASE62(3);

  final int value;

  Encoding(int value) {
    this.value = value;
  }
}
