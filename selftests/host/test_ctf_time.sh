#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test (no kernel): the CTF clock carries the offset from
# CLOCK_MONOTONIC to the epoch (pea trace reads it at start), so that
# babeltrace2 shows wall-clock times, while the raw clock values stay the
# records' time_ns. pea's writer fed by build/host/ctf_feed. TAP on stdout.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TAP_NAME='ctf time'
. "$ROOT/selftests/host/host_tap.sh"
BIN=$ROOT/build/host
TMP=$(mktemp -d /tmp/pea-ctftime.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# The first event is at CLOCK_MONOTONIC 1 s; the offset puts it at
# 2025-11-27T11:54:46.123456789Z.
OFF=1764244485123456789
"$BIN/ctf_feed" --live-interval-ms 0 --wall-offset-ns "$OFF" "$TMP/wall" > /dev/null
ok $? "ctf_feed with a wall-clock offset"
clock=$(sed -n '/^clock {/,/^};/p' "$TMP/wall/metadata" | tr -d '\t' | tr '\n' ' ')
[ "$clock" = 'clock { name = monotonic; description = "CLOCK_MONOTONIC, the clock of pea records"; freq = 1000000000; offset_s = 1764244485; offset = 123456789; absolute = false; }; ' ]
ok $? "the clock class: offset_s = 1764244485; offset = 123456789" "$clock"
first=$(babeltrace2 --clock-gmt --clock-date "$TMP/wall" 2>/dev/null | head -1 | cut -d' ' -f1-2)
[ "$first" = "[2025-11-27 11:54:46.123456789]" ]
ok $? "babeltrace2 --clock-gmt --clock-date shows the first event at its wall-clock time: $first"
last=$(babeltrace2 --clock-gmt --clock-date "$TMP/wall" 2>/dev/null | tail -1 | cut -d' ' -f1-2)
[ "$last" = "[2025-11-27 11:54:47.123206789]" ]
ok $? "and the last (999.75 ms later): $last"
cyc=$(babeltrace2 --clock-cycles "$TMP/wall" 2>/dev/null | head -1 | cut -d' ' -f1)
raw=$(babeltrace2 --clock-cycles "$TMP/wall" 2>/dev/null | head -1 | grep -o 'time_ns = [0-9]*')
[ "$cyc" = "[00000000001000000000]" ] && [ "$raw" = "time_ns = 1000000000" ]
ok $? "the clock's value is still the record's CLOCK_MONOTONIC time_ns: $cyc, $raw"

"$BIN/ctf_feed" --live-interval-ms 0 "$TMP/none" > /dev/null
grep -q '^	offset = 0;$' "$TMP/none/metadata" && ! grep -q offset_s "$TMP/none/metadata"
ok $? "without an offset the clock keeps offset = 0 (and no offset_s)"

echo "1..$N"
[ "$FAILED" = 0 ]
