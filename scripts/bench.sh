#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: pea against the kernel's perf buffer and BPF ring buffer,
# side by side in one run of the test guest (Debian's default kernel, 4
# vCPUs under TCG). Installs what it needs (scripts/setup.sh, then
# scripts/bench-setup.sh), builds pea.ko, bench/module/pea_bench.ko and
# build/bench/pea-bench, boots the guest in bench mode, and prints the
# table. The JSON (one object per figure) is written to
# build/bench/bench-STAMP.json (and build/bench/latest.json); the last
# line names it.
#
# `scripts/bench.sh --icount` (`make bench-icount`): instructions per
# record instead (bench/icount.c): a guest with one vCPU under QEMU's
# -icount shift=0,sleep=off, where a guest nanosecond is an instruction,
# running `pea-bench -f icount`, which measures everything twice and
# fails if the two passes differ by more than 1%. Its table and JSON go
# to build/bench/icount-STAMP.txt/.json (and latest-icount.*); it fails
# if pea-bench fails or the guest's kernel log has a splat.
#
# Environment (all optional):
#   BENCH_ARGS   arguments of pea-bench, space separated (e.g. "-q -r 3")
#   KVER, SKIP_BUILD=1, SMP, MEM, VM_TIMEOUT, VERBOSE: as scripts/check.sh
#   ICOUNT       with --icount: QEMU's -icount options (default
#                shift=0,sleep=off); empty: none, plain TCG in the same
#                one-vCPU guest (wall-clock ns: the check then fails)
#
# A benchmark, not a test: it fails only if it cannot produce figures
# (and, with --icount, if they do not repeat).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
MAKE=${MAKE:-make}
log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

ICOUNT_MODE=0
if [ "${1:-}" = --icount ]; then
	ICOUNT_MODE=1
fi

log "setting up"
VMLINUZ=$("$ROOT/scripts/setup.sh" ${KVER:+"$KVER"} | tail -n1) || die "setup failed"
"$ROOT/scripts/bench-setup.sh" || die "bench setup failed"
KVER=${VMLINUZ##*/vmlinuz-}
export KVER VMLINUZ

if [ "${SKIP_BUILD:-0}" != 1 ]; then
	log "building for $KVER"
	"$MAKE" -C "$ROOT" --no-print-directory -j"$(nproc)" module lib KVER="$KVER" >&2 ||
		die "build failed"
	"$MAKE" -C "$ROOT" --no-print-directory -j"$(nproc)" bench-tools KVER="$KVER" >&2 ||
		die "build of the bench program failed"
fi

PREFIX=bench
if [ "$ICOUNT_MODE" = 1 ]; then
	PREFIX=icount
	export OUT=${OUT:-$ROOT/build/bench/icount-vm}
	# One vCPU: QEMU 7.2 hangs at SMP bring-up under -icount.
	export SMP=1 ICOUNT=${ICOUNT-shift=0,sleep=off}
	BENCH_ARGS=${BENCH_ARGS:--f icount}
fi
export OUT=${OUT:-$ROOT/build/bench/vm}
export INITRAMFS=$OUT/initramfs.cpio.gz
"$ROOT/scripts/mkinitramfs.sh" "$INITRAMFS" "$ROOT/pea.ko" \
	"$ROOT/bench/module/pea_bench.ko" \
	"$ROOT/build/bench/pea-bench" >/dev/null || die "mkinitramfs failed"

log "booting the guest (bench mode${ICOUNT:+, -icount $ICOUNT})"
export BENCH_ARGS=${BENCH_ARGS:-}
VM_TIMEOUT=${VM_TIMEOUT:-1200} TEST_TIMEOUT=${TEST_TIMEOUT:-1170} \
	"$ROOT/scripts/vm-run.sh" bench || log "the guest did not finish cleanly"

RESULTS=$OUT/results.txt
grep -q '^# --- bench json end ---' "$RESULTS" 2>/dev/null || {
	tail -n 40 "$RESULTS" >&2 || true
	die "no figures came back (see $RESULTS and $OUT/console.log)"
}

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
JSON=$ROOT/build/bench/$PREFIX-$STAMP.json
TABLE=$ROOT/build/bench/$PREFIX-$STAMP.txt
LATEST=latest
[ "$ICOUNT_MODE" = 1 ] && LATEST=latest-icount
tr -d '\r' < "$RESULTS" | sed -n '/^# --- bench json begin ---$/,/^# --- bench json end ---$/p' |
	sed '1d;$d' > "$JSON"
cp "$JSON" "$ROOT/build/bench/$LATEST.json"
HOST_CPU=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
{
	printf '# %s, host %s (%s CPUs), QEMU TCG guest with %s vCPUs%s\n' \
		"$(date -u +%Y-%m-%d)" "$HOST_CPU" "$(nproc)" "${SMP:-4}" \
		"${ICOUNT:+, -icount $ICOUNT}"
	tr -d '\r' < "$RESULTS" |
		sed -n '/^# --- bench table begin ---$/,/^# --- bench table end ---$/p' |
		sed '1d;$d'
} > "$TABLE"
cp "$TABLE" "$ROOT/build/bench/$LATEST.txt"

# Anything the kernel complained about makes the figures suspect.
SPLAT=0
if grep -Eq '(^|[^A-Za-z0-9_])(BUG|WARNING)([^A-Za-z0-9_]|$)|Oops|Call Trace' \
	"$OUT/console.log"; then
	log "the guest's kernel log has a splat: see $OUT/console.log"
	SPLAT=1
fi

cat "$TABLE"
printf 'bench: table in %s\n' "$TABLE"
printf 'bench: JSON in %s\n' "$JSON"

if [ "$ICOUNT_MODE" = 1 ]; then
	tr -d '\r' < "$RESULTS" | grep '^pea-bench: icount: .*apart' >&2 || true
	tr -d '\r' < "$RESULTS" | grep '^pea-bench: sample: ' >&2 || true
	# Not grep -q: it stops at the match, and tr, still writing a long
	# results file, then dies of SIGPIPE, which pipefail reported as
	# "pea-bench failed" after "# exit pea-bench 0".
	tr -d '\r' < "$RESULTS" | grep '^# exit pea-bench 0$' > /dev/null ||
		die "pea-bench failed: $(tr -d '\r' < "$RESULTS" | grep '^# exit pea-bench' || echo 'no exit status')"
	[ "$SPLAT" = 0 ] || die "a kernel splat during the measurement"
	log "icount: every figure of the two passes within 1%"
fi
