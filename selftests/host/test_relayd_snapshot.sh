#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test (no kernel): flight-recorder snapshots of a session that
# streams to an lttng-relayd. pea trace writes snapshot N as
# trace_snapshot_open() opens it (tools/pea/trace_out.c): beside
# --output DIR, DIR.N; to relayd, a snapshot session of its own named
# SESSION.N, which relayd stores as HOST/SESSION.N-DATE-TIME/pea/.
# build/host/ctf_feed --snapshot N writes the same synthetic events to
# both; a real lttng-relayd on 127.0.0.1 (ports found free). TAP on
# stdout.
#
#  1. snapshots 1 and 2 (1000 and 3000 events, 7 records lost on CPU 1):
#     each is its own relayd session, numbered as the directories are;
#     relayd's copy of each is DIR.N byte for byte; babeltrace2 reads the
#     same events and the same discarded count from both;
#  2. a session name too long for relayd once numbered: a clear error.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TAP_NAME='relayd snapshot'
TAP_DETAIL_LINES=20
. "$ROOT/selftests/host/host_tap.sh"
BIN=$ROOT/build/host
TMP=$(mktemp -d /tmp/pea-relayd-snap.XXXXXX)
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT


. "$ROOT/selftests/host/relayd_start.sh"
relayd_tools

# Wait until relayd's copy $2 has the files and the bytes of $1.
same_files() {
	local a=$1 b=$2
	[ -d "$a" ] && [ -d "$b" ] &&
	[ "$(cd "$a" && ls | sort)" = "$(cd "$b" && ls | grep -v '^index$' | sort)" ] &&
	[ "$(cd "$a" && cat ./* | wc -c)" = "$(cd "$b" && cat metadata stream_* | wc -c)" ]
}

start_relayd "$TMP/r" || { ok 1 "lttng-relayd starts on 127.0.0.1"; echo "1..$N"; exit 1; }
URL=net://127.0.0.1:$CTRL:$DATA

for snap in 1 2; do
	events=$((snap == 1 ? 1000 : 3000))
	out=$("$BIN/ctf_feed" --snapshot "$snap" --events "$events" --session snapsess \
		"$TMP/local" "$URL" 2> "$TMP/feed$snap.err")
	rc=$?
	want="snapshot $snap: $TMP/local.$snap
snapshot $snap: $URL (host feedhost, session snapsess.$snap)"
	[ "$rc" = 0 ] && [ "$(printf '%s\n' "$out" | head -2)" = "$want" ]
	ok $? "snapshot $snap ($events events): to $TMP/local.$snap and to relayd's session snapsess.$snap, status 0" \
		"rc $rc: $out $(cat "$TMP/feed$snap.err")"
	rdir=
	for _ in $(seq 100); do
		rdir=$(ls -d "$TMP"/r/feedhost/snapsess."$snap"-*/pea 2>/dev/null | head -1)
		[ -n "$rdir" ] && same_files "$TMP/local.$snap" "$rdir" && break
		sleep 0.1
	done
	[ -n "$rdir" ] && [ "$(ls -d "$TMP"/r/feedhost/snapsess."$snap"-* | wc -l)" = 1 ]
	ok $? "relayd stores snapshot $snap as feedhost/snapsess.$snap-DATE-TIME/pea" \
		"$(ls -R "$TMP/r" | head -20)"
	diffs=
	for f in $(cd "$TMP/local.$snap" && ls); do
		cmp -s "$TMP/local.$snap/$f" "$rdir/$f" || diffs="$diffs $f"
	done
	[ -z "$diffs" ] && [ -n "$(ls "$TMP/local.$snap")" ]
	ok $? "relayd's copy of snapshot $snap is $TMP/local.$snap byte for byte ($(cd "$TMP/local.$snap" && ls | tr '\n' ' '))" \
		"differ:$diffs"
	babeltrace2 "$TMP/local.$snap" > "$TMP/l$snap.txt" 2> "$TMP/l$snap.err"
	babeltrace2 "$rdir" > "$TMP/r$snap.txt" 2> "$TMP/r$snap.err"
	nl=$(wc -l < "$TMP/l$snap.txt")
	dl=$(grep -o 'discarded [0-9]* events' "$TMP/l$snap.err" | sort | uniq -c | tr -s ' ')
	dr=$(grep -o 'discarded [0-9]* events' "$TMP/r$snap.err" | sort | uniq -c | tr -s ' ')
	[ "$nl" = "$events" ] && cmp -s "$TMP/l$snap.txt" "$TMP/r$snap.txt" &&
		[ "$dl" = " 1 discarded 7 events" ] && [ "$dl" = "$dr" ]
	ok $? "babeltrace2 reads the same $nl events (want $events) and the same discarded count ($dl) from both" \
		"relayd: $(wc -l < "$TMP/r$snap.txt") events, $dr"
done
# The two snapshots are two traces, not one.
n1=$(babeltrace2 "$TMP"/r/feedhost/snapsess.1-*/pea 2>/dev/null | wc -l)
n2=$(babeltrace2 "$TMP"/r/feedhost/snapsess.2-*/pea 2>/dev/null | wc -l)
[ "$n1" = 1000 ] && [ "$n2" = 3000 ]
ok $? "snapshots 1 and 2 are separate traces in relayd: $n1 and $n2 events"

long=$(printf 's%.0s' $(seq 253))
out=$("$BIN/ctf_feed" --snapshot 12 --events 10 --session "$long" "$URL" 2>&1)
rc=$?
[ "$rc" = 1 ] && printf '%s\n' "$out" | grep -q "the snapshot's session name s*\.12 is longer than relayd's 254 bytes"
ok $? "a session name too long once numbered (253 + '.12'): status 1 and a clear message" "rc $rc: $out"

echo "1..$N"
[ "$FAILED" = 0 ]
