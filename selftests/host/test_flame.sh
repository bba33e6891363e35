#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test (no kernel): pea's SVG flame graph as a browser shows it.
# `pea flamegraph` draws selftests/host/flame/example.folded (a fixed
# profile with process, user, kernel and module frames); the SVG is
# checked against the folded input (flame/flame_check.py: well-formed,
# the merged frames and their weights, widths summing at each depth,
# titles, colours by kind, labels), then Debian's headless Chromium
# (scripts/setup.sh installs it) renders it: the screenshot's pixels show
# each frame's colour where the SVG puts it and dark, clipped labels;
# driven by Chromium's own input events (flame/cdp_drive.py), hovering a
# frame shows its title, a click zooms to it, "Reset zoom" undoes it,
# "Search" with its prompt answered highlights the matches (green on the
# screenshot) and shows their share, Escape undoes both; #zoom= and
# #search= in the URL zoom (screenshot) and search (the matched share).
# Also the command's own contract: usage
# errors, malformed input named by its line, repeatable bytes. The
# screenshot is build/host/flame/flamegraph-example.png;
# PEA_FLAME_DOCS=1 copies it to docs/flamegraph-example.png. TAP on
# stdout; each Chromium run is bounded by a timeout (60 s, the session 90).

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PEA=$ROOT/build/tools/pea
DIR=$ROOT/selftests/host/flame
EXAMPLE=$DIR/example.folded
CHECK=(python3 "$DIR/flame_check.py")
OUT=$ROOT/build/host/flame
TMP=$(mktemp -d /tmp/pea-flame.XXXXXX)
N=0
FAILED=0

trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"

ok() {
	N=$((N + 1))
	if [ "$1" = 0 ]; then
		printf 'ok %d - flamegraph: %s\n' "$N" "$2"
	else
		printf 'not ok %d - flamegraph: %s\n' "$N" "$2"
		FAILED=$((FAILED + 1))
		[ -n "${3:-}" ] && printf '%s\n' "$3" | head -10 | sed 's/^/# /'
	fi
}

# checks CHECK-ARGS...: flame_check.py's cases as ours.
checks() {
	local line out rc
	out=$("${CHECK[@]}" "$@" 2>&1)
	rc=$?
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) ok 0 "${line#ok - }" ;;
		"not ok - "*) ok 1 "${line#not ok - }" ;;
		"# "*) printf '%s\n' "$line" ;;
		esac
	done <<< "$out"
	if [ "$rc" != 0 ]; then
		ok 1 "flame_check.py $1 ran (status $rc)" "$out"
	fi
}

# chrome ARGS...: headless Chromium, bounded, its own profile, 1:1 pixels.
chrome() {
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--no-first-run --user-data-dir="$TMP/profile" \
		--hide-scrollbars --force-device-scale-factor=1 \
		--virtual-time-budget=3000 "$@" 2>>"$TMP/chromium.log"
}

# ---- the command ----
out=$("$PEA" flamegraph --help)
ok $? "--help exits 0"
case "$out" in *"usage: pea flamegraph"*) r=0 ;; *) r=1 ;; esac
ok $r "--help shows the usage"
err=$("$PEA" flamegraph --bogus < /dev/null 2>&1 >/dev/null)
rc=$?
[ $rc = 2 ] && [[ "$err" == *"unknown option '--bogus'"* ]]
ok $? "an unknown option: exit 2 and says which (got $rc: $err)"
err=$("$PEA" flamegraph a b 2>&1 >/dev/null)
[ $? = 2 ]
ok $? "two input files: exit 2 ($err)"
err=$("$PEA" flamegraph --title 2>&1 >/dev/null)
[ $? = 2 ]
ok $? "--title without a value: exit 2 ($err)"
err=$("$PEA" flamegraph "$TMP/none.folded" 2>&1 >/dev/null)
rc=$?
[ $rc = 1 ] && [[ "$err" == *"none.folded: No such file or directory"* ]]
ok $? "a missing file: exit 1, named ($err)"
err=$(printf 'a;b 3\na;b\n' | "$PEA" flamegraph 2>&1 >/dev/null)
rc=$?
[ $rc = 1 ] && [ "$err" = "pea: flamegraph: standard input: line 2: no weight at the end of the line" ]
ok $? "malformed input: exit 1 and the line named (got $rc: $err)"

