package io.github.flakeid.hibernate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.flakeid.ConfigException;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** @FlakeId on H2 (Hibernate's embedded default) and the fixture's PostgreSQL. */
class FlakeIdHibernateTest {
  @Entity(name = "HbOrder")
  @Table(name = "hb_orders")
  public static class Order {
    @Id @FlakeId Long id;
    int total;

    public Order() {}

    Order(int total) {
      this.total = total;
    }
  }

  @AfterEach
  void closeShared() {
    FlakeIdSettings.close();
  }

  static Configuration config(String db) {
    Configuration c = new Configuration().addAnnotatedClass(Order.class)
        .setProperty("hibernate.hbm2ddl.auto", "create-drop");
    if (db.equals("h2")) {
      c.setProperty("hibernate.connection.url", "jdbc:h2:mem:flakeid;DB_CLOSE_DELAY=-1");
    } else {
      c.setProperty("hibernate.connection.url", TestDb.jdbcUrl());
    }
    return c;
  }

  /** Persists `n` new orders (totals 0 to n - 1), adding the ids they were given to `ids`. */
  static void persistOrders(Session s, int n, List<Long> ids) {
    for (int i = 0; i < n; i++) {
      Order o = new Order(i);
      s.persist(o);
      ids.add(o.id);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgres"})
  void insertsGetIdsFromTheSharedGenerator(String db) {
    try (SessionFactory sf = config(db).setProperty("flakeid.node", "21").buildSessionFactory()) {
      List<Long> ids = new ArrayList<>();
      sf.inTransaction(s -> {
        persistOrders(s, 5, ids);
        Order given = new Order(99);
        given.id = 42L;
        s.persist(given);
      });
      for (int i = 1; i < ids.size(); i++) assertTrue(Long.compareUnsigned(ids.get(i - 1), ids.get(i)) < 0);
      for (long id : ids) assertEquals(21, io.github.flakeid.FlakeId.decompose(id).node());
      sf.inTransaction(s -> {
        assertEquals(3, s.find(Order.class, ids.get(3)).total);
        assertEquals(99, s.find(Order.class, 42L).total);
        assertEquals(6L, s.createSelectionQuery("select count(o) from HbOrder o", Long.class).getSingleResult());
      });
    }
  }

  /**
   * flakeid.lease=database: the node id leased from the unit's own PostgreSQL (its JDBC URL, no
   * URL written twice); a second holder gets another node id; another database is refused.
   */
  // A namespace's first use waits out the lock delay (TTL + margin + borrow,
  // docs/leases.md): the shortest TTL keeps that wait short.
  static final String TTL_MS = "1000";

  @Test
  void leaseDatabaseIsTheUnitsPostgreSQL() {
    try (SessionFactory sf = config("postgres").setProperty("flakeid.lease", "database")
        .setProperty("flakeid.lease-ttl-ms", TTL_MS).buildSessionFactory()) {
      List<Long> ids = new ArrayList<>();
      sf.inTransaction(s -> persistOrders(s, 3, ids));
      io.github.flakeid.Generator g = FlakeIdSettings.shared(Map.of());
      assertEquals("leased", g.nodeOrigin());
      for (long id : ids) assertEquals(g.node(), io.github.flakeid.FlakeId.decompose(id).node());
      io.github.flakeid.Generator other = FlakeIdSettings.build(
          Map.of("flakeid.lease", "database", "flakeid.lease-ttl-ms", TTL_MS,
              "hibernate.connection.url", TestDb.jdbcUrl()));
      try {
        assertEquals("leased", other.nodeOrigin());
        assertTrue(other.node() != g.node(), "two holders share node " + g.node());
      } finally {
        other.close();
      }
    }
    ConfigException e = assertThrows(ConfigException.class, () -> FlakeIdSettings.build(Map.of(
        "flakeid.lease", "database", "hibernate.connection.url", "jdbc:mysql://db/shop",
        "hibernate.connection.password", "hunter2")));
    assertEquals("lease", e.field(), e.getMessage());
    assertTrue(e.getMessage().contains("only PostgreSQL") && !e.getMessage().contains("hunter2"), e.getMessage());
  }

  @Test
  void noNodeSourceTakesAFreeNodeIdAndRequireNodeRefuses() {
    config("h2").buildSessionFactory().close();
    ConfigException e = assertThrows(ConfigException.class,
        () -> FlakeIdSettings.build(Map.of("flakeid.require-node", "true")));
    assertEquals("node", e.field());
    assertTrue(e.getMessage().contains("no node id given"), e.getMessage());
  }

  @Test
  void badPropertiesAreTheEnginesConfigErrors() {
    ConfigException e = assertThrows(ConfigException.class, () -> FlakeIdSettings.shared(Map.of("flakeid.worker", "x")));
    assertEquals("worker", e.field(), e.getMessage());
    e = assertThrows(ConfigException.class, () -> FlakeIdSettings.shared(Map.of("flakeid.nodes", "1")));
    assertEquals("settings", e.field());
    assertTrue(e.getMessage().contains("unknown setting \"nodes\""), e.getMessage());
    e = assertThrows(ConfigException.class,
        () -> FlakeIdSettings.shared(Map.of("flakeid.node", "1", "flakeid.overflow", "later")));
    assertEquals("overflow", e.field(), e.getMessage());
    e = assertThrows(ConfigException.class, () -> FlakeIdSettings.shared(Map.of("flakeid.worker", "32")));
    assertTrue(e.getMessage().contains("worker must be in 0..=31"), e.getMessage());
  }

  /** The names the unit takes are the engine's table (tests/vectors/options.json's settings). */
  @Test
  void namesAreTheTables() throws Exception {
    String json = java.nio.file.Files.readString(java.nio.file.Path.of("../../tests/vectors/options.json"));
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\"flag\": \"([^\"]+)\",[^}]*?\"setting\": (true|false)").matcher(json);
    List<String> want = new ArrayList<>();
    while (m.find()) if (m.group(2).equals("true")) want.add(m.group(1));
    assertTrue(want.size() > 10, json);
    assertEquals(want, FlakeIdSettings.names());
  }

  /**
   * The vectors' settings_cases (tests/vectors/options.json) as {@code flakeid.*} properties: every key
   * the engine takes is taken (a value it cannot take is that option's error, never an unknown
   * setting), and an unknown key is the engine's error, field and message.
   */
  @Test
  void settingsCasesOfTheVectors(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    var cases = new com.fasterxml.jackson.databind.ObjectMapper()
        .readTree(java.nio.file.Path.of("../../tests/vectors/options.json").toFile()).get("settings_cases");
    assertTrue(cases.size() >= 5, cases.toString());
    for (var c : cases) {
      Map<String, String> props = new java.util.LinkedHashMap<>();
      // "1" for each (a state file's path in a temporary folder, not the working one).
      c.get("keys")
          .forEach(
              k ->
                  props.put(
                      FlakeIdSettings.PREFIX + k.asText(),
                      k.asText().equalsIgnoreCase("state") ? dir.resolve("state").toString() : "1"));
      if (!c.has("error")) {
        for (var e : props.entrySet()) {
          try {
            FlakeIdSettings.build(Map.of(e.getKey(), e.getValue())).close();
          } catch (ConfigException x) {
            assertTrue(!x.field().equals("settings"), e.getKey() + ": " + x.getMessage());
          }
        }
        continue;
      }
      ConfigException e = assertThrows(ConfigException.class, () -> FlakeIdSettings.build(props), c.toString());
      assertEquals(c.get("field").asText(), e.field(), e.getMessage());
      String starts = c.get("message_starts").asText().replace("invalid configuration: ", "");
      assertTrue(e.getMessage().contains(starts), e.getMessage() + " lacks " + starts);
    }
  }

  @Test
  void oneGeneratorPerProcess() {
    FlakeIdSettings.shared(Map.of("flakeid.node", "3"));
    FlakeIdSettings.shared(Map.of("flakeid.node", "3")); // the same settings: the same generator
    ConfigException e = assertThrows(ConfigException.class, () -> FlakeIdSettings.shared(Map.of("flakeid.node", "4")));
    assertEquals("settings", e.field());
    assertTrue(e.getMessage().contains("configured already"), e.getMessage());
  }
}
