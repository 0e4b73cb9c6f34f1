#!/usr/bin/env python3
"""First build of a tool-only crate that is its own MCP server: the crate
`nodekit new` makes (one tool node, the command line with `mcp serve`)
against the same tool written with rmcp's `#[tool]` (a stdio server).

Each crate is in a scratch folder outside the repository, with its own
target folder, and both start from the repository's Cargo.lock (rmcp's
macros are added to it). Dependencies are fetched before the clock starts;
each build is a clean `cargo build` (debug, the template's profile for
both), and the two sides take turns.

    python3 benches/first-build/run.py [--runs 2] [--keep]
"""
import argparse
import os
import shutil
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RMCP_TOML = '''[package]
name = "word-count-rmcp"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
rmcp = { version = "3.11", default-features = false, features = ["server", "macros", "transport-io"] }
schemars = "1.2"
serde = { version = "1", features = ["derive"] }
serde_json = "1"
tokio = { version = "1", features = ["rt", "macros", "io-std"] }

[profile.dev]
debug = "line-tables-only"

[profile.dev.package."*"]
debug = false

[workspace]
'''

RMCP_MAIN = '''//! The word-count tool as an rmcp stdio server.
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{ErrorData, ServiceExt, tool, tool_router};
use serde::{Deserialize, Serialize};

#[derive(Clone)]
struct WordCount;

#[derive(Deserialize, schemars::JsonSchema)]
struct WordCountArgs {
    /// The text whose words are counted.
    text: String,
    /// How many of the most frequent words to list, 0 to 20.
    #[serde(default = "three")]
    #[schemars(range(min = 0, max = 20))]
    top: u32,
}

fn three() -> u32 {
    3
}

#[derive(Serialize, schemars::JsonSchema)]
struct WordCountAnswer {
    words: usize,
    top: Vec<(String, usize)>,
}

#[tool_router(server_handler)]
impl WordCount {
    #[tool(name = "wordCountTool", description = "Count the words of a text.")]
    fn word_count(
        &self,
        Parameters(args): Parameters<WordCountArgs>,
    ) -> Result<Json<WordCountAnswer>, ErrorData> {
        if args.top > 20 {
            return Err(ErrorData::invalid_params("top: at most 20", None));
        }
        let mut counts: Vec<(String, usize)> = Vec::new();
        for word in args.text.split_whitespace().map(str::to_lowercase) {
            match counts.iter_mut().find(|(w, _)| *w == word) {
                Some((_, n)) => *n += 1,
                None => counts.push((word, 1)),
            }
        }
        let words = counts.iter().map(|(_, n)| n).sum();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        counts.truncate(args.top as usize);
        Ok(Json(WordCountAnswer { words, top: counts }))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    WordCount.serve(rmcp::transport::stdio()).await?.waiting().await?;
    Ok(())
}
'''


def make_rmcp(base):
    crate = os.path.join(base, "word-count-rmcp")
    os.makedirs(os.path.join(crate, "src"))
    with open(os.path.join(crate, "Cargo.toml"), "w") as f:
        f.write(RMCP_TOML)
    with open(os.path.join(crate, "src", "main.rs"), "w") as f:
        f.write(RMCP_MAIN)
    shutil.copy(os.path.join(ROOT, "Cargo.lock"), os.path.join(crate, "Cargo.lock"))
    return crate


def make_nodekit(base):
    crate = os.path.join(base, "word-count")
    subprocess.run(["cargo", "run", "-q", "-p", "nodekit-nodes", "--offline", "--",
                    "new", "word-count", "--path", crate], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    return crate


def clean_build(crate):
    target = os.path.join(crate, "target")
    shutil.rmtree(target, ignore_errors=True)
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    start = time.monotonic()
    subprocess.run(["cargo", "build", "-q", "--offline"], cwd=crate, env=env, check=True)
    seconds = time.monotonic() - start
    units = len(os.listdir(os.path.join(target, "debug", ".fingerprint")))
    binary = max((os.path.join(target, "debug", n) for n in os.listdir(os.path.join(target, "debug"))
                  if n.startswith("word-count") and os.access(os.path.join(target, "debug", n), os.X_OK)
                  and os.path.isfile(os.path.join(target, "debug", n))), key=os.path.getsize)
    return seconds, units, os.path.getsize(binary)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="nodekit-first-build-")
    try:
        crates = {"nodekit": make_nodekit(base), "rmcp": make_rmcp(base)}
        for crate in crates.values():
            subprocess.run(["cargo", "fetch", "-q"], cwd=crate, check=True)
        runs = {name: [] for name in crates}
        for _ in range(args.runs):
            for name, crate in crates.items():
                runs[name].append(clean_build(crate))
        for name, results in runs.items():
            print(f"{name}: {', '.join(f'{s:.1f} s' for s, _, _ in results)} "
                  f"({results[0][1]} units, binary {results[0][2] / 1e6:.0f} MB)")
        pairs = [n[0] / r[0] for n, r in zip(runs["nodekit"], runs["rmcp"])]
        print("nodekit / rmcp, run by run: " + ", ".join(f"{p:.2f}x" for p in pairs)
              + " (target: at most 2x)")
    finally:
        if args.keep:
            print("scratch folder:", base)
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
