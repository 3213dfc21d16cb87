#!/bin/bash
# tests/suites/depgraph.sh — the folders of compiler/ depend one way (docs/DESIGN.md,
# "Dependencies go one way"): scripts/depgraph.py --strict over the build's objects finds
# no folder cycle, no edge against its ORDER and no file cycle it does not call inherent.
# Then the script itself on a made-up build with one back-edge (front -> cli), which it
# must reject. Environment: $BUILD (the build folder). Prints ok / not ok / skip lines.
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.."
ok() { echo "ok - depgraph: $1"; }
bad() { echo "not ok - depgraph: $1"; }

if ! command -v nm >/dev/null; then
  echo "skip - depgraph: no nm"
  exit 0
fi
out=$(python3 scripts/depgraph.py "$BUILD" --strict 2>&1); rc=$?
if [ $rc = 0 ]; then ok "compiler/ folders follow the order, no folder cycle"
else bad "compiler/ folders follow the order, no folder cycle"; sed -n '/^file cycles/,$p' <<<"$out"; fi

T=$(mktemp -d /tmp/texc-depgraph-XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/compiler/front" "$T/compiler/cli" "$T/b/compiler/front" "$T/b/compiler/cli"
echo 'int cli_thing(void); int front_thing(void) { return cli_thing(); }' >"$T/compiler/front/f.c"
echo 'int cli_thing(void) { return 1; }' >"$T/compiler/cli/c.c"
${CC:-cc} -c -o "$T/b/compiler/front/f.o" "$T/compiler/front/f.c" &&
  ${CC:-cc} -c -o "$T/b/compiler/cli/c.o" "$T/compiler/cli/c.c" || { bad "a made-up build compiles"; exit 0; }
out=$(cd "$T" && python3 "$OLDPWD/scripts/depgraph.py" b --strict 2>&1); rc=$?
if [ $rc = 1 ] && grep -q 'front -> cli' <<<"$out"; then ok "--strict rejects a back-edge (front -> cli)"
else bad "--strict rejects a back-edge (front -> cli)"; echo "$out"; fi
