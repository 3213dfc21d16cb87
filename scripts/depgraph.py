#!/usr/bin/env python3
"""scripts/depgraph.py [BUILD] — who calls whom in the compiler, from the object files.

File A depends on file B when A's object uses a symbol that B's object defines (nm). Prints
the folder-level graph (edges with the symbols that make them, counted), then every cycle:
strongly connected components of the file graph and of the folder graph. The architecture
wants the folder graph to be a DAG that follows the pipeline (util <- arith <- ir <- front
<- sched <- target <- autosched <- cli) and no file cycles. `--strict` exits 1 on a cycle.
"""
import collections
import os
import subprocess
import sys


def objects(build):
    root = os.path.join(build, "compiler")
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith(".o"):
                path = os.path.join(d, f)
                src = os.path.relpath(path, build)[:-2] + ".c"
                if os.path.exists(src):  # skip objects of files that moved away
                    yield src, path


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRV":
            defined.add(parts[2])
    return defined, used


def sccs(graph):
    """Tarjan's algorithm; returns the components with more than one node."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def folder(src):
    parts = src.split("/")
    return parts[1] if len(parts) > 2 else "compiler"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    build = args[0] if args else "build"
    owner, uses = {}, {}
    for src, obj in objects(build):
        defined, used = symbols(obj)
        uses[src] = used
        for s in defined:
            owner[s] = src
    files = collections.defaultdict(set)
    folders = collections.defaultdict(collections.Counter)
    for src, used in uses.items():
        for s in used:
            dst = owner.get(s)
            if dst and dst != src:
                files[src].add(dst)
                if folder(src) != folder(dst):
                    folders[folder(src)][folder(dst)] += 1
    print("folder dependencies (symbols used):")
    for f in sorted(folders):
        print("  %-10s -> %s" % (f, ", ".join("%s (%d)" % kv for kv in sorted(folders[f].items()))))
    fgraph = {f: set(c) for f, c in folders.items()}
    cyc_files, cyc_folders = sccs(files), sccs(fgraph)
    print("file cycles: %d" % len(cyc_files))
    for c in cyc_files:
        print("  " + " <-> ".join(c))
    print("folder cycles: %d" % len(cyc_folders))
    for c in cyc_folders:
        print("  " + " <-> ".join(c))
    if "--strict" in sys.argv and (cyc_files or cyc_folders):
        sys.exit(1)


if __name__ == "__main__":
    main()
