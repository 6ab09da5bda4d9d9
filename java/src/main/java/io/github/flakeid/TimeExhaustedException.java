package io.github.flakeid;

/** The time is before the layout's epoch or past the last tick it can hold ({@link ErrorKind#TIME_EXHAUSTED}). */
public class TimeExhaustedException extends FlakeIdException {
  private static final long serialVersionUID = 1L;

  TimeExhaustedException(int status, String message) {
    super(status, message);
  }
}
