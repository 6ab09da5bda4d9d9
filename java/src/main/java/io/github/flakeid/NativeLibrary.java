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
 * Finds the C library and loads it, as sqlite-jdbc and zstd-jni do: the jar carries one
 * per platform under {@code io/github/flakeid/native/<os>-<arch>/} ({@code
 * libflakeid.so} for linux-x86_64 and linux-aarch64, {@code libflakeid.dylib} for
 * macos-x86_64 and macos-aarch64, {@code flakeid.dll} for windows-x86_64); the right
 * one is copied to a temporary file, loaded, and the file removed at once (the loaded
 * mapping stays; Windows keeps a loaded DLL's file, so there it is removed at exit
 * when it can be). {@code -Dflakeid.library.path=/path/libflakeid.so} (or {@code
 * FLAKEID_LIBRARY_PATH}) loads a library from disk instead, e.g. a platform the jar
 * does not carry; {@code -Dflakeid.tmpdir=DIR} moves the copy off a {@code noexec}
 * temporary directory.
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
    String name = libraryName(platform);
    String resource = resource(platform);
    try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError(
            "flakeid: this jar has no native library for "
                + platform
                + " (it carries "
                + String.join(", ", CARRIED)
                + "); set -Dflakeid.library.path to a "
                + name
                + " built for this platform");
      }
      String tmp = System.getProperty("flakeid.tmpdir", System.getProperty("java.io.tmpdir"));
      int dot = name.lastIndexOf('.');
      Path file = Files.createTempFile(Path.of(tmp), name.substring(0, dot) + "-", name.substring(dot));
      try {
        Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        return SymbolLookup.libraryLookup(file, Arena.global());
      } catch (IllegalArgumentException e) {
        throw new UnsatisfiedLinkError(
            "flakeid: cannot load " + file + " (" + e.getMessage() + "); if " + tmp
                + " is mounted noexec, set -Dflakeid.tmpdir to another directory");
      } finally {
        remove(file);
      }
    } catch (IOException e) {
      throw new UnsatisfiedLinkError("flakeid: cannot extract " + resource + ": " + e);
    }
  }

  /** The platforms whose library the released jar carries (java/release/pack.sh). */
  static final String[] CARRIED = {
    "linux-x86_64", "linux-aarch64", "macos-x86_64", "macos-aarch64", "windows-x86_64"
  };

  /** The library's file name on {@code platform} (an {@link #platform()} value). */
  static String libraryName(String platform) {
    if (platform.startsWith("macos-")) {
      return "libflakeid.dylib";
    }
    if (platform.startsWith("windows-")) {
      return "flakeid.dll";
    }
    return "libflakeid.so";
  }

  /** The jar's resource holding the library for {@code platform}. */
  static String resource(String platform) {
    return RESOURCE_ROOT + platform + "/" + libraryName(platform);
  }

  /**
   * Removes the extracted copy. Windows refuses to delete a loaded DLL's file: there it
   * is left for the JVM's exit (which may still fail while mapped; the file then stays
   * in the temporary directory, as zstd-jni's and sqlite-jdbc's copies do).
   */
  private static void remove(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      file.toFile().deleteOnExit();
    }
  }

  /** {@code linux-x86_64}, {@code linux-aarch64}, ... */
  static String platform() {
    return platform(System.getProperty("os.name"), System.getProperty("os.arch"));
  }

  /** The platform for the JVM's {@code os.name} and {@code os.arch}. */
  static String platform(String osName, String osArch) {
    String os = osName.toLowerCase(Locale.ROOT);
    String arch = osArch.toLowerCase(Locale.ROOT);
    os =
        os.startsWith("linux")
            ? "linux"
            : os.startsWith("mac")
                ? "macos"
                : os.startsWith("windows") ? "windows" : os.replace(' ', '_');
    arch =
        switch (arch) {
          case "amd64", "x86_64" -> "x86_64";
          case "aarch64", "arm64" -> "aarch64";
          default -> arch;
        };
    return os + "-" + arch;
  }
}
