package io.github.flakeid.hibernate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.flakeid.ConfigException;
import io.github.flakeid.Uuids;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** @FlakeUuid on H2 and the fixture's PostgreSQL (a uuid column), beside @FlakeId. */
class FlakeUuidHibernateTest {
  @Entity(name = "HbDocument")
  @Table(name = "hb_documents")
  public static class Document {
    @Id @FlakeUuid UUID id;
    String title;

    public Document() {}

    Document(String title) {
      this.title = title;
    }
  }

  @AfterEach
  void closeShared() {
    FlakeUuidSettings.close();
    FlakeIdSettings.close();
  }

  static Configuration config(String db) {
    Configuration c = new Configuration().addAnnotatedClass(Document.class)
        .setProperty("hibernate.hbm2ddl.auto", "create-drop");
    c.setProperty("hibernate.connection.url", db.equals("h2") ? "jdbc:h2:mem:flakeuuid;DB_CLOSE_DELAY=-1" : TestDb.jdbcUrl());
    return c;
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgres"})
  void insertsGetUuid7sInOrder(String db) {
    // flakeid.uuid.* configure the 128-bit generator; no node id is needed for it.
    try (SessionFactory sf = config(db).setProperty("flakeid.uuid.max-borrow-ms", "100").buildSessionFactory()) {
      List<UUID> ids = new ArrayList<>();
      UUID given = Uuids.composeUuid7(1_700_000_000_000L, 1, 2);
      sf.inTransaction(s -> {
        for (int i = 0; i < 5; i++) {
          Document d = new Document("d" + i);
          s.persist(d);
          ids.add(d.id);
        }
        Document mine = new Document("given");
        mine.id = given;
        s.persist(mine);
      });
      for (UUID u : ids) assertEquals(7, u.version());
      for (int i = 1; i < ids.size(); i++) {
        UUID a = ids.get(i - 1), b = ids.get(i);
        int hi = Long.compareUnsigned(a.getMostSignificantBits(), b.getMostSignificantBits());
        assertTrue(hi < 0 || hi == 0 && Long.compareUnsigned(a.getLeastSignificantBits(), b.getLeastSignificantBits()) < 0,
            a + " then " + b);
      }
      sf.inTransaction(s -> {
        assertEquals("d3", s.find(Document.class, ids.get(3)).title);
        assertEquals("given", s.find(Document.class, given).title);
        List<UUID> ordered = s.createSelectionQuery("select d.id from HbDocument d where d.title like 'd%' order by d.id",
            UUID.class).getResultList();
        if (db.equals("postgres")) assertEquals(ids, ordered, "PostgreSQL's uuid order is the issue order");
        Uuids.Range r = Uuids.range(Uuids.timestampMs(ids.get(0)), Uuids.timestampMs(ids.get(4)));
        assertEquals(5L, s.createSelectionQuery(
            "select count(d) from HbDocument d where d.id between :a and :b", Long.class)
            .setParameter("a", r.first()).setParameter("b", r.last()).getSingleResult());
      });
      if (db.equals("postgres")) {
        sf.inSession(s -> assertEquals("uuid", s.createNativeQuery(
            "select data_type from information_schema.columns where table_name = 'hb_documents' and column_name = 'id'",
            String.class).getSingleResult()));
      }
    }
  }

  @Test
  void badPropertiesAreTheEnginesConfigErrors() {
    ConfigException e = assertThrows(ConfigException.class,
        () -> FlakeUuidSettings.shared(Map.of("flakeid.uuid.overflow", "later")));
    assertEquals("overflow", e.field(), e.getMessage());
    e = assertThrows(ConfigException.class, () -> FlakeUuidSettings.shared(Map.of("flakeid.uuid.node", "3")));
    assertEquals("node", e.field(), e.getMessage());
    e = assertThrows(ConfigException.class,
        () -> FlakeUuidSettings.shared(Map.of("flakeid.uuid.max-borrow-ms", "1000000000000")));
    assertEquals("max_borrow_ms", e.field(), e.getMessage());
    // flakeid.uuid.* are not the 64-bit generator's settings, and flakeid.* not the 128-bit one's.
    FlakeIdSettings.shared(Map.of("flakeid.node", "3", "flakeid.uuid.overflow", "wait"));
    FlakeUuidSettings.shared(Map.of("flakeid.node", "3", "flakeid.uuid.overflow", "wait"));
  }

  @Test
  void namesAreTheEngines() {
    assertEquals(List.of("overflow", "clock-backwards", "max-borrow-ms", "max-wait-ms"), FlakeUuidSettings.names());
  }

  @Test
  void oneGeneratorPerProcess() {
    FlakeUuidSettings.shared(Map.of("flakeid.uuid.max-wait-ms", "5"));
    FlakeUuidSettings.shared(Map.of("flakeid.uuid.max-wait-ms", "5"));
    ConfigException e = assertThrows(ConfigException.class,
        () -> FlakeUuidSettings.shared(Map.of("flakeid.uuid.max-wait-ms", "6")));
    assertEquals("settings", e.field());
  }
}
