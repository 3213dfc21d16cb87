#!/bin/bash
# tests/suites/report.sh — `texc records report|plot`, `texc bench --json` and the tune's
# progress line, as a person sees them: a small logged tune, its report's HTML structure
# (one row per task, a curve, the schedule, the machine), every string escaped, an old log
# without the machine, a network's section, and the page rendered by headless Chromium to a
# PNG (in a temp dir) that must show the curves' colours.
# Environment: $TEXC (the texc binary). Prints ok / not ok / skip lines.
cd "$(dirname "$0")/../.."
TEXC=${TEXC:-build/texc}
T=$(mktemp -d /tmp/texc-report-XXXXXX)
trap 'rm -rf "$T"' EXIT
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2}

ok() { echo "ok - report: $1"; }
bad() { echo "not ok - report: $1"; }
skip() { echo "skip - report: $1: $2"; }
check() { if [ "$2" = 0 ]; then ok "$1"; else bad "$1"; fi; }

cat >"$T/mm.tex" <<'EOF'
const M = 48, N = 32, K = 40
kernel matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {
  C[i, j] += A[i, k] * B[k, j]
}
EOF

# HTML checks in python (no extra packages): ARGS: the page, then what to check.
html() { python3 - "$@" <<'PY'
import re, sys, html.parser, xml.etree.ElementTree as ET
page = open(sys.argv[1], encoding="utf-8").read()
what = sys.argv[2]
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.rows = 0; s.tags = []; s.pre = []; s.inpre = False; s.urls = []
    def handle_starttag(s, tag, a):
        a = dict(a); s.tags.append(tag)
        if tag == "tr" and a.get("class") == "task": s.rows += 1
        if tag == "pre" and a.get("class") == "schedule": s.inpre = True; s.pre.append("")
        for k in ("src", "href"):
            if k in a and not a[k].startswith("#"): s.urls.append(a[k])
    def handle_endtag(s, tag):
        if tag == "pre": s.inpre = False
    def handle_data(s, d):
        if s.inpre: s.pre[-1] += d
p = P(); p.feed(page)
def svgs_ok():  # every inline chart is well-formed XML with a curve of >= 2 points
    svgs = re.findall(r"<svg.*?</svg>", page, re.S)
    for s in svgs: ET.fromstring(s)
    return len(svgs) > 0 and re.search(r'<path class="curve"[^>]* d="M[0-9.]+ [0-9.]+[HL]', page)
if what == "rows": print(p.rows)
elif what == "structure":
    sys.exit(0 if svgs_ok() and "script" not in p.tags and not p.urls and p.pre else 1)
elif what == "schedule": print(p.pre[int(sys.argv[3])])
elif what == "machine":  # the CPU model and the architecture, as the log has them
    m = re.search(r'<table class="machine">.*?</table>', page, re.S).group(0)
    sys.exit(0 if sys.argv[3] in m and sys.argv[4] in m else 1)
elif what == "contains": sys.exit(0 if sys.argv[3] in page else 1)
PY
}

# 0. Everything below needs tuning to work.
if ! "$TEXC" tune "$T/mm.tex" --trials 16 --batch 8 --seed 3 --records "$T/r.jsonl" >"$T/tune.out" 2>"$T/tune.err"; then
  skip "all" "texc tune does not work here"; exit 0
fi

# 1. the progress line: plain lines into a file (no \r), with done/total and the rate
grep -q "^round   1:    8/16 trials, best .* ms (.* GFLOP/s), .* trials/s, .* left$" "$T/tune.err" &&
  ! grep -q $'\r' "$T/tune.err"
check "progress: one plain line per round into a file, with the time left" $?
# on a terminal (script(1) gives it one) it is redrawn in place: \r, clear to the end of line
if command -v script >/dev/null 2>&1; then
  script -qec "$TEXC tune $T/mm.tex --trials 16 --batch 8 --time 5m --records $T/tty.jsonl" /dev/null >"$T/tty.out" 2>&1
  grep -q $'\r''round   2:   16/16 trials, best .*trials/s'$'\033''\[K' "$T/tty.out"
  check "progress: redrawn in place on a terminal" $?
