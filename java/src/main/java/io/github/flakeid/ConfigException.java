package io.github.flakeid;

/** A layout, node id or option is out of range ({@link ErrorKind#CONFIG}). */
public class ConfigException extends FlakeIdException {
  private static final long serialVersionUID = 1L;

  private final String field;

  ConfigException(int status, String message, String field) {
    super(status, message);
    this.field = field;
  }

  /** The option or layout field, as the C library and Python name it ({@code worker}, {@code time_bits}). */
  public String field() {
    return field;
  }
}
