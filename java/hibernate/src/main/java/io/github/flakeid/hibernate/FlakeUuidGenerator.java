package io.github.flakeid.hibernate;

import io.github.flakeid.UuidGenerator;
import java.lang.reflect.Member;
import java.util.Map;
import org.hibernate.generator.GeneratorCreationContext;

/**
 * The {@link FlakeUuid} generator: a UUIDv7 from the process's one {@link UuidGenerator},
 * built from the persistence unit's {@code flakeid.uuid.*} properties when Hibernate
 * builds its metadata (a bad property stops the SessionFactory from starting).
 */
public final class FlakeUuidGenerator extends SharedIdGenerator<UuidGenerator> {
  /** For a bean container that builds generators itself: the generator the application installed. */
  public FlakeUuidGenerator() {
    super(FlakeUuidSettings.shared(Map.of()), UuidGenerator::nextUuid);
  }

  /** Hibernate 7's constructor: the persistence unit's {@code flakeid.uuid.*} properties. */
  public FlakeUuidGenerator(FlakeUuid annotation, Member member, GeneratorCreationContext context) {
    super(FlakeUuidSettings.shared(properties(context)), UuidGenerator::nextUuid);
  }
}
