"""Prints the results of benches/vector-store/run.sh (a folder of JSON files)
as Markdown tables, with nodekit's lead over LangChain JS for each store."""

import glob
import json
import os
import sys

out = sys.argv[1]


def load(name):
    path = os.path.join(out, name)
    return json.load(open(path)) if os.path.exists(path) else None


def ms(s):
    return f"{s['p50_ms']} / {s['p99_ms']}"


def lead(theirs, ours, higher_better=False):
    if not theirs or not ours:
        return "–"
    x = ours / theirs if higher_better else theirs / ours
    return f"{x:.1f}x" if x < 10 else f"{x:.0f}x"


print(open(os.path.join(out, "run.txt")).read().strip())
print()
print("| documents | store | system | insert docs/s | ready s | search p50 / p99 ms | agreement (top 4) | recall (top 4) |")
print("|---:|---|---|---:|---:|---:|---:|---:|")
sizes = sorted(int(os.path.basename(f)[len("nodekit-"):-len(".json")]) for f in glob.glob(os.path.join(out, "nodekit-[0-9]*.json")))
for n in sizes:
    ours, theirs = load(f"nodekit-{n}.json"), load(f"langchain-{n}.json") or {}
    for store, peer in [("memory", "memory"), ("sqlite", None), ("pgvector", "pgvector"), ("pgvector_graph", "pgvector")]:
        o = ours.get(store)
        if not o:
            continue
        print(f"| {n:,} | {store} | nodekit | {o['insert']['docs_per_s']:.0f} | {o['ready_s']} | {ms(o['search'])} | {o['agreement_top4']} | {o['recall_top4']} |")
        t = theirs.get(peer) if peer else None
        if t:
            print(f"| {n:,} | {store} | LangChain | {t['insert']['docs_per_s']} | – | {ms(t['search'])} | exact | exact |")
            print(f"| {n:,} | {store} | **nodekit's lead** | **{lead(t['insert']['docs_per_s'], o['insert']['docs_per_s'], True)}** | | "
                  f"**{lead(t['search']['p50_ms'], o['search']['p50_ms'])} / {lead(t['search']['p99_ms'], o['search']['p99_ms'])}** | | |")

# What nodekit's search tails are made of.
print()
print("| documents | store | nodekit p99 ÷ p50 | searches under 0.25 / 0.5 / 1 / 2 / 4 / 8 ms / more | slowest (place in the run: ms) |")
print("|---:|---|---:|---|---|")
def measured(has):
    """(size, store, nodekit's figures) for every store whose figures `has` accepts."""
    for n in sizes:
        ours = load(f"nodekit-{n}.json")
        for store in ["memory", "sqlite", "pgvector", "pgvector_graph"]:
            o = ours.get(store)
            if o and has(o):
                yield n, store, o


def slowest(stats):
    return ", ".join(f"{i}: {t}" for i, t in stats["slowest"])


for n, store, o in measured(lambda o: "histogram_ms" in o["search"]):
    srch = o["search"]
    hist = " / ".join(str(c) for c in srch["histogram_ms"].values())
    print(f"| {n:,} | {store} | {srch['p99_ms'] / srch['p50_ms']:.1f} | {hist} | {slowest(srch)} |")

# The same searches while another task adds and deletes documents.
print()
print("| documents | store | search p50 / p99 ms, quiet | while writing | p99 ÷ quiet p99 | writes (added, deleted; docs/s) | slowest while writing |")
print("|---:|---|---:|---:|---:|---|---|")
for n, store, o in measured(lambda o: "search_while_writing" in o):
    w = o["search_while_writing"]
    wr = w["writes"]
    print(f"| {n:,} | {store} | {ms(o['search'])} | {ms(w)} | {w['p99_ms'] / o['search']['p99_ms']:.1f} | "
          f"{wr['added']:,}, {wr['deleted']:,}; {wr['docs_per_s']:.0f} | {slowest(w)} |")

ours, theirs = load("nodekit-split.json"), load("langchain-split.json")
if ours and theirs and "splitter" in ours:
    o, t = ours["splitter"], theirs["splitter"]
    same = "identical" if (o["sha1"], o["chunks"]) == (t["sha1"], t["chunks"]) else "**DIFFERENT**"
    print()
    print("| splitter | MB | seconds | MB/s | chunks |")
    print("|---|---:|---:|---:|---:|")
    mb = o['bytes'] / 1048576
    print(f"| nodekit, borrowed (`chunks`) | {mb:.1f} | {o['s']} | {o['mb_per_s']} | {o['chunks']:,} |")
    print(f"| nodekit, owned (`split_text`) | {mb:.1f} | {o['owned_s']} | {o['owned_mb_per_s']} | {o['chunks']:,} |")
    print(f"| LangChain | {t['bytes'] / 1048576:.1f} | {t['s']} | {t['mb_per_s']} | {t['chunks']:,} |")
    print(f"| **nodekit's lead** | | **{lead(t['s'], o['s'])} borrowed, {lead(t['s'], o['owned_s'])} owned** | | chunks {same} |")
