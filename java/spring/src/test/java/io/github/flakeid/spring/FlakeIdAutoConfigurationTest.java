package io.github.flakeid.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flakeid.FlakeId;
import io.github.flakeid.Generator;
import io.github.flakeid.hibernate.FlakeIdSettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The auto-configuration alone: properties, refusals, health, metrics, shutdown. */
class FlakeIdAutoConfigurationTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(FlakeIdAutoConfiguration.class));

  @AfterEach
  void closeShared() {
    FlakeIdSettings.close();
    io.github.flakeid.hibernate.FlakeUuidSettings.close();
  }

  @Test
  void oneUuidGeneratorFromTheProperties() {
    runner.withPropertyValues("flakeid.node=5", "flakeid.uuid.overflow=wait", "flakeid.uuid.max-wait-ms=50").run(ctx -> {
      io.github.flakeid.UuidGenerator gen = ctx.getBean(io.github.flakeid.UuidGenerator.class);
      assertThat(io.github.flakeid.hibernate.FlakeUuidSettings.shared(Map.of())).isSameAs(gen); // @FlakeUuid's
      assertThat(gen.nextUuid().version()).isEqualTo(7);
    });
    runner.withPropertyValues("flakeid.node=5", "flakeid.uuid.overflow=later").run(ctx ->
        assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("overflow").hasMessageContaining("later"));
  }

  @Test
  void oneGeneratorFromTheProperties() {
    runner.withPropertyValues("flakeid.node=5", "flakeid.layout=discord", "flakeid.overflow=borrow").run(ctx -> {
      Generator gen = ctx.getBean(Generator.class);
      assertThat(gen.node()).isEqualTo(5);
      assertThat(FlakeIdSettings.shared(Map.of())).isSameAs(gen); // what @FlakeId entities use
      long id = gen.nextId();
      assertThat(FlakeId.decompose(id, io.github.flakeid.Layout.DISCORD).node()).isEqualTo(5);
    });
  }

  @Test
  void noNodeSourceTakesAFreeNodeIdRequireNodeStopsTheContext() {
    runner.run(ctx -> assertThat(ctx).hasNotFailed());
    runner.withPropertyValues("flakeid.require-node=true").run(ctx -> {
      assertThat(ctx).hasFailed();
      assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("no node id given").hasMessageContaining("FLAKEID_NODE");
    });
    runner.withPropertyValues("flakeid.worker=32").run(ctx ->
        assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("worker must be in 0..=31"));
    runner.withPropertyValues("flakeid.node=1", "flakeid.overflow=later").run(ctx ->
        assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("overflow").hasMessageContaining("later"));
  }

  @Test
  void healthReportsTheLeaseAndMetricsTheStats(@TempDir Path dir) {
    runner.withPropertyValues("flakeid.lease=file://" + dir).run(ctx -> {
      Generator gen = ctx.getBean(Generator.class);
      gen.nextId();
      var health = ctx.getBean(FlakeIdHealthIndicator.class).health();
      assertThat(health.getStatus()).isEqualTo(Status.UP);
      assertThat(health.getDetails()).containsEntry("lease", "held").containsKey("leaseRemainingMs");
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      ctx.getBean(FlakeIdMetrics.class).bindTo(registry);
      assertThat(registry.get("flakeid.ids.issued").functionCounter().count()).isGreaterThanOrEqualTo(1);
      assertThat(registry.get("flakeid.lease.remaining").gauge().value()).isGreaterThan(0);
    });
    assertThat(FlakeIdSettings.shared(Map.of("flakeid.node", "2")).node()).isEqualTo(2); // the context's one is gone
  }
}
