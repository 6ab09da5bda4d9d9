package sample;

import io.github.flakeid.FlakeId;
import io.github.flakeid.Generator;
import io.github.flakeid.Parts;

public class Sample {
  public static void main(String[] args) {
    try (Generator gen = Generator.builder().datacenter(1).worker(2).build()) {
      long id = gen.nextId();
      Parts p = FlakeId.decompose(id);
      System.out.println(id + " " + p.datacenter() + " " + p.worker() + " " + FlakeId.version());
    }
  }
}
