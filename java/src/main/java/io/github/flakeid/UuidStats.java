package io.github.flakeid;

import java.time.Duration;

/**
 * What a {@link UuidGenerator} has done since it was built.
 *
 * @param idsIssued IDs handed out
 * @param tickWaits milliseconds waited out because one's 65,536 (or the borrow window) were used up
 * @param lead how far the last ID's time is ahead of the clock: the drift of the embedded time
 * @param clockRollbacks calls that found the clock behind IDs already issued
 * @param maxRollback the largest of those rollbacks
 * @param reseeds forked children that went on with reseeded random bits (a JVM does not fork)
 */
public record UuidStats(
    long idsIssued, long tickWaits, Duration lead, long clockRollbacks, Duration maxRollback, long reseeds) {}
