package io.github.flakeid;

/** What a generator does when a tick's sequence is used up ({@code flakeid_overflow}). */
public enum Overflow {
  /** Spin on the clock until the next tick (the default). */
  WAIT(0),
  /** Move to the next tick at once, at most {@code maxBorrow} ahead of the clock. */
  BORROW(1);

  final int value;

  Overflow(int value) {
    this.value = value;
  }
}
