# Shared by scripts/n8n-e2e.sh and scripts/n8n-queue.sh (sourced, not run).
#
#   install_n8n                 n8n 2.8.4 into $n8n_dir (kept between runs)
#   write_package PROFILE DIR   builds the n8n-package example (dev or
#                               release) statically, checks it in a
#                               chroot, and `npm pack`s its n8n package
#                               into DIR; sets $program and $tarball
#   community_install TGZ HOME  installs the tarball into HOME/.n8n/nodes
#                               with the steps and flags of n8n's community
#                               package service
#   n8n_env HOME PORT           exports the environment of an n8n on
#                               127.0.0.1:PORT with its user folder in HOME

n8n_dir="${N8N_E2E_DIR:-$HOME/.cache/nodekit-n8n-e2e}/n8n-2.8.4"
say() { echo "== $*" >&2; }
now() { date +%s.%N; }

install_n8n() {
  command -v node >/dev/null || { echo "Node.js is needed (Debian: apt-get install nodejs npm)" >&2; return 1; }
  if [ -x "$n8n_dir/node_modules/.bin/n8n" ] && [ -f "$n8n_dir/.installed" ]; then return 0; fi
  say "installing n8n 2.8.4 into $n8n_dir (a few minutes)"
  mkdir -p "$n8n_dir"
  cat > "$n8n_dir/package.json" <<'JSON'
{
  "name": "nodekit-n8n-e2e",
  "private": true,
  "version": "0.0.0",
  "dependencies": {
    "n8n": "2.8.4",
    "@opentelemetry/api": "~1.9.0",
    "@opentelemetry/core": "^2.1.0",
    "@opentelemetry/sdk-trace-base": "^2.1.0",
    "@opentelemetry/instrumentation": "^0.204.0",
    "@opentelemetry/exporter-trace-otlp-http": "^0.204.0"
  },
  "overrides": { "xlsx": "0.18.5", "@langchain/langgraph-checkpoint": "1.0.0" }
}
JSON
  # --ignore-scripts: n8n's install scripts fetch from outside the registry.
  # The OpenTelemetry packages are @sentry/node's peers, which
  # --legacy-peer-deps would otherwise leave out. xlsx is pinned to the
  # registry's copy (n8n names a CDN tarball); langgraph-checkpoint 1.0.0
  # matches n8n's @langchain/core.
  (cd "$n8n_dir" && npm install --ignore-scripts --legacy-peer-deps --no-audit --no-fund >/dev/null)
  # sqlite3's binding is built from source (its prebuilt download is outside the registry).
  local nodedir=()
  [ -d /usr/include/node ] && nodedir=(--nodedir=/usr)
  (cd "$n8n_dir" && npm rebuild sqlite3 "${nodedir[@]}" >/dev/null)
  touch "$n8n_dir/.installed"
}

# Builds the n8n-package example (PROFILE dev or release) statically and
# checks it in an empty chroot (scripts/static-sidecar.sh; on a host that
# is not x86-64, a normal build), writes its n8n package and `npm pack`s it
# into DIR. Sets $program (the program built; the packaged copy is what n8n
# runs) and $tarball.
program=""
tarball=""
write_package() {
  local profile=$1 dir=$2
  if [ "$(uname -m)" = x86_64 ]; then
    program=$("$root/scripts/static-sidecar.sh" "$profile" | tail -1)
  else
    say "building the n8n-package example ($profile)"
    (cd "$root" && cargo build -p n8n-package --locked --profile "$profile")
    program="$root/target/$([ "$profile" = dev ] && echo debug || echo "$profile")/n8n-package"
  fi
  mkdir -p "$dir/src"
  "$program" package --builtins --out "$dir/src/n8n-nodes-text" --name n8n-nodes-text > "$dir/package-report.json"
  tarball="$dir/$(cd "$dir" && npm pack --quiet ./src/n8n-nodes-text | tail -1)"
}

# n8n 2.8.4's CommunityPackagesService.downloadPackage, step by step: the
# tarball unpacked into node_modules/<name>; devDependencies,
# peerDependencies and optionalDependencies deleted from its package.json;
# `npm install` with n8n's flags inside it; the name and version recorded
# in the nodes folder's package.json.
community_install() {
  local tgz=$1 nodes="$2/.n8n/nodes" name version
  name=$(tar -xzOf "$tgz" package/package.json | node -pe 'JSON.parse(require("fs").readFileSync(0)).name')
  mkdir -p "$nodes/node_modules/$name"
  [ -f "$nodes/package.json" ] || echo '{"name":"installed-nodes","private":true,"dependencies":{}}' > "$nodes/package.json"
  tar -xzf "$tgz" -C "$nodes/node_modules/$name" --strip-components=1
  (cd "$nodes/node_modules/$name" && node -e '
    const fs = require("fs");
    const { devDependencies, peerDependencies, optionalDependencies, ...rest } = JSON.parse(fs.readFileSync("package.json", "utf8"));
    fs.writeFileSync("package.json", JSON.stringify(rest, null, 2));' &&
    npm install --audit=false --fund=false --bin-links=false --install-strategy=shallow \
      --ignore-scripts=true --package-lock=false >/dev/null)
  version=$(node -pe 'require(process.argv[1]).version' "$nodes/node_modules/$name/package.json")
  node -e '
    const fs = require("fs"); const [file, name, version] = process.argv.slice(1);
    const j = JSON.parse(fs.readFileSync(file, "utf8")); j.dependencies = { ...j.dependencies, [name]: version };
    fs.writeFileSync(file, JSON.stringify(j, null, 2));' "$nodes/package.json" "$name" "$version"
}

# Loopback only, nothing phoned home, everything else at n8n's defaults.
n8n_env() {
  export N8N_USER_FOLDER="$1"
  export N8N_LISTEN_ADDRESS=127.0.0.1 N8N_HOST=127.0.0.1 N8N_PORT="$2" N8N_PROTOCOL=http
  export N8N_RUNNERS_BROKER_LISTEN_ADDRESS=127.0.0.1 N8N_RUNNERS_BROKER_PORT=$(($2 + 1))
  export N8N_DIAGNOSTICS_ENABLED=false N8N_VERSION_NOTIFICATIONS_ENABLED=false
  export N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED=false N8N_TEMPLATES_ENABLED=false
  export N8N_PERSONALIZATION_ENABLED=false N8N_HIRING_BANNER_ENABLED=false N8N_DYNAMIC_BANNERS_ENABLED=false
  export N8N_LICENSE_AUTO_RENEW_ENABLED=false N8N_AI_ENABLED=false
  export N8N_PUBLIC_API_DISABLED=true N8N_PUBLIC_API_SWAGGERUI_DISABLED=true
  export N8N_SECURE_COOKIE=false N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS=true N8N_PYTHON_ENABLED=false
  export N8N_LOG_LEVEL=${N8N_LOG_LEVEL:-warn} N8N_LOG_OUTPUT=console
  export N8N_ENCRYPTION_KEY=nodekit-e2e-key-0123456789 EXTERNAL_FRONTEND_HOOKS_URLS=
}

# Waits until the n8n at URL answers (every path says "n8n is starting up" before).
wait_started() {
  local url=$1 log=$2
  for _ in $(seq 600); do
    curl -sf "$url/rest/settings" 2>/dev/null | head -c1 | grep -q '{' && return 0
    sleep 0.2
  done
  tail -40 "$log" >&2
  echo "n8n at $url did not start" >&2
  return 1
}
