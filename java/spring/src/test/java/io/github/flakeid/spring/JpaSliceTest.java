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

  @Entity(name = "SpringReceipt")
  public static class Receipt {
    @Id @io.github.flakeid.hibernate.FlakeUuid java.util.UUID id;
    long cents;
  }

  public interface Receipts extends JpaRepository<Receipt, java.util.UUID> {}

  @SpringBootApplication
  @EnableJpaRepositories(considerNestedRepositories = true)
  static class App {}

  @AfterAll
  static void closeShared() {
    FlakeIdSettings.close();
    io.github.flakeid.hibernate.FlakeUuidSettings.close();
  }

  /** @FlakeUuid: UUIDv7s from the context's UuidGenerator bean, increasing. */
  static void savesWithUuids(Receipts receipts, io.github.flakeid.UuidGenerator bean) {
    Receipt a = new Receipt();
    Receipt b = new Receipt();
    receipts.saveAndFlush(a);
    receipts.saveAndFlush(b);
    assertThat(a.id.version()).isEqualTo(7);
    assertThat(io.github.flakeid.Uuids.formatUlid(a.id).compareTo(io.github.flakeid.Uuids.formatUlid(b.id))).isNegative();
    assertThat(receipts.findById(b.id)).isPresent();
    assertThat(bean.stats().idsIssued()).isGreaterThanOrEqualTo(2);
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

  /** The tests each context runs, on its repositories and UuidGenerator bean. */
  abstract static class Saves {
    @Autowired Invoices invoices;
    @Autowired Receipts receipts;
    @Autowired io.github.flakeid.UuidGenerator uuids;

    @Test
    void uuidsFromTheSharedGenerator() {
      savesWithUuids(receipts, uuids);
    }

    @Test
    void idsFromTheSharedGenerator() {
      savesWithIds(invoices);
    }
  }

  @Nested
  @DirtiesContext // one generator per process: this context's is closed before the next starts
  @DataJpaTest
  @ImportAutoConfiguration(FlakeIdAutoConfiguration.class)
  @TestPropertySource(properties = "flakeid.node=9")
  class OnH2 extends Saves {}

  @Nested
  @DirtiesContext // one generator per process: this context's is closed before the next starts
  @DataJpaTest
  @AutoConfigureTestDatabase(replace = AutoConfigureTestDatabase.Replace.NONE)
  @ImportAutoConfiguration(FlakeIdAutoConfiguration.class)
  @TestPropertySource(properties = {"flakeid.node=9", "spring.jpa.hibernate.ddl-auto=create-drop"})
  class OnPostgres extends Saves {
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
  }
}
