#!/usr/bin/env bash
# Starts the PostgreSQL and Redis servers the tests use, on 127.0.0.1 only,
# installing them (and Node.js, which the n8n package tests run) from
# Debian's packages when they are missing. Prints the
# variables the tests read; use it as:   eval "$(scripts/services.sh)"
#
# A DATABASE_URL or REDIS_URL already set is used as it is. Servers started
# here keep their data under $NODEKIT_SERVICES_DIR (default: a folder in
# /tmp) and are reused by later runs; `scripts/services.sh stop` stops them.
set -euo pipefail

state=${NODEKIT_SERVICES_DIR:-${TMPDIR:-/tmp}/nodekit-services}
pg_port=${NODEKIT_PG_PORT:-55432}
redis_port=${NODEKIT_REDIS_PORT:-56379}
log() { echo "services: $*" >&2; }

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# PostgreSQL refuses to run as root: run it as the `postgres` user then.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

if [ "${1:-}" = stop ]; then
  [ -d "$state/pg" ] && as_pg "$(pg_bin)/pg_ctl" -D "$state/pg" -m fast stop >/dev/null 2>&1 || true
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
# pgvector, for semantic recall's HNSW index, where Debian packages it for
# this PostgreSQL (trixie does; bookworm does not, and recall then uses its
# exact fallback, see runtime/src/agent_memory/recall.rs).
if [ -z "${DATABASE_URL:-}" ] && [ -n "$(pg_bin)" ]; then
  pgv="postgresql-$(basename "$(dirname "$(pg_bin)")")-pgvector"
  if ! dpkg -s "$pgv" >/dev/null 2>&1 && apt-cache policy "$pgv" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    log "installing $pgv from Debian's packages"
    sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$pgv" >&2 || true
  fi
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
