package io.github.flakeid;

/** A generator made before {@code fork()} used in the child ({@link ErrorKind#FORK}). */
public class ForkException extends FlakeIdException {
  private static final long serialVersionUID = 1L;

  ForkException(int status, String message) {
    super(status, message);
  }
}
