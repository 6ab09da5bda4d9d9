package io.github.flakeid;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Issues IDs. Thread-safe: share one per node id between any number of threads; no ID
 * repeats, and each thread sees its own IDs strictly increase. Close it to release its
 * node-id lease; one that is never closed is freed once it is garbage.
 *
 * <pre>{@code
 * try (Generator gen = Generator.builder().datacenter(1).worker(2).build()) {
 *   long id = gen.nextId();
 * }
 * }</pre>
 */
public final class Generator extends NativeHandle {
  private static final long UNSET = -1L; // FLAKEID_UNSET, UINT64_MAX

  private final long node;
  private final String nodeOrigin;
  private final Layout layout;

  /**
   * Guards {@link #locals} and the close: the open per-thread handles ({@link
   * LocalGenerator}) borrow the C generator, so it is freed only once none is open.
   */
  private final Object lock = new Object();

  private int locals;

  private Generator(Builder b) {
    super("generator", (call, out) -> make(call, out, b), Generator::free);
    try (Arena call = Arena.ofConfined()) {
      MemorySegment n = call.allocate(JAVA_LONG);
      Native.check((int) Native.GENERATOR_NODE.invokeExact(handle, n));
      this.node = n.get(JAVA_LONG, 0);
      MemorySegment o = call.allocate(ADDRESS);
      Native.check((int) Native.GENERATOR_NODE_ORIGIN.invokeExact(handle, o));
      this.nodeOrigin = o.get(ADDRESS, 0).reinterpret(16).getString(0);
      MemorySegment l = call.allocate(Native.LAYOUT);
      Native.check((int) Native.GENERATOR_LAYOUT.invokeExact(handle, l));
      this.layout = Layout.of(l);
    } catch (Throwable t) {
      close();
      throw Native.rethrow(t);
    }
  }

  /** The C generator from the builder's fields, then its by-name settings (which win). */
  private static int make(Arena call, MemorySegment out, Builder b) throws Throwable {
    MemorySegment o = (MemorySegment) Native.OPTIONS_DEFAULT.invokeExact((SegmentAllocator) call);
    if (b.layout != null) {
      o.asSlice(Native.offset(Native.OPTIONS, "layout"), Native.LAYOUT).copyFrom(b.layout.segment);
    }
    put(o, "node", b.node);
    put(o, "datacenter", b.datacenter);
    put(o, "worker", b.worker);
    if (b.nodeSource != null) o.set(ADDRESS, off("node_source"), call.allocateFrom(b.nodeSource));
    if (b.lease != null) o.set(ADDRESS, off("lease_url"), call.allocateFrom(b.lease));
    if (b.overflow != null) o.set(JAVA_INT, off("overflow"), b.overflow.value);
    if (b.clockBackwards != null) o.set(JAVA_INT, off("clock_backwards"), b.clockBackwards.value);
    if (b.maxBorrow != null) o.set(JAVA_LONG, off("max_borrow_ms"), millis(b.maxBorrow));
    if (b.maxWait != null) o.set(JAVA_LONG, off("max_wait_ms"), millis(b.maxWait));
    if (b.clock != null) o.set(ADDRESS, off("clock"), b.clock.handle());
    if (b.leaseTtl != null) o.set(JAVA_LONG, off("lease_ttl_ms"), leaseTtlMillis(b.leaseTtl));
    put(o, "max_sequence", b.maxSequence);
    if (b.state != null) o.set(ADDRESS, off("state"), call.allocateFrom(b.state));
    if (b.requireNode) o.set(JAVA_INT, off("require_node"), 1);
    // set(name, text)'s settings, by name through the library (after the fields: they win;
    // the call arena keeps their text until the build).
    for (Map.Entry<String, String> e : b.settings) setOption(o, call, e.getKey(), e.getValue());
    int status = (int) Native.GENERATOR_NEW.invokeExact(o, out);
    if (b.clock != null) b.clock.keepAlive();
    return status;
  }

  private static void setOption(MemorySegment o, Arena call, String name, String text) throws Throwable {
    Native.check((int) Native.OPTIONS_SET.invokeExact(o, call.allocateFrom(name), call.allocateFrom(text)));
  }

