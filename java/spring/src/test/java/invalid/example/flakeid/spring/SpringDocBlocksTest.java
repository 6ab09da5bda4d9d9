package invalid.example.flakeid.spring;

import invalid.example.flakeid.hibernate.FrameworkDocBlocksTest;

/** docs/frameworks.md's Spring Boot blocks, on Spring Boot's Hibernate (6.6). */
class SpringDocBlocksTest extends FrameworkDocBlocksTest {
  @Override
  protected boolean mine(String code) {
    return code.contains("import org.springframework.");
  }
}
