#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: every test on every test kernel, one TAP report.
#
# First the host phase (scripts/check-host.sh): the tests of what needs no
# kernel (selftests/host/), once, on the host; their cases start with
# "[host]". Then scripts/check-kernel.sh once per kernel (default: Debian's 6.1, the
# linux-headers-amd64 kernel, then Debian's 6.12, the PREEMPT_RT flavours
# of both, the debug kernel, then 6.1 and 6.12 again under multi-threaded
# TCG with the tests of scripts/mt-tests: mt-6.1, mt-6.12), each into its
# own build/vm/KVER, up to
# CHECK_JOBS guests at once (default: the number of CPUs), then
# `make sparse` and `make checkpatch`, and merges the cases
# into one TAP stream whose descriptions start with the kernel. The debug
# kernel ("debug", scripts/debug-kernel.sh) and its KCSAN variant
# ("kcsan", make check-kcsan) also run the canary boot
# (scripts/check-canary.sh); see docs/checking.md. The last line is
# "N passed, M failed"; the exit status is non-zero if anything failed.
#
# Environment (all optional):
#   KVERS   kernels to test, space or comma separated ("default" = the
#           6.1 kernel, "6.12", "6.1-rt", "6.12-rt" as scripts/setup.sh,
#           "debug" = the debug kernel, "kcsan" = its KCSAN variant,
#           "mt-K" = kernel K under multi-threaded TCG, e.g. mt-6.1,
#           mt-6.12, mt-kcsan); KVER=x alone means KVERS=x
#   SPARSE=0  skip `make sparse` and `make checkpatch` (make check-debug)
#   HOST_TESTS=0  skip the host phase (make check-debug and check-kcsan)
#   CHECK_JOBS  kernels tested at once (default: nproc; 1: one by one)
#   TESTS, SMP, MEM, VM_TIMEOUT, TEST_TIMEOUT, VERBOSE: as check-kernel.sh

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
T0=$(date +%s)
DEFAULT_KVERS="default 6.12 6.1-rt 6.12-rt debug mt-6.1 mt-6.12"
KVERS=${KVERS:-${KVER:-$DEFAULT_KVERS}}
KVERS=${KVERS//,/ }
unset KVER
# A subset of the tests: the default list keeps the mt-* kernels only if
# one of TESTS runs under multi-threaded TCG (scripts/mt-tests).
if [ "$KVERS" = "$DEFAULT_KVERS" ] && [ -n "${TESTS:-}" ]; then
	mt=0
	for t in $(printf '%s' "$TESTS" | tr ',' ' '); do
		case "$t" in test_*) ;; *) t=test_$t ;; esac
		grep -qx -- "$t" "$ROOT/scripts/mt-tests" && mt=1
	done
	[ "$mt" = 1 ] || KVERS="default 6.12 6.1-rt 6.12-rt debug"
fi
MERGED=$ROOT/build/vm/check.tap
mkdir -p "$ROOT/build/vm"

CASES=$(mktemp)
PARTS=$(mktemp -d)
NAMES=()
trap 'rm -rf "$CASES" "$PARTS"' EXIT

# The kernels' names (build/vm/NAME), resolved one at a time up front.
declare -A NAME_OF
for k in $KVERS; do
	kver=
	[ "$k" = default ] || kver=$k
	if [ "$k" = debug ] || [ "$k" = kcsan ]; then
		name=$k
	elif [ "${k#mt-}" != "$k" ]; then
		# Multi-threaded TCG: the same kernel as K, the tests of
		# scripts/mt-tests (scripts/check-kernel.sh).
		name=$k
	else
		name=$("$ROOT/scripts/setup.sh" --resolve $kver 2>/dev/null || echo "$k")
		NAMES+=("$name")
	fi
	NAME_OF[$k]=$name
done

