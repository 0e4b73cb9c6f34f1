"""Prints the results of benches/agent-memory/run.sh (a folder of JSON files)
as Markdown tables, with nodekit's ratios against Mastra at each size."""

import glob
import json
import os
import sys

out = sys.argv[1]


def load(pattern):
    found = {}
    for f in glob.glob(os.path.join(out, pattern)):
        d = json.load(open(f))
        found[os.path.basename(f)[: -len(".json")]] = d
    return found


def ms(s):
    return f"{s['p50_ms']} / {s['p99_ms']}"


def ratio(theirs, ours):
    if not ours:
        return "–"
    x = theirs / ours
    return f"{x:.1f}x" if x < 10 else f"{x:.0f}x"


ours = {d["n"]: d for name, d in load("nodekit-*.json").items() if d.get("database") == "sqlite" and "threads" not in d}
pg = {d["n"]: d for d in load("nodekit-pg-*.json").values()}
many = list(load("nodekit-threads-*.json").values())
peer = {d["n"]: d for d in load("mastra-*.json").values()}

print(open(os.path.join(out, "run.txt")).read().strip() if os.path.exists(os.path.join(out, "run.txt")) else "")
print()
print("| messages | system | recall p50 / p99 ms | context p50 / p99 ms | append with embedding msg/s | storage-only append p50 / p99 ms | window p50 ms | agreement | peak RSS MB |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
for n in sorted(set(ours) | set(peer)):
    if n in ours:
        o = ours[n]
        a = o.get("agreement_with_exact") or {}
        so = o["append_storage_only"]
        light = f" (NORMAL {ms(so['process_crash'])})" if "process_crash" in so else ""
        print(f"| {n:,} | nodekit | {ms(o['recall'])} | {ms(o['context_assembly'])} | "
              f"{o['append_with_embedding']['msgs_per_s']:.0f} | {ms(so['store'])}{light} | "
              f"{o['recent_window_20']['p50_ms']} | {a.get('top5_share', '–')} ({a.get('answered_by', '–')}) | {o['peak_rss_mb']} |")
    if n in peer:
        p = peer[n]
        print(f"| {n:,} | Mastra | {ms(p['recall'])} | – | {p['append_with_embedding']['msgs_per_s']} | "
              f"{ms(p['append_storage_only']['store'])} | {p['recent_window_20']['p50_ms']} | – | {p['peak_rss_mb']} |")
    if n in ours and n in peer:
        o, p = ours[n], peer[n]
        print(f"| {n:,} | **ratio** | **{ratio(p['recall']['p50_ms'], o['recall']['p50_ms'])} / "
              f"{ratio(p['recall']['p99_ms'], o['recall']['p99_ms'])}** | | "
              f"**{ratio(o['append_with_embedding']['msgs_per_s'], p['append_with_embedding']['msgs_per_s'])}** | "
              f"{ratio(p['append_storage_only']['store']['p50_ms'], o['append_storage_only']['store']['p50_ms'])} | "
              f"{ratio(p['recent_window_20']['p50_ms'], o['recent_window_20']['p50_ms'])} | | "
              f"{ratio(p['peak_rss_mb'], o['peak_rss_mb'])} less |")

if pg:
    print()
    print("| messages | nodekit on PostgreSQL + pgvector | recall p50 / p99 ms | context p50 / p99 ms | append with embedding msg/s | storage-only append p50 / p99 ms | agreement | peak RSS MB |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n in sorted(pg):
        o = pg[n]
        a = o.get("agreement_with_exact") or {}
        print(f"| {n:,} | | {ms(o['recall'])} | {ms(o['context_assembly'])} | "
              f"{o['append_with_embedding']['msgs_per_s']:.0f} | {ms(o['append_storage_only']['store'])} | "
              f"{a.get('top5_share', '–')} ({a.get('answered_by', '–')}) | {o['peak_rss_mb']} |")

for m in many:
    c = m["recall_cache"]
    print()
    print(f"{m['threads']:,} threads of {m['messages_per_thread']:,} messages ({m['database']}): "
          f"recall in a random thread p50 / p99 {ms(m['recall_random_thread'])} ms, "
          f"RSS {m['rss_mb']} MB (peak {m['peak_rss_mb']} MB), recall cache {c['mb']} MB of {c['budget_mb']} MB "
          f"({c['threads']} threads held)")
