package io.github.flakeid.hibernate;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.hibernate.annotations.IdGeneratorType;

/**
 * Marks a {@link java.util.UUID} identifier (or any attribute) whose value, on insert,
 * is the next UUIDv7 of the process's 128-bit generator, configured from the
 * {@code flakeid.uuid.*} properties of the persistence unit ({@link FlakeUuidSettings}).
 * It needs no node id.
 *
 * <pre>{@code
 * @Entity class Document {
 *   @Id @FlakeUuid UUID id;
 * }
 * }</pre>
 */
@IdGeneratorType(FlakeUuidGenerator.class)
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.METHOD})
public @interface FlakeUuid {}
