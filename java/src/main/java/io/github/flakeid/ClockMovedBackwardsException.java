package io.github.flakeid;

/** The clock is behind IDs already issued; no ID was issued ({@link ErrorKind#CLOCK_BACKWARDS}). */
public class ClockMovedBackwardsException extends FlakeIdException {
  private static final long serialVersionUID = 1L;

  private final long byMs;

  ClockMovedBackwardsException(int status, String message, long byMs) {
    super(status, message);
    this.byMs = byMs;
  }

  /** How many milliseconds the clock is behind. */
  public long byMs() {
    return byMs;
  }
}