"$PEA" flamegraph --title "pea profile -F 99 (example)" "$EXAMPLE" > "$OUT/example.svg"
ok $? "pea flamegraph FILE writes the example's SVG"
"$PEA" flamegraph --title "pea profile -F 99 (example)" < "$EXAMPLE" > "$TMP/stdin.svg"
cmp -s "$OUT/example.svg" "$TMP/stdin.svg"
ok $? "from standard input: the same bytes"
"$PEA" flamegraph --title "pea profile -F 99 (example)" "$EXAMPLE" > "$TMP/again.svg"
cmp -s "$OUT/example.svg" "$TMP/again.svg"
ok $? "drawn again: the same bytes (colours are deterministic)"
err=$("$PEA" flamegraph --unit ns < /dev/null 2>&1 > "$TMP/empty.svg")
rc=$?
[ $rc = 0 ] && [[ "$err" == *"no stacks"* ]] &&
	python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$TMP/empty.svg" &&
	grep -q '<title>all (0 ns, 100.00%)</title>' "$TMP/empty.svg"
ok $? "no stacks: a warning, a well-formed SVG with only the root, the unit ns ($rc: $err)"

# ---- the document against its input ----
checks svg "$OUT/example.svg" "$EXAMPLE"

# ---- in the browser ----
CHROMIUM=$(command -v chromium || command -v chromium-browser)
if [ -z "$CHROMIUM" ]; then
	ok 1 "Chromium is installed (scripts/setup.sh installs Debian's chromium)"
	echo "1..$N"
	exit 1
fi
ok 0 "Chromium: $("$CHROMIUM" --version 2>/dev/null | head -1)"
H=$(sed -n 's/^<svg [^>]* height="\([0-9]*\)".*/\1/p' "$OUT/example.svg")

rm -f "$OUT/flamegraph-example.png"
chrome --window-size=1200,"$H" --screenshot="$OUT/flamegraph-example.png" \
	"file://$OUT/example.svg" > /dev/null
rc=$?
[ $rc = 0 ] && [ -s "$OUT/flamegraph-example.png" ]
ok $? "Chromium renders the SVG to a screenshot (status $rc)" "$(tail -5 "$TMP/chromium.log")"
checks png "$OUT/flamegraph-example.png" "$OUT/example.svg" "$EXAMPLE"

# A person's session, Chromium's own input events through the DevTools
# protocol: the pointer over flush_log, a click there, Reset zoom, Search
# with its prompt answered, Escape.
read -r zid zx zy < <("${CHECK[@]}" pick "$OUT/example.svg" flush_log)
rm -rf "$OUT/session"
mkdir -p "$OUT/session"
timeout 90 python3 "$DIR/cdp_drive.py" "$CHROMIUM" "file://$OUT/example.svg" 1200 "$H" \
	"$zx" "$zy" "$OUT/session"
ok $? "Chromium, driven over --remote-debugging-pipe: pointer and clicks at ($zx, $zy), Reset zoom, Search, Escape" \
	"$(tail -5 "$OUT/session/cdp-chromium.log" 2>/dev/null)"
checks session "$OUT/session/session.json" "$OUT/example.svg" "$EXAMPLE" "$zid" \
	'^spin$|write' "$OUT/session"

chrome --window-size=1200,"$H" --screenshot="$OUT/zoomed.png" \
	"file://$OUT/example.svg#zoom=$zid" > /dev/null
ok $? "Chromium renders #zoom=$zid"
checks zoomed "$OUT/zoomed.png" "$OUT/example.svg" "$zid"

chrome --dump-dom "file://$OUT/example.svg#search=%5Espin%24%7Cwrite" > "$TMP/search.dom"
ok $? "Chromium runs #search=^spin\$|write"
checks search "$TMP/search.dom" "$EXAMPLE" '^spin$|write'

if [ "${PEA_FLAME_DOCS:-0}" = 1 ]; then
	cp "$OUT/flamegraph-example.png" "$ROOT/docs/flamegraph-example.png"
	ok $? "copied to docs/flamegraph-example.png"
fi
cmp -s <(head -c 24 "$OUT/flamegraph-example.png") \
	<(head -c 24 "$ROOT/docs/flamegraph-example.png")
ok $? "docs/flamegraph-example.png is this example's screenshot (its PNG header and size: PEA_FLAME_DOCS=1 renews it)"

echo "1..$N"
[ "$FAILED" = 0 ]
