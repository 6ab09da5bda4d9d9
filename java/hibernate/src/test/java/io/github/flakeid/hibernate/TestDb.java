package io.github.flakeid.hibernate;

import java.net.URI;

/** The fixture's PostgreSQL (make test-java runs this module under tests/env/testenv.py). */
final class TestDb {
  private TestDb() {}

  /** FLAKEID_TEST_POSTGRES_URL (postgres://user:password@host:port/db) as a JDBC URL. */
  static String jdbcUrl() {
    String url = System.getenv("FLAKEID_TEST_POSTGRES_URL");
    if (url == null) throw new IllegalStateException("FLAKEID_TEST_POSTGRES_URL is unset: run through make test-java");
    URI u = URI.create(url);
    String[] user = u.getUserInfo().split(":", 2);
    return "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath() + "?user=" + user[0] + "&password=" + user[1];
  }
}
