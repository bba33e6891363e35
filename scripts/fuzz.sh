#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make fuzz` and `make soak`: boot the test guest once per kernel and run
# only build/selftests/test_fuzz in it, for longer than `make check` does
# (docs/fuzzing.md). The settings reach the program on the kernel command
# line (pea.fuzz_*). Reports TAP per kernel like scripts/check-kernel.sh
# (module load, the program's cases, rmmod, kernel log clean) into
# build/vm/MODE-KVER/.
#
# Usage: fuzz.sh fuzz|soak
#
# Environment (all optional):
#   KVERS          kernels, as scripts/check.sh (default: "default", 6.1)
#   FUZZ_SECONDS   fuzz: how long (default 600)
#   FUZZ_SEED      fuzz: the seed (default: random, printed first)
#   FUZZ_THREADS   fuzz: worker threads (default 4)
#   FUZZ_AVOID_KNOWN=1  fuzz: leave out the operations that hit defects
#                  known and being fixed (see docs/fuzzing.md)
#   FUZZ_SKIP=op,op  fuzz: leave out these operation families
#   DURATION       soak: seconds (default 300)
#   SKIP_BUILD, SMP, MEM, VERBOSE: as scripts/check-kernel.sh

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
MODE=${1:-fuzz}
case "$MODE" in
fuzz)
	SECS=${FUZZ_SECONDS:-600}
	EXTRA="pea.fuzz_seconds=$SECS"
	[ -n "${FUZZ_SEED:-}" ] && EXTRA+=" pea.fuzz_seed=$FUZZ_SEED"
	[ -n "${FUZZ_THREADS:-}" ] && EXTRA+=" pea.fuzz_threads=$FUZZ_THREADS"
	[ "${FUZZ_AVOID_KNOWN:-0}" = 1 ] && EXTRA+=" pea.fuzz_avoid_known=1"
	[ -n "${FUZZ_SKIP:-}" ] && EXTRA+=" pea.fuzz_skip=$FUZZ_SKIP"
	;;
soak)
	SECS=${DURATION:-300}
	EXTRA="pea.fuzz_mode=soak pea.fuzz_seconds=$SECS"
	;;
*)
	echo "usage: $0 fuzz|soak" >&2
	exit 2
	;;
esac

KVERS=${KVERS:-${KVER:-default}}
unset KVER
RC=0
for k in $KVERS; do
	kver=
	[ "$k" = default ] || kver=$k
	name=$("$ROOT/scripts/setup.sh" --resolve $kver 2>/dev/null || echo "$k")
	printf '%s: === kernel %s, %ss ===\n' "$MODE" "$name" "$SECS" >&2
	OUT=$ROOT/build/vm/$MODE-$name KVER=$kver TESTS=test_fuzz \
		TEST_TIMEOUT=$((SECS + 300)) VM_TIMEOUT=$((SECS + 900)) \
		APPEND_EXTRA="$EXTRA" "$ROOT/scripts/check-kernel.sh" || RC=1
	# The program's own report (seed, operation counts, figures).
	grep -E '^# (seed|replay|baseline|soak|  )|^# [a-z_]+ +[0-9]+ ' \
		"$ROOT/build/vm/$MODE-$name/results.txt" 2>/dev/null | tr -d '\r' >&2 || true
done
exit "$RC"
