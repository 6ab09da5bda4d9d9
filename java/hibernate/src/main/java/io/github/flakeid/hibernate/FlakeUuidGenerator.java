package io.github.flakeid.hibernate;

import io.github.flakeid.UuidGenerator;
import java.lang.reflect.Member;
import java.util.EnumSet;
import java.util.Map;
import org.hibernate.engine.config.spi.ConfigurationService;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.generator.BeforeExecutionGenerator;
import org.hibernate.generator.EventType;
import org.hibernate.generator.GeneratorCreationContext;

/**
 * The {@link FlakeUuid} generator: a UUIDv7 from the process's one {@link UuidGenerator},
 * built from the persistence unit's {@code flakeid.uuid.*} properties when Hibernate
 * builds its metadata (a bad property stops the SessionFactory from starting).
 */
public final class FlakeUuidGenerator implements BeforeExecutionGenerator {
  private final UuidGenerator generator;

  /** For a bean container that builds generators itself: the generator the application installed. */
  public FlakeUuidGenerator() {
    this.generator = FlakeUuidSettings.shared(Map.of());
  }

  /** Hibernate 7's constructor: the persistence unit's {@code flakeid.uuid.*} properties. */
  public FlakeUuidGenerator(FlakeUuid annotation, Member member, GeneratorCreationContext context) {
    Map<String, Object> settings = context.getServiceRegistry().requireService(ConfigurationService.class).getSettings();
    this.generator = FlakeUuidSettings.shared(settings);
  }

  @Override
  public Object generate(SharedSessionContractImplementor session, Object owner, Object currentValue, EventType eventType) {
    return currentValue != null ? currentValue : generator.nextUuid();
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