else
  skip "progress on a terminal" "no script(1)"
fi

# 2. the report of the log: structure, one row per task, the machine, the schedule
"$TEXC" records report "$T/r.jsonl" -o "$T/r.html" 2>"$T/rep.err"
check "report writes the page" $?
grep -q "r.html: report of 16 records, 1 tasks" "$T/rep.err"; check "report names what it wrote" $?
[ "$(html "$T/r.html" rows)" = 1 ]; check "one row per task (1)" $?
html "$T/r.html" structure; check "well-formed inline SVG with a curve; no script, no fetched URL" $?
cpu=$(python3 -c 'import json; r = json.loads(open("'"$T/r.jsonl"'").readline()); print(r["machine"]["cpu"])')
html "$T/r.html" machine "$cpu" "$(uname -m)"; check "the machine: CPU model and ISA" $?
# the best schedule shown is a block that parses, applies and computes the right result
{ cat "$T/mm.tex"; html "$T/r.html" schedule 0 | grep -v '^#'; } >"$T/best.tex"
"$TEXC" run "$T/best.tex" --schedule tuned --check >/dev/null 2>&1
check "the report's best schedule runs and matches the interpreter" $?

# 3. the curve alone
"$TEXC" records plot "$T/r.jsonl" -o "$T/c.svg" 2>/dev/null &&
  python3 -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); sys.exit(0 if r.tag.endswith("svg") and "class=\"curve\"" in open(sys.argv[1]).read() else 1)' "$T/c.svg"
check "plot writes a well-formed SVG curve" $?
"$TEXC" records plot "$T/r.jsonl" >/dev/null 2>&1; [ $? = 1 ]; check "plot without -o is a usage error" $?

# 4. strings from the log are escaped; an old log (no machine member) still loads
python3 - "$T/r.jsonl" "$T/evil.jsonl" "$T/old.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
with open(sys.argv[2], "w") as f:
    for i, r in enumerate(recs):
        r["kernel"] = "<b>mm</b>&"
        if i == 3: r["error"] = 2; r["costs_ms"] = []; r["error_msg"] = "<script>alert(1)</script>"
        r["machine"]["cpu"] = "<img src=x onerror=alert(2)>"
        f.write(json.dumps(r) + "\n")
with open(sys.argv[3], "w") as f:
    for r in recs: del r["machine"]; f.write(json.dumps(r) + "\n")
PY
"$TEXC" records report "$T/evil.jsonl" -o "$T/evil.html" 2>/dev/null &&
  ! grep -q "<script\|<img\|<b>mm" "$T/evil.html" &&
  html "$T/evil.html" contains "&lt;script&gt;alert(1)&lt;/script&gt;" &&
  html "$T/evil.html" contains "&lt;b&gt;mm&lt;/b&gt;&amp;" && html "$T/evil.html" contains "<td>compile</td><td>1</td>"
check "every string from the log is escaped; errors by kind" $?
"$TEXC" records report "$T/old.jsonl" -o "$T/old.html" 2>/dev/null && [ "$(html "$T/old.html" rows)" = 1 ] &&
  html "$T/old.html" contains "<i>not recorded</i>"
check "an old log without the machine still reports" $?

# 5. a network: its section, each task's share, one row per task
cat >"$T/two.tex" <<'NET'
import "nn/conv2d.tex"
import "nn/elementwise.tex"
network two(x: f32[1, 8, 8, 8], w: f32[3, 3, 8, 8], w2: f32[1, 1, 8, 16], b: f32[8]) -> y: f32[1, 8, 8, 16] {
  h = conv2d_nhwc(x, w, PH = 1, PW = 1)
  h = bias_add(h, b)
  h = relu(h)
  y = conv2d_nhwc(h, w2)
}
NET
if timeout 300 "$TEXC" tune "$T/two.tex" --trials 8 --round 4 --records "$T/n.jsonl" >"$T/n.out" 2>"$T/n.err"; then
  grep -q "^network:    8/8 trials, best .* ms, .* trials/s$" "$T/n.err"; check "network tune: a progress line per round" $?
  "$TEXC" records report "$T/n.jsonl" -o "$T/n.html" 2>/dev/null && [ "$(html "$T/n.html" rows)" = 2 ] &&
    html "$T/n.html" contains "<h2>Network two</h2>" && [ "$(grep -o '<rect class="share"' "$T/n.html" | wc -l)" = 2 ] &&
    html "$T/n.html" structure
  check "network report: latency over time, each task's share, one row per task (2)" $?
