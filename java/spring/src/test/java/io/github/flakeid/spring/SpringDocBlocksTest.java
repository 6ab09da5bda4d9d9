package io.github.flakeid.spring;

import io.github.flakeid.hibernate.FrameworkDocBlocksTest;

/** docs/frameworks.md's Spring Boot blocks, on Spring Boot's Hibernate (6.6). */
class SpringDocBlocksTest extends FrameworkDocBlocksTest {
  @Override
  protected boolean mine(String code) {
    return code.contains("import org.springframework.");
  }
}
