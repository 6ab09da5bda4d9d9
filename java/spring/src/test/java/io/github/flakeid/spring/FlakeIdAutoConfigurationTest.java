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

  /**
   * flakeid.lease=database: the node id leased from the app's DataSource (spring.datasource.*, the
   * fixture's PostgreSQL); two contexts at once hold two node ids; H2 is refused at start-up.
   */
  @Test
  void leaseDatabaseIsTheDataSourcesPostgreSQL() {
    String url = System.getenv("FLAKEID_TEST_POSTGRES_URL");
    assertThat(url).as("run through make test-java (tests/env/testenv.py)").isNotNull();
    java.net.URI u = java.net.URI.create(url);
    String[] login = u.getUserInfo().split(":", 2);
    String[] props = {"flakeid.lease=database",
        "spring.datasource.url=jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath(),
        "spring.datasource.username=" + login[0], "spring.datasource.password=" + login[1]};
    runner.withPropertyValues(props).run(ctx -> {
      Generator gen = ctx.getBean(Generator.class);
      assertThat(gen.nodeOrigin()).isEqualTo("leased");
      assertThat(FlakeId.decompose(gen.nextId()).node()).isEqualTo(gen.node());
      // Another app instance's generator, from the same properties, beside this one.
      Map<String, String> same = new java.util.HashMap<>();
      for (String p : props) same.put(p.substring(0, p.indexOf('=')), p.substring(p.indexOf('=') + 1));
      try (Generator second = FlakeIdSettings.build(same)) {
        assertThat(second.nodeOrigin()).isEqualTo("leased");
        assertThat(second.node()).isNotEqualTo(gen.node());
      }
    });
    runner.withPropertyValues("flakeid.lease=database", "spring.datasource.url=jdbc:h2:mem:x",
        "spring.datasource.password=hunter2").run(ctx -> {
      assertThat(ctx).hasFailed();
      assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("only PostgreSQL")
          .hasMessageNotContaining("hunter2");
    });
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
