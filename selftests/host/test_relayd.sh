#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test (no kernel): pea's CTF writer streaming to a real lttng-relayd
# on 127.0.0.1 (ports found free), fed by build/host/ctf_feed (the
# writer's code linked in; a synthetic trace on 4 CPUs with 7 records
# lost on CPU 1). TAP on stdout.
#
#  1. one run to a local directory and to relayd at once: relayd's copy
#     is the directory byte for byte (the same files, the same bytes);
#     babeltrace2 prints the same events from both and the same
#     "discarded 7 events";
#     the same with full (256 KiB) packets;
#  2. live: babeltrace2 --input-format=lttng-live, attached before any
#     event is produced, prints those events and that count, and ends
#     (status 0) when the session closes;
#  3. relayd killed mid-stream: status 1, pea's message, every event
#     still fed, no call longer than a second, the local copy complete;
#  4. relayd stopped (SIGSTOP): the first call that waits on it gives up
#     after the timeout (500 ms here), status 1, the rest go on;
#  5. nothing listening: status 1 and pea's message at open.
#
# Needs lttng-relayd (lttng-tools) and babeltrace2 (scripts/setup.sh);
# make host-tests builds the programs.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TAP_NAME='relayd'
TAP_DETAIL_LINES=20
. "$ROOT/selftests/host/host_tap.sh"
BIN=$ROOT/build/host
TMP=$(mktemp -d /tmp/pea-relayd.XXXXXX)
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT


. "$ROOT/selftests/host/relayd_start.sh"
relayd_tools

# babeltrace2's event lines and its discarded counts of trace $1.
events() { babeltrace2 "$1" 2>/dev/null; }
discarded() { grep -o 'discarded [0-9]* events between \[[^]]*\] and \[[^]]*\]' "$1"; }

# ---- 0. a directory, no live interval: pea trace --output DIR as before ----
# The SHA-256 of the files the writer made of this trace before it had
# sinks (commit 3656188's trace_ctf.c; the metadata's hostname set aside).
"$BIN/ctf_feed" --live-interval-ms 0 "$TMP/plain" > /dev/null 2> "$TMP/plain.err"
rc=$?
sums=$(cd "$TMP/plain" 2>/dev/null &&
	{ sed 's/^\thostname = ".*";$/\thostname = "H";/' metadata | sha256sum | sed 's/-$/metadata/'
	  sha256sum stream_*; } | awk '{ print $1, $2 }' | tr '\n' ' ')
want="22b2864412d9ac62b826f7e44135e60669b7a9b3135c82b9e1ca716d570b6ff2 metadata 515bfab34785cec4e9f19be3949d115372e4390148360f9269858efa44bd3817 stream_0 9cf7b9f62133d1f4b79d7f89fb0524a46bdeae12f13d138587c495c3f8c42b5c stream_1 d2fd3e3b3d6e02d07164ed2235a30980cf856e0528179bdc9c3dbf1811bba00a stream_2 "
[ "$rc" = 0 ] && [ "$sums" = "$want" ] && [ "$(ls "$TMP/plain" | tr '\n' ' ')" = "metadata stream_0 stream_1 stream_2 " ]
ok $? "a directory without live interval gets the bytes it got before sinks (metadata, stream_0..2)" \
	"got: $sums $(cat "$TMP/plain.err")"

# ---- 1. a local copy and relayd's ----
start_relayd "$TMP/r1" -v || { ok 1 "lttng-relayd starts on 127.0.0.1"; echo "1..$N"; exit 1; }
URL=net://127.0.0.1:$CTRL:$DATA
out=$("$BIN/ctf_feed" --session filesess "$TMP/local" "$URL" 2> "$TMP/feed1.err")
rc=$?
ok "$rc" "ctf_feed to a directory and to relayd: status 0 ($out)" "$(cat "$TMP/feed1.err")"
# relayd has the data once its streams are closed: wait for the sizes.
rdir=
for _ in $(seq 100); do
	rdir=$(ls -d "$TMP"/r1/feedhost/filesess-*/pea 2>/dev/null | head -1)
	if [ -n "$rdir" ] && [ "$(cd "$TMP/local" && ls | sort)" = "$(cd "$rdir" && ls | grep -v '^index$' | sort)" ] &&
	   [ "$(cd "$TMP/local" && cat ./* | wc -c)" = "$(cd "$rdir" && cat metadata stream_* | wc -c)" ]; then
		break
	fi
	sleep 0.1
