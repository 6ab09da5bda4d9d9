package io.github.flakeid.spring;

import io.github.flakeid.Generator;
import io.github.flakeid.UuidGenerator;
import io.github.flakeid.hibernate.FlakeIdSettings;
import io.github.flakeid.hibernate.FlakeUuidSettings;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.orm.jpa.EntityManagerFactoryDependsOnPostProcessor;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * One {@link Generator} bean from the {@code flakeid.*} properties ({@code
 * flakeid.node} or {@code flakeid.datacenter} + {@code flakeid.worker} or {@code
 * flakeid.lease}; {@code flakeid.layout}, {@code flakeid.overflow}, {@code
 * flakeid.clock-backwards}), read and checked by {@link FlakeIdSettings} as
 * Hibernate's {@code @FlakeId} reads them. Without a node source the context does not
 * start. The bean is the process's generator: {@code @FlakeId} entities take their
 * IDs from it, and it is closed (its lease given back) when the context closes. With
 * Jackson, {@code @FlakeId} properties go out as JSON strings ({@link
 * FlakeIdJacksonModule}; {@code flakeid.json.ids-as-strings=false} turns it off).
 */
@AutoConfiguration(beforeName = "org.springframework.boot.autoconfigure.orm.jpa.HibernateJpaAutoConfiguration")
public class FlakeIdAutoConfiguration {
  static final String GENERATOR_BEAN = "flakeIdGenerator";
  static final String UUID_GENERATOR_BEAN = "flakeIdUuidGenerator";

  /**
   * The {@code flakeid.*} properties FlakeIdSettings knows, with their prefix, in
   * Spring's relaxed forms ({@code FLAKEID_NODE} in the environment too). Named one by
   * one: other {@code FLAKEID_*} variables of the environment are none of its business.
   */
  static Map<String, String> properties(Environment env) {
    return properties(env, "flakeid.", FlakeIdSettings.names());
  }

  /** The properties {@code prefix + name} of {@code names} that {@code env} binds. */
  static Map<String, String> properties(Environment env, String prefix, List<String> names) {
    Map<String, String> out = new TreeMap<>();
    Binder binder = Binder.get(env);
    for (String name : names) {
      binder.bind(prefix + name, String.class).ifBound(v -> out.put(prefix + name, v));
    }
    return out;
  }

  @Bean(name = GENERATOR_BEAN, destroyMethod = "")
  @ConditionalOnMissingBean
  public Generator flakeIdGenerator(Environment env) {
    Map<String, String> props = properties(env);
    // The app's DataSource, for flakeid.lease=database (FlakeIdSettings reads it).
    props.putAll(properties(env, "spring.datasource.", List.of("url", "username", "password")));
    Generator generator = FlakeIdSettings.build(props);
    FlakeIdSettings.install(generator, props);
    return generator;
  }

  /**
   * The process's 128-bit generator ({@code @FlakeUuid} entities' UUIDv7s), from the
   * {@code flakeid.uuid.*} properties ({@link FlakeUuidSettings#names}); it needs no node id.
   */
  @Bean(name = UUID_GENERATOR_BEAN, destroyMethod = "")
  @ConditionalOnMissingBean
  public UuidGenerator flakeIdUuidGenerator(Environment env) {
    Map<String, String> props = properties(env, "flakeid.uuid.", FlakeUuidSettings.names());
    UuidGenerator generator = FlakeUuidSettings.build(props);
    FlakeUuidSettings.install(generator, props);
    return generator;
  }

  @Bean
  public SharedGeneratorCloser flakeIdSharedGeneratorCloser() {
    return new SharedGeneratorCloser();
  }

  /** Closes the shared generators with the context (a bean's destroy callback). */
  public static final class SharedGeneratorCloser implements org.springframework.beans.factory.DisposableBean {
    @Override
    public void destroy() {
      FlakeIdSettings.close();
      FlakeUuidSettings.close();
    }
  }

  /**
   * JPA's EntityManagerFactory waits for the generators, so that Hibernate's
   * {@code @FlakeId} and {@code @FlakeUuid} find them installed (as Flyway's migrations are waited for).
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.orm.jpa.AbstractEntityManagerFactoryBean")
  static class Jpa {
    @Bean
    static EntityManagerFactoryDependsOnPostProcessor flakeIdEntityManagerFactoryDependsOn() {
      return new EntityManagerFactoryDependsOnPostProcessor(GENERATOR_BEAN, UUID_GENERATOR_BEAN);
    }
  }

  /**
   * Jackson writes {@code @FlakeId} ids as strings: Spring Boot registers every
   * {@code Module} bean with its {@code ObjectMapper}.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "com.fasterxml.jackson.databind.Module")
  @ConditionalOnProperty(prefix = "flakeid.json", name = "ids-as-strings", havingValue = "true", matchIfMissing = true)
  static class Json {
    @Bean
    @ConditionalOnMissingBean
    FlakeIdJacksonModule flakeIdJacksonModule() {
      return new FlakeIdJacksonModule();
    }
  }

  /** The Actuator health indicator (when Actuator is there). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
  static class Health {
    @Bean
    @ConditionalOnMissingBean(name = "flakeIdHealthIndicator")
    FlakeIdHealthIndicator flakeIdHealthIndicator(Generator generator) {
      return new FlakeIdHealthIndicator(generator);
    }
  }

  /** The Micrometer binder (when Micrometer is there). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
  static class Metrics {
    @Bean
    @ConditionalOnMissingBean
    FlakeIdMetrics flakeIdMetrics(Generator generator) {
      return new FlakeIdMetrics(generator);
    }
  }
}
