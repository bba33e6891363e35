#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The figures of README's "Many machines": pea's CTF writer
# (build/host/ctf_feed, 1,000,000 synthetic events on 4 CPUs) streaming
# to an lttng-relayd on 127.0.0.1 (ports found free), RUNS runs of each:
#
#   dry    the feeder alone, writing nowhere (its own cost per event)
#   dir    to a directory (--live-interval-ms 0)
#   full   to relayd, packets cut only when full (256 KiB)
#   live   to relayd, packets cut every 100 ms of trace time (400 events)
#
# For each run: events/s and bytes/s over the feeding (ctf_feed's feed_us:
# the close and its live-interval wait excluded), the tool's CPU per event
# (user + system of the process, less the dry run's per event), and
# relayd's CPU for the run. Not a test: prints a table; make host-tests
# first. Usage: selftests/host/relayd_bench.sh [RUNS] [EVENTS]

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=$ROOT/build/host
RUNS=${1:-3}
EVENTS=${2:-1000000}
TMP=$(mktemp -d /tmp/pea-relayd-bench.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT

. "$ROOT/selftests/host/relayd_start.sh"
start_relayd "$TMP/r" || { echo "lttng-relayd does not start" >&2; exit 1; }
URL=net://127.0.0.1:$CTRL:$DATA

# CPU time of process $1 in clock ticks (utime + stime).
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

# One run: $1 the kind, the rest ctf_feed's arguments. Prints
# "events_per_s bytes_per_s cpu_ns_per_event relayd_ms".
run() {
	local kind=$1 out feed_us cpu bytes r0 r1
	shift
	r0=$(ticks "$RELAYD")
	out=$( { "$BIN/ctf_feed" --events "$EVENTS" "$@" > "$TMP/out" 2> "$TMP/err"; times; } 2>&1 )
	r1=$(ticks "$RELAYD")
	feed_us=$(grep -o 'feed_us [0-9]*' "$TMP/out" | cut -d' ' -f2)
	# times: the shell's line, then its children's "0m1.234s 0m0.567s".
	cpu=$(printf '%s\n' "$out" | tail -1 | awk '{
		split($1, u, /[ms]/); split($2, s, /[ms]/)
		print (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1e9 }')
	bytes=0
	case $kind in
	dir) bytes=$(cat "$TMP/dir"/stream_* | wc -c) ;;
	full|live) bytes=$(cat "$(ls -d "$TMP"/r/feedhost/"$kind"*/pea | tail -1)"/stream_* | wc -c) ;;
	esac
	awk -v n="$EVENTS" -v us="$feed_us" -v cpu="$cpu" -v b="$bytes" \
		-v rt=$((r1 - r0)) -v hz="$hz" 'BEGIN {
		printf "%.0f %.0f %.0f %.0f\n", n / (us / 1e6), b / (us / 1e6),
			cpu / n, rt * 1000 / hz }'
}

printf 'kind  run  events/s   bytes/s      cpu ns/event  (tool, dry cost not yet removed)  relayd ms\n'
dry=0
for kind in dry dir full live; do
	for i in $(seq "$RUNS"); do
		case $kind in
		dry) set -- --dry ;;
		dir) rm -rf "$TMP/dir"; set -- --live-interval-ms 0 "$TMP/dir" ;;
		full) set -- --live-interval-ms 0 --session "full$i" "$URL" ;;
		live) set -- --session "live$i" "$URL" ;;
		esac
		read -r eps bps cpu rms < <(run "$kind" "$@")
		[ "$kind" = dry ] && dry=$(( dry + cpu ))
		printf '%-5s %-4s %-10s %-12s %-13s %s\n' "$kind" "$i" "$eps" "$bps" "$cpu" "$rms"
	done
	[ "$kind" = dry ] && printf '# the feeder alone: %d ns per event (mean), to subtract\n' $((dry / RUNS))
done
printf '# load average: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
