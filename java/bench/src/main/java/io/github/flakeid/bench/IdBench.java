package io.github.flakeid.bench;

import io.github.flakeid.Generator;
import io.github.flakeid.Layout;
import io.github.flakeid.LocalGenerator;
import io.github.flakeid.Order;
import io.github.flakeid.Overflow;
import io.github.flakeid.Sealer;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import me.ahoo.cosid.segment.IdSegmentDistributor;
import me.ahoo.cosid.segment.SegmentChainId;
import me.ahoo.cosid.snowflake.MillisecondSnowflakeId;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * flakeid beside CosId, ns per ID (the case names of `cargo bench -p flakeid-bench`):
 *
 * <ul>
 *   <li>belowCap: a layout whose sequence never runs out in a tick (41 time, 22
 *       sequence bits, 1 ms): what one call costs;
 *   <li>strictCap: Snowflake's split (41 time, 10 node, 12 sequence), bounded by
 *       4,096,000 IDs/s (244 ns); CosId's MillisecondSnowflakeId on the same split;
 *   <li>borrow: flakeid's throughput mode; CosId has none for snowflake IDs, and its
 *       own throughput mode, SegmentChainId (number segments, not time-ordered IDs),
 *       stands beside it;
 *   <li>uuid7: one UUIDv7 ({@code java.util.UUID}) per call; no UUIDv7 library is in the
 *       build's package set, so the JDK's {@code UUID.randomUUID()} (v4, SecureRandom)
 *       stands beside it;
 *   <li>{@code *_local_*}: the same generators through per-thread handles ({@code
 *       Generator.local()}), one per benchmark thread ({@code local/...} in Rust, make
 *       bench-c);
 *   <li>cost: an empty FFM downcall (libc's abs), what crossing into C costs by itself.
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class IdBench {
  static final long TWITTER_EPOCH = 1288834974657L;

  Generator belowCap, strict, borrow;
  Sealer sealer;
  io.github.flakeid.UuidGenerator uuids;
  long sealState = 1;
  MillisecondSnowflakeId cosidBelowCap, cosidStrict;
  SegmentChainId cosidSegments;
  final long[] batch = new long[1024];

  static final MethodHandle ABS =
      Linker.nativeLinker()
          .downcallHandle(
              Linker.nativeLinker().defaultLookup().find("abs").orElseThrow(),
              FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

  @Setup(Level.Trial)
  public void setup() {
    Layout wide = Layout.custom(41, 0, 0, 22, 1, TWITTER_EPOCH, Order.TIME_NODE_SEQ);
    belowCap = Generator.builder().layout(wide).build();
    strict = Generator.builder().node(1).build();
    borrow = Generator.builder().node(1).overflow(Overflow.BORROW).maxBorrow(Duration.ofHours(24)).build();
    cosidBelowCap = new MillisecondSnowflakeId(TWITTER_EPOCH, 41, 0, 22, 0);
    cosidStrict = new MillisecondSnowflakeId(TWITTER_EPOCH, 41, 10, 12, 1);
    cosidSegments = new SegmentChainId(new IdSegmentDistributor.Atomic());
    uuids = io.github.flakeid.UuidGenerator.builder().build();
    sealer = Sealer.create("0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    belowCap.close();
    strict.close();
    borrow.close();
    sealer.close();
    uuids.close();
  }

  @Benchmark
  public long belowCap_flakeid_nextId() {
    return belowCap.nextId();
  }

  @Benchmark
  @OperationsPerInvocation(1024)
  public long[] belowCap_flakeid_nextIds1024() {
    belowCap.fill(batch);
    return batch;
  }

  /** Each benchmark thread's handles, taken and closed on that thread (they are confined to it). */
  @State(Scope.Thread)
  public static class Handles {
    LocalGenerator belowCap, borrow;

    @Setup(Level.Trial)
    public void setup(IdBench bench) {
      belowCap = bench.belowCap.local();
      borrow = bench.borrow.local();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      belowCap.close();
      borrow.close();
    }
  }

  @Benchmark
  public long belowCap_flakeid_local_nextId(Handles h) {
    return h.belowCap.nextId();
  }

  @Benchmark
  public long belowCap_cosid_snowflake() {
    return cosidBelowCap.generate();
  }

  @Benchmark
  public long strictCap_flakeid_nextId() {
    return strict.nextId();
  }

  @Benchmark
  public long strictCap_cosid_snowflake() {
    return cosidStrict.generate();
  }

  @Benchmark
  public long borrow_flakeid_nextId() {
    return borrow.nextId();
  }

  @Benchmark
  @OperationsPerInvocation(1024)
  public long[] borrow_flakeid_nextIds1024() {
    borrow.fill(batch);
    return batch;
  }

  @Benchmark
  @Threads(8)
  public long borrow_flakeid_nextId_8threads() {
    return borrow.nextId();
  }

  @Benchmark
  public long borrow_flakeid_local_nextId(Handles h) {
    return h.borrow.nextId();
  }

  @Benchmark
  @Threads(8)
  public long borrow_flakeid_local_nextId_8threads(Handles h) {
    return h.borrow.nextId();
  }

  @Benchmark
  public long borrow_cosid_segmentChain() {
    return cosidSegments.generate();
  }

  @Benchmark
  public java.util.UUID uuid7_flakeid_nextUuid() {
    return uuids.nextUuid();
  }

  @Benchmark
  public java.util.UUID uuid7_jdk_randomUUID_v4() {
    return java.util.UUID.randomUUID();
  }

  /** Sealing (docs/sealing.md): FF1-AES-128 over 63 bits, one downcall. */
  @Benchmark
  public long seal_flakeid_seal() {
    return sealState = sealer.seal(sealState);
  }

  @Benchmark
  public long seal_flakeid_unseal() {
    return sealState = sealer.unseal(sealState);
  }

  @Benchmark
  public int cost_ffm_emptyDowncall() throws Throwable {
    return (int) ABS.invokeExact(-7);
  }
}
