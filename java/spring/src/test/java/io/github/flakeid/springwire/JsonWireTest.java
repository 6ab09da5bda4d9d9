package io.github.flakeid.springwire;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flakeid.Generator;
import io.github.flakeid.hibernate.FlakeId;
import io.github.flakeid.hibernate.FlakeIdSettings;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.orm.jpa.HibernateJpaAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A real Spring Boot web server (Tomcat, on a port of tests/env/testenv.py) whose
 * controller returns {@code @FlakeId} entities, read by a plain {@code JSON.parse}
 * (node): with the starter's defaults every ID comes back exactly and the server reads
 * IDs sent as strings and as numbers; with {@code flakeid.json.ids-as-strings=false}
 * (Jackson's own numbers, as before the starter wrote strings) the client reads them
 * rounded. (Outside io.github.flakeid.spring: the other tests' {@code
 * @SpringBootApplication} does not scan it.)
 */
class JsonWireTest {
  static final Path ROOT = Path.of(System.getProperty("user.dir")).resolve("../..").normalize();

  /** What a JavaScript client sees: JSON.parse, then every number as JavaScript prints it. */
  static final String JS_READ = "const d = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
      + "const ids = []; JSON.stringify(d, (k, v) => { if (k === 'id' || k === 'parent') ids.push(String(v)); return v });"
      + "process.stdout.write(ids.join('\\n'))";

  public static class Order {
    @FlakeId private Long id;
    @FlakeId private long parent;
    private int total;

    public Order() {}

    Order(long id, long parent, int total) {
      this.id = id;
      this.parent = parent;
      this.total = total;
    }

    public Long getId() { return id; }
    public void setId(Long id) { this.id = id; }
    public long getParent() { return parent; }
    public void setParent(long parent) { this.parent = parent; }
    public int getTotal() { return total; }
    public void setTotal(int total) { this.total = total; }
  }

  @RestController
  public static class Orders {
    static final List<Order> ORDERS = new ArrayList<>();

    @GetMapping("/orders")
    public List<Order> list() {
      return ORDERS;
    }

    @PostMapping("/orders")
    public Order echo(@RequestBody Order order) {
      return order;
    }
  }

  @EnableAutoConfiguration(exclude = {DataSourceAutoConfiguration.class, HibernateJpaAutoConfiguration.class})
  @Import(Orders.class)
  public static class App {}

  @AfterEach
  void closeShared() {
    FlakeIdSettings.close();
  }

  static int freePort() throws Exception {
    Process p = new ProcessBuilder("python3", ROOT.resolve("tests/env/testenv.py").toString(), "port")
        .redirectErrorStream(false).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertThat(p.waitFor()).isZero();
    return Integer.parseInt(out);
  }

  static List<String> jsRead(String body) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("node", "-e", JS_READ).start();
    p.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
    return out.isEmpty() ? List.of() : List.of(out.split("\n"));
  }

  record Served(List<String> want, List<String> listed, List<String> echoedStrings, List<String> echoedNumbers) {}

  static Served serve(String... extra) throws Exception {
    int port = freePort();
    List<String> props = new ArrayList<>(List.of("server.address=127.0.0.1", "server.port=" + port,
        "flakeid.node=13", "spring.main.banner-mode=off", "logging.level.root=WARN"));
    props.addAll(List.of(extra));
    try (ConfigurableApplicationContext ctx =
        new SpringApplicationBuilder(App.class).properties(props.toArray(String[]::new)).run()) {
      Generator gen = ctx.getBean(Generator.class);
      Orders.ORDERS.clear();
      List<String> want = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        Order o = new Order(gen.nextId(), gen.nextId(), i);
        Orders.ORDERS.add(o);
        want.add(Long.toString(o.id));
        want.add(Long.toString(o.parent));
      }
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
      String base = "http://127.0.0.1:" + port + "/orders";
      String listed = http.send(HttpRequest.newBuilder(URI.create(base)).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      long id = gen.nextId();
      long parent = gen.nextId();
      List<String> echoed = new ArrayList<>();
      for (String sent : List.of("{\"id\":\"" + id + "\",\"parent\":\"" + parent + "\",\"total\":1}",
          "{\"id\":" + id + ",\"parent\":" + parent + ",\"total\":1}")) {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base))
            .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(sent)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        echoed.add(String.join(",", jsRead(r.body())));
      }
      echoed.add(id + "," + parent);
      return new Served(want, jsRead(listed), List.of(echoed.get(0), echoed.get(2)), List.of(echoed.get(1), echoed.get(2)));
    }
  }

  static long wrong(List<String> got, List<String> want) {
    assertThat(got).hasSameSizeAs(want);
    long n = 0;
    for (int i = 0; i < want.size(); i++) if (!got.get(i).equals(want.get(i))) n++;
    return n;
  }

  @Test
  void everyIdIsReadExactlyAndReadFromStringsAndNumbers() throws Exception {
    Served s = serve();
    assertThat(wrong(s.listed(), s.want())).as("IDs JSON.parse read wrong of %d", s.want().size()).isZero();
    assertThat(s.echoedStrings().get(0)).isEqualTo(s.echoedStrings().get(1));
    assertThat(s.echoedNumbers().get(0)).isEqualTo(s.echoedNumbers().get(1));
  }

  @Test
  void turnedOffTheIdsAreNumbersAndJavaScriptRoundsThem() throws Exception {
    Served s = serve("flakeid.json.ids-as-strings=false");
    long wrong = wrong(s.listed(), s.want());
    System.out.printf("flakeid.json.ids-as-strings=false: JSON.parse read %d of %d IDs wrong%n", wrong, s.want().size());
    assertThat(wrong).isGreaterThan(s.want().size() / 2L);
    assertThat(s.echoedStrings().get(0)).isNotEqualTo(s.echoedStrings().get(1)); // read, then written as numbers
  }
}
