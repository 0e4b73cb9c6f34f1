"""Time per MCP tool call over stdio, one client for every server.

    python bench.py CONFIG.json > RESULT.json

CONFIG: {"calls": N, "warmup": W, "servers": [{"name", "command", "args",
"sizes": {"1": {"tool", "args", "rows"}, "1000": {...}},
"attack": {"tool", "key"} (optional)}], "attacks": [SQL, ...]}.
Each server runs as a child process of this one (the official MCP Python
SDK's stdio client). A call is timed from sending `tools/call` to having
its parsed result; each answer's row count is checked. The peak RSS is the
server's VmHWM after the run.
"""
import asyncio
import json
import os
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "text", None) is not None)


def rows_in(text):
    """Rows in an answer: nodekit's JSON `data`, or postgres-mcp's list of dicts."""
    try:
        return len(json.loads(text)["data"])
    except (ValueError, KeyError, TypeError):
        return text.count("{'id':")


async def run(server, config, attacks):
    pidfile = tempfile.mktemp(prefix="mcp-bench-pid-")
    # The shell records the server's pid, then becomes the server.
    params = StdioServerParameters(
        command="sh",
        args=["-c", f'echo $$ > {pidfile}; exec "$0" "$@"', server["command"], *server["args"]],
        env=dict(os.environ),
    )
    out = {"name": server["name"], "sizes": {}}
    with open(os.environ.get("BENCH_SERVER_LOG", os.devnull), "a") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for size, call in server["sizes"].items():
                    for _ in range(config["warmup"]):
                        await session.call_tool(call["tool"], call["args"])
                    times = []
                    for _ in range(config["calls"]):
                        start = time.perf_counter()
                        result = await session.call_tool(call["tool"], call["args"])
                        times.append((time.perf_counter() - start) * 1000)
                        text = text_of(result)
                        if result.isError or rows_in(text) != call["rows"]:
                            raise SystemExit(f"{server['name']}: a wrong answer at {size} rows: {text[:300]}")
                    out["sizes"][size] = {
                        "p50_ms": percentile(times, 50),
                        "p99_ms": percentile(times, 99),
                        "mean_ms": sum(times) / len(times),
                        "calls": len(times),
                    }
                if server.get("attack"):
                    tool, key = server["attack"]["tool"], server["attack"]["key"]
                    verdicts = []
                    for sql in attacks:
                        result = await session.call_tool(tool, {key: sql})
                        text = text_of(result)
                        refused = bool(result.isError) or text.lstrip().startswith("Error") \
                            or '"success":false' in text.replace(" ", "")
                        verdicts.append({"sql": sql[:120], "refused": refused,
                                         "is_error": bool(result.isError), "answer": text[:160]})
                    out["attacks"] = {
                        "total": len(verdicts),
                        "refused": sum(v["refused"] for v in verdicts),
                        "refused_with_is_error": sum(v["refused"] and v["is_error"] for v in verdicts),
                        "cases": verdicts,
                    }
                with open(pidfile) as f:
                    pid = f.read().strip()
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            out["peak_rss_mb"] = int(line.split()[1]) / 1024
    os.unlink(pidfile)
    return out


async def main():
    with open(sys.argv[1]) as f:
        config = json.load(f)
    results = []
    for server in config["servers"]:
        print(f"== {server['name']}", file=sys.stderr)
        results.append(await run(server, config, config.get("attacks", [])))
    json.dump(results, sys.stdout, indent=1)


asyncio.run(main())
