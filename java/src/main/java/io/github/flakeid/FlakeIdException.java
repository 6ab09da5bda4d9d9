package io.github.flakeid;

/**
 * Every failure flakeid reports; one subclass per {@link ErrorKind}. The message names
 * the field, its allowed range and the value given.
 */
public class FlakeIdException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int status;

  FlakeIdException(int status, String message) {
    super(message);
    this.status = status;
  }

  /** The C library's status number. */
  public int status() {
    return status;
  }

  public ErrorKind kind() {
    return ErrorKind.of(status);
  }

  static FlakeIdException of(int status, String message, String field, long byMs, long position) {
    return switch (ErrorKind.of(status)) {
      case CONFIG -> new ConfigException(status, message, field);
      case CLOCK_BACKWARDS -> new ClockMovedBackwardsException(status, message, byMs);
      case TIME_EXHAUSTED -> new TimeExhaustedException(status, message);
      case PARSE -> new IdParseException(status, message, position);
      case FORK -> new ForkException(status, message);
      case LEASE -> new LeaseException(status, message);
      case INTERRUPTED -> new WaitInterruptedException(status, message);
      case INTERNAL ->
          new InternalException(status, Native.statusName(status) + " (status " + status + "): " + message);
    };
  }
}
