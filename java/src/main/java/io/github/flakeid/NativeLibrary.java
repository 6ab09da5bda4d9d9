package io.github.flakeid;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Finds libflakeid.so and loads it, as sqlite-jdbc does: the jar carries one per
 * platform under {@code io/github/flakeid/native/<os>-<arch>/}; the right one is
 * copied to a temporary file, loaded, and the file removed at once (the loaded
 * mapping stays). {@code -Dflakeid.library.path=/path/libflakeid.so} (or
 * {@code FLAKEID_LIBRARY_PATH}) loads a library from disk instead, e.g. a platform the
 * jar does not carry; {@code -Dflakeid.tmpdir=DIR} moves the copy off a
 * {@code noexec} temporary directory.
 */
final class NativeLibrary {
  private NativeLibrary() {}

  static final String RESOURCE_ROOT = "/io/github/flakeid/native/";

  static SymbolLookup load() {
    String explicit = System.getProperty("flakeid.library.path", System.getenv("FLAKEID_LIBRARY_PATH"));
    if (explicit != null && !explicit.isEmpty()) {
      return SymbolLookup.libraryLookup(Path.of(explicit), Arena.global());
    }
    String platform = platform();
    String resource = RESOURCE_ROOT + platform + "/libflakeid.so";
    try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError(
            "flakeid: this jar has no native library for "
                + platform
                + " (it carries linux-x86_64 and linux-aarch64, glibc 2.17+); set -Dflakeid.library.path"
                + " to a libflakeid.so built for this platform");
      }
      String tmp = System.getProperty("flakeid.tmpdir", System.getProperty("java.io.tmpdir"));
      Path file = Files.createTempFile(Path.of(tmp), "libflakeid-", ".so");
      try {
        Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        return SymbolLookup.libraryLookup(file, Arena.global());
      } catch (IllegalArgumentException e) {
        throw new UnsatisfiedLinkError(
            "flakeid: cannot load " + file + " (" + e.getMessage() + "); if " + tmp
                + " is mounted noexec, set -Dflakeid.tmpdir to another directory");
      } finally {
        Files.deleteIfExists(file);
      }
    } catch (IOException e) {
      throw new UnsatisfiedLinkError("flakeid: cannot extract " + resource + ": " + e);
    }
  }

  /** {@code linux-x86_64}, {@code linux-aarch64}, ... */
  static String platform() {
    String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
    os = os.startsWith("linux") ? "linux" : os.startsWith("mac") ? "macos" : os.replace(' ', '_');
    arch =
        switch (arch) {
          case "amd64", "x86_64" -> "x86_64";
          case "aarch64", "arm64" -> "aarch64";
          default -> arch;
        };
    return os + "-" + arch;
  }
}
