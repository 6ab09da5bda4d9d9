package io.github.flakeid;

/** Text that does not decode, or an ID wider than its layout ({@link ErrorKind#PARSE}). */
public class IdParseException extends FlakeIdException {
  private static final long serialVersionUID = 1L;

  private final long position;

  IdParseException(int status, String message, long position) {
    super(status, message);
    this.position = position;
  }

  /** The 0-based position of the offending character (the length, for text too short or too long). */
  public long position() {
    return position;
  }
}
