package io.github.flakeid.hibernate;

import io.github.flakeid.Generator;
import io.github.flakeid.UuidGenerator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The persistence unit's {@code flakeid.uuid.*} properties ({@link #names}) and the one 128-bit
 * generator per process they configure, through {@link UuidGenerator.Builder#set}: names, values and
 * errors are the engine's. */
public final class FlakeUuidSettings {
  static final String PREFIX = "flakeid.uuid.";
  private static UuidGenerator shared;
  private static Map<String, String> sharedSettings;
  private FlakeUuidSettings() {}

  /** The property names this reads, without the prefix: the engine's, in Spring's kebab case. */
  public static List<String> names() {
    return UuidGenerator.optionNames().stream().map(n -> n.replace('_', '-')).toList();
  }

  /** The entries of {@code properties} under {@code prefix}, without it (trimmed text). */
  static Map<String, String> entries(String prefix, Map<String, ?> properties) {
    Map<String, String> out = new TreeMap<>();
    properties.forEach((k, v) -> out.putAll(k.startsWith(prefix) && v != null
        ? Map.of(k.substring(prefix.length()), v.toString().trim()) : Map.of()));
    return out;
  }

  /** A generator from {@code flakeid.uuid.*} properties, not shared (an application then {@link #install installs} it). */
  public static UuidGenerator build(Map<String, ?> properties) {
    UuidGenerator.Builder b = UuidGenerator.builder();
    entries(PREFIX, properties).forEach(b::set);
    return b.build();
  }

  /** The process's 128-bit generator: built on first use; another unit must give the same settings. */
  public static synchronized UuidGenerator shared(Map<String, ?> properties) {
    Map<String, String> s = entries(PREFIX, properties);
    if (shared == null) install(build(properties), properties);
    else if (!s.isEmpty() && !sharedSettings.equals(s)) throw Generator.configuredTwice(sharedSettings.toString(), s.toString());
    return shared;
  }

  /** Makes {@code generator}, built from {@code properties}, the process's (Spring's bean); another is refused. */
  public static synchronized void install(UuidGenerator generator, Map<String, ?> properties) {
    Map<String, String> s = entries(PREFIX, properties);
    if (shared != null && shared != generator) throw Generator.configuredTwice(sharedSettings.toString(), s.toString());
    shared = generator;
    sharedSettings = s;
  }

  /** Closes the shared generator: at shutdown, and in tests. */
  public static synchronized void close() {
    if (shared != null) shared.close();
    shared = null;
    sharedSettings = null;
  }
}
