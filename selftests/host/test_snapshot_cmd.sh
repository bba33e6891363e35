#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test (no kernel): `pea snapshot PID|trace_PID|SESSION` finds the
# running pea trace flight recorder and sends it SIGUSR1, and refuses
# anything else. The traces are build/host/fake_trace processes started
# with argv[0] "pea" and a pea trace command line. TAP on stdout.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TAP_NAME='pea snapshot'
. "$ROOT/selftests/host/host_tap.sh"
BIN=$ROOT/build/host
PEA=$ROOT/build/tools/pea
TMP=$(mktemp -d /tmp/pea-snapcmd.XXXXXX)
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# fake NAME ARGS...: a stand-in pea trace, its output in $TMP/NAME; sets FAKE.
fake() {
	local name=$1
	shift
	(exec -a pea "$BIN/fake_trace" "$@") > "$TMP/$name" 2>&1 &
	FAKE=$!
	PIDS+=("$FAKE")
	for _ in $(seq 200); do
		grep -q ready "$TMP/$name" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

# signals NAME: how many SIGUSR1 the stand-in NAME got (after a moment).
signals() {
	sleep 0.1
	grep -c '^SIGUSR1' "$TMP/$1"
}

fake flight trace kprobe:x -qF --output net://127.0.0.1 --format ctf --session sess42
F1=$FAKE
out=$("$PEA" snapshot sess42 2>&1)
rc=$?
[ "$rc" = 0 ] && [ "$(signals flight)" = 1 ] && [ "$out" = "pea: asked pea trace $F1 for a snapshot" ]
ok $? "by --session name: exit $rc, one SIGUSR1 ($out)"
out=$("$PEA" snapshot "trace_$F1" 2>&1)
rc=$?
[ "$rc" = 0 ] && [ "$(signals flight)" = 2 ]
ok $? "by map name trace_$F1: exit $rc, a second SIGUSR1"
out=$("$PEA" snapshot "$F1" 2>&1)
rc=$?
[ "$rc" = 0 ] && [ "$(signals flight)" = 3 ]
ok $? "by pid: exit $rc, a third SIGUSR1"

fake plain trace kprobe:x --json --session sess43 --output net://127.0.0.1 --format ctf
out=$("$PEA" snapshot "$FAKE" 2>&1)
rc=$?
[ "$rc" = 1 ] && [ "$(signals plain)" = 0 ] &&
	[ "$out" = "pea: pea trace $FAKE is not a flight recorder (--flight-recorder): it has no snapshots to take" ]
ok $? "a pea trace without --flight-recorder: exit $rc, no signal ($out)"

fake long trace kprobe:x --flight-recorder --session=sess44 --output net://127.0.0.1 --format ctf
out=$("$PEA" snapshot sess44 2>&1)
rc=$?
[ "$rc" = 0 ] && [ "$(signals long)" = 1 ]
ok $? "--flight-recorder and --session=NAME spelt long: exit $rc, one SIGUSR1"

out=$("$PEA" snapshot $$ 2>&1)
rc=$?
[ "$rc" = 1 ] && [ "$out" = "pea: no pea trace is $$" ]
ok $? "a process that is no pea trace: exit $rc ($out)"
out=$("$PEA" snapshot nosuchsession 2>&1)
rc=$?
[ "$rc" = 1 ] && [ "$out" = "pea: no pea trace is nosuchsession" ]
ok $? "no such session: exit $rc ($out)"

fake twin trace kprobe:x -F --session sess42 --output net://127.0.0.1 --format ctf
out=$("$PEA" snapshot sess42 2>&1)
rc=$?
[ "$rc" = 1 ] && [ "$(signals flight)" = 3 ] && [ "$(signals twin)" = 0 ] &&
	[ "$out" = "pea: several pea traces stream as session 'sess42': name one by its pid" ]
ok $? "two traces of one session: exit $rc, neither signalled ($out)"

"$PEA" snapshot > /dev/null 2>&1
rc=$?
[ "$rc" = 2 ]
ok $? "no TARGET: a usage error (exit $rc)"

echo "1..$N"
[ "$FAILED" = 0 ]