  /** The names {@link Builder#set} takes: the core's table, in its order. */
  public static List<String> optionNames() {
    List<String> names = new ArrayList<>();
    try {
      for (long i = 0; ; i++) {
        MemorySegment n = (MemorySegment) Native.OPTION_NAME.invokeExact(i);
        if (n.equals(MemorySegment.NULL)) return names;
        names.add(n.reinterpret(64).getString(0));
      }
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /**
   * The engine's refusal of a second, different configuration of a process's one generator
   * (framework adapters that keep one): a {@link ConfigException} naming {@code settings}.
   */
  public static ConfigException configuredTwice(String first, String second) {
    try (Arena call = Arena.ofConfined()) {
      Native.check((int) Native.CONFIGURED_TWICE.invokeExact(call.allocateFrom(first), call.allocateFrom(second)));
      throw new IllegalStateException("unreachable: the library always refuses");
    } catch (ConfigException e) {
      return e;
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /**
   * The lease for the lease setting {@code lease}: {@code lease} itself, or for {@code "database"}
   * the {@code postgres://} URL of the app's own PostgreSQL, made by the engine from the connection
   * settings a framework holds ({@code parts}: {@code url} a JDBC URL, {@code user}, {@code
   * password}; null values left out). Another database is a {@link ConfigException} naming {@code
   * lease} (docs/leases.md, "The app's own database").
   */
  public static String databaseLease(String lease, Map<String, String> parts) {
    try (Arena call = Arena.ofConfined()) {
      List<Map.Entry<String, String>> given =
          parts.entrySet().stream().filter(e -> e.getKey() != null && e.getValue() != null).toList();
      MemorySegment keys = call.allocate(ADDRESS, Math.max(1, given.size()));
      MemorySegment values = call.allocate(ADDRESS, Math.max(1, given.size()));
      for (int i = 0; i < given.size(); i++) {
        keys.setAtIndex(ADDRESS, i, call.allocateFrom(given.get(i).getKey()));
        values.setAtIndex(ADDRESS, i, call.allocateFrom(given.get(i).getValue()));
      }
      MemorySegment len = call.allocate(JAVA_LONG);
      for (long size = 256; ; ) {
        MemorySegment buf = call.allocate(size);
        int st = (int) Native.DATABASE_LEASE.invokeExact(call.allocateFrom(lease), keys, values,
            (long) given.size(), buf, size, len);
        long needed = len.get(JAVA_LONG, 0) + 1;
        if (st != 0 && needed > size) {
          size = needed;
          continue;
        }
        Native.check(st);
        return buf.getString(0);
      }
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  private static long off(String field) {
    return Native.offset(Native.OPTIONS, field);
  }

  private static void put(MemorySegment o, String field, Long value) {
    if (value != null) o.set(JAVA_LONG, off(field), value);
  }

  /**
   * Whole milliseconds, rounded up; a negative duration reaches the library as an
   * out-of-range number, so the error (naming the option and its range) is the engine's.
   */
  private static long millis(Duration d) {
    if (d.isNegative()) return UNSET;
    long ms = d.toMillis();
    return d.equals(Duration.ofMillis(ms)) ? ms : ms + 1;
  }

  /** As {@link #millis}, but UNSET is "not given" here: a negative TTL is UNSET - 1. */
  private static long leaseTtlMillis(Duration d) {
    return d.isNegative() ? UNSET - 1 : millis(d);
  }

  private static void free(MemorySegment g) {
    try {
      Native.GENERATOR_FREE.invokeExact(g);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The next ID: one call into the library (java/README.md, "Threads, and what a call costs"). */
  public long nextId() {
    MemorySegment out = Native.scratch();
    call(h -> (int) Native.NEXT_ID.invokeExact(h, out));
    return out.get(JAVA_LONG, 0);
  }

  /** {@code n} fresh IDs, increasing, in one call into the library (runs are reserved at once). */
  public long[] nextIds(int n) {
    return Native.filled(n, this::fill);
  }

  /** Fills {@code ids} with fresh IDs, increasing, in one call into the library. */
  public void fill(long[] ids) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment buf = ids.length == 0 ? MemorySegment.NULL : call.allocate(JAVA_LONG, ids.length);
      call(h -> (int) Native.NEXT_IDS.invokeExact(h, buf, (long) ids.length));
      MemorySegment.copy(buf, JAVA_LONG, 0, ids, 0, ids.length);
    }
  }

  /** A snapshot of what this generator has done since it was built (for monitoring). */
  public Stats stats() {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(Native.STATS);
      call(h -> (int) Native.GENERATOR_STATS.invokeExact(h, out, Native.STATS.byteSize()));
      long remaining = field(out, "lease_remaining_ms");
      MemorySegment state = out.get(ADDRESS, Native.offset(Native.STATS, "lease_state"));
      boolean leased = !state.equals(MemorySegment.NULL);
      return new Stats(
          field(out, "ids_issued"),
          field(out, "tick_waits"),
          Duration.ofNanos(field(out, "tick_wait_us") * 1000),
          Duration.ofMillis(field(out, "lead_ms")),
          field(out, "clock_rollbacks"),
          Duration.ofMillis(field(out, "max_rollback_ms")),
          leased ? Optional.of(state.reinterpret(16).getString(0)) : Optional.empty(),
          leased ? Optional.of(Duration.ofMillis(remaining)) : Optional.empty());
    }
  }

  private static long field(MemorySegment stats, String name) {
    return stats.get(JAVA_LONG, Native.offset(Native.STATS, name));
  }

  /** The node id ({@code datacenter << workerBits | worker}), given or leased. */
  public long node() {
    return node;
  }

  /**
   * Where the node id came from: {@code "explicit"}, {@code "leased"}, {@code "coordinator"},
   * {@code "host"} or {@code "none"} (docs/design.md, "Who owns a node id").
   */
  public String nodeOrigin() {
    return nodeOrigin;
  }

  public Layout layout() {
    return layout;
  }

  /**
   * A per-thread handle ({@link LocalGenerator}) that issues this generator's IDs without
   * an atomic step on the generator per ID: for a thread that issues many (one per
   * request thread, or per pooled thread in a {@link ThreadLocal}). The generator stays
   * usable by every thread. After {@link #close}, an {@link IllegalStateException}.
   */
  public LocalGenerator local() {
    synchronized (lock) {
      if (isClosed()) throw closedError();
      try (Arena call = Arena.ofConfined()) {
        MemorySegment out = call.allocate(ADDRESS);
        Native.check((int) Native.LOCAL_NEW.invokeExact(handle, out));
        LocalGenerator l = new LocalGenerator(this, out.get(ADDRESS, 0));
        locals++;
        return l;
      } catch (Throwable t) {
        throw Native.rethrow(t);
      }
    }
  }

  /** A handle's C side was freed: the generator goes too when it was closed and this was its last. */
  void localFreed() {
    boolean free;
    synchronized (lock) {
      free = --locals == 0 && isClosed();
    }
    if (free) free();
  }

  /**
   * Frees the generator and gives its lease back. Calls in progress finish first;
   * later calls throw {@link IllegalStateException}. Closing twice does nothing. With
   * per-thread handles still open, it stops the generator in the library (their calls
   * then throw the library's {@link ConfigException} naming {@code generator}) and lets
   * the node id go at once; the memory is freed when the last handle is closed.
   */
  @Override
  public void close() {
    synchronized (lock) {
      markClosed();
      if (locals > 0) {
        try {
          Native.check((int) Native.GENERATOR_CLOSE.invokeExact(handle));
        } catch (Throwable t) {
          throw Native.rethrow(t);
        }
        return;
      }
    }
    free();
  }

  /**
   * Options for a generator. Give the node id one way: {@link #node}, or {@link
   * #datacenter} and {@link #worker} (a part not given is 0), or {@link #nodeSource},
   * or {@link #lease}. With none: in a Kubernetes pod, a lease from the API server; on a
   * host, a free node id the host guard keeps; in a container or with the guard off, a {@link
   * ConfigException} naming the fixes (docs/design.md, "A node id across a fleet"). Unset
   * options keep the library's defaults.
   */
  public static final class Builder {
    private Layout layout;
    private Long node, datacenter, worker;
    private String nodeSource, lease, state;
    private Overflow overflow;
    private ClockBackwards clockBackwards;
    private Duration maxBorrow, maxWait, leaseTtl;
    private Long maxSequence;
    private ManualClock clock;
    private boolean requireNode;
    private final List<Map.Entry<String, String>> settings = new ArrayList<>();

    private Builder() {}

    /**
     * Refuse to start without a node source (node, worker or lease) instead of taking one
     * from Kubernetes or this host. Default {@code false}.
     *
     * <p>The node sources: {@link #node}, {@link #worker}, {@link #nodeSource} or {@link
     * #lease}. For a process that runs as one replica of several across hosts.
     */
    public Builder requireNode(boolean require) {
      this.requireNode = require;
      return this;
    }

    /**
     * Sets the option {@code name} (the core's snake_case name or flag spelling, any case:
     * {@code node}, {@code lease-ttl-ms}) from text, as the environment and a framework's
     * settings give it, by the library's rules: an unknown name is a {@link ConfigException}
     * listing the known ones ({@link Generator#optionNames}), a malformed value one naming the
     * option. Ranges that depend on other options are checked by {@link #build}. A setting wins
     * over the typed setters.
     */
    public Builder set(String name, String text) {
      try (Arena call = Arena.ofConfined()) {
        MemorySegment o = (MemorySegment) Native.OPTIONS_DEFAULT.invokeExact((SegmentAllocator) call);
        setOption(o, call, name, text);
      } catch (Throwable t) {
        throw Native.rethrow(t);
      }
      settings.add(Map.entry(name, text));
      return this;
    }

    /**
     * A preset name or a custom layout. Default snowflake.
     */
    public Builder layout(Layout layout) {
      this.layout = layout;
      return this;
    }

    /**
     * The whole node id, or env:VAR, hostname, mac, ipv4. Within the layout's range. Unset:
     * with no node source given (nor a lease): in a Kubernetes pod, a lease from the API
     * server; on a host, a free node id the host guard keeps; in a container or with the
     * guard off, refused, naming the fixes.
     */
    public Builder node(long node) {
      this.node = node;
      return this;
    }

    /**
     * The datacenter part of the node id (layouts with datacenter bits). Within the
     * layout's range. Unset: 0 when the other part is given; with no node source at all, as
     * the node option says.
     */
    public Builder datacenter(long datacenter) {
      this.datacenter = datacenter;
      return this;
    }

    /**
     * The worker part of the node id. Within the layout's range. Unset: 0 when the other
     * part is given; with no node source at all, as the node option says.
     */
    public Builder worker(long worker) {
      this.worker = worker;
      return this;
    }

    /** Where to read the node id: {@code env:VAR}, {@code hostname}, {@code mac}, {@code ipv4}. */
    public Builder nodeSource(String nodeSource) {
      this.nodeSource = nodeSource;
      return this;
    }

    /**
     * Lease the node id from a store: file:///dir, redis://, postgres://, etcd://. Unset:
     * no lease.
     *
     * <p>The lowest free node id is leased: {@code file:///dir}, {@code
     * redis://host:port/db}, {@code postgres://user:password@host:port/db}, {@code
     * etcd://host:2379/} (TLS forms and {@code ?namespace=NAME}: docs/leases.md). The
     * lease is renewed in the background; once it may have expired, calls throw
     * {@link LeaseException}.
     */
    public Builder lease(String url) {
      this.lease = url;
      return this;
    }

    /**
     * When a tick's sequence is used up: wait for the next tick, or borrow from the future.
     * One of {@link Overflow#WAIT}, {@link Overflow#BORROW}; default {@link Overflow#WAIT}.
     */
    public Builder overflow(Overflow overflow) {
      this.overflow = overflow;
      return this;
    }

    /**
     * When the clock reads earlier than IDs issued. One of {@link ClockBackwards#ERROR},
     * {@link ClockBackwards#WAIT}, {@link ClockBackwards#MONOTONIC}; default {@link
     * ClockBackwards#ERROR}.
     */
    public Builder clockBackwards(ClockBackwards clockBackwards) {
      this.clockBackwards = clockBackwards;
      return this;
    }

    /**
     * How far a borrowing generator may run ahead of the clock. 0 to 86400000 ms; default
     * 2000 ms.
     *
     * <p>Whole milliseconds, rounded up.
     */
    public Builder maxBorrow(Duration maxBorrow) {
      this.maxBorrow = maxBorrow;
      return this;
    }

    /**
     * How long the wait and monotonic clock policies wait for the clock. 0 to 86400000 ms;
     * default 1000 ms.
     *
     * <p>Whole milliseconds, rounded up.
     */
    public Builder maxWait(Duration maxWait) {
      this.maxWait = maxWait;
      return this;
    }

    /**
     * The lease's time-to-live. 1000 to 3600000 ms; default 10000 ms. Needs lease.
     *
     * <p>Whole milliseconds, rounded up. Without {@link #lease}, {@link #build} throws a
     * {@link ConfigException} naming {@code lease_ttl_ms}.
     */
    public Builder leaseTtl(Duration leaseTtl) {
      this.leaseTtl = leaseTtl;
      return this;
    }

    /**
     * At most maxSequence + 1 IDs per tick, 2^k - 1 (flake-idgen's seqMask). Unset: the
     * layout's whole sequence field.
     */
    public Builder maxSequence(long maxSequence) {
      this.maxSequence = maxSequence;
      return this;
    }

    /**
     * A file keeping a high-water timestamp across restarts, for fixed node ids
     * (docs/state.md). Unset: no state file.
     *
     * <p>A restart with the clock behind it meets {@link #clockBackwards}. A missing file is
     * a fresh start; a corrupt one, or one another process holds, is a {@link
     * ConfigException} naming {@code state}. Not with {@link #lease}; {@link
     * Generator#close} writes the last timestamp and unlocks it.
     */
    public Builder state(String path) {
      this.state = path;
      return this;
    }

    /**
     * A manual clock for tests. Unset: the system clock.
     */
    public Builder clock(ManualClock clock) {
      this.clock = clock;
      return this;
    }

    /**
     * Builds the generator: out-of-range options are a {@link ConfigException} naming
     * the option; a lease that cannot be had is a {@link LeaseException}.
     */
    public Generator build() {
      return new Generator(this);
    }
  }
}
