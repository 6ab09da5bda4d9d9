package io.github.flakeid.hibernate;

import io.github.flakeid.Generator;
import java.util.List;
import java.util.Map;

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

  /** The property names this reads, without the prefix: the engine's, in Spring's kebab case. */
  public static List<String> names() {
    return SETTINGS.names();
  }

  /** A generator from {@code flakeid.*} properties, not shared (an application then {@link #install installs} it). */
  public static Generator build(Map<String, ?> properties) {
    return SETTINGS.build(properties);
  }

  /** The process's generator: built on first use; another unit must give the same settings. */
  public static Generator shared(Map<String, ?> properties) {
    return SETTINGS.shared(properties);
  }

  /** Makes {@code generator}, built from {@code properties}, the process's (Spring's bean); another is refused. */
  public static void install(Generator generator, Map<String, ?> properties) {
    SETTINGS.install(generator, properties);
  }

  /** Closes the shared generator (giving its lease back): at shutdown, and in tests. */
  public static void close() {
    SETTINGS.close();
  }
}
