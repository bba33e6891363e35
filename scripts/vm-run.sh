#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the pea test guest in QEMU (TCG only, never KVM) and wait for it to
# power itself off.
#
# Usage: scripts/vm-run.sh [MODE [TESTS]]
#
# Environment (all optional):
#   MODE          check | demo | shell | bench | canary   (default check)
#   BENCH_ARGS    bench mode: arguments of pea-bench
#   TESTS         tests to run, comma or space separated (default: all)
#   SKIP_TESTS    tests not to run when TESTS is empty, comma separated
#   KVER          kernel release (default: .cache/kver, see setup.sh)
#   VMLINUZ       kernel image (default .cache/kernel/$KVER/boot/vmlinuz-$KVER)
#   INITRAMFS     initramfs (default $OUT/initramfs.cpio.gz)
#   OUT           output directory (default build/vm)
#   SMP, MEM      guest CPUs and memory (default 4, 1G)
#   VM_CPU        QEMU -cpu model (default max,-cx16, see below)
#   TCG_OPTS      extra -accel tcg options (default thread=single, but
#                 none for bench mode); thread=multi runs each vCPU on a
#                 host thread of its own (scripts/check-kernel.sh mt-*)
#   VM_TIMEOUT    seconds before the guest is killed (default 1800)
#   TEST_TIMEOUT  per-test timeout inside the guest (default 300)
#   APPEND_EXTRA  more kernel command line
#   ICOUNT        QEMU -icount options (e.g. shift=0,sleep=off: guest time
#                 advances 1 ns per instruction; single-threaded TCG;
#                 QEMU 7.2 hangs at SMP bring-up with it, so SMP=1);
#                 default none (scripts/bench-icount.sh)
#   TIME_SCALE    passed to the tests as PEA_TIME_SCALE (pea.time_scale=)
#   VERBOSE=1     also show the kernel console on stderr while it runs
#   FOLLOW=results  show the results channel on stdout while it runs
#
# Output in $OUT:
#   console.log   the kernel console (ttyS0)
#   results.txt   the results channel (ttyS1), see scripts/guest-init.sh
#   qemu.log      QEMU's own stderr
#   status        "exit RC" of QEMU and "seconds N"
#   qemu.cmdline  QEMU's command line
#
# Exit status: 0 when the guest powered off by itself, 124 when it was
# killed by the timeout, else QEMU's exit status.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() { printf 'vm-run: error: %s\n' "$*" >&2; exit 2; }

MODE=${1:-${MODE:-check}}
TESTS=${2:-${TESTS:-}}
OUT=${OUT:-$ROOT/build/vm}
SMP=${SMP:-4}
MEM=${MEM:-1G}
VM_TIMEOUT=${VM_TIMEOUT:-1800}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
INITRAMFS=${INITRAMFS:-$OUT/initramfs.cpio.gz}

if [ -z "${VMLINUZ:-}" ]; then
	KVER=$("$ROOT/scripts/setup.sh" --resolve ${KVER:+"$KVER"})
	VMLINUZ=$ROOT/.cache/kernel/$KVER/boot/vmlinuz-$KVER
fi
[ -s "$VMLINUZ" ] || die "$VMLINUZ missing: run scripts/setup.sh ${KVER:-}"
[ -s "$INITRAMFS" ] || die "$INITRAMFS missing: run scripts/mkinitramfs.sh"
command -v qemu-system-x86_64 >/dev/null ||
	die "qemu-system-x86_64 missing: run scripts/setup.sh"

case "$MODE" in
check|demo|shell|bench|canary) ;;
*) die "unknown MODE '$MODE' (check, demo, shell, bench or canary)" ;;
esac

# Kernel parameters cannot hold spaces: pass the list comma separated.
TESTS=$(printf '%s' "$TESTS" | tr -s ' \t\n' ',,,' | sed 's/^,//; s/,$//')

# One host thread runs every vCPU in turn, except for benchmarks: with
# multi-threaded TCG, code the kernel patches (kprobes, ftrace) while other
# vCPUs run through it is not coherent, and the guest executes stale int3s
# and ftrace calls (README, known issues). Round-robin vCPUs still
# interleave and interrupt each other, NMIs included.
if [ "$MODE" = bench ]; then
	TCG_OPTS=${TCG_OPTS-}
else
	TCG_OPTS=${TCG_OPTS-thread=single}
fi
# The guest learns which it is (pea.tcg=, PEA_TCG for the tests):
# test_tcg_threads asserts that the vCPUs run one at a time, or at once.
case ",$TCG_OPTS," in
*,thread=single,*) TCG_MODE=single ;;
*,thread=multi,*) TCG_MODE=multi ;;
*) TCG_MODE= ;;		# QEMU's default (multi for x86 on x86)
esac

# No CMPXCHG16B in the guest CPU, in every mode: QEMU 7.2's TCG computes
# its flags from stale condition-code state, so after it RFLAGS holds
# the low 32 bits of a register (reserved bits, TF, DF, AC...), and an
# interrupt before the next flag-setting instruction pushes them and IRET
# loads them. The 6.12 kernel's SLUB fast path (cmpxchg16b; jne) died of
# it under test_storm's interrupt storm, ~1 run in 25; without CX16 the
# kernel uses its emulation (pushf; cli; ...) and the Oops is gone.
# scripts/qemu-repro/ reproduces it without pea and test_guest_cpu checks
# the CPU (docs/qemu-cmpxchg16b.md). Benchmarks too: no pea or BPF output
# path uses CMPXCHG16B, the slab fast path gets slower.
VM_CPU=${VM_CPU:-max,-cx16}

