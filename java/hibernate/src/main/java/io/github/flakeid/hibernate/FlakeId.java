package io.github.flakeid.hibernate;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.hibernate.annotations.IdGeneratorType;

/**
 * Marks a {@code long}/{@code Long} identifier (or any attribute) whose value, on
 * insert, is the next ID of the process's flakeid generator, configured from the
 * {@code flakeid.*} properties of the persistence unit ({@link FlakeIdSettings}).
 *
 * <pre>{@code
 * @Entity class Order {
 *   @Id @FlakeId Long id;
 * }
 * }</pre>
 */
@IdGeneratorType(FlakeIdGenerator.class)
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.METHOD})
public @interface FlakeId {}