done
files=$(cd "$TMP/local" && ls | tr '\n' ' ')
diffs=
for f in $(cd "$TMP/local" && ls); do
	cmp -s "$TMP/local/$f" "$rdir/$f" || diffs="$diffs $f"
done
[ -n "$rdir" ] && [ "$files" = "metadata stream_0 stream_1 stream_2 stream_3 " ] &&
	[ "$(cd "$rdir" && ls | grep -v '^index$' | tr '\n' ' ')" = "$files" ] && [ -z "$diffs" ]
ok $? "relayd's copy ${rdir#"$TMP"/r1/} is the local directory byte for byte ($files)" \
	"relayd dir: ${rdir:-none}; differing:$diffs; local: $(ls -l "$TMP/local")"

events "$TMP/local" > "$TMP/local.txt"
events "$rdir" > "$TMP/relayd.txt"
babeltrace2 "$TMP/local" 2>&1 >/dev/null | discarded /dev/stdin > "$TMP/local.disc"
babeltrace2 "$rdir" 2>&1 >/dev/null | discarded /dev/stdin > "$TMP/relayd.disc"
nl=$(wc -l < "$TMP/local.txt")
[ "$nl" = 4000 ] && cmp -s "$TMP/local.txt" "$TMP/relayd.txt"
ok $? "babeltrace2 prints the same 4000 events from both (local: $nl)"
[ "$(cat "$TMP/local.disc")" = "discarded 7 events between [00:00:01.499750000] and [00:00:01.500000000]" ] &&
	cmp -s "$TMP/local.disc" "$TMP/relayd.disc"
ok $? "babeltrace2 reports the same discarded count from both: $(cat "$TMP/relayd.disc")" \
	"local: $(cat "$TMP/local.disc") relayd: $(cat "$TMP/relayd.disc")"

# ---- 1b. full packets: 20000 events, a live interval longer than the
# trace, so every packet but the last of a stream ends at 256 KiB ----
out=$("$BIN/ctf_feed" --session fullsess --events 20000 --live-interval-ms 60000 \
	"$TMP/full" "$URL" 2> "$TMP/feed1b.err")
rc=$?
rdir=
for _ in $(seq 100); do
	rdir=$(ls -d "$TMP"/r1/feedhost/fullsess-*/pea 2>/dev/null | head -1)
	[ -n "$rdir" ] && [ "$(cd "$TMP/full" && cat ./* | wc -c)" = "$(cd "$rdir" && cat metadata stream_* 2>/dev/null | wc -c)" ] && break
	sleep 0.1
done
diffs=
for f in $(cd "$TMP/full" && ls); do
	cmp -s "$TMP/full/$f" "$rdir/$f" || diffs="$diffs $f"
done
size=$(stat -c %s "$TMP/full/stream_0")
[ "$rc" = 0 ] && [ -n "$rdir" ] && [ -z "$diffs" ] && [ "$size" -gt $((3 * 262144)) ]
ok $? "full packets: stream_0 of $size bytes, relayd's copy the same bytes ($out)" \
	"rc $rc, differing:$diffs $(cat "$TMP/feed1b.err")"

# ---- 2. live ----
rm -f "$TMP/ready"
"$BIN/ctf_feed" --session livesess --pace-us 250 --ready-file "$TMP/ready" \
	--wait-log "$TMP/r1.log" "Attach session ID" "$TMP/live-local" "$URL" \
	> "$TMP/feed2.out" 2> "$TMP/feed2.err" &
FEED=$!
PIDS+=("$FEED")
for _ in $(seq 200); do
	[ -e "$TMP/ready" ] && break
	sleep 0.05
done
# The session exists, no event is out yet: the viewer attaches now.
timeout 60 babeltrace2 --input-format=lttng-live \
	"net://127.0.0.1:$LIVE/host/feedhost/livesess" > "$TMP/live.txt" 2> "$TMP/live.err"