else
  bad "network tune for the report"; tail -5 "$T/n.err"
fi

# 6. bench --json: one document with the machine and the timing of each schedule
"$TEXC" bench "$T/mm.tex" --json --repeat 3 >"$T/b.json" 2>/dev/null &&
  python3 - "$T/b.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"][0]
ok = d["machine"]["cpu"] and d["machine"]["isa"] and d["target"] == "llvm" and d["texc"]
ok = ok and r["kernel"] == "matmul" and r["schedule"] == "default" and r["runs"] == 3
ok = ok and 0 < r["min_ms"] <= r["median_ms"] and r["gflops"] > 0 and r["gbs"] > 0
sys.exit(0 if ok else 1)
PY
check "bench --json: machine, median, min, runs, GFLOP/s, GB/s" $?
# a network's document has the same shape: one result, the forward pass
"$TEXC" bench examples/mobilenet.tex -D HW=32 --json --repeat 3 >"$T/bn.json" 2>/dev/null &&
  python3 - "$T/bn.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
ok = d["machine"]["cpu"] and d["network"] == "mobilenet" and len(r) == 1
ok = ok and r[0]["kernel"] == "mobilenet" and r[0]["schedule"] == "network" and r[0]["runs"] == 3
ok = ok and 0 < r[0]["min_ms"] <= r[0]["median_ms"] and r[0]["mean_ms"] > 0
sys.exit(0 if ok else 1)
PY
check "bench --json of a network: the same document, one result" $?

# 7. rendered by headless Chromium: a PNG that is not blank and shows the curves
browser=$(command -v chromium || command -v chromium-browser)
if [ -z "$browser" ]; then
  skip "rendered page" "chromium is not installed (scripts/install-deps.sh installs it)"
else
  timeout 180 "$browser" --headless --disable-gpu --no-sandbox --user-data-dir="$T/chrome" \
    --window-size=1200,1000 --screenshot="$T/r.png" "file://$T/r.html" >"$T/chrome.log" 2>&1
  if [ ! -s "$T/r.png" ]; then
    skip "rendered page" "chromium could not run: $(grep -v '^\[' "$T/chrome.log" | tail -1)"
  else
    python3 - "$T/r.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR": hdr = struct.unpack(">IIBBBBB", body)
    if kind == b"IDAT": idat += body
    pos += 12 + n
w, h, depth, ctype = hdr[:4]
bpp = {2: 3, 6: 4}[ctype]
assert depth == 8
raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
for y in range(h):  # undo the PNG row filters
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line)); prev = line
colours = {}
for line in rows:
    for x in range(0, stride, bpp):
        px = line[x:x + 3]; colours[px] = colours.get(px, 0) + 1
def near(rgb):
    return sum(n for c, n in colours.items() if all(abs(c[i] - rgb[i]) < 24 for i in range(3)))
# the best-so-far curve (red) and the wall-time curve (blue) are drawn with 2 px strokes
ok = len(colours) > 16 and near((0xd6, 0x27, 0x28)) > 100 and near((0x1f, 0x77, 0xb4)) > 100
print("colours %d, red %d, blue %d" % (len(colours), near((0xd6, 0x27, 0x28)), near((0x1f, 0x77, 0xb4))))
sys.exit(0 if ok else 1)
PY
    check "rendered by headless chromium: a PNG, not blank, with both curves" $?
  fi
fi
