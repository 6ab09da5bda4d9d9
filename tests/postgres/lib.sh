# Shared by tests/postgres/run.sh and bench.sh (sourced): running as the postgres
# user, and free ports for private clusters (the test environment's picker,
# tests/env/testenv.py port).
PGBIN=/usr/lib/postgresql/15/bin
ports=()
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# free_port VAR: a free port below the ephemeral range (so no client socket can take
# it meanwhile), checked by binding it, and not one this run already handed out.
free_port() {
  local p
  p=$(python3 tests/env/testenv.py port --not "${ports[@]}")
  ports+=("$p")
  printf -v "$1" %s "$p"
}
