#!/usr/bin/env bash
# nodekit's n8n package in n8n's queue mode, for real (not part of the test
# command: it needs the n8n download of scripts/n8n-e2e.sh, about 1.6 GB).
#
#   eval "$(scripts/services.sh)"     PostgreSQL and Redis (DATABASE_URL, REDIS_URL)
#   scripts/n8n-queue.sh              the checks
#   LOAD=500 scripts/n8n-queue.sh     the checks, then 500 requests on each workflow
#
# 1. Installs n8n 2.8.4 as scripts/n8n-e2e.sh does (kept between runs),
#    builds the `n8n-package` example (release) and packs its n8n package.
# 2. Creates two fresh PostgreSQL databases on DATABASE_URL's server, one
#    for n8n and one for the shop (a `customers` table and a view of it,
#    `slow_customers`, that takes 3 s to read); both are dropped at the end.
#    Redis keys get a prefix of their own, deleted at the end.
# 3. Starts, on 127.0.0.1, one n8n main (`n8n start`) and two workers
#    (`n8n worker`) with EXECUTIONS_MODE=queue, each with its own user folder
#    (the package installed there as n8n's community package service does),
#    task runner broker port and health server port. A scripted
#    OpenAI-compatible server (scripts/n8n-e2e/scripted-openai.js) is the
#    model.
# 4. Sets up the owner and credentials through the REST API, creates and
#    activates the workflow (scripts/n8n-e2e/queue-workflow.js): a Webhook
#    (POST /webhook/nodekit-queue) into n8n's AI Agent with n8n's OpenAI chat
#    model, nodekit's SQL select tool and nodekit's PostgreSQL chat memory
#    keyed by the body's `session`, then a Respond to Webhook node answering
#    with the agent's output. Production webhooks of an active workflow are
#    queued for the workers.
# 5. Checks:
#    a. 20 requests at once, each its own session: all answer 200 quoting
#       the database; the workers' logs show executions on both workers, and
#       n8n stored every one of them as a success.
#    b. A second request in each session: the model's request holds the
#       session's first exchange, and the chat history table holds exactly
#       each session's questions and answers, in order.
#    c. A request whose tool call reads the slow view: its worker's bridge
#       process is killed (SIGKILL) while the query runs. The execution fails
#       with the bridge's error, stored by n8n; that worker's next execution
#       succeeds on a new bridge process.
#    d. SIGTERM to the worker running a request that reads the slow view:
#       n8n lets the execution finish (answered, stored as a success, its
#       exchange in the chat history), the worker exits, and no bridge
#       process of it is left.
#    With LOAD=N (before d): N requests, 20 at a time, on this workflow and
#    on the same workflow made of n8n's own Postgres tool and Postgres chat
#    memory (after LOAD_WARMUP unmeasured requests each, default 100, sent
#    in batches of 20 taking turns: the first requests of a workflow are
#    slower); every request must succeed. The requests go in LOAD_ROUNDS
#    rounds (default 5): each round runs every workflow in turn, the order
#    rotating by one each round, so that none gains from going first (a
#    warmer or a fresher n8n). With LOAD_RATE=R the measured requests
#    go at R a second instead (an open load: each leaves on time, however
#    many are waiting), so that every workflow gets the same work per
#    second whatever its speed. With LOAD_MIX=1 each round sends one
#    stream in which the workflows' requests take turns, 20 in flight in
#    all (or LOAD_RATE a second in all): whatever slows the machine at a
#    moment slows every workflow alike, where separate batches leave a
#    second-long stall to whichever workflow's batch it falls in.
#    One JSON line each: {"variant","requests","concurrency","failed",
#    "p50_ms","p99_ms","throughput_rps"} (with LOAD_MIX, a workflow's
#    throughput is its requests over the mixed stream's time), and how
#    many connections the shop database got meanwhile
#    (pg_stat_database.sessions), the CPU time n8n's three processes (and
#    main alone), the bridges and the PostgreSQL server (n8n's database and the shop's) used per request
#    (with LOAD_MIX, of the mixed stream), and the size of the execution
#    data n8n stored per execution, and where the requests spent their
#    time (queue-phases.js: main's webhook handling, the queue, the run on
#    a worker, the answer's way back).
# Ports: QUEUE_PORT (default 5720) to QUEUE_PORT+22; MOCK_PORT (default 18441).
# LOAD_VARIANTS: which workflows the load runs on, in order (default
# "nodekit n8n"); with one, profiles (below) show that one alone. "floor"
# adds the same workflow with n8n's Think tool and Simple Memory (no
# database, no bridge): about the time n8n itself takes, a floor for any
# tool and memory that reach a database.
# N8N_NODE_FLAGS: flags for the Node.js of n8n's processes, e.g.
# "--cpu-prof --cpu-prof-dir=DIR" for CPU profiles (written when they stop).
# MAIN_CPUS, WORKER_CPUS: CPU lists (taskset -c) that n8n's main and the
# workers (with their bridges and task runners) are kept on, e.g. MAIN_CPUS=0
# WORKER_CPUS=1; unset, the system places them.
# KEEP=1 keeps the scratch folder (logs, results) and both databases.
# Exit status 0 only if every check passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/scripts/n8n-e2e"
. "$here/lib.sh"
if [ -z "${DATABASE_URL:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  echo "needs DATABASE_URL and REDIS_URL: eval \"\$(scripts/services.sh)\"" >&2
  exit 2
fi
work=$(mktemp -d -t nodekit-n8n-queue-XXXXXX)
base=${QUEUE_PORT:-5720}
mock_port=${MOCK_PORT:-18441}
concurrency=20
run=$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')
n8n_db=n8n_queue_$run
shop_db=n8n_queue_${run}_shop
redis_prefix=nkq-$run
pids=()
cleanup() {
  # Each server runs in its own process group (setsid): n8n with its task
  # runner and its bridge process.
  for p in "${pids[@]}"; do kill -- -"$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${KEEP:-}" ]; then
    echo "kept the databases $n8n_db and $shop_db" >&2
  else
    psql "$DATABASE_URL" -q -c "DROP DATABASE IF EXISTS $n8n_db WITH (FORCE)" \
      -c "DROP DATABASE IF EXISTS $shop_db WITH (FORCE)" >/dev/null 2>&1 || true
  fi
  redis-cli -u "$REDIS_URL" --scan --pattern "$redis_prefix*" 2>/dev/null |
    xargs -r redis-cli -u "$REDIS_URL" del >/dev/null 2>&1 || true
  [ -n "${KEEP:-}" ] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
ok() { echo "ok: $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

# ---- 1. n8n and the package
install_n8n
write_package release "$work"

# ---- 2. the databases, Redis
# DATABASE_URL's server, user and password, with another database.
db_url() { node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(u.href)' "$DATABASE_URL" "$1"; }
shop_url=$(db_url "$shop_db") n8n_url=$(db_url "$n8n_db")
psql "$DATABASE_URL" -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE $n8n_db" -c "CREATE DATABASE $shop_db"
psql "$shop_url" -q -v ON_ERROR_STOP=1 \
  -c "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT)" \
  -c "INSERT INTO customers VALUES (1, 'Ada Lovelace', 'London'), (2, 'Grace Hopper', 'New York')" \
  -c "CREATE VIEW slow_customers AS SELECT c.* FROM customers c, pg_sleep(3)"
# Host, port, user, password (URL-decoded), one a line; the Redis database index.
mapfile -t pg < <(node -e 'const u = new URL(process.argv[1]);
  console.log([u.hostname, u.port || 5432, decodeURIComponent(u.username), decodeURIComponent(u.password)].join("\n"))' "$DATABASE_URL")
mapfile -t redis < <(node -e 'const u = new URL(process.argv[1]);
  console.log([u.hostname, u.port || 6379, u.pathname.slice(1) || 0, decodeURIComponent(u.password)].join("\n"))' "$REDIS_URL")
export EXECUTIONS_MODE=queue OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS=true
export DB_TYPE=postgresdb DB_POSTGRESDB_DATABASE=$n8n_db
export DB_POSTGRESDB_HOST=${pg[0]} DB_POSTGRESDB_PORT=${pg[1]} DB_POSTGRESDB_USER=${pg[2]} DB_POSTGRESDB_PASSWORD=${pg[3]}
export QUEUE_BULL_REDIS_HOST=${redis[0]} QUEUE_BULL_REDIS_PORT=${redis[1]} QUEUE_BULL_REDIS_DB=${redis[2]}
export QUEUE_BULL_REDIS_PASSWORD=${redis[3]} QUEUE_BULL_PREFIX=$redis_prefix-bull N8N_REDIS_KEY_PREFIX=$redis_prefix
# The workers log "Worker started execution N" at level info.
export N8N_LOG_LEVEL=${N8N_LOG_LEVEL:-info}

# ---- 3. the processes
PORT=$mock_port REQUEST_LOG="$work/requests.jsonl" setsid node "$here/scripted-openai.js" &
pids+=($!)
# start_n8n NAME PORT ARGS...: n8n with its user folder in $work/NAME, in
# its own process group, logging to $work/NAME.log; its pid is ${pid[NAME]}.
declare -A pid home health
start_n8n() {
  local name=$1 port=$2; shift 2
  home[$name]="$work/$name"
  community_install "$tarball" "${home[$name]}"
  (
    n8n_env "${home[$name]}" "$port"
    if [ "$1" = worker ]; then
      export QUEUE_HEALTH_CHECK_ACTIVE=true QUEUE_HEALTH_CHECK_PORT=$((port + 2)) N8N_WORKER_SERVER_ADDRESS=127.0.0.1
    fi
    local cpus=${WORKER_CPUS:-}
    [ "$1" = worker ] || cpus=${MAIN_CPUS:-}
    local pin=()
    [ -z "$cpus" ] || pin=(taskset -c "$cpus")
    # shellcheck disable=SC2086 # N8N_NODE_FLAGS is a list of flags
    exec setsid "${pin[@]}" node ${N8N_NODE_FLAGS:-} "$n8n_dir/node_modules/n8n/bin/n8n" "$@" > "$work/$name.log" 2>&1
  ) &
  pid[$name]=$!
  pids+=($!)
  health[$name]="http://127.0.0.1:$((port + 2))/healthz/readiness"
}
say "starting n8n in queue mode: main on 127.0.0.1:$base, two workers"
start_n8n main "$base" start
url="http://127.0.0.1:$base"
# The workers start once main has migrated the fresh database.
wait_started "$url" "$work/main.log"
start_n8n w1 $((base + 10)) worker --concurrency=10
start_n8n w2 $((base + 20)) worker --concurrency=10
for w in w1 w2; do
  for _ in $(seq 300); do curl -sf "${health[$w]}" >/dev/null 2>&1 && break; sleep 0.2; done
  curl -sf "${health[$w]}" >/dev/null || { tail -30 "$work/$w.log" >&2; fail "worker $w is not ready"; }
done
ok "main and workers w1, w2 up (EXECUTIONS_MODE=queue, PostgreSQL database $n8n_db, Redis prefix $redis_prefix)"

# ---- 4. owner, credentials, workflows
jar="$work/cookies"
owner='{"email":"owner@example.com","firstName":"Node","lastName":"Kit","password":"Passw0rd!Passw0rd"}'
curl -sf -c "$jar" -H 'Content-Type: application/json' -X POST "$url/rest/owner/setup" -d "$owner" >/dev/null
curl -sf -c "$jar" -H 'Content-Type: application/json' -X POST "$url/rest/login" \
  -d '{"emailOrLdapLoginId":"owner@example.com","password":"Passw0rd!Passw0rd"}' >/dev/null
field() { node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{const j=JSON.parse(s);console.log((j.data||j)[process.argv[1]])})' "$1"; }
rest() { curl -sS -f -b "$jar" -H 'Content-Type: application/json' -X POST "$url/rest/$1" -d "$2"; }
pg_cred=$(node -e 'const u = new URL(process.argv[1]); console.log(JSON.stringify({host: u.hostname, port: Number(u.port || 5432),
  database: process.argv[2], user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), ssl: "disable"}))' "$DATABASE_URL" "$shop_db")
creds="{\"openAiApi\":\"$(rest credentials "{\"name\":\"Scripted OpenAI\",\"type\":\"openAiApi\",\"data\":{\"apiKey\":\"sk-local\",\"url\":\"http://127.0.0.1:$mock_port/v1\"}}" | field id)\""
creds="$creds,\"postgres\":\"$(rest credentials "{\"name\":\"Shop PostgreSQL\",\"type\":\"postgres\",\"data\":$pg_cred}" | field id)\"}"
# activate VARIANT PATH: creates the workflow and activates it (n8n 2.x: publishes its version);
# its id is ${workflow[VARIANT]}.
declare -A workflow
activate() {
  local created id
  node "$here/queue-workflow.js" "$1" "$2" "$creds" > "$work/workflow-$1.json"
  created=$(rest workflows @"$work/workflow-$1.json") || fail "n8n refused workflow $1"
  id=$(field id <<< "$created")
  workflow[$1]=$id
  rest "workflows/$id/activate" "{\"versionId\":\"$(field versionId <<< "$created")\"}" > "$work/activate-$1.json" ||
    fail "n8n did not activate workflow $1"
  [ "$(field active < "$work/activate-$1.json")" = true ] || fail "workflow $1 is not active: $(head -c 400 "$work/activate-$1.json")"
}
activate nodekit nodekit-queue
# hook_of VARIANT: the production webhook of that workflow.
hook_of() { echo "$url/webhook/$1-queue"; }
# expect_of VARIANT: what its answers must quote (queue-send.js's EXPECT; empty: both customers).
expect_of() { [ "$1" != floor ] || echo '["when to bleed the radiators"]'; }
hook=$(hook_of nodekit)
ok "workflow active: Webhook → AI Agent (OpenAI chat model, nodekit selectQueryTool, nodekit memoryPostgresChat) → Respond to Webhook"

# ---- helpers
results="$work/results-nodekit.jsonl"
: > "$results"
# send SESSION MESSAGE COUNT [RESULTS [VARIANT]]: COUNT requests at once (queue-send.js).
send() {
  node "$here/queue-send.js" "$hook" "$3" "$concurrency" "$1" "$2" "${4:-$results}" "${5:-$1}"
}
# The executions a worker has started, one id a line.
started() { grep -o 'Worker started execution [0-9]*' "$work/$1.log" | awk '{print $4}' || true; }
# Ids of the executions worker $1 started after the first $2.
started_since() { started "$1" | tail -n +$(($2 + 1)); }
count() { started "$1" | wc -l; }
sql() { psql "$1" -At -v ON_ERROR_STOP=1 -c "$2"; }
# within TENTHS CMD...: runs CMD every 0.1 s until it succeeds, at most
# TENTHS times.
within() {
  local tries=$1
  shift
  for _ in $(seq "$tries"); do "$@" && return 0; sleep 0.1; done
  return 1
}
# Whether n8n stored every execution (ids, one a line) with status $2.
stored_all() {
  [ "$(sql "$n8n_url" "SELECT count(*) FROM execution_entity WHERE id IN ($(paste -sd, <<< "$1")) AND status = '$2'")" -eq "$(grep -c . <<< "$1")" ]
}
# The same, waiting up to 10 s: Respond to Webhook answers before the
# execution ends.
stored_as() { within 100 stored_all "$@"; }
status_of() { sql "$n8n_url" "SELECT status FROM execution_entity WHERE id = $1"; }
# The bridge processes of worker $1: their program is in its user folder.
sidecars() {
  local p exe
  for p in $(pgrep -f 'n8n-nodes-text/bin/' || true); do
    exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
    case "$exe" in "${home[$1]}"/*) echo "$p" ;; esac
  done
}
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $s != Z* ]]; }
# check_memory RESULTS TABLE [--tool-steps]: queue-check.js.
check_memory() {
  N8N_DIR="$n8n_dir" node "$here/queue-check.js" "$1" "$work/requests.jsonl" "$shop_url" "$2" ${3:-} ||
    fail "the chat history in $2 is not what the requests left"
}

# Whether the select on the slow view is running.
slow_active() {
  [ "$(sql "$shop_url" "SELECT count(*) FROM pg_stat_activity WHERE datname = '$shop_db' AND state = 'active'
    AND query LIKE '%slow_customers%' AND pid <> pg_backend_pid()")" -gt 0 ]
}
# slow_request SESSION OUT: sends one request whose tool call reads the slow
# view (in the background, its summary in OUT; $sender is its pid), waits
# until the query runs, and sets $victim and $slow_id to the worker and
# execution running it.
slow_request() {
  local before1 before2 new1="" new2=""
  before1=$(count w1) before2=$(count w2)
  send "$1" "Who are our customers? [table:slow_customers]" 1 > "$2" 2>/dev/null &
  sender=$!
  within 300 slow_active || fail "the select on slow_customers never ran"
  # The worker's log line may come a moment after the query started.
  for _ in $(seq 100); do
    new1=$(started_since w1 "$before1") new2=$(started_since w2 "$before2")
    [ -n "$new1$new2" ] && break
    sleep 0.1
  done
  if [ -n "$new1" ] && [ -z "$new2" ]; then victim=w1 slow_id=$new1
  elif [ -z "$new1" ] && [ -n "$new2" ]; then victim=w2 slow_id=$new2
  else fail "the slow request did not start on exactly one worker (w1: $new1, w2: $new2)"; fi
}

# ---- a. 20 requests at once, on both workers
say "a. $concurrency requests at once, each its own session"
a1=$(count w1) a2=$(count w2)
send q "Who are our customers? (session {session}, first question)" "$concurrency" > "$work/a.json" ||
  fail "not every request was answered: $(cat "$work/a.json")"
ok "$concurrency webhook requests answered 200 quoting the database rows: $(cat "$work/a.json")"
ids1=$(started_since w1 "$a1") ids2=$(started_since w2 "$a2")
n1=$(grep -c . <<< "$ids1" || true) n2=$(grep -c . <<< "$ids2" || true)
[ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] || fail "executions ran on w1: $n1, w2: $n2; not on both workers"
[ $((n1 + n2)) -eq "$concurrency" ] || fail "the workers started $((n1 + n2)) executions for $concurrency requests"
stored_as "$ids1"$'\n'"$ids2" success || fail "not every execution is stored as a success"
ok "executions ran on both workers (w1 started $n1, w2 started $n2, per their logs); n8n stored all $concurrency as success"
[ -n "$(sidecars w1)" ] && [ -n "$(sidecars w2)" ] || fail "each worker should have a bridge process of its own"
ok "each worker runs its own bridge process (w1: pid $(sidecars w1 | paste -sd,), w2: pid $(sidecars w2 | paste -sd,))"

# ---- b. memory
say "b. a second request in each session: the memory"
send q "And who are they again? (session {session}, second question)" "$concurrency" > "$work/b.json" ||
  fail "not every second request was answered: $(cat "$work/b.json")"
ok "$concurrency second requests answered: $(cat "$work/b.json")"
check_memory "$results" n8n_chat_histories
ok "memory: each second request showed the model the session's first exchange; n8n_chat_histories holds 4 messages per session"

# ---- c. SIGKILL of a bridge process mid-call
say "c. the bridge process killed (SIGKILL) while the tool's query runs"
slow_request slow "$work/c.json"
killed=$(sidecars "$victim")
[ "$(wc -w <<< "$killed")" -eq 1 ] || fail "worker $victim should have one bridge process, has: $killed"
[ "$(ps -o ppid= -p "$killed" | tr -d ' ')" = "${pid[$victim]}" ] || fail "bridge $killed is not a child of worker $victim"
kill -9 "$killed"
ok "execution $slow_id on $victim: killed its bridge process $killed (SIGKILL) while the select on slow_customers ran"
wait "$sender" || true
answer=$(node -e 'const r = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").pop(); const j = JSON.parse(r);
  console.log(`HTTP ${j.status}: ${j.body.slice(0, 300)}`)' "$results")
grep -q '"failed":1' "$work/c.json" || fail "the request whose bridge was killed was answered as a success: $answer"
stored_as "$slow_id" error || fail "execution $slow_id has status $(status_of "$slow_id"), not error"
# The run data is JSON text (flatted): the node's name is in escaped quotes.
message=$(sql "$n8n_url" "SELECT data FROM execution_data WHERE \"executionId\" = $slow_id" |
  grep -oE 'the nodekit bridge process was killed by SIGKILL while [^()]*\([^()]*\) was running' | head -1 | sed 's/\\"/"/g' || true)
[ -n "$message" ] || fail "execution $slow_id's stored data lacks the bridge's error"
ok "the webhook answered $answer"
ok "n8n stored execution $slow_id with status error: $message"
# The worker's next execution runs on a new bridge process.
next_id=""
for round in 1 2 3 4 5; do
  before=$(count "$victim")
  send "after-$round" "Who are our customers? (session {session}, after the kill)" 4 > "$work/c-after.json" ||
    fail "requests after the kill failed: $(cat "$work/c-after.json")"
  next_id=$(started_since "$victim" "$before" | head -1)
  [ -n "$next_id" ] && break
done
[ -n "$next_id" ] || fail "worker $victim ran none of 20 requests after the kill"
stored_as "$next_id" success || fail "execution $next_id on $victim after the kill did not succeed"
restarted=$(sidecars "$victim")
[ -n "$restarted" ] && [ "$restarted" != "$killed" ] || fail "worker $victim has no new bridge process ($restarted)"
ok "$victim's next execution $next_id succeeded on a new bridge process $restarted"
check_memory "$results" n8n_chat_histories
ok "memory: the killed request stored nothing, every answered one its exchange"

# ---- load
# sessions: how many connections the shop database has ever had.
sessions() { sql "$shop_url" "SELECT sessions FROM pg_stat_database WHERE datname = '$shop_db'"; }
# cpu_ms PID...: the CPU time (user and system) the processes have used, in
# ms (one that ends before it is read counts nothing).
cpu_ms() {
  local p
  for p in "$@"; do cat "/proc/$p/stat" 2>/dev/null; done |
    awk -v hz="$(getconf CLK_TCK)" '{ t += $14 + $15 } END { print int(t * 1000 / hz) }'
}
n8n_pids() { echo "${pid[main]} ${pid[w1]} ${pid[w2]}"; }
bridge_pids() { sidecars w1; sidecars w2; }
# pg_cpu_ms: the CPU time the PostgreSQL server (n8n's database and the
# shop's) has used, in ms: the postmaster and its live backends, and the
# backends that have ended (the postmaster's children's totals).
pg_cpu_ms() {
  echo $(($(awk -v hz="$(getconf CLK_TCK)" '{ print int(($16 + $17) * 1000 / hz) }' "/proc/$postmaster/stat") +
    $(cpu_ms "$postmaster" $(pgrep -P "$postmaster"))))
}
if [ -n "${LOAD:-}" ]; then
  read -r -a variants <<< "${LOAD_VARIANTS:-nodekit n8n}"
  for variant in "${variants[@]}"; do
    [ "$variant" = nodekit ] || activate "$variant" "$variant-queue"
  done
  rounds=${LOAD_ROUNDS:-5}
  declare -A n8n_busy main_busy bridge_busy pg_busy connections
  postmaster=$(awk '/^PPid:/ { print $2 }' "/proc/$(sql "$shop_url" "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'")/status")
  # The warm-up takes turns too, a batch of $concurrency each, so that no
  # workflow starts the measured rounds warmer than another, and it pauses
  # after each batch as the rounds do, so that the first measured batch
  # starts as every other one does.
  warmup=${LOAD_WARMUP:-100}
  # ask VARIANT SESSION COUNT [LABEL]: COUNT requests at once to VARIANT's
  # workflow, each with a session of its own, into its results.
  ask() {
    local hook
    hook=$(hook_of "$1")
    EXPECT=$(expect_of "$1") send "$2" "Who are our customers? (session {session})" "$3" "$work/results-$1.jsonl" "${4:-$2}"
  }
  # n8n's own Postgres chat memory creates its table with no lock, so its
  # first executions at once can fail ("relation ... already exists";
  # nodekit's takes a lock): each workflow's first request goes alone.
  for variant in "${variants[@]}"; do
    ask "$variant" "first-$variant" 1 > /dev/null || fail "$variant: the first request failed"
  done
  for ((sent = 0; sent < warmup; sent += concurrency)); do
    for variant in "${variants[@]}"; do
      ask "$variant" "warm-$variant-$sent" $((warmup - sent < concurrency ? warmup - sent : concurrency)) > /dev/null ||
        fail "$variant: the warm-up requests failed"
      sleep 2
    done
  done
  # measure KEY VARIANT...: one batch of each VARIANT's requests for this
  # round; with several (LOAD_MIX), one stream mixing them. The CPU the
  # processes used meanwhile and the shop database's new connections are
  # added up under KEY.
  measure() {
    local key=$1 variant mix='[]'; shift
    before=$(sessions) n8n_cpu=$(cpu_ms $(n8n_pids)) main_cpu=$(cpu_ms "${pid[main]}") bridges=$(bridge_pids) bridge_cpu=$(cpu_ms $(bridge_pids)) pg_cpu=$(pg_cpu_ms)
    for variant in "${@:2}"; do
      mix=$(node -e 'const [mix, variant, url, session, results, expect] = process.argv.slice(1);
        console.log(JSON.stringify([...JSON.parse(mix), { variant, url, session, results, ...(expect ? { expect: JSON.parse(expect) } : {}) }]))' \
        "$mix" "$variant" "$(hook_of "$variant")" "load-$variant-r$round" "$work/results-$variant.jsonl" "$(expect_of "$variant")")
    done
    MIX=$mix RATE=${LOAD_RATE:-} ask "$1" "load-$1-r$round" "$count" "$1" > "$work/batch.jsonl" ||
      fail "$key: not every request was answered: $(cat "$work/batch.jsonl")"
    for variant in "$@"; do grep "\"variant\":\"$variant\"" "$work/batch.jsonl" >> "$work/batches-$variant.jsonl"; done
    n8n_busy[$key]=$((${n8n_busy[$key]:-0} + $(cpu_ms $(n8n_pids)) - n8n_cpu))
    main_busy[$key]=$((${main_busy[$key]:-0} + $(cpu_ms "${pid[main]}") - main_cpu))
    bridge_busy[$key]=$((${bridge_busy[$key]:-0} + $(cpu_ms $(bridge_pids)) - bridge_cpu))
    pg_busy[$key]=$((${pg_busy[$key]:-0} + $(pg_cpu_ms) - pg_cpu))
    [ "$(bridge_pids)" = "$bridges" ] || fail "a bridge process started or ended during the load"
    sleep 2  # PostgreSQL publishes a backend's statistics within a second
    connections[$key]=$((${connections[$key]:-0} + $(sessions) - before))
  }
  keys=("${variants[@]}") each="every workflow in turn"
  [ -z "${LOAD_MIX:-}" ] || keys=(mixed) each="one stream in which the workflows take turns"
  say "load: $LOAD requests per workflow, ${LOAD_RATE:+$LOAD_RATE a second instead of }$concurrency at a time, in $rounds rounds; each round runs $each, the order rotating by one each round"
  for round in $(seq "$rounds"); do
    order=()
    for i in "${!variants[@]}"; do order+=("${variants[(i + round - 1) % ${#variants[@]}]}"); done
    count=$((LOAD / rounds + (round <= LOAD % rounds ? 1 : 0)))
    if [ -n "${LOAD_MIX:-}" ]; then
      measure mixed "${order[@]}"
    else
      for variant in "${order[@]}"; do measure "$variant" "$variant"; done
    fi
  done
  for variant in "${variants[@]}"; do
    EXPECT=$(expect_of "$variant") node "$here/queue-send.js" --summary "$variant" "$work/results-$variant.jsonl" "load-$variant-" "$work/batches-$variant.jsonl" "$concurrency" |
      tee "$work/load-$variant.json"
    grep -q "\"requests\":$LOAD,\"concurrency\":$concurrency,\"failed\":0," "$work/load-$variant.json" || fail "$variant: failed requests"
    say "load: $variant: $(sql "$n8n_url" "SELECT round(avg(length(d.data))) FROM execution_data d
      JOIN execution_entity e ON e.id = d.\"executionId\" WHERE e.\"workflowId\" = '${workflow[$variant]}'") bytes of execution data per execution"
    N8N_DIR="$n8n_dir" node "$here/queue-phases.js" "$n8n_url" "load-$variant-" "$work/results-$variant.jsonl"
  done
  for key in "${keys[@]}"; do
    requests=$((LOAD * ${#variants[@]} / ${#keys[@]}))
    per() { awk -v ms="$1" -v n="$requests" 'BEGIN { printf "%.1f ms", ms / n }'; }
    say "load: $key: ${connections[$key]} new connections to the shop database; CPU per request: n8n's processes $(per "${n8n_busy[$key]}") (main $(per "${main_busy[$key]}")), the bridges $(per "${bridge_busy[$key]}"), PostgreSQL $(per "${pg_busy[$key]}")"
  done
  check_memory "$results" n8n_chat_histories
  # n8n's own memory keeps the agent's tool call and result between question and answer.
  [ ! -f "$work/results-n8n.jsonl" ] || check_memory "$work/results-n8n.jsonl" n8n_own_chat_histories --tool-steps
  ok "load: every request answered; the memories hold exactly the exchanges of the answered requests"
fi

# ---- d. SIGTERM to a worker in the middle of an execution
say "d. SIGTERM to the worker running an execution: it finishes, and its bridge process ends with it"
slow_request stop "$work/d.json"
left=$(sidecars "$victim")
[ -n "$left" ] || fail "worker $victim has no bridge process to leave behind"
kill -TERM "${pid[$victim]}"
for _ in $(seq 600); do alive "${pid[$victim]}" || break; sleep 0.1; done
alive "${pid[$victim]}" && fail "worker $victim did not exit within 60 s of SIGTERM"
for _ in $(seq 100); do [ -z "$(sidecars "$victim")" ] && break; sleep 0.1; done
[ -z "$(sidecars "$victim")" ] ||
  fail "worker $victim exited, its bridge process $(sidecars "$victim" | paste -sd,) is still running after 10 s"
wait "$sender" || true
stored_as "$slow_id" success && grep -q '"failed":0' "$work/d.json" ||
  fail "execution $slow_id, running when its worker got SIGTERM, ended as $(status_of "$slow_id"): $(cat "$work/d.json")"
check_memory "$results" n8n_chat_histories
ok "worker $victim got SIGTERM during execution $slow_id: it finished the execution (answered, stored as success, its exchange in memory), exited, and its bridge process $left is gone too"
say "all checks passed"
