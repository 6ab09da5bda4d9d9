#!/usr/bin/env bash
# protoc and the protobuf well-known types (Debian's protobuf-compiler and
# libprotobuf-dev). Every build with the lease stores needs them: etcd-client (the
# etcd store, in the core's `leases` feature, hence in every binding, the CLI and the
# server) compiles etcd's protos in its build script, and flakeid-server compiles
# proto/flakeid.proto. So each setup script that builds those calls this one first
# (bootstrap.sh needs no order of its own). Idempotent, non-interactive.
set -euo pipefail
need=()
command -v protoc >/dev/null 2>&1 || need+=(protobuf-compiler)
[ -f /usr/include/google/protobuf/descriptor.proto ] || need+=(libprotobuf-dev)
bash "$(dirname "$0")/apt-install.sh" setup-protoc "${need[@]}"