vrc=$?
wait "$FEED"
frc=$?
ok "$frc" "ctf_feed live, paced 250 us per event: status 0 ($(cat "$TMP/feed2.out"))" "$(cat "$TMP/feed2.err")"
ok "$vrc" "the live viewer ends with status 0 when the session closes" "$(tail -5 "$TMP/live.err")"
events "$TMP/live-local" > "$TMP/live-local.txt"
nl=$(wc -l < "$TMP/live.txt")
[ "$nl" = 4000 ] && cmp -s "$TMP/live.txt" "$TMP/live-local.txt"
ok $? "the live viewer, attached before production, prints the same 4000 events (got $nl)" \
	"$(diff "$TMP/live.txt" "$TMP/live-local.txt" | head -5)"
discarded "$TMP/live.err" > "$TMP/live.disc"
cmp -s "$TMP/live.disc" "$TMP/local.disc"
ok $? "the live viewer reports the same discarded count: $(cat "$TMP/live.disc")"

# ---- 3. relayd killed mid-stream ----
kill -KILL "$RELAYD"
start_relayd "$TMP/r3" -v || { ok 1 "lttng-relayd starts again"; echo "1..$N"; exit 1; }
URL=net://127.0.0.1:$CTRL:$DATA
out=$("$BIN/ctf_feed" --session killsess --pace-us 100 --kill "$RELAYD" 1500 \
	"$TMP/kill-local" "$URL" 2> "$TMP/feed3.err")
rc=$?
msg=$(cat "$TMP/feed3.err")
[ "$rc" = 1 ]
ok $? "relayd killed after 1500 events: status 1 (got $rc)"
printf '%s\n' "$msg" | grep -Eq "^pea: --output $URL: lost the connection to lttng-relayd at 127\.0\.0\.1:($CTRL|$DATA) \(.*\); the stream to it stops here$" &&
	[ "$(printf '%s\n' "$msg" | wc -l)" = 1 ]
ok $? "one message says so: $msg"
fed=$(printf '%s\n' "$out" | awk '{ print $2 }')
max=$(printf '%s\n' "$out" | awk '{ print $6 }')
[ "$fed" = 4000 ] && [ "$max" -lt 1000000 ]
ok $? "nothing blocked: all 4000 events fed, the longest call ${max} us (< 1 s)" "$out"
nl=$(events "$TMP/kill-local" | wc -l)
[ "$nl" = 4000 ]
ok $? "the local copy beside it has all 4000 events (got $nl)"

# ---- 4. relayd stopped: no answer ----
start_relayd "$TMP/r4" -v || { ok 1 "lttng-relayd starts again"; echo "1..$N"; exit 1; }
URL=net://127.0.0.1:$CTRL:$DATA
(sleep 0.3; kill -STOP "$RELAYD") &
out=$("$BIN/ctf_feed" --session stopsess --pace-us 200 --timeout-ms 500 "$URL" 2> "$TMP/feed4.err")
rc=$?
kill -CONT "$RELAYD"
msg=$(cat "$TMP/feed4.err")
max=$(printf '%s\n' "$out" | awk '{ print $6 }')
fed=$(printf '%s\n' "$out" | awk '{ print $2 }')
[ "$rc" = 1 ] && [ "$fed" = 4000 ] && [ "$max" -ge 500000 ] && [ "$max" -lt 1500000 ] &&
	printf '%s\n' "$msg" | grep -Eq "^pea: --output $URL: lttng-relayd at 127\.0\.0\.1:[0-9]+ did not answer within 500 ms \(.*\); the stream to it stops here$"
ok $? "relayd stopped: status $rc, all $fed events fed, one wait of ${max} us (500 ms timeout): $msg" "$out"
kill -KILL "$RELAYD"

# ---- 5. nothing listening ----
port=$("$BIN/free_ports" 1)
out=$("$BIN/ctf_feed" "net://127.0.0.1:$port" 2>&1)
rc=$?
[ "$rc" = 1 ] && [ "$out" = "pea: --output: cannot connect to lttng-relayd at 127.0.0.1:$port (control port): Connection refused" ]
ok $? "nothing on 127.0.0.1:$port: status $rc, $out"

echo "1..$N"
[ "$FAILED" = 0 ]
