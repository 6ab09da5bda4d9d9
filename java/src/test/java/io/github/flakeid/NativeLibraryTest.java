package io.github.flakeid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Which of the jar's libraries each JVM loads: os.name and os.arch as the JDKs report
 * them on each platform, mapped to the resource java/release/pack.sh puts in the jar.
 */
class NativeLibraryTest {
  @Test
  void eachPlatformMapsToItsResource() {
    String[][] cases = {
      // os.name, os.arch, the jar's resource
      {"Linux", "amd64", "/io/github/flakeid/native/linux-x86_64/libflakeid.so"},
      {"Linux", "aarch64", "/io/github/flakeid/native/linux-aarch64/libflakeid.so"},
      {"Mac OS X", "x86_64", "/io/github/flakeid/native/macos-x86_64/libflakeid.dylib"},
      {"Mac OS X", "aarch64", "/io/github/flakeid/native/macos-aarch64/libflakeid.dylib"},
      {"Windows 11", "amd64", "/io/github/flakeid/native/windows-x86_64/flakeid.dll"},
      {"Windows Server 2022", "amd64", "/io/github/flakeid/native/windows-x86_64/flakeid.dll"},
    };
    for (String[] c : cases) {
      String platform = NativeLibrary.platform(c[0], c[1]);
      assertEquals(c[2], NativeLibrary.resource(platform), c[0] + " " + c[1]);
      assertTrue(Arrays.asList(NativeLibrary.CARRIED).contains(platform), platform + " is carried");
    }
  }

  @Test
  void otherPlatformsAreNamedNotCarried() {
    String platform = NativeLibrary.platform("FreeBSD", "amd64");
    assertEquals("freebsd-x86_64", platform);
    assertEquals("/io/github/flakeid/native/freebsd-x86_64/libflakeid.so", NativeLibrary.resource(platform));
    assertTrue(!Arrays.asList(NativeLibrary.CARRIED).contains(platform));
    assertEquals("windows-aarch64", NativeLibrary.platform("Windows 11", "aarch64"));
  }

  @Test
  void thisJvmsLibraryIsOnTheClassPath() {
    // make test-java puts the host's library where the jar carries it: the mapping
    // above is the one the loader uses here.
    String resource = NativeLibrary.resource(NativeLibrary.platform());
    assertNotNull(NativeLibrary.class.getResource(resource), resource);
  }
}
