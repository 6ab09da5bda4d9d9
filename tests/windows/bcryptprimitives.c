/* A stand-in for Windows' bcryptprimitives.dll, for tests under Wine only.
 *
 * Rust's standard library (1.78 and later) takes its random bytes (HashMap keys)
 * from ProcessPrng in bcryptprimitives.dll. Wine 8 has no such DLL, so every Rust
 * .exe exits with status 53 before main. This ProcessPrng is advapi32's
 * RtlGenRandom (exported as SystemFunction036), which Wine has. make test-windows
 * builds it with mingw-w64 into its own WINEPREFIX's system32; it never ships. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
    if (!SystemFunction036(data, n)) {
      return FALSE;
    }
    data += n;
    len -= n;
  }
  return TRUE;
}
