#!/usr/bin/env python3
"""Check that the texc output pasted in a Markdown file is what texc prints today.

    doccheck.py TEXC ROOT FILE.md...

Every fenced block whose info string is `console` and whose first line is `$ texc ...` is
a transcript: the command is run by bash in ROOT (with `texc` being TEXC, stderr joined to
stdout) and its output must equal the rest of the block, line for line (trailing blanks
ignored). Blocks of any other kind (`text` for timings, `sh`, `tex`) are not run. Prints one
line per transcript and exits 1 if any differ, showing a diff.
"""
import difflib
import os
import re
import subprocess
import sys
import tempfile


def transcripts(path):
    """(line number, command, expected output lines) of each console block of PATH."""
    lines = open(path).read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```console":
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            if body and body[0].startswith("$ texc"):
                yield start + 1, body[0][2:], [l.rstrip() for l in body[1:]]
        i += 1


def run(texc, root, bindir, cmd):
    env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", ""))
    r = subprocess.run(["bash", "-c", cmd + " 2>&1"], cwd=root, env=env,
                       stdout=subprocess.PIPE, text=True)
    out = [l.rstrip() for l in r.stdout.split("\n")]
    while out and out[-1] == "":
        out.pop()
    return out


def main():
    texc, root, files = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    bad = 0
    with tempfile.TemporaryDirectory() as bindir:
        os.symlink(texc, os.path.join(bindir, "texc"))
        for md in files:
            path = os.path.join(root, md)
            for line, cmd, want in transcripts(path):
                got = run(texc, root, bindir, cmd)
                while want and want[-1] == "":
                    want.pop()
                if got == want:
                    print("ok - %s:%d: %s" % (md, line, cmd))
                    continue
                bad += 1
                print("not ok - %s:%d: %s" % (md, line, cmd))
                sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(
                    want, got, "in %s" % md, "texc prints", lineterm=""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
