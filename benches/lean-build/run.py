#!/usr/bin/env python3
"""Clean debug build of a one-node outside crate: `nodekit` with
`default-features = false` (authoring only) against the same crate with
nodekit's default features (every capability).

Each variant is its own crate in a scratch folder outside the repository,
with its own target folder, so each build compiles every dependency from
scratch. Both use the repository's Cargo.lock, so they build the versions
the workspace pins. Crates must already be downloaded (`cargo fetch` in the
repository); nothing else is fetched.

    python3 benches/lean-build/run.py [--runs 1] [--keep]
"""
import argparse
import os
import shutil
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

NODE = '''//! One tool node, as an outside author writes it.
use nodekit::prelude::*;

/// Units the temperatures are given in.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    /// Degrees Celsius.
    Metric,
    /// Degrees Fahrenheit.
    Imperial,
}

/// Get the weather forecast for a city.
#[ai_node(name = "weatherForecastTool", display_name = "Weather Forecast", output = tool)]
pub struct WeatherForecastTool {
    /// The city to forecast, e.g. "Berlin".
    #[from_ai]
    pub city: String,
    /// How many days ahead, 1 to 7.
    #[from_ai(default = 3)]
    #[param(min = 1, max = 7)]
    pub days: u32,
    /// Units the temperatures are given in.
    #[param(default = Units::Metric)]
    pub units: Units,
}

fn main() {
    let entry = Catalog::global().find("weatherForecastTool").expect("registered");
    println!("{}", entry.description.name);
}
'''

VARIANTS = {
    "lean": 'nodekit = {{ path = "{root}/runtime", default-features = false }}',
    "default": 'nodekit = {{ path = "{root}/runtime" }}',
}


def write_crate(base, name):
    os.makedirs(os.path.join(base, name, "src"))
    with open(os.path.join(base, name, "Cargo.toml"), "w") as f:
        f.write(f'''[package]
name = "{name}-node"
version = "0.0.0"
edition = "2024"

[dependencies]
{VARIANTS[name].format(root=ROOT)}
serde = {{ version = "1", features = ["derive"] }}
schemars = {{ version = "1.2", default-features = false, features = ["std", "derive", "preserve_order"] }}

[profile.dev]
debug = "line-tables-only"

[profile.dev.package."*"]
debug = false
''')
    with open(os.path.join(base, name, "src", "main.rs"), "w") as f:
        f.write(NODE)
    shutil.copy(os.path.join(ROOT, "Cargo.lock"), os.path.join(base, name, "Cargo.lock"))


def clean_build(crate_dir):
    target = os.path.join(crate_dir, "target")
    shutil.rmtree(target, ignore_errors=True)
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    start = time.monotonic()
    subprocess.run(["cargo", "build", "-q", "--offline"], cwd=crate_dir, env=env, check=True)
    seconds = time.monotonic() - start
    units = len(os.listdir(os.path.join(target, "debug", ".fingerprint")))
    return seconds, units


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="nodekit-lean-build-")
    try:
        results = {}
        for name in VARIANTS:
            write_crate(base, name)
            runs = [clean_build(os.path.join(base, name)) for _ in range(args.runs)]
            results[name] = min(s for s, _ in runs)
            print(f"{name}: {', '.join(f'{s:.1f} s' for s, _ in runs)} ({runs[0][1]} units compiled)")
        print(f"default / lean: {results['default'] / results['lean']:.1f}x "
              "(targets: at least 5x, lean under 60 s)")
    finally:
        if args.keep:
            print("scratch folder:", base)
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
