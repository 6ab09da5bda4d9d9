package io.github.flakeid.hibernate;

import io.github.flakeid.Generator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The persistence unit's {@code flakeid.*} properties ({@link #names}) and the one generator per process
 * they configure, through {@link Generator.Builder#set}: names, values and errors are the engine's; with
 * no node id, a free one on this host (across hosts, give one or a lease). */
public final class FlakeIdSettings {
  static final String PREFIX = "flakeid.";
  private static final SharedSettings<Generator> SETTINGS = new SharedSettings<>(
      PREFIX, FlakeUuidSettings.PREFIX.substring(PREFIX.length()), Generator::optionNames,
      FlakeIdSettings::fromSettings, Generator::close);

  private FlakeIdSettings() {}

  private static Generator fromSettings(Map<String, String> settings) {
    Generator.Builder b = Generator.builder();
    settings.forEach(b::set);
    return b.build();
  }

  /**
   * The connection's settings by the engine's names, each from the first of JPA's, Hibernate's
   * and Spring's properties that is set: what {@code flakeid.lease=database} leases from.
   */
  private static final String[][] CONNECTION = {
    {"url", "jakarta.persistence.jdbc.url", "hibernate.connection.url", "spring.datasource.url"},
    {"user", "jakarta.persistence.jdbc.user", "hibernate.connection.username", "spring.datasource.username"},
    {"password", "jakarta.persistence.jdbc.password", "hibernate.connection.password",
        "spring.datasource.password"},
  };

  /** {@code properties} with {@code flakeid.lease} as the engine reads it ({@code database}: the app's own). */
  private static Map<String, ?> withDatabase(Map<String, ?> properties) {
    Object lease = properties.get(PREFIX + "lease");
    if (lease == null) return properties;
    Map<String, String> parts = new TreeMap<>();
    for (String[] c : CONNECTION) {
      for (int i = c.length - 1; i >= 1; i--) {
        Object v = properties.get(c[i]);
        if (v != null) parts.put(c[0], v.toString());
      }
    }
    String given = lease.toString().trim();
    String resolved = Generator.databaseLease(given, parts);
    if (resolved.equals(given)) return properties;
    Map<String, Object> out = new HashMap<>(properties);
    out.put(PREFIX + "lease", resolved);
    return out;
  }

  /** The property names this reads, without the prefix: the engine's, in Spring's kebab case. */
  public static List<String> names() {
    return SETTINGS.names();
  }

  /** A generator from {@code flakeid.*} properties, not shared (an application then {@link #install installs} it). */
  public static Generator build(Map<String, ?> properties) {
    return SETTINGS.build(withDatabase(properties));
  }

  /** The process's generator: built on first use; another unit must give the same settings. */
  public static Generator shared(Map<String, ?> properties) {
    return SETTINGS.shared(withDatabase(properties));
  }

  /** Makes {@code generator}, built from {@code properties}, the process's (Spring's bean); another is refused. */
  public static void install(Generator generator, Map<String, ?> properties) {
    SETTINGS.install(generator, withDatabase(properties));
  }

  /** Closes the shared generator (giving its lease back): at shutdown, and in tests. */
  public static void close() {
    SETTINGS.close();
  }
}
