package io.github.flakeid;

/** A wait for the clock was ended by a wait hook ({@link ErrorKind#INTERRUPTED}). */
public class WaitInterruptedException extends FlakeIdException {
  private static final long serialVersionUID = 1L;

  WaitInterruptedException(int status, String message) {
    super(status, message);
  }
}