# One kernel: its check-kernel.sh run (and the canary after the debug
# kernel), its cases into $PARTS/K.
run_kernel() {
	local k=$1 kver= name=${NAME_OF[$1]} taps
	[ "$k" = default ] || kver=$k
	printf 'check: === kernel %s ===\n' "$name" >&2
	OUT=$ROOT/build/vm/$name KVER=$kver \
		"$ROOT/scripts/check-kernel.sh" > "$ROOT/build/vm/$name.tap"
	taps=("$ROOT/build/vm/$name.tap")
	if [ "$k" = debug ] || [ "$k" = kcsan ]; then
		printf 'check: === canary (%s kernel) ===\n' "$k" >&2
		OUT=$ROOT/build/vm/$k-canary VARIANT=$k \
			"$ROOT/scripts/check-canary.sh" > "$ROOT/build/vm/$k-canary.tap"
		taps+=("$ROOT/build/vm/$k-canary.tap")
	fi
	awk -v k="$name" '
	/^ok / || /^not ok / {
		st = ($1 == "ok") ? "P" : "F"
		sub(/^(not )?ok [0-9]+ - /, "")
		printf "%s\t[%s] %s\n", st, k, $0
		next
	}
	/^# / { printf "C\t%s\n", substr($0, 3) }
	' "${taps[@]}" > "$PARTS/$k"
	# A kernel that reported no case at all failed, whatever its scripts
	# exited with.
	grep -q '^[PF]' "$PARTS/$k" ||
		printf 'F\t[%s] the kernel reported no case\n' "$name" >> "$PARTS/$k"
}

# The host phase, before the guests: its build takes the same lock as
# theirs, and it needs little CPU.
if [ "${HOST_TESTS:-1}" != 0 ]; then
	printf 'check: === host ===\n' >&2
	"$ROOT/scripts/check-host.sh" > "$ROOT/build/vm/host.tap"
	awk '
	/^ok / || /^not ok / {
		st = ($1 == "ok") ? "P" : "F"
		sub(/^(not )?ok [0-9]+ - /, "")
		printf "%s\t[host] %s\n", st, $0
		next
	}
	/^# / { printf "C\t%s\n", substr($0, 3) }
	' "$ROOT/build/vm/host.tap" > "$PARTS/host"
	grep -q '^[PF]' "$PARTS/host" ||
		printf 'F\t[host] the host phase left no report\n' >> "$PARTS/host"
	cat "$PARTS/host" >> "$CASES"
fi

# Each guest is one TCG thread (-accel tcg,thread=single): run up to
# CHECK_JOBS kernels at once (default: the number of CPUs), the longest
# two first, then 6.12 before 6.1-rt: on two CPUs the one that frees
# first (debug's) takes 6.12 and 6.1, the other 6.1-rt after 6.12-rt, and
# both end together (the lane times of the rehearsal of 2a0ccef, 6.12-rt
# 936 s, debug 719, 6.1-rt 683, 6.12 395, 6.1 359, mt ~60 each: 1619 s
# against 1690 s longest first, which that run measured).
# The set-up, builds and packing of check-kernel.sh and check-canary.sh
# share the tree and take turns (build/.prepare.lock); only the guests run
# side by side. The report keeps the order of KVERS.
JOBS=${CHECK_JOBS:-$(nproc)}
[ "$JOBS" -ge 1 ] 2>/dev/null || JOBS=1
kernel_weight() {
	case "$1" in
	kcsan) echo 6 ;; 6.12-rt) echo 5 ;; debug) echo 4 ;; 6.12) echo 3 ;;
	6.1-rt) echo 2 ;; *) echo 1 ;;
	esac
}
ORDER=$(for k in $KVERS; do printf '%s %s\n' "$(kernel_weight "$k")" "$k"; done |
	sort -s -k1,1nr | cut -d' ' -f2)
