#!/usr/bin/env bash
# nodekit's crates as crates.io would take them (nothing is uploaded):
# every publishable crate is packaged, and each package is checked to
# hold every file its library is compiled from.
#
# Cargo's own verification (`cargo package` without `--no-verify`) builds
# each package on its own, with its own features, compiling the
# dependencies they share again for each (minutes here). What it finds
# that packaging alone does not is a file the code reads at compile time
# (a module, an `include_str!`, the agent memory's migrations, the n8n
# package's JavaScript, `nodekit new`'s template) left out of the package.
# The workspace's lints have compiled every library with every feature,
# and rustc's dependency files (`target/debug/deps/*.d`) list each file
# read: every one of them must be in the package. Run it after a
# workspace build (scripts/test.sh runs it after the lints).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo metadata --format-version 1 --no-deps --locked --offline > "${TMPDIR:-/tmp}/nodekit-metadata.json"
trap 'rm -f "${TMPDIR:-/tmp}/nodekit-metadata.json"' EXIT
packages=$(python3 -c '
import json, sys
meta = json.load(open(sys.argv[1]))
print(" ".join("-p " + p["name"] for p in meta["packages"] if p.get("publish") != []))
' "${TMPDIR:-/tmp}/nodekit-metadata.json")
# shellcheck disable=SC2086
cargo package $packages --no-verify --locked --offline

python3 - "${TMPDIR:-/tmp}/nodekit-metadata.json" <<'PY'
import glob, json, os, sys, tarfile

meta = json.load(open(sys.argv[1]))
root = meta["workspace_root"]
deps = os.path.join(meta["target_directory"], "debug", "deps")
failed = False
for package in meta["packages"]:
    if package.get("publish") == []:
        continue
    name, version = package["name"], package["version"]
    crate_dir = os.path.dirname(package["manifest_path"])
    lib = next((t for t in package["targets"] if "lib" in t["kind"] or "proc-macro" in t["kind"]), None)
    if lib is None:
        continue
    lib_name = lib["name"].replace("-", "_")
    # The dependency files of the library's own builds: those with an .rmeta
    # or a proc macro's .so beside them (a test build has neither).
    # Only builds of this checkout's crate (they read its lib.rs), and not
    # the manifests clippy lists (cargo writes the package's own).
    read = set()
    for d in glob.glob(os.path.join(deps, f"{lib_name}-*.d")):
        stem = os.path.basename(d)[:-2]
        built = glob.glob(os.path.join(deps, f"lib{stem}.rmeta")) + glob.glob(os.path.join(deps, f"lib{stem}.so"))
        if not built:
            continue
        files = set()
        with open(d) as f:
            for line in f:
                line = line.strip()
                if line.startswith("#") or not line.endswith(":") or " " in line[:-1].replace("\\ ", ""):
                    continue
                files.add(os.path.normpath(os.path.join(root, line[:-1].replace("\\ ", " "))))
        if lib["src_path"] in files:
            read |= {p for p in files if os.path.basename(p) != "Cargo.toml"}
    if not read:
        print(f"packages: no build of {name}'s library to compare its package with (build the workspace first)", file=sys.stderr)
        failed = True
        continue
    archive = os.path.join(meta["target_directory"], "package", f"{name}-{version}.crate")
    prefix = f"{name}-{version}/"
    with tarfile.open(archive) as t:
        held = {m.name[len(prefix):] for m in t.getmembers() if m.name.startswith(prefix)}
    missing = sorted(
        os.path.relpath(p, crate_dir)
        for p in read
        if os.path.relpath(p, crate_dir) not in held
    )
    if missing:
        failed = True
        print(f"packages: {name}'s package leaves out what its library is compiled from: {', '.join(missing)}", file=sys.stderr)
    else:
        print(f"packages: {name} holds the {len(read)} files its library is compiled from")
sys.exit(1 if failed else 0)
PY
