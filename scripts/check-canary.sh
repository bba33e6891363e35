#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Prove that the debug kernel's checkers fire and that the harness's scan
# (scripts/splat-scan.sh) classifies their reports: boot the debug kernel
# with selftests/canary/pea_canary.ko, which commits one bug per checker
# between kernel-log markers, and check that each bug's window holds
# reports of exactly the expected type, and that nothing outside the
# windows reports anything. TAP on stdout like scripts/check-kernel.sh;
# the last line is "N passed, M failed". See docs/checking.md.
#
# Environment (all optional): VARIANT (the debug kernel's variant, as
# scripts/debug-kernel.sh --variant: "debug", the default, or "kcsan"),
# OUT (default build/vm/VARIANT-canary), VM_TIMEOUT, VERBOSE
# (scripts/vm-run.sh), PEA_DEBUG_KERNEL_CACHE (scripts/debug-kernel.sh).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
T0=$(date +%s)
VARIANT=${VARIANT:-debug}
OUT=${OUT:-$ROOT/build/vm/$VARIANT-canary}
export OUT
MAKE=${MAKE:-make}
mkdir -p "$OUT"
TAPFILE=$OUT/check.tap
RECORDS=$(mktemp)
trap 'rm -f "$RECORDS"' EXIT

log() { printf 'canary: %s\n' "$*" >&2; }

# The report type each bug must produce (pea_canary.c has the bugs).
declare -A EXPECT=(
	[rcu]=rcu/suspicious
	[lockdep]=lockdep/circular
	[sleep]=sleep-in-atomic
	[ubsan-index]=ubsan/array-index-out-of-bounds
	[ubsan-shift]=ubsan/shift-out-of-bounds
	[odebug]=odebug
	[list-add]=list/add
	[list-del]=list/del
	[refcount]=refcount
)
# The module lists only the bugs whose checker the kernel has.
case "$VARIANT" in
debug)
	EXPECT[kasan-slab]=kasan/slab-out-of-bounds
	# Past the last granule's accessible bytes the next granule's shadow
	# decides the name: KASAN_VMALLOC_INVALID or, when an earlier user of
	# those addresses left it unpoisoned (seen with networking on), 0.
	EXPECT[kasan-vmalloc]='kasan/vmalloc-out-of-bounds|kasan/out-of-bounds'
	EXPECT[kasan-stack]=kasan/stack-out-of-bounds
	;;
kcsan)
	EXPECT[kcsan-race]=kcsan/data-race
	;;
*)
	printf 'canary: unknown VARIANT %s\n' "$VARIANT" >&2
	exit 2
	;;
esac

report() {
	local rc=0
	{
	printf 'TAP version 13\n'
	printf '# canary on kernel %s, results in %s\n' "${KVER:-?}" "$OUT"
	awk -F '\t' -v took="$(( $(date +%s) - T0 ))" '
	$1 == "P" { n++; pass++; printf "ok %d - %s\n", n, $2; next }
	$1 == "F" { n++; fail++; printf "not ok %d - %s\n", n, $2; next }
	$1 == "C" { s = $0; sub(/^C\t/, "", s); printf "# %s\n", s; next }
	END {
		printf "1..%d\n", n
		printf "# took %ss\n", took
		printf "%d passed, %d failed\n", pass, fail
		exit (fail > 0 ? 1 : 0)
	}' "$RECORDS" || rc=$?
	} > "$TAPFILE"
	cat "$TAPFILE"
	exit "$rc"
}
fail_early() {
	printf 'F\t%s\n' "$1" >> "$RECORDS"
	report
}

log "$VARIANT kernel (scripts/debug-kernel.sh --variant $VARIANT)"
DK=$("$ROOT/scripts/debug-kernel.sh" --variant "$VARIANT" | tail -n1) ||
	fail_early "canary: $VARIANT kernel build"
[ -f "$DK/done" ] || fail_early "canary: $VARIANT kernel build"

# Set-up, build and packing take turns with check-kernel.sh runs of other
# kernels (scripts/check.sh runs several at once): see build/.prepare.lock.
mkdir -p "$ROOT/build"
exec 8>> "$ROOT/build/.prepare.lock"
flock 8
KVER=$(cat "$DK/kernelrelease")
KDIR=$DK/build
VMLINUZ=$DK/vmlinuz
export VMLINUZ KVER
"$ROOT/scripts/setup.sh" --packages || fail_early "canary: setup"

log "building pea_canary.ko for $KVER"
"$MAKE" -C "$ROOT" --no-print-directory canary KVER="$KVER" KDIR="$KDIR" >&2 ||
	fail_early "canary: build pea_canary.ko"
INITRAMFS=$OUT/initramfs.cpio.gz
export INITRAMFS
"$ROOT/scripts/mkinitramfs.sh" "$INITRAMFS" \
	"$ROOT/selftests/canary/pea_canary.ko" >/dev/null ||
	fail_early "canary: initramfs"
flock -u 8
exec 8>&-

