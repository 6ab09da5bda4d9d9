# Shared by tests/postgres/run.sh and bench.sh (sourced): running as the postgres
# user, and free ports for private clusters.
PGBIN=/usr/lib/postgresql/15/bin
ports=()
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# free_port VAR: a free port below the ephemeral range (so no client socket can take
# it meanwhile), checked by binding it, and not one this run already handed out.
free_port() {
  local p
  p=$(python3 - "${ports[@]}" <<'PY'
import random, socket, sys
taken = set(map(int, sys.argv[1:]))
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    p = random.randint(20000, min(32000, lo - 1))
    if p in taken:
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
else:
    sys.exit("no free port in 20000-32000")
PY
  )
  ports+=("$p")
  printf -v "$1" %s "$p"
}
