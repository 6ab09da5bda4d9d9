package io.github.flakeid.hibernate;

import io.github.flakeid.Generator;
import java.lang.reflect.Member;
import java.util.EnumSet;
import java.util.Map;
import org.hibernate.engine.config.spi.ConfigurationService;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.generator.BeforeExecutionGenerator;
import org.hibernate.generator.EventType;
import org.hibernate.generator.GeneratorCreationContext;

/**
 * The {@link FlakeId} generator: an ID from the process's one {@link Generator},
 * built from the persistence unit's {@code flakeid.*} properties when Hibernate
 * builds its metadata, so a missing node source stops the SessionFactory from
 * starting.
 */
public final class FlakeIdGenerator implements BeforeExecutionGenerator {
  private final Generator generator;

  /**
   * For a bean container that builds generators itself (Spring's, with
   * {@code hibernate.resource.beans.container}): the process's generator as the
   * application installed it ({@link FlakeIdSettings#install}).
   */
  public FlakeIdGenerator() {
    this.generator = FlakeIdSettings.shared(Map.of());
  }

  /**
   * Hibernate 7's constructor: the persistence unit's {@code flakeid.*} properties.
   * (Hibernate 6.6 looks for another parameter type and takes the no-argument
   * constructor: the generator an application installed, as Spring Boot's starter does.)
   */
  public FlakeIdGenerator(FlakeId annotation, Member member, GeneratorCreationContext context) {
    Map<String, Object> settings = context.getServiceRegistry().requireService(ConfigurationService.class).getSettings();
    this.generator = FlakeIdSettings.shared(settings);
  }

  @Override
  public Object generate(SharedSessionContractImplementor session, Object owner, Object currentValue, EventType eventType) {
    return currentValue != null ? currentValue : generator.nextId();
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
