package io.github.flakeid;

/**
 * What went wrong, without the details: the engine's error kinds with the C library's
 * stable status numbers (bindings/c/README.md), and {@link #INTERNAL} for the C
 * layer's own failures, which mean a bug in flakeid.
 */
public enum ErrorKind {
  CONFIG(1),
  CLOCK_BACKWARDS(2),
  TIME_EXHAUSTED(3),
  PARSE(4),
  FORK(5),
  LEASE(6),
  INTERRUPTED(7),
  /** A NULL argument, a caught panic or a buffer too small (statuses 100 and up). */
  INTERNAL(101);

  private final int status;

  ErrorKind(int status) {
    this.status = status;
  }

  /** The C status number. */
  public int status() {
    return status;
  }

  /**
   * The stable lowercase name ("config", "clock_backwards", ...): the shared vectors'
   * and the C library's names ({@link #INTERNAL}: "panic").
   */
  public String label() {
    return Native.statusName(status);
  }

  static ErrorKind of(int status) {
    for (ErrorKind k : values()) if (k.status == status) return k;
    return INTERNAL;
  }
}
