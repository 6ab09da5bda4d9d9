package io.github.flakeid.hibernate;

import io.github.flakeid.Generator;
import java.util.List;
import java.util.Map;

/**
 * The persistence unit's {@code flakeid.*} properties ({@link #names}) and the one generator per process
 * they configure, through {@link Generator.Builder#set}: names, values and errors are the engine's, and
 * it requires a node source (without one every replica would run as node 0 and repeat IDs). */
public final class FlakeIdSettings {
  static final String PREFIX = "flakeid.";
  private static Generator shared;
  private static Map<String, String> sharedSettings;
  private FlakeIdSettings() {}

  /** The property names this reads, without the prefix: the engine's, in Spring's kebab case. */
  public static List<String> names() {
    return Generator.optionNames().stream().map(n -> n.replace('_', '-')).toList();
  }

  /** The {@code flakeid.*} entries of {@code properties}, without the prefix (less {@code flakeid.uuid.*}). */
  static Map<String, String> of(Map<String, ?> properties) {
    Map<String, String> out = FlakeUuidSettings.entries(PREFIX, properties);
    out.keySet().removeIf(k -> k.startsWith("uuid."));
    return out;
  }

  /** A generator from {@code flakeid.*} properties, not shared (an application then {@link #install installs} it). */
  public static Generator build(Map<String, ?> properties) {
    Generator.Builder b = Generator.builder();
    of(properties).forEach(b::set);
    return b.build();
  }

  /** The process's generator: built on first use; another unit must give the same settings. */
  public static synchronized Generator shared(Map<String, ?> properties) {
    Map<String, String> s = of(properties);
    if (shared == null) install(build(properties), properties);
    else if (!s.isEmpty() && !sharedSettings.equals(s)) throw Generator.configuredTwice(sharedSettings.toString(), s.toString());
    return shared;
  }

  /** Makes {@code generator}, built from {@code properties}, the process's (Spring's bean); another is refused. */
  public static synchronized void install(Generator generator, Map<String, ?> properties) {
    if (shared != null && shared != generator) throw Generator.configuredTwice(sharedSettings.toString(), of(properties).toString());
    shared = generator;
    sharedSettings = of(properties);
  }

  /** Closes the shared generator (giving its lease back): at shutdown, and in tests. */
  public static synchronized void close() {
    if (shared != null) shared.close();
    shared = null;
    sharedSettings = null;
  }
}
