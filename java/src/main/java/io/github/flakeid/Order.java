package io.github.flakeid;

/** Where the node field sits ({@code flakeid_order}). */
public enum Order {
  /** time | node | seq: Twitter, FlakeID, Discord, Baidu, Instagram. */
  TIME_NODE_SEQ(0),
  /** time | seq | node: Sonyflake. */
  TIME_SEQ_NODE(1);

  final int value;

  Order(int value) {
    this.value = value;
  }

  static Order of(int value) {
    for (Order o : values()) if (o.value == value) return o;
    throw new IllegalArgumentException("flakeid_order " + value);
  }
}
