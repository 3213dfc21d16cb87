#!/usr/bin/env python3
"""scripts/depgraph.py [BUILD] [--strict] — who calls whom in the compiler, from the object files.

File A depends on file B when A's object uses a symbol that B's object defines (nm). Prints
the folder-level graph (edges with the symbols that make them, counted), then every cycle:
strongly connected components of the file graph and of the folder graph, then every folder
edge that goes against ORDER (docs/DESIGN.md, "Dependencies go one way").

`--strict` exits 1 when the folders do not follow ORDER: a folder cycle, an edge from a
folder to a later one (or to one of its own tier), a folder that ORDER does not place, or a
file cycle other than those INHERENT allows inside one folder. tests/suites/depgraph.sh
runs it on the build, so a back-edge fails `make test`.
"""
import collections
import os
import subprocess
import sys


# The folders in dependency order: each uses only the tiers before it. Folders in one tier
# use none of each other (dist, report, deploy all sit between autosched and cli).
ORDER = [["util"], ["ir"], ["arith"], ["onnx"], ["front"], ["target"], ["sched"], ["lower"],
         ["autosched"], ["dist", "report", "deploy"], ["cli"]]

# File cycles that may stay inside one folder, and why (docs/DESIGN.md says the same).
INHERENT = {
    "arith": "interval analysis and the simplifier call each other: one analyzer in two files",
    "onnx": "the importer dispatches to its operator table (onnx_ops.c), whose rows build "
            "through the importer's imp_* helpers; tensor_io.c decodes TensorProto through it",
}


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
    bad = 0
    for c in cyc_files:
        inside = {folder(f) for f in c}
        why = INHERENT.get(inside.pop()) if len(inside) == 1 else None
        print("  " + " <-> ".join(c) + ("  (inherent: %s)" % why if why else ""))
        bad += why is None
    print("folder cycles: %d" % len(cyc_folders))
    for c in cyc_folders:
        print("  " + " <-> ".join(c))
    bad += len(cyc_folders)
    tier = {f: i for i, fs in enumerate(ORDER) for f in fs}
    against = []
    for f in sorted(folders):
        for g in sorted(folders[f]):
            if f not in tier or g not in tier:
                against.append("%s -> %s: %s not in ORDER (scripts/depgraph.py)" % (f, g, f if f not in tier else g))
            elif tier[g] >= tier[f]:
                against.append("%s -> %s (%d symbols)" % (f, g, folders[f][g]))
    print("edges against the order %s: %d" % (" -> ".join("(%s)" % ", ".join(t) if len(t) > 1 else t[0] for t in ORDER),
                                               len(against)))
    for e in against:
        print("  " + e)
    bad += len(against)
    if "--strict" in sys.argv and bad:
        sys.exit(1)

if __name__ == "__main__":
    main()