running=0
for k in $ORDER; do
	if [ "$running" -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_kernel "$k" &
	running=$((running + 1))
done
wait
for k in $KVERS; do
	if [ -f "$PARTS/$k" ]; then
		cat "$PARTS/$k" >> "$CASES"
	else
		printf 'F\t[%s] the kernel run left no report\n' "${NAME_OF[$k]}" >> "$CASES"
	fi
done

if [ "${#NAMES[@]}" -gt 0 ]; then
	printf 'check: === kbuild feature probes ===\n' >&2
	"$ROOT/scripts/test-kbuild-probes.sh" "${NAMES[@]}" 2>&1 |
		awk '/^ok / || /^not ok / {
			st = ($1 == "ok") ? "P" : "F"
			sub(/^(not )?ok [0-9]+ - /, "")
			printf "%s\t%s\n", st, $0
		}' >> "$CASES"
fi

# sparse, on the default kernel's build.
run_sparse() {
	printf 'check: === sparse ===\n' >&2
	if make -C "$ROOT" --no-print-directory sparse > "$ROOT/build/vm/sparse.log" 2>&1; then
		printf 'P\tsparse clean (make sparse)\n' >> "$CASES"
	else
		printf 'F\tsparse clean (make sparse)\n' >> "$CASES"
		grep -E 'warning|error' "$ROOT/build/vm/sparse.log" | head -50 |
			sed 's/^/C\t/' >> "$CASES"
	fi
}
# checkpatch --strict over every kernel file (scripts/checkpatch.sh).
run_checkpatch() {
	printf 'check: === checkpatch ===\n' >&2
	if "$ROOT/scripts/checkpatch.sh" > "$ROOT/build/vm/checkpatch.log" 2>&1; then
		printf 'P\tcheckpatch --strict clean (make checkpatch)\n' >> "$CASES"
	else
		printf 'F\tcheckpatch --strict clean (make checkpatch)\n' >> "$CASES"
		grep -v '^excused: ' "$ROOT/build/vm/checkpatch.log" | head -50 |
			sed 's/^/C\t/' >> "$CASES"
	fi
	grep '^excused: ' "$ROOT/build/vm/checkpatch.log" | sed 's/^/C\t/' >> "$CASES"
}
# No circle among module/'s files (docs/design.md), on sparse's objects.
run_module_deps() {
	printf 'check: === module dependencies ===\n' >&2
	if "$ROOT/scripts/module-deps.sh" > "$ROOT/build/vm/module-deps.log" 2>&1; then
		printf 'P\tno circle among module/ files (scripts/module-deps.sh)\n' >> "$CASES"
	else
		printf 'F\tno circle among module/ files (scripts/module-deps.sh)\n' >> "$CASES"
		head -50 "$ROOT/build/vm/module-deps.log" | sed 's/^/C\t/' >> "$CASES"
	fi
}

[ "${SPARSE:-1}" = 0 ] || run_sparse
[ "${SPARSE:-1}" = 0 ] || run_module_deps
[ "${SPARSE:-1}" = 0 ] || run_checkpatch

{
printf 'TAP version 13\n'
awk -F '\t' -v took="$(( $(date +%s) - T0 ))" '
$1 == "P" { n++; pass++; ctx = 0; printf "ok %d - %s\n", n, $2; next }
$1 == "F" {
	n++; fail++; ctx = 8
	printf "not ok %d - %s\n", n, $2
	recap = recap sprintf("# not ok %d - %s\n", n, $2)
	next
}
$1 == "C" {
	s = $0; sub(/^C\t/, "", s); printf "# %s\n", s
	if (ctx > 0) { ctx--; recap = recap sprintf("#     %s\n", s) }
	next
}
END {
	if (n == 0) { n = 1; fail = 1; printf "not ok 1 - no test ran\n" }
	printf "1..%d\n", n
	# Repeat the failures and their first comments at the end, where a
	# truncated log (CI keeps its tail) still shows them.
	if (fail > 0)
		printf "# failures:\n%s", recap
	printf "# make check took %ss\n", took
	printf "%d passed, %d failed\n", pass, fail
	exit (fail > 0 ? 1 : 0)
}' "$CASES"
} > "$MERGED"
RC=$?
cat "$MERGED"
exit "$RC"
