#!/usr/bin/env bash
# Starts the servers the tests use, on 127.0.0.1 only: PostgreSQL, a second
# PostgreSQL with the pgvector extension, and Redis. Installs PostgreSQL,
# Redis (and Node.js, which the n8n package tests run) from Debian's
# packages when they are missing. Prints the variables the tests read; use
# it as:   eval "$(scripts/services.sh)"
#
# A DATABASE_URL, PGVECTOR_DATABASE_URL or REDIS_URL already set is used as
# it is. Servers started
# here keep their data under $NODEKIT_SERVICES_DIR (default: a folder in
# /tmp) and are reused by later runs; `scripts/services.sh stop` stops them.
set -euo pipefail

state=${NODEKIT_SERVICES_DIR:-${TMPDIR:-/tmp}/nodekit-services}
pg_port=${NODEKIT_PG_PORT:-55432}
pgvector_port=${NODEKIT_PGVECTOR_PORT:-55433}
redis_port=${NODEKIT_REDIS_PORT:-56379}
log() { echo "services: $*" >&2; }

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# PostgreSQL refuses to run as root: run it as the `postgres` user then.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

if [ "${1:-}" = stop ]; then
  [ -d "$state/pg" ] && as_pg "$(pg_bin)/pg_ctl" -D "$state/pg" -m fast stop >/dev/null 2>&1 || true
  [ -d "$state/pgvector" ] && as_pg "$state/pgserver/pgserver/pginstall/bin/pg_ctl" -D "$state/pgvector" -m fast stop >/dev/null 2>&1 || true
  [ -f "$state/redis.pid" ] && kill "$(cat "$state/redis.pid")" 2>/dev/null || true
  exit 0
fi

missing=()
if [ -z "${DATABASE_URL:-}" ] && [ ! -x "$(pg_bin)/initdb" ]; then missing+=(postgresql); fi
if [ -z "${REDIS_URL:-}" ] && ! command -v redis-server >/dev/null; then missing+=(redis-server); fi
# Node.js runs the n8n package's shims in examples/n8n-package's tests.
if ! command -v node >/dev/null; then missing+=(nodejs); fi
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} from Debian's packages"
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  # The packages start system-wide servers; ours run on their own ports.
fi
mkdir -p "$state"
chmod 777 "$state"

if [ -z "${DATABASE_URL:-}" ]; then
  bin=$(pg_bin)
  if [ ! -f "$state/pg/PG_VERSION" ]; then
    log "creating a PostgreSQL cluster in $state/pg"
    as_pg "$bin/initdb" -D "$state/pg" -A trust -U postgres --no-instructions >/dev/null
  fi
  if ! as_pg "$bin/pg_ctl" -D "$state/pg" status >/dev/null 2>&1; then
    log "starting PostgreSQL on 127.0.0.1:$pg_port"
    as_pg "$bin/pg_ctl" -D "$state/pg" -l "$state/pg.log" -w -t 60 \
      -o "-p $pg_port -k $state -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
  fi
  echo "export DATABASE_URL=postgres://postgres@127.0.0.1:$pg_port/postgres"
else
  echo "export DATABASE_URL=$DATABASE_URL"
fi

# A second PostgreSQL with the pgvector extension, for semantic recall's
# pgvector index. Debian bookworm packages no pgvector, so the server comes
# from the PyPI wheel `pgserver` (PostgreSQL 16.2 with pgvector 0.6.2, plain
# binaries that need only glibc and zlib), fetched once into the cache.
pgserver=0.1.4
# Runs where `set -e` does not apply (its caller has `||`): every step
# returns on failure.
start_pgvector() {
  cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/nodekit-services
  # The whole wheel: its binaries find their libraries in pgserver.libs/.
  install="$state/pgserver/pgserver/pginstall"
  if [ ! -x "$install/bin/postgres" ]; then
    if ! ls "$cache"/pgserver-$pgserver-*.whl >/dev/null 2>&1; then
      log "downloading pgserver $pgserver (PostgreSQL with pgvector) from PyPI"
      mkdir -p "$cache"
      python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
        --platform manylinux2014_x86_64 -d "$cache" "pgserver==$pgserver" >&2 || return 1
    fi
    rm -rf "$state/pgserver"
    wheel=$(ls "$cache"/pgserver-$pgserver-*.whl | head -n 1)
    # A damaged download is fetched again on the next run.
    python3 -m zipfile -e "$wheel" "$state/pgserver" || { rm -f "$wheel"; return 1; }
    chmod -R a+rX "$state/pgserver" && chmod a+x "$install"/bin/* || return 1
  fi
  if [ ! -f "$state/pgvector/PG_VERSION" ]; then
    log "creating a PostgreSQL cluster with pgvector in $state/pgvector"
    mkdir -p "$state/pgvector" || return 1
    if [ "$(id -u)" = 0 ]; then chown postgres "$state/pgvector" || return 1; fi
    as_pg "$install/bin/initdb" -D "$state/pgvector" -A trust -U postgres --no-instructions >/dev/null || return 1
  fi
  if ! as_pg "$install/bin/pg_ctl" -D "$state/pgvector" status >/dev/null 2>&1; then
    log "starting PostgreSQL with pgvector on 127.0.0.1:$pgvector_port"
    as_pg "$install/bin/pg_ctl" -D "$state/pgvector" -l "$state/pgvector.log" -w -t 60 \
      -o "-p $pgvector_port -k $state -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100" start >/dev/null || return 1
  fi
  echo "export PGVECTOR_DATABASE_URL=postgres://postgres@127.0.0.1:$pgvector_port/postgres"
}
if [ -n "${PGVECTOR_DATABASE_URL:-}" ]; then
  echo "export PGVECTOR_DATABASE_URL=$PGVECTOR_DATABASE_URL"
else
  # Without it the pgvector tests skip (outside CI) or fail (under CI).
  start_pgvector || log "PostgreSQL with pgvector could not be started"
fi

if [ -z "${REDIS_URL:-}" ]; then
  if ! redis-cli -p "$redis_port" ping >/dev/null 2>&1; then
    log "starting Redis on 127.0.0.1:$redis_port"
    redis-server --port "$redis_port" --bind 127.0.0.1 --daemonize yes --save '' --appendonly no \
      --dir "$state" --pidfile "$state/redis.pid" --logfile "$state/redis.log" >&2
    for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
  echo "export REDIS_URL=redis://127.0.0.1:$redis_port"
else
  echo "export REDIS_URL=$REDIS_URL"
fi
