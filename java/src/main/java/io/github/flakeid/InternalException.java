package io.github.flakeid;

/** A bug inside flakeid, caught at the C boundary ({@link ErrorKind#INTERNAL}): the process is unharmed. */
public class InternalException extends FlakeIdException {
  private static final long serialVersionUID = 1L;

  InternalException(int status, String message) {
    super(status, message);
  }
}
