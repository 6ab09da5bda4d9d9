package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Leases against real stores: a file lease always; Redis, PostgreSQL and etcd (plain
 * and TLS) when tests/env/testenv.py started them ({@code make test-java} runs Maven
 * under {@code testenv.py run --all}). With FLAKEID_LEASE_REQUIRE=1 (set by testenv
 * when every server started) a missing URL fails instead of skipping.
 */
class LeaseTest {
  // The shortest TTL a lease may have (1 s is the floor) that still leaves the
  // renewals room on a busy CI machine: a first acquire in a new namespace waits out
  // a lock delay of about one TTL (the default 10 s made the run wait 13 s).
  private static final Duration LEASE_TTL = Duration.ofSeconds(2);

  @Test
  void fileLease(@TempDir Path dir) {
    roundTrip("file://" + dir.toAbsolutePath(), "file");
  }

  // A first acquire in a new namespace waits out the lock delay (about one TTL,
  // docs/leases.md point 6), so the stores run side by side.
  @ParameterizedTest
  @Execution(ExecutionMode.CONCURRENT)
  @ValueSource(strings = {
      "FLAKEID_TEST_REDIS_URL", "FLAKEID_TEST_REDISS_URL",
      "FLAKEID_TEST_POSTGRES_URL", "FLAKEID_TEST_POSTGRES_TLS_URL",
      "FLAKEID_TEST_ETCD_URL", "FLAKEID_TEST_ETCDS_URL"})
  void storeLease(String variable) {
    String url = System.getenv(variable);
    if (url == null || url.isEmpty()) {
      if ("1".equals(System.getenv("FLAKEID_LEASE_REQUIRE"))) fail(variable + " is not set");
      Assumptions.abort(variable + " is not set: run under `python3 tests/env/testenv.py run --all --`");
    }
    roundTrip(url, variable);
    if (url.contains("/ca.pem")) {
      String bad = withNamespace(url.replace("/ca.pem", "/other-ca.pem"), variable + "-ca");
      LeaseException e = assertThrows(LeaseException.class, () -> Generator.builder().lease(bad).build());
      assertTrue(e.getMessage().contains("unknown CA"), e.getMessage());
    }
  }

  /** No secret of a lease URL reaches an error: the userinfo's password, a secret query parameter. */
  @ParameterizedTest
  @ValueSource(strings = {
      "postgres://app:hunter91@127.0.0.1:70000/db?namespace=x",
      "postgres://app@127.0.0.1:70000/db?password=hunter92&sslpassword=hunter93"})
  void leaseUrlSecretsAreNeverShown(String url) {
    ConfigException e = assertThrows(ConfigException.class, () -> Generator.builder().lease(url).build());
    assertTrue(e.getMessage().contains("lease URL"), e.getMessage());
    assertTrue(!e.getMessage().contains("hunter9"), e.getMessage());
  }

  /** State files (docs/state.md): a restart behind the saved mark meets the policy. */
  @Test
  void stateFile(@TempDir Path dir) throws java.io.IOException {
    String path = dir.resolve("node5.state").toString();
    java.nio.file.Files.writeString(Path.of(path), "flakeid-state 1\nhigh_water_ms 1800000030000\nnode 5\n");
    try (ManualClock clock = ManualClock.create(1_800_000_000_000L, 1)) {
      try (Generator g = Generator.builder().node(5).state(path).clock(clock).build()) {
        assertThrows(ClockMovedBackwardsException.class, g::nextId);
        ConfigException e =
            assertThrows(ConfigException.class, () -> Generator.builder().node(5).state(path).build());
        assertEquals("state", e.field());
      }
      try (Generator g =
          Generator.builder().node(5).state(path).clock(clock).clockBackwards(ClockBackwards.MONOTONIC).build()) {
        assertTrue(Layout.SNOWFLAKE.decompose(g.nextId()).timestampMs() > 1_800_000_030_000L);
      }
    }
  }

  static String withNamespace(String url, String name) {
    String ns = ("java-" + ProcessHandle.current().pid() + "-" + name).replaceAll("[^A-Za-z0-9-]", "-");
    return url + (url.contains("?") ? "&" : "?") + "namespace=" + ns;
  }

  /** Two holders get ids 0 and 1, their IDs carry them, and close gives an id back. */
  static void roundTrip(String base, String name) {
    String url = withNamespace(base, name);
    Generator a = Generator.builder().lease(url).leaseTtl(LEASE_TTL).build();
    try (Generator b = Generator.builder().lease(url).leaseTtl(LEASE_TTL).build()) {
      assertEquals(0, a.node());
      assertEquals(1, b.node());
      for (Generator g : new Generator[] {a, b}) {
        long[] ids = g.nextIds(100);
        long id = g.nextId();
        assertTrue(id > ids[99]);
        assertEquals(g.node(), FlakeId.decompose(id).node());
        Stats st = g.stats();
        assertEquals(101, st.idsIssued());
        assertEquals(java.util.Optional.of("held"), st.leaseState());
        assertTrue(st.leaseRemaining().orElseThrow().toMillis() > 0);
      }
      assertThrows(ConfigException.class, () -> Generator.builder().lease(url).leaseTtl(LEASE_TTL).node(3).build());
      a.close();
      try (Generator c = Generator.builder().lease(url).leaseTtl(LEASE_TTL).build()) {
        assertEquals(0, c.node(), "after close, the next holder takes the freed id");
      }
    } finally {
      a.close();
    }
  }
}
