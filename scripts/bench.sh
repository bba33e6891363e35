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
# Environment (all optional):
#   BENCH_ARGS   arguments of pea-bench, space separated (e.g. "-q -r 3")
#   KVER, SKIP_BUILD=1, SMP, MEM, VM_TIMEOUT, VERBOSE: as scripts/check.sh
#
# A benchmark, not a test: it fails only if it cannot produce figures.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
MAKE=${MAKE:-make}
log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

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

export OUT=${OUT:-$ROOT/build/bench/vm}
export INITRAMFS=$OUT/initramfs.cpio.gz
"$ROOT/scripts/mkinitramfs.sh" "$INITRAMFS" "$ROOT/pea.ko" \
	"$ROOT/bench/module/pea_bench.ko" \
	"$ROOT/build/bench/pea-bench" >/dev/null || die "mkinitramfs failed"

log "booting the guest (bench mode)"
export BENCH_ARGS=${BENCH_ARGS:-}
VM_TIMEOUT=${VM_TIMEOUT:-1200} TEST_TIMEOUT=${TEST_TIMEOUT:-1170} \
	"$ROOT/scripts/vm-run.sh" bench || log "the guest did not finish cleanly"

RESULTS=$OUT/results.txt
grep -q '^# --- bench json end ---' "$RESULTS" 2>/dev/null || {
	tail -n 40 "$RESULTS" >&2 || true
	die "no figures came back (see $RESULTS and $OUT/console.log)"
}

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
JSON=$ROOT/build/bench/bench-$STAMP.json
TABLE=$ROOT/build/bench/bench-$STAMP.txt
tr -d '\r' < "$RESULTS" | sed -n '/^# --- bench json begin ---$/,/^# --- bench json end ---$/p' |
	sed '1d;$d' > "$JSON"
cp "$JSON" "$ROOT/build/bench/latest.json"
HOST_CPU=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
{
	printf '# %s, host %s (%s CPUs), QEMU TCG guest with %s vCPUs\n' \
		"$(date -u +%Y-%m-%d)" "$HOST_CPU" "$(nproc)" "${SMP:-4}"
	tr -d '\r' < "$RESULTS" |
		sed -n '/^# --- bench table begin ---$/,/^# --- bench table end ---$/p' |
		sed '1d;$d'
} > "$TABLE"
cp "$TABLE" "$ROOT/build/bench/latest.txt"

# Anything the kernel complained about makes the figures suspect.
if grep -Eq '(^|[^A-Za-z0-9_])(BUG|WARNING)([^A-Za-z0-9_]|$)|Oops|Call Trace' \
	"$OUT/console.log"; then
	log "the guest's kernel log has a splat: see $OUT/console.log"
fi

cat "$TABLE"
printf 'bench: table in %s\n' "$TABLE"
printf 'bench: JSON in %s\n' "$JSON"
