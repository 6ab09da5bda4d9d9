package io.github.flakeid;

import java.time.Instant;

/**
 * An ID taken apart ({@link FlakeId#decompose}).
 *
 * @param timestampMs Unix milliseconds at the start of the ID's tick
 * @param ticks the raw time field: ticks since the layout's epoch
 * @param node {@code datacenter << workerBits | worker}
 * @param datacenter 0 for layouts with a single node field
 * @param worker equals {@code node} for layouts with a single node field
 * @param sequence the sequence within the tick
 */
public record Parts(long timestampMs, long ticks, long node, long datacenter, long worker, long sequence) {
  /** The start of the ID's tick. */
  public Instant instant() {
    return Instant.ofEpochMilli(timestampMs);
  }
}