log "booting the $VARIANT kernel in canary mode"
VMRC=0
if [ "$VARIANT" = kcsan ]; then
	# The race needs its two CPUs to run at once: a host thread per vCPU
	# (under one thread KCSAN's watch window rarely spans a vCPU switch).
	export TCG_OPTS=${TCG_OPTS-thread=multi}
	APPEND_EXTRA="no5lvl kcsan.interrupt_watcher=1${APPEND_EXTRA:+ $APPEND_EXTRA}"
else
	APPEND_EXTRA="kasan_multi_shot no5lvl${APPEND_EXTRA:+ $APPEND_EXTRA}"
fi
APPEND_EXTRA=$APPEND_EXTRA VM_TIMEOUT=${VM_TIMEOUT:-600} \
	"$ROOT/scripts/vm-run.sh" canary || VMRC=$?

CONSOLE=$OUT/console.log
RESULTS=$OUT/results.txt
SCAN=$OUT/reports.txt
"$ROOT/scripts/splat-scan.sh" "$CONSOLE" > "$SCAN.all"
# The KCSAN kernel's own data races (kcsan/kernel, no pea module at either
# access) are listed, not counted, as in scripts/check-kernel.sh.
awk -F '\t' '$2 != "kcsan/kernel"' "$SCAN.all" > "$SCAN"
KRACES=$(awk -F '\t' '$2 == "kcsan/kernel"' "$SCAN.all")
if [ -n "$KRACES" ]; then
	printf 'C\tKCSAN: %s data race(s) of the kernel proper, not counted:\n' \
		"$(printf '%s\n' "$KRACES" | wc -l)" >> "$RECORDS"
	printf '%s\n' "$KRACES" | awk -F '\t' '{ printf "C\t[%s] %s\n", $3, $4 }' >> "$RECORDS"
fi

if grep -q '^# insmod pea_canary: 0' "$RESULTS"; then
	printf 'P\tcanary: insmod pea_canary\n' >> "$RECORDS"
else
	printf 'F\tcanary: insmod pea_canary\n' >> "$RECORDS"
	grep '^# insmod' "$RESULTS" | sed 's/^# /C\t/' >> "$RECORDS"
fi

# Each bug: it ran (the trigger write succeeded) and its window holds at
# least one report, all of the expected type.
ran=$(tr -d '\r' < "$RESULTS" | sed -n 's/^# canary \([a-z-]*\): \(.*\)$/\1 \2/p')
for bug in $(printf '%s\n' "${!EXPECT[@]}" | LC_ALL=C sort); do
	want=${EXPECT[$bug]}
	rc=$(printf '%s\n' "$ran" | awk -v b="$bug" '$1 == b { print $2 }')
	got=$(awk -F '\t' -v c="canary:$bug" '$3 == c { print $2 }' "$SCAN" |
	      LC_ALL=C sort | uniq -c | awk '{ printf "%s%s x%s", sep, $2, $1; sep = ", " }')
	others=$(awk -F '\t' -v c="canary:$bug" -v w="$want" '
		BEGIN { n = split(w, alt, "|"); for (i = 1; i <= n; i++) ok[alt[i]] = 1 }
		$3 == c && !($2 in ok)' "$SCAN" | wc -l)
	if [ "$rc" = 0 ] && [ -n "$got" ] && [ "$others" -eq 0 ]; then
		printf 'P\tcanary: %s is reported as %s (%s)\n' "$bug" "$want" "$got" >> "$RECORDS"
	else
		printf 'F\tcanary: %s is reported as %s\n' "$bug" "$want" >> "$RECORDS"
		printf 'C\t%s: trigger status %s, reports: %s\n' "$bug" "${rc:-never ran}" \
			"${got:-none}" >> "$RECORDS"
	fi
done
# Bugs the module has that this script does not know.
for bug in $(printf '%s\n' "$ran" | awk '{ print $1 }'); do
	[ -n "${EXPECT[$bug]:-}" ] && continue
	printf 'F\tcanary: %s has an expected report type\n' "$bug" >> "$RECORDS"
done

# Outside the windows the log must be clean, as in every other run.
outside=$(awk -F '\t' '$3 !~ /^canary:/' "$SCAN")
if [ -z "$outside" ]; then
	printf 'P\tcanary: kernel log clean outside the canary windows\n' >> "$RECORDS"
else
	printf 'F\tcanary: kernel log clean outside the canary windows\n' >> "$RECORDS"
	printf '%s\n' "$outside" | while IFS=$'\t' read -r line type ctx head; do
		printf 'C\t[%s] %s: %s\n' "$ctx" "$type" "$head"
		"$ROOT/scripts/splat-scan.sh" --full "$line" "$CONSOLE" | sed 's/^/C\t| /'
	done >> "$RECORDS"
fi

if grep -q '^# rmmod pea_canary: 0' "$RESULTS" && [ "$VMRC" -eq 0 ] &&
   grep -q '^# --- dmesg end ---' "$RESULTS"; then
	printf 'P\tcanary: guest finished\n' >> "$RECORDS"
else
	printf 'F\tcanary: guest finished\n' >> "$RECORDS"
	printf 'C\tqemu status %s; last lines of %s:\n' "$VMRC" "$CONSOLE" >> "$RECORDS"
	tail -n 40 "$CONSOLE" | tr -d '\r' | sed 's/^/C\t| /' >> "$RECORDS"
fi
report
