package io.github.flakeid;

import java.time.Duration;
import java.util.Optional;

/**
 * What a generator has done since it was built ({@link Generator#stats}): the core's
 * statistics, one call into the library.
 *
 * @param idsIssued IDs handed out (a borrowing generator shared by contending threads
 *     counts the unused rest of a thread's run of slots, up to 127, as issued until the
 *     thread uses or drops it)
 * @param tickWaits ticks waited out because the tick's sequence (or the borrow window)
 *     was used up
 * @param tickWaitTime time spent in those waits
 * @param lead how far the last ID issued is ahead of the clock (a borrowing generator's lead, or a
 *     clock that went back)
 * @param clockRollbacks calls that found the clock behind IDs already issued
 * @param maxRollback the largest of those rollbacks
 * @param leaseState {@code held}, {@code unreachable}, {@code lost} or {@code released};
 *     empty without a lease
 * @param leaseRemaining time until the lease's window closes unless renewed; empty
 *     without a lease
 */
public record Stats(
    long idsIssued,
    long tickWaits,
    Duration tickWaitTime,
    Duration lead,
    long clockRollbacks,
    Duration maxRollback,
    Optional<String> leaseState,
    Optional<Duration> leaseRemaining) {}
