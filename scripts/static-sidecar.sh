#!/usr/bin/env bash
# The n8n package's program linked fully statically, proven to start with
# no C library at all (not part of the test command: it builds the example
# a second time, for an explicit target, which takes several minutes).
#
#   scripts/static-sidecar.sh [PROFILE]      PROFILE: release (default) or dev
#
# 1. Builds the `n8n-package` example with
#    RUSTFLAGS="-C target-feature=+crt-static" for the explicit target
#    x86_64-unknown-linux-gnu (glibc, libstdc++ and every C library linked
#    in), and checks that it has no program interpreter (PT_INTERP).
# 2. Writes its n8n package with `package`; the report must not warn of
#    dynamic linking.
# 3. Makes an empty chroot that holds only the package, a SQLite file and
#    an /etc/hosts, and inside it runs `catalog` and the bridge: a SQL
#    select tool call on the SQLite file and, when DATABASE_URL is set
#    (`eval "$(scripts/services.sh)"`), one on PostgreSQL reached as
#    `localhost`.
# Prints the path of the static program last. Needs root (chroot) or
# unprivileged user namespaces (unshare).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
profile=${1:-release}
target=x86_64-unknown-linux-gnu
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
say() { echo "== $*" >&2; }
[ "$(uname -m)" = x86_64 ] || { echo "this script builds for x86-64 Linux; this host is $(uname -m)" >&2; exit 1; }

say "building the n8n-package example statically ($profile, $target)"
# getrandom's default on Linux finds the C library's getrandom() with dlsym,
# which a static program cannot, and falls back to /dev/urandom; the cfg
# calls getrandom() directly, so the program needs no /dev either.
(cd "$root" && RUSTFLAGS='-C target-feature=+crt-static --cfg getrandom_backend="linux_getrandom"' \
  cargo build -p n8n-package --locked --profile "$profile" --target "$target")
program="$root/target/$target/$dir/n8n-package"
if readelf -lW "$program" | grep -q 'INTERP'; then
  echo "FAILED: $program names a program interpreter: it is linked dynamically" >&2
  exit 1
fi
echo "no program interpreter: $(file -b "$program" 2>/dev/null | cut -d, -f1-2 || echo static)" >&2

work=$(mktemp -d -t nodekit-static-XXXXXX)
trap 'rm -rf "$work"' EXIT
jail="$work/jail"
mkdir -p "$jail/etc" "$jail/data"
"$program" package --out "$jail/pkg" --name n8n-nodes-text --builtins > "$work/report.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(1 if r["warnings"] or any(p["dynamic"] for p in r["programs"]) else 0)' "$work/report.json" \
  || { echo "FAILED: the package report warns of dynamic linking" >&2; cat "$work/report.json" >&2; exit 1; }
bin=$(cd "$jail" && ls pkg/bin/linux-x64/*)
printf '127.0.0.1 localhost\n::1 localhost\n' > "$jail/etc/hosts"
python3 - "$jail/data/shop.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"
                 "INSERT INTO customers VALUES (1, 'Ada Lovelace'), (2, 'Grace Hopper');")
db.commit()
PY
echo "the chroot holds $(cd "$jail" && find . -type f | wc -l) files: the package, /data/shop.db and /etc/hosts" >&2

# Runs the packaged program inside the chroot, with an empty environment.
if [ "$(id -u)" = 0 ]; then
  enter=("$(command -v chroot)" "$jail")
else
  enter=("$(command -v unshare)" --map-root-user --root="$jail")
fi
jailed() { env -i "${enter[@]}" "/$bin" "$@"; }

say "catalog, inside the chroot"
count=$(jailed catalog | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$count" -gt 0 ] || { echo "FAILED: catalog listed no node" >&2; exit 1; }
echo "catalog: $count nodes" >&2

# One bridge request; prints the answer line.
bridge() { printf '%s\n' "$1" | jailed bridge; }
check() {
  local what=$1 answer=$2
  if ! printf '%s' "$answer" | python3 -c '
import json, sys
a = json.loads(sys.stdin.read())
names = [r["name"] for r in a["result"]["data"]] if "result" in a else []
sys.exit(0 if names == ["Ada Lovelace", "Grace Hopper"] else 1)'; then
    echo "FAILED: $what: $answer" >&2
    exit 1
  fi
  echo "$what: selected both customers" >&2
}
# A select tool call reading table $2 (default customers) with credentials $1.
select_request() {
  printf '{"id":1,"op":"toolCall","node":"selectQueryTool","nodeName":"Read customers","parameters":{"options":{}},"credentials":%s,"item":{},"input":{"tableName":"%s","orderBy":"id"}}' "$1" "${2:-customers}"
}

say "the bridge, inside the chroot: SQLite"
check "SQLite select" "$(bridge "$(select_request '{"sqlite":{"databasePath":"/data/shop.db"}}')")"

if [ -n "${DATABASE_URL:-}" ]; then
  say "the bridge, inside the chroot: PostgreSQL at localhost"
  # A table of its own, so nothing else using the database is touched.
  table="nodekit_static_$$"
  trap 'psql "$DATABASE_URL" -q -c "DROP TABLE IF EXISTS $table" 2>/dev/null; rm -rf "$work"' EXIT
  psql "$DATABASE_URL" -q -c "CREATE TABLE $table (id INTEGER PRIMARY KEY, name TEXT NOT NULL)" \
    -c "INSERT INTO $table VALUES (1, 'Ada Lovelace'), (2, 'Grace Hopper')"
  pg=$(python3 -c '
import json, sys, urllib.parse as u
url = u.urlparse(sys.argv[1])
print(json.dumps({"postgres": {"host": "localhost", "port": url.port or 5432, "database": url.path[1:],
  "user": u.unquote(url.username or ""), "password": u.unquote(url.password or ""), "ssl": "disable"}}))' "$DATABASE_URL")
  check "PostgreSQL select (localhost)" "$(bridge "$(select_request "$pg" "$table")")"
else
  echo "skipped: PostgreSQL (DATABASE_URL is not set; eval \"\$(scripts/services.sh)\")" >&2
fi
say "the static program starts and works with no C library"
echo "$program"
