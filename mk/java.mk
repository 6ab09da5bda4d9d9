# Java: java/, a Maven project calling libflakeid with java.lang.foreign
# (JDK 22+; java/README.md). Maven runs with the JDK scripts/setup-java.sh finds.
# Beside it java/hibernate (@FlakeId), java/spring (the Spring Boot starter) and
# java/bench (JMH). The released jar (dist-java) carries libflakeid.so for
# linux-x86_64 and linux-aarch64, from `scripts/dist.sh c`.
JAVA_NATIVES := target/java-natives
MVN_ENV = JAVA_HOME=$$(bash $(CURDIR)/scripts/setup-java.sh) \
  MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow $${MAVEN_OPTS:-}"
MVN = $(MVN_ENV) mvn -B -ntp -Dstyle.color=never


.PHONY: setup-java lib-java test-java test-java-stores bench-java dist-java release-check-java

##@ Java: java/, java.lang.foreign over libflakeid (JDK 22+)
# scripts/setup-java.sh stays a script: it prints the JDK's home, which java/pom.xml's
# message and java/release/*.sh also ask it for.
setup-java: ## a JDK 22+ (found, not installed), Maven, a C compiler; pom.xml's plugins
	bash scripts/setup-java.sh >/dev/null

# The host's libflakeid.so, where the jar's build picks natives up.
lib-java: lib-c ## the host's libflakeid.so where the jar's build picks natives up
	plat=linux-$$(uname -m | sed 's/arm64/aarch64/'); mkdir -p $(JAVA_NATIVES)/$$plat; \
	  cp $(C_LIB_DIR)/libflakeid.so $(JAVA_NATIVES)/$$plat/libflakeid.so

# `install`, not `verify`: java/hibernate (flakeid-hibernate, an artifact of its own so
# Hibernate is never the jar's dependency) builds against the jar just tested, on H2
# and the fixture's PostgreSQL; java/spring (flakeid-spring-boot-starter) against
# both, in Spring Boot's test slices, with docs/frameworks.md's Hibernate and Spring
# examples.
test-java: setup-java setup-postgres-fixture lib-java ## [TIER=test: no frameworks] JUnit 5: vectors, struct layouts, 8 threads, sealing, file leases, doc blocks; Hibernate, Spring Boot
	$(MVN_ENV) MVN_GOAL=install MVN_ARGS=-Dnatives.dir=$(CURDIR)/$(JAVA_NATIVES) bash scripts/suite.sh java $(if $(TIER_CI),--frameworks)

# The lease tests against the fixture's real stores, plain and TLS (make ci); without
# the fixture they skip (make test).
test-java-stores: setup-java setup-lease lib-java ## the lease tests on the fixture's stores, plain and TLS
	cd java && $(MVN_ENV) FLAKEID_LEASE_REQUIRE=1 python3 ../tests/env/testenv.py run --all -- \
	  mvn -B -ntp -Dstyle.color=never -Dnatives.dir=$(CURDIR)/$(JAVA_NATIVES) -Dtest=LeaseTest \
	  -Dsurefire.failIfNoSpecifiedTests=false test

bench-java: setup-java lib-java ## JMH: flakeid beside CosId; UUIDv7 beside the JDK's randomUUID
	cd java && $(MVN) -q -Dnatives.dir=$(CURDIR)/$(JAVA_NATIVES) -DskipTests install
	cd java/bench && $(MVN) -q package
	cd java/bench && FLAKEID_HOST_GUARD=off $$(bash $(CURDIR)/scripts/setup-java.sh)/bin/java --enable-native-access=ALL-UNNAMED -jar target/benchmarks.jar \
	  -f 1 -wi 3 -w 1s -i 5 -r 1s -tu ns -bm avgt | tee ../../target/bench-java.txt

dist-java: setup-java ## dist/flakeid-java-<v>.jar with libflakeid.so for x86_64 and aarch64
	bash java/release/pack.sh

release-check-java: dist-java ## that jar in a fresh Maven project, offline
	bash java/release/check.sh
