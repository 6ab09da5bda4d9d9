package io.github.flakeid.hibernate;

import java.util.EnumSet;
import java.util.Map;
import java.util.function.Function;
import org.hibernate.engine.config.spi.ConfigurationService;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.generator.BeforeExecutionGenerator;
import org.hibernate.generator.EventType;
import org.hibernate.generator.GeneratorCreationContext;

/**
 * What {@link FlakeIdGenerator} and {@link FlakeUuidGenerator} are: an ID from the process's
 * one generator of their kind, made before the insert, unless the entity was given one.
 */
abstract class SharedIdGenerator<G> implements BeforeExecutionGenerator {
  private final G generator;
  private final Function<G, Object> next;

  SharedIdGenerator(G generator, Function<G, Object> next) {
    this.generator = generator;
    this.next = next;
  }

  /** The persistence unit's properties, as Hibernate 7 gives them to a generator. */
  static Map<String, Object> properties(GeneratorCreationContext context) {
    return context.getServiceRegistry().requireService(ConfigurationService.class).getSettings();
  }

  @Override
  public Object generate(SharedSessionContractImplementor session, Object owner, Object currentValue, EventType eventType) {
    return currentValue != null ? currentValue : next.apply(generator);
  }

  @Override
  public EnumSet<EventType> getEventTypes() {
    return EnumSet.of(EventType.INSERT);
  }

  @Override
  public boolean allowAssignedIdentifiers() {
    return true;
  }
}
