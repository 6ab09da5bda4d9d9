package io.github.flakeid.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flakeid.FlakeId;
import io.github.flakeid.hibernate.FlakeIdSettings;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import java.net.URI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.autoconfigure.jdbc.AutoConfigureTestDatabase;
import org.springframework.boot.test.autoconfigure.orm.jpa.DataJpaTest;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/** @FlakeId entities in Spring Data JPA's test slice, on H2 and the fixture's PostgreSQL. */
class JpaSliceTest {
  @Entity(name = "SpringInvoice")
  public static class Invoice {
    @Id @io.github.flakeid.hibernate.FlakeId Long id;
    long cents;
  }

  public interface Invoices extends JpaRepository<Invoice, Long> {}

  @SpringBootApplication
  @EnableJpaRepositories(considerNestedRepositories = true)
  static class App {}

  @AfterAll
  static void closeShared() {
    FlakeIdSettings.close();
  }

  static void savesWithIds(Invoices invoices) {
    Invoice a = new Invoice();
    Invoice b = new Invoice();
    invoices.saveAndFlush(a);
    invoices.saveAndFlush(b);
    assertThat(Long.compareUnsigned(a.id, b.id)).isNegative();
    assertThat(FlakeId.decompose(a.id).node()).isEqualTo(9);
    assertThat(invoices.findById(b.id)).isPresent();
  }

  @Nested
  @DirtiesContext // one generator per process: this context's is closed before the next starts
  @DataJpaTest
  @ImportAutoConfiguration(FlakeIdAutoConfiguration.class)
  @TestPropertySource(properties = "flakeid.node=9")
  class OnH2 {
    @Autowired Invoices invoices;

    @Test
    void idsFromTheSharedGenerator() {
      savesWithIds(invoices);
    }
  }

  @Nested
  @DirtiesContext // one generator per process: this context's is closed before the next starts
  @DataJpaTest
  @AutoConfigureTestDatabase(replace = AutoConfigureTestDatabase.Replace.NONE)
  @ImportAutoConfiguration(FlakeIdAutoConfiguration.class)
  @TestPropertySource(properties = {"flakeid.node=9", "spring.jpa.hibernate.ddl-auto=create-drop"})
  class OnPostgres {
    @Autowired Invoices invoices;

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry r) {
      String url = System.getenv("FLAKEID_TEST_POSTGRES_URL");
      if (url == null) throw new IllegalStateException("FLAKEID_TEST_POSTGRES_URL is unset: run through make test-java");
      URI u = URI.create(url);
      String[] user = u.getUserInfo().split(":", 2);
      r.add("spring.datasource.url", () -> "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath());
      r.add("spring.datasource.username", () -> user[0]);
      r.add("spring.datasource.password", () -> user[1]);
    }

    @Test
    void idsFromTheSharedGenerator() {
      savesWithIds(invoices);
    }
  }
}
