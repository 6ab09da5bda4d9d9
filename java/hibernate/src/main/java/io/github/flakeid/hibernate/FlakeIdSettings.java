package io.github.flakeid.hibernate;

import io.github.flakeid.ClockBackwards;
import io.github.flakeid.Generator;
import io.github.flakeid.Layout;
import io.github.flakeid.Overflow;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The persistence unit's {@code flakeid.*} properties and the one generator per
 * process they configure: {@code flakeid.node} (a number, or a node source:
 * {@code env:VAR}, {@code hostname}, {@code mac}, {@code ipv4}), or
 * {@code flakeid.datacenter} + {@code flakeid.worker}, or {@code flakeid.lease} (a
 * lease URL); {@code flakeid.layout} (a preset name), {@code flakeid.overflow}
 * ({@code wait}, {@code borrow}), {@code flakeid.clock-backwards} ({@code error},
 * {@code wait}, {@code monotonic}).
 *
 * <p>Without a node source it throws, never running as node 0: every replica of an
 * application would then issue the same IDs. Bad values throw
 * {@link IllegalArgumentException} naming the property and its range (the engine's
 * {@code ConfigException} for node ids and layouts).
 */
public final class FlakeIdSettings {
  static final String PREFIX = "flakeid.";
  private static final String[] KNOWN = {"node", "datacenter", "worker", "lease", "layout", "overflow", "clock-backwards"};

  /** The property names this reads, without the prefix. */
  public static java.util.List<String> names() {
    return java.util.List.of(KNOWN);
  }

  private static Generator shared;
  private static Map<String, String> sharedSettings;

  private FlakeIdSettings() {}

  /** The {@code flakeid.*} entries of {@code properties}, without the prefix. */
  static Map<String, String> of(Map<String, ?> properties) {
    Map<String, String> out = new TreeMap<>();
    for (Map.Entry<String, ?> e : properties.entrySet()) {
      if (e.getKey().startsWith(PREFIX) && e.getValue() != null) {
        String name = e.getKey().substring(PREFIX.length());
        if (!java.util.Arrays.asList(KNOWN).contains(name)) {
          throw new IllegalArgumentException("flakeid: unknown property " + e.getKey() + " (known: flakeid."
              + String.join(", flakeid.", KNOWN) + ")");
        }
        out.put(name, e.getValue().toString().trim());
      }
    }
    return out;
  }

  /** A builder from the settings; throws without a node source. */
  private static Generator fromSettings(Map<String, String> s) {
    if (!s.containsKey("node") && !s.containsKey("worker") && !s.containsKey("lease")) {
      throw new IllegalArgumentException("flakeid: no node id given: set flakeid.node (a number, env:VAR, hostname, "
          + "mac or ipv4), flakeid.datacenter and flakeid.worker, or flakeid.lease; without one every replica "
          + "would run as node 0 and issue the same IDs");
    }
    Generator.Builder b = Generator.builder();
    if (s.containsKey("layout")) b.layout(Layout.preset(s.get("layout")));
    String node = s.get("node");
    if (node != null) {
      if (node.chars().allMatch(Character::isDigit) && !node.isEmpty()) b.node(number("node", node));
      else b.nodeSource(node);
    }
    if (s.containsKey("datacenter")) b.datacenter(number("datacenter", s.get("datacenter")));
    if (s.containsKey("worker")) b.worker(number("worker", s.get("worker")));
    if (s.containsKey("lease")) b.lease(s.get("lease"));
    if (s.containsKey("overflow")) b.overflow(choice(Overflow.class, "overflow", s.get("overflow")));
    if (s.containsKey("clock-backwards")) {
      b.clockBackwards(choice(ClockBackwards.class, "clock-backwards", s.get("clock-backwards")));
    }
    return b.build();
  }

  /**
   * The process's generator for these properties: built on first use; a second
   * persistence unit must give the same {@code flakeid.*} settings (two generators
   * on one node id would repeat IDs).
   */
  public static synchronized Generator shared(Map<String, ?> properties) {
    Map<String, String> s = of(properties);
    if (shared != null && s.isEmpty()) {
      return shared; // installed by the application (Spring's bean): the unit says nothing else
    }
    if (shared == null) {
      shared = fromSettings(s);
      sharedSettings = s;
    } else if (!sharedSettings.equals(s)) {
      throw new IllegalArgumentException("flakeid: this process's generator was configured with " + sharedSettings
          + ", another persistence unit asks for " + s + ": one generator per process");
    }
    return shared;
  }

  /**
   * A generator from {@code flakeid.*} properties (the keys above, with the prefix),
   * not shared: for an application that owns its generator and then
   * {@link #install installs} it.
   */
  public static Generator build(Map<String, ?> properties) {
    return fromSettings(of(properties));
  }

  /**
   * Makes {@code generator}, built from {@code properties}, the process's generator,
   * so that {@code @FlakeId} entities take their IDs from it (Spring's auto-configured
   * bean). A second, different generator is refused.
   */
  public static synchronized void install(Generator generator, Map<String, ?> properties) {
    if (shared != null && shared != generator) {
      throw new IllegalArgumentException("flakeid: this process already has a generator (configured with "
          + sharedSettings + "): one generator per process");
    }
    shared = generator;
    sharedSettings = of(properties);
  }

  /** Closes the shared generator (giving its lease back): at shutdown, and in tests. */
  public static synchronized void close() {
    if (shared != null) shared.close();
    shared = null;
    sharedSettings = null;
  }

  private static long number(String field, String text) {
    try {
      long v = Long.parseLong(text);
      if (v >= 0) return v;
    } catch (NumberFormatException ignored) {
      // the message below
    }
    throw new IllegalArgumentException("flakeid: flakeid." + field + " must be a whole number >= 0, got \"" + text + "\"");
  }

  private static <E extends Enum<E>> E choice(Class<E> type, String field, String text) {
    String name = text.toUpperCase(Locale.ROOT).replace('-', '_');
    for (E e : type.getEnumConstants()) {
      if (e.name().equals(name)) return e;
    }
    throw new IllegalArgumentException("flakeid: flakeid." + field + " must be one of "
        + java.util.Arrays.stream(type.getEnumConstants()).map(e -> e.name().toLowerCase(Locale.ROOT)).toList()
        + ", got \"" + text + "\"");
  }
}
