package io.github.flakeid;

/** A node-id lease could not be had, or was lost ({@link ErrorKind#LEASE}). */
public class LeaseException extends FlakeIdException {
  private static final long serialVersionUID = 1L;

  LeaseException(int status, String message) {
    super(status, message);
  }
}
