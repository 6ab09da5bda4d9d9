package io.github.flakeid.hibernate;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.IntConsumer;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;

/**
 * Per-insert cost on the fixture's PostgreSQL (scripts/bench-frameworks.py runs it,
 * not the test suite): persist + commit of one row with @FlakeId beside an IDENTITY
 * key, alternating in rounds, median round, one JSON line per case.
 */
public final class InsertBench {
  @Entity(name = "BenchFlake")
  public static class Flake {
    @Id @FlakeId Long id;
    int n;
  }

  @Entity(name = "BenchIdentity")
  public static class Ident {
    @Id @GeneratedValue(strategy = GenerationType.IDENTITY) Long id;
    int n;
  }

  public static void main(String[] args) {
    int total = Integer.parseInt(System.getenv().getOrDefault("BENCH_N", "2000"));
    int rounds = 10;
    int per = total / rounds;
    try (SessionFactory sf = new Configuration().addAnnotatedClass(Flake.class).addAnnotatedClass(Ident.class)
        .setProperty("hibernate.connection.url", TestDb.jdbcUrl())
        .setProperty("hibernate.hbm2ddl.auto", "create-drop")
        .setProperty("flakeid.node", "1")
        .buildSessionFactory()) {
      IntConsumer flake = n -> sf.inTransaction(s -> {
        Flake f = new Flake();
        f.n = n;
        s.persist(f);
      });
      IntConsumer ident = n -> sf.inTransaction(s -> {
        Ident i = new Ident();
        i.n = n;
        s.persist(i);
      });
      String[] names = {"Hibernate @FlakeId", "Hibernate IDENTITY"};
      IntConsumer[] cases = {flake, ident};
      List<List<Double>> times = List.of(new ArrayList<>(), new ArrayList<>());
      for (int r = -1; r < rounds; r++) {
        for (int c = 0; c < cases.length; c++) {
          long t0 = System.nanoTime();
          for (int i = 0; i < per; i++) cases[c].accept(i);
          if (r >= 0) times.get(c).add((System.nanoTime() - t0) / 1000.0 / per); // round -1: warm-up
        }
      }
      for (int c = 0; c < cases.length; c++) {
        List<Double> t = times.get(c);
        Collections.sort(t);
        System.out.printf("{\"lang\": \"java\", \"case\": \"%s\", \"us_per_insert\": %.1f, \"n\": %d}%n", names[c],
            t.get(rounds / 2), total);
      }
    }
    FlakeIdSettings.close();
  }
}
