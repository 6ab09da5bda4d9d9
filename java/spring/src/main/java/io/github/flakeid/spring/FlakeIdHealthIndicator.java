package io.github.flakeid.spring;

import io.github.flakeid.Generator;
import io.github.flakeid.Stats;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/**
 * The generator's health: UP with a fixed node id or a held lease; OUT_OF_SERVICE
 * while the lease's store is unreachable (IDs still flow until the window closes);
 * DOWN once the lease is lost or released (no more IDs).
 */
public class FlakeIdHealthIndicator implements HealthIndicator {
  private final Generator generator;

  public FlakeIdHealthIndicator(Generator generator) {
    this.generator = generator;
  }

  @Override
  public Health health() {
    Stats s;
    try {
      s = generator.stats();
    } catch (RuntimeException e) {
      return Health.down(e).build();
    }
    String lease = s.leaseState().orElse(null);
    Health.Builder b = lease == null || lease.equals("held") ? Health.up()
        : lease.equals("unreachable") ? Health.outOfService() : Health.down();
    b.withDetail("node", generator.node()).withDetail("idsIssued", s.idsIssued());
    if (lease != null) b.withDetail("lease", lease);
    s.leaseRemaining().ifPresent(d -> b.withDetail("leaseRemainingMs", d.toMillis()));
    return b.build();
  }
}