# rcu_expedited: grace periods by IPI, not by waiting for ticks, which
# under TCG makes every kprobe detach (two grace periods) many times faster.
# no_timer_check: x86's boot check that the IO-APIC delivers the timer
# counts ticks against a busy loop, which fails ("IO-APIC + timer doesn't
# work!", a panic) when the host leaves the vCPU unscheduled; the debug
# kernel met it with the host's two cores loaded. Linux skips it on
# hypervisors it knows for the same reason.
APPEND="console=ttyS0 loglevel=7 panic=5 rcupdate.rcu_expedited=1 no_timer_check"
APPEND+=" pea.mode=$MODE pea.timeout=$TEST_TIMEOUT"
[ -n "$TESTS" ] && APPEND+=" pea.tests=$TESTS"
[ -n "${SKIP_TESTS:-}" ] && APPEND+=" pea.skip=$SKIP_TESTS"
[ -n "${TIME_SCALE:-}" ] && APPEND+=" pea.time_scale=$TIME_SCALE"
[ -n "$TCG_MODE" ] && APPEND+=" pea.tcg=$TCG_MODE"
[ -n "${APPEND_EXTRA:-}" ] && APPEND+=" $APPEND_EXTRA"
# bench mode: pea-bench's arguments, comma separated (scripts/bench.sh).
if [ -n "${BENCH_ARGS:-}" ]; then
	APPEND+=" pea.bench=$(printf '%s' "$BENCH_ARGS" | tr -s ' \t' ',,')"
fi

mkdir -p "$OUT"
rm -f "$OUT/console.log" "$OUT/results.txt" "$OUT/qemu.log" "$OUT/status"
: > "$OUT/console.log"
: > "$OUT/results.txt"

# ttyS0: kernel console; ttyS1: results channel.
if [ "$MODE" = shell ]; then
	CONSOLE=(-chardev "stdio,id=con,signal=on,logfile=$OUT/console.log")
	STDIN=/dev/stdin
else
	CONSOLE=(-chardev "file,id=con,path=$OUT/console.log")
	STDIN=/dev/null
fi

QEMU=(qemu-system-x86_64
	-accel "tcg${TCG_OPTS:+,$TCG_OPTS}" -cpu "$VM_CPU" -smp "$SMP" -m "$MEM"
	${ICOUNT:+-icount "$ICOUNT"}
	-nodefaults -nographic -no-reboot
	-kernel "$VMLINUZ" -initrd "$INITRAMFS" -append "$APPEND"
	"${CONSOLE[@]}" -serial chardev:con)
# RESULTS_PORT=0 leaves the second port out (to test the guest's fallback
# to the console).
if [ "${RESULTS_PORT:-1}" != 0 ]; then
	QEMU+=(-chardev "file,id=res,path=$OUT/results.txt" -serial chardev:res)
fi

FOLLOWERS=()
cleanup() {
	local p
	for p in "${FOLLOWERS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
}
trap cleanup EXIT

if [ "${VERBOSE:-0}" = 1 ] && [ "$MODE" != shell ]; then
	tail -n +1 -f "$OUT/console.log" >&2 &
	FOLLOWERS+=($!)
fi
if [ "${FOLLOW:-}" = results ]; then
	tail -n +1 -f "$OUT/results.txt" &
	FOLLOWERS+=($!)
fi

printf 'vm-run: %s, mode %s, %s CPUs, -accel %s, timeout %ss, output in %s\n' \
	"$(basename "$VMLINUZ")" "$MODE" "$SMP" "tcg${TCG_OPTS:+,$TCG_OPTS}" \
	"$VM_TIMEOUT" "$OUT" >&2
# What ran, for the record (scripts/check-kernel.sh reports it).
for a in "${QEMU[@]}"; do
	case "$a" in *' '*) printf "'%s' " "$a" ;; *) printf '%s ' "$a" ;; esac
done | sed 's/ $//' > "$OUT/qemu.cmdline"
echo >> "$OUT/qemu.cmdline"

start=$(date +%s.%N)
rc=0
timeout -k 10 "$VM_TIMEOUT" "${QEMU[@]}" < "$STDIN" 2> "$OUT/qemu.log" || rc=$?
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

# Let the followers print the last lines.
if [ "${#FOLLOWERS[@]}" -gt 0 ]; then
	sleep 0.5
fi

printf 'exit %s\nseconds %s\n' "$rc" "$secs" > "$OUT/status"
case "$rc" in
0)	printf 'vm-run: guest powered off after %ss\n' "$secs" >&2 ;;
124|137) printf 'vm-run: guest killed after %ss (timeout %ss)\n' \
		"$secs" "$VM_TIMEOUT" >&2
	rc=124 ;;
*)	printf 'vm-run: qemu exited with %s after %ss\n' "$rc" "$secs" >&2
	sed 's/^/vm-run: qemu: /' "$OUT/qemu.log" >&2 ;;
esac
exit "$rc"
