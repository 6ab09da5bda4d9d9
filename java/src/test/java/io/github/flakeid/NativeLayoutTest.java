package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.StructLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The struct layouts and enum numbers in Native and the enums match include/flakeid.h:
 * the header's structs are parsed for their members, and a C program compiled against
 * the header prints each member's offset and size and each struct's size. A field
 * added to the header (flakeid_options' coming struct_size, lease_ttl_ms, ...) fails
 * here until Native's layout has it too.
 */
class NativeLayoutTest {
  static final Path HEADER = Path.of(System.getProperty("flakeid.header", "../include/flakeid.h"));

  /** struct name -> member names, in order, from the header text. */
  static Map<String, List<String>> structs(String header) {
    String text = header.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\n]*", "");
    Map<String, List<String>> out = new LinkedHashMap<>();
    Matcher m = Pattern.compile("typedef struct (\\w+) \\{([^}]*)\\}").matcher(text);
    while (m.find()) {
      List<String> members = new ArrayList<>();
      for (String decl : m.group(2).split(";")) {
        // An array member (const char *by_name[N]) by its name.
        Matcher name = Pattern.compile("(\\w+)\\s*$").matcher(decl.strip().replaceAll("\\[[^\\]]*\\]$", ""));
        if (name.find()) members.add(name.group(1));
      }
      out.put(m.group(1), members);
    }
    return out;
  }

  @Test
  void structsMatchTheHeader(@TempDir Path tmp) throws IOException, InterruptedException {
    Map<String, List<String>> header = structs(Files.readString(HEADER));
    StringBuilder c = new StringBuilder("#include <stddef.h>\n#include <stdio.h>\n#include \"flakeid.h\"\nint main(void) {\n");
    for (StructLayout s : Native.STRUCTS) {
      String name = s.name().orElseThrow();
      List<String> members = header.get(name);
      assertTrue(members != null, "include/flakeid.h has no struct " + name);
      for (String f : members) {
        c.append("  printf(\"%s.%s %zu %zu\\n\", \"").append(name).append("\", \"").append(f)
            .append("\", offsetof(").append(name).append(", ").append(f).append("), sizeof(((")
            .append(name).append(" *)0)->").append(f).append("));\n");
      }
      c.append("  printf(\"%s %zu\\n\", \"").append(name).append("\", sizeof(").append(name).append("));\n");
    }
    c.append("  return 0;\n}\n");
    Path src = tmp.resolve("layout.c");
    Files.writeString(src, c);
    Path exe = tmp.resolve("layout");
    run(List.of(System.getenv().getOrDefault("CC", "cc"), "-std=c11", "-I" + HEADER.getParent(), src.toString(),
        "-o", exe.toString()));
    Map<String, String> fromC = new LinkedHashMap<>();
    for (String line : run(List.of(exe.toString())).split("\n")) {
      int sp = line.indexOf(' ');
      fromC.put(line.substring(0, sp), line.substring(sp + 1));
    }
    for (StructLayout s : Native.STRUCTS) {
      String name = s.name().orElseThrow();
      List<MemoryLayout> members =
          s.memberLayouts().stream().filter(m -> !(m instanceof PaddingLayout)).toList();
      assertEquals(header.get(name), members.stream().map(m -> m.name().orElseThrow()).toList(),
          name + ": the header's members differ from Native's layout: update Native." + name);
      for (MemoryLayout m : members) {
        String f = m.name().orElseThrow();
        long off = s.byteOffset(MemoryLayout.PathElement.groupElement(f));
        assertEquals(fromC.get(name + "." + f), off + " " + m.byteSize(),
            name + "." + f + ": offset and size in Native vs the header");
      }
      assertEquals(fromC.get(name), String.valueOf(s.byteSize()), name + ": size");
    }
  }

  /** `FLAKEID_<PREFIX>_<NAME> = <n>` in the header, for one enum. */
  static Map<String, Integer> constants(String header, String prefix) {
    Map<String, Integer> out = new LinkedHashMap<>();
    Matcher m = Pattern.compile("\\b" + prefix + "_(\\w+) = (\\d+)").matcher(header);
    while (m.find()) out.put(m.group(1), Integer.parseInt(m.group(2)));
    return out;
  }

  @Test
  void enumsMatchTheHeader() throws IOException {
    String h = Files.readString(HEADER);
    Map<String, Integer> java = new LinkedHashMap<>();
    for (Encoding e : Encoding.values()) java.put(e.name(), e.value);
    assertEquals(constants(h, "FLAKEID_ENCODING"), java);
    java.clear();
    for (Overflow e : Overflow.values()) java.put(e.name(), e.value);
    assertEquals(constants(h, "FLAKEID_OVERFLOW"), java);
    java.clear();
    for (ClockBackwards e : ClockBackwards.values()) java.put(e.name(), e.value);
    assertEquals(constants(h, "FLAKEID_CLOCK_BACKWARDS"), java);
    java.clear();
    for (Order e : Order.values()) java.put(e.name(), e.value);
    assertEquals(constants(h, "FLAKEID_ORDER"), java);
    // Every engine error status (1..99) is an ErrorKind; the C layer's own (100+) are INTERNAL.
    Map<String, Integer> errs = constants(h, "FLAKEID_ERR");
    java.clear();
    for (ErrorKind k : ErrorKind.values()) if (k != ErrorKind.INTERNAL) java.put(k.name(), k.status());
    Map<String, Integer> engine = new LinkedHashMap<>(errs);
    engine.values().removeIf(n -> n >= 100);
    assertEquals(engine, java, "ErrorKind vs the header's FLAKEID_ERR_* below 100");
    assertEquals(errs.get("PANIC"), ErrorKind.INTERNAL.status());
  }

  static String run(List<String> cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), String.join(" ", cmd) + ":\n" + out);
    return out;
  }
}
