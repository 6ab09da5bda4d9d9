package io.github.flakeid.hibernate;

import io.github.flakeid.UuidGenerator;
import java.util.List;
import java.util.Map;

/**
 * The persistence unit's {@code flakeid.uuid.*} properties ({@link #names}) and the one 128-bit
 * generator per process they configure, through {@link UuidGenerator.Builder#set}: names, values and
 * errors are the engine's. */
public final class FlakeUuidSettings {
  static final String PREFIX = "flakeid.uuid.";
  private static final SharedSettings<UuidGenerator> SETTINGS = new SharedSettings<>(
      PREFIX, null, UuidGenerator::optionNames, FlakeUuidSettings::fromSettings, UuidGenerator::close);

  private FlakeUuidSettings() {}

  private static UuidGenerator fromSettings(Map<String, String> settings) {
    UuidGenerator.Builder b = UuidGenerator.builder();
    settings.forEach(b::set);
    return b.build();
  }

  /** The property names this reads, without the prefix: the engine's, in Spring's kebab case. */
  public static List<String> names() {
    return SETTINGS.names();
  }

  /** A generator from {@code flakeid.uuid.*} properties, not shared (an application then {@link #install installs} it). */
  public static UuidGenerator build(Map<String, ?> properties) {
    return SETTINGS.build(properties);
  }

  /** The process's 128-bit generator: built on first use; another unit must give the same settings. */
  public static UuidGenerator shared(Map<String, ?> properties) {
    return SETTINGS.shared(properties);
  }

  /** Makes {@code generator}, built from {@code properties}, the process's (Spring's bean); another is refused. */
  public static void install(UuidGenerator generator, Map<String, ?> properties) {
    SETTINGS.install(generator, properties);
  }

  /** Closes the shared generator: at shutdown, and in tests. */
  public static void close() {
    SETTINGS.close();
  }
}
