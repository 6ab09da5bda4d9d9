// Code generated from rustc's `--print native-static-libs` by scripts/native-libs.sh; DO NOT EDIT.

package flakeid

// What the static library libflakeid.a needs beside it, per OS: the system
// libraries that `cargo rustc -p flakeid-c --crate-type staticlib -- --print
// native-static-libs` names for that target, less the C runtime that every C
// compiler's driver and cgo's linker bring themselves. On macOS the network lease
// stores need Apple's frameworks: Security and CoreFoundation (rustls-native-certs),
// SystemConfiguration (whoami). Every static link of the library reads this file:
// cgo directly, the rest through scripts/native-libs.sh; the builds of the static
// library check their line against rustc's (make test-c for linux,
// scripts/test-windows.sh for windows, the macOS CI jobs for darwin).

/*
#cgo linux LDFLAGS: -lgcc_s -lutil -lrt -lpthread -lm -ldl
#cgo darwin LDFLAGS: -framework CoreFoundation -framework Security -framework SystemConfiguration -liconv -lm
#cgo windows LDFLAGS: -lbcrypt -ladvapi32 -lsecur32 -lkernel32 -lntdll -luserenv -lws2_32 -ldbghelp
*/
import "C"
