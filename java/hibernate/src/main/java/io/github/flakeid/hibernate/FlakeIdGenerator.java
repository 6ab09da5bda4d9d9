package io.github.flakeid.hibernate;

import io.github.flakeid.Generator;
import java.lang.reflect.Member;
import java.util.Map;
import org.hibernate.generator.GeneratorCreationContext;

/**
 * The {@link FlakeId} generator: an ID from the process's one {@link Generator},
 * built from the persistence unit's {@code flakeid.*} properties when Hibernate
 * builds its metadata, so a missing node source stops the SessionFactory from
 * starting.
 */
public final class FlakeIdGenerator extends SharedIdGenerator<Generator> {
  /**
   * For a bean container that builds generators itself (Spring's, with
   * {@code hibernate.resource.beans.container}): the process's generator as the
   * application installed it ({@link FlakeIdSettings#install}).
   */
  public FlakeIdGenerator() {
    super(FlakeIdSettings.shared(Map.of()), Generator::nextId);
  }

  /**
   * Hibernate 7's constructor: the persistence unit's {@code flakeid.*} properties.
   * (Hibernate 6.6 looks for another parameter type and takes the no-argument
   * constructor: the generator an application installed, as Spring Boot's starter does.)
   */
  public FlakeIdGenerator(FlakeId annotation, Member member, GeneratorCreationContext context) {
    super(FlakeIdSettings.shared(properties(context)), Generator::nextId);
  }
}
