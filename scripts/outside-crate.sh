#!/usr/bin/env bash
# The set-up the authoring guide (runtime/docs/authoring.md, "Nodes in
# your own crate") gives an outside author, tried from outside the
# workspace: a crate in a scratch folder that depends on `nodekit` and
# `nodekit-nodes` by path, declares one tool node, and whose `main.rs` is
# the guide's (its own `link()`, `nodekit_nodes::link()`,
# `nodekit_nodes::cli::main()`). It must build, speak as itself, list its
# node in the catalog beside the built-in ones, and answer a tool call.
#
# Run by hand (it builds the whole command line once more, reusing the
# repository's target folder): scripts/outside-crate.sh [--keep]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d -t nodekit-outside-XXXXXX)
[ "${1:-}" = --keep ] && echo "keeping $work" >&2 || trap 'rm -rf "$work"' EXIT
say() { echo "== $*" >&2; }

mkdir -p "$work/forecast/src"
cat > "$work/forecast/Cargo.toml" <<TOML
[package]
name = "forecast"
version = "0.3.0"
edition = "2024"
publish = false

[dependencies]
nodekit = { path = "$root/runtime", default-features = false }
nodekit-nodes = { path = "$root/nodes" }

[workspace]
TOML
cat > "$work/forecast/src/lib.rs" <<'RUST'
//! One tool node, as an outside author writes it from the authoring guide.
use nodekit::prelude::*;
use nodekit::serde_json::{Value, json};

/// Get the weather forecast for a city.
#[ai_node(name = "forecastTool", display_name = "Forecast", output = tool)]
pub struct ForecastTool {
    /// The city to forecast, e.g. "Berlin".
    #[from_ai]
    pub city: String,
    /// How many days ahead, 1 to 7.
    #[from_ai(default = 3)]
    #[param(min = 1, max = 7)]
    pub days: u32,
}

impl ToolNode for ForecastTool {
    async fn call(self, _ctx: &SupplyContext) -> nodekit::Result<Value> {
        Ok(json!({"city": self.city, "days": self.days, "sky": "clear"}))
    }
}

/// Keeps this crate's nodes in a program that links it.
pub fn link() {}
RUST
cat > "$work/forecast/src/main.rs" <<'RUST'
fn main() -> std::process::ExitCode {
    forecast::link();
    nodekit_nodes::link();
    nodekit_nodes::cli::main()
}
RUST
cp "$root/Cargo.lock" "$work/forecast/"

say "building the outside crate"
(cd "$work/forecast" && CARGO_TARGET_DIR="$root/target" cargo build -q)
bin="$root/target/debug/forecast"

say "it speaks as itself"
version=$("$bin" --version)
case "$version" in forecast\ *) ;; *) echo "--version says: $version" >&2; exit 1 ;; esac
if "$bin" describe noSuchNode 2>"$work/err"; then echo "describe of a missing node succeeded" >&2; exit 1; fi
grep -q '^forecast: ' "$work/err" || { echo "its error: $(cat "$work/err")" >&2; exit 1; }

say "its node is in the catalog, beside the built-in ones"
"$bin" catalog > "$work/catalog.json"
grep -q '"forecast.forecastTool"' "$work/catalog.json" || { echo "forecastTool missing from the catalog" >&2; exit 1; }
grep -q '"nodekit-nodes.selectQueryTool"' "$work/catalog.json" || { echo "built-in nodes missing" >&2; exit 1; }

say "a tool call, as an agent makes it"
answer=$("$bin" tool-call forecast.forecastTool --args '{"city": "Berlin"}')
case "$answer" in *'"days": 3'*) ;; *) echo "tool-call answered: $answer" >&2; exit 1 ;; esac
say "all passed"
