package io.github.flakeid;

/**
 * What a generator does when the clock reads earlier than IDs already issued
 * ({@code flakeid_clock_backwards}).
 */
public enum ClockBackwards {
  /** Fail with {@link ClockMovedBackwardsException} (the default). */
  ERROR(0),
  /** Wait up to {@code maxWait} for the clock to catch up, then fail. */
  WAIT(1),
  /** Keep issuing from the last tick; once it is used up, wait as for WAIT. */
  MONOTONIC(2);

  final int value;

  ClockBackwards(int value) {
    this.value = value;
  }
}
