#!/usr/bin/env python3
"""The import circles between a crate's modules, and its count of `pub` items.

    python3 scripts/module-graph.py [SRC] [--edges MODULE,MODULE,...]

SRC defaults to runtime/src. Each .rs file is a module (`model/error.rs` is
`model::error`, `model/mod.rs` is `model`). A `crate::a::b::X` path, inside
`use` or in code, is an import of the longest module path it names; so is a
`super::X`. Comments and `#[cfg(test)] mod tests` blocks are left out. The
circles are the strongly connected components of that graph with more than
one module; the top-level circles are those of the graph of the crate's
top-level modules, each standing for everything inside it (so `a::x` using
`b` and `b::y` using `a` is a circle there). `pub` items are lines declaring a `pub` fn, struct, enum, trait,
type, const, static, mod or use (`pub(crate)` ones not counted). With
--edges, prints the imports among the named modules.
"""
import os
import re
import sys

PUB = re.compile(
    r"^\s*pub\s+(?:async\s+|const\s+|unsafe\s+)*(fn|struct|enum|trait|type|const|static|mod|use)\b"
)
PATH = re.compile(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)+)")
GROUP = re.compile(r"\bcrate::\{([^}]*)\}")


def modules(root):
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".rs"):
                continue
            parts = os.path.relpath(os.path.join(folder, name), root)[:-3].split(os.sep)
            if parts[-1] == "mod":
                parts = parts[:-1]
            if parts == ["lib"]:
                parts = []
            found[tuple(parts)] = os.path.join(folder, name)
    return found


def code(path):
    text = re.split(r"#\[cfg\(test\)\]\s*mod tests", open(path).read())[0]
    return [line for line in text.splitlines() if not line.lstrip().startswith("//")]


def graph(root):
    found = modules(root)

    def resolve(path):
        for n in range(len(path), 0, -1):
            if tuple(path[:n]) in found:
                return tuple(path[:n])
        return ()

    edges = {m: set() for m in found}
    public = 0
    for module, path in found.items():
        lines = code(path)
        public += sum(1 for line in lines if PUB.match(line))
        text = "\n".join(lines)
        for m in PATH.finditer(text):
            segments = m.group(2).split("::")[1:]
            if m.group(1) == "crate":
                base = []
            else:
                # `super` of `a::b` (a/b.rs or a/b/mod.rs) is `a`.
                base = list(module[:-1])
                while segments and segments[0] == "super":
                    base, segments = base[:-1], segments[1:]
            target = resolve(base + segments)
            if target and target != module:
                edges[module].add(target)
        for m in GROUP.finditer(text):
            for item in m.group(1).split(","):
                target = resolve(item.strip().split("::"))
                if target and target != module:
                    edges[module].add(target)
    return found, edges, public


def circles(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(name(c) for c in component))

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return out


def top_level(edges):
    """The graph of the top-level modules: `a` uses `b` when anything in
    `a` uses anything in `b`."""
    top = {}
    for a, targets in edges.items():
        top.setdefault(a[:1], set())
        for b in targets:
            if a[:1] != b[:1]:
                top[a[:1]].add(b[:1])
                top.setdefault(b[:1], set())
    return top


def name(module):
    return "::".join(module) or "crate"


def main():
    args = sys.argv[1:]
    shown = None
    if "--edges" in args:
        i = args.index("--edges")
        shown = set(args[i + 1].split(","))
        del args[i : i + 2]
    root = args[0] if args else "runtime/src"
    found, edges, public = graph(root)
    found_circles = circles(edges)
    print(f"modules: {len(found)}, pub items: {public}, import circles: {len(found_circles)}")
    for c in found_circles:
        print(f"  {' <-> '.join(c)}")
    top_circles = circles(top_level(edges))
    print(f"top-level import circles: {len(top_circles)}")
    for c in top_circles:
        print(f"  {' <-> '.join(c)}")
    if shown:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                if name(a) in shown and name(b) in shown:
                    print(f"{name(a)} -> {name(b)}")


if __name__ == "__main__":
    main()
