package io.github.flakeid.hibernate;

import io.github.flakeid.Generator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One generator per process from the properties under one prefix: what {@link FlakeIdSettings}
 * ({@code flakeid.*}) and {@link FlakeUuidSettings} ({@code flakeid.uuid.*}) are. The first use
 * builds it (or an application installs its own); another unit must give equal settings. Names,
 * values and errors are the engine's.
 */
final class SharedSettings<G> {
  private final String prefix;
  /** Property names under {@code prefix} that are another generator's ({@code uuid.}). */
  private final String otherPrefix;
  private final Supplier<List<String>> optionNames;
  private final Function<Map<String, String>, G> build;
  private final Consumer<G> close;
  private G shared;
  private Map<String, String> sharedSettings;

  SharedSettings(String prefix, String otherPrefix, Supplier<List<String>> optionNames,
      Function<Map<String, String>, G> build, Consumer<G> close) {
    this.prefix = prefix;
    this.otherPrefix = otherPrefix;
    this.optionNames = optionNames;
    this.build = build;
    this.close = close;
  }

  /** The property names this reads, without the prefix: the engine's, in Spring's kebab case. */
  List<String> names() {
    return optionNames.get().stream().map(n -> n.replace('_', '-')).toList();
  }

  /** This prefix's entries of {@code properties}, without it (trimmed text). */
  Map<String, String> of(Map<String, ?> properties) {
    Map<String, String> out = new TreeMap<>();
    properties.forEach((key, value) -> {
      if (value == null || !key.startsWith(prefix)) return;
      String name = key.substring(prefix.length());
      if (otherPrefix == null || !name.startsWith(otherPrefix)) out.put(name, value.toString().trim());
    });
    return out;
  }

  /** A generator from the properties, not shared (an application then {@link #install installs} it). */
  G build(Map<String, ?> properties) {
    return build.apply(of(properties));
  }

  /** The process's generator: built on first use; another unit must give the same settings. */
  synchronized G shared(Map<String, ?> properties) {
    Map<String, String> settings = of(properties);
    if (shared == null) {
      install(build.apply(settings), properties);
    } else if (!settings.isEmpty() && !sharedSettings.equals(settings)) {
      throw Generator.configuredTwice(sharedSettings.toString(), settings.toString());
    }
    return shared;
  }

  /** Makes {@code generator}, built from {@code properties}, the process's; another is refused. */
  synchronized void install(G generator, Map<String, ?> properties) {
    Map<String, String> settings = of(properties);
    if (shared != null && shared != generator) {
      throw Generator.configuredTwice(sharedSettings.toString(), settings.toString());
    }
    shared = generator;
    sharedSettings = settings;
  }

  /** Closes the shared generator (giving a lease back): at shutdown, and in tests. */
  synchronized void close() {
    if (shared != null) close.accept(shared);
    shared = null;
    sharedSettings = null;
  }
}
