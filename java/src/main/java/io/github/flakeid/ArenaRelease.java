package io.github.flakeid;

import java.lang.foreign.Arena;
import java.util.concurrent.locks.LockSupport;

/**
 * Closes a handle's shared arena (freeing the native object through the segment's
 * cleanup) when its owner is closed or garbage. A call in progress keeps a shared
 * arena open, so close is retried until that call ends: most end within a tick, a
 * generator's wait for a clock that went back within maxWait.
 */
record ArenaRelease(Arena arena) implements Runnable {
  @Override
  public void run() {
    for (int tries = 0; arena.scope().isAlive(); tries++) {
      try {
        arena.close();
      } catch (IllegalStateException busy) {
        if (tries < 1000) Thread.onSpinWait();
        else LockSupport.parkNanos(100_000);
      }
    }
  }
}
