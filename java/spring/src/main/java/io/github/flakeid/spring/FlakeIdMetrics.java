package io.github.flakeid.spring;

import io.github.flakeid.Generator;
import io.github.flakeid.Stats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/** The generator's {@link Generator#stats() stats()} as Micrometer meters, in base units. */
public class FlakeIdMetrics implements MeterBinder {
  private final Generator generator;

  public FlakeIdMetrics(Generator generator) {
    this.generator = generator;
  }

  private double stat(ToDoubleFunction<Stats> f) {
    return f.applyAsDouble(generator.stats());
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    FunctionCounter.builder("flakeid.ids.issued", this, m -> m.stat(Stats::idsIssued))
        .description("IDs issued").register(registry);
    FunctionCounter.builder("flakeid.tick.waits", this, m -> m.stat(Stats::tickWaits))
        .description("ticks waited out with the sequence used up").register(registry);
    FunctionCounter.builder("flakeid.clock.rollbacks", this, m -> m.stat(Stats::clockRollbacks))
        .description("calls that found the clock behind issued IDs").register(registry);
    TimeGauge.builder("flakeid.lead", this, TimeUnit.MILLISECONDS, m -> m.stat(s -> s.lead().toMillis()))
        .description("how far the last ID is ahead of the clock").register(registry);
    Gauge.builder("flakeid.lease.remaining", this, m -> m.stat(s -> s.leaseRemaining().map(d -> d.toMillis() / 1000.0).orElse(Double.NaN)))
        .baseUnit("seconds").description("time until the lease's window closes unless renewed").register(registry);
  }
}
