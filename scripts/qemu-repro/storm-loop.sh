#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run test_storm many times on one kernel and count the guest kernel
# reports (docs/qemu-cmpxchg16b.md): BOOTS boots of the test guest, each
# running test_storm RUNS times in a row. Needs `make all KVER=...` first.
#
# Usage: scripts/qemu-repro/storm-loop.sh BOOTS RUNS
# Environment: KVER (default 6.12), VM_CPU (QEMU -cpu, default: vm-run.sh's),
#              OUT (default build/storm-loop), TEST (default test_storm)
#
# One line per boot: runs that exited 0, kernel report lines, and how many
# of the RFLAGS values printed have reserved bits set (3, 5, 15, 22-31: no
# CPU sets them; the signature of the CMPXCHG16B fault). The console of
# each bad boot is kept as $OUT/console-N.log. Last line: totals.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BOOTS=${1:?usage: storm-loop.sh BOOTS RUNS}
RUNS=${2:?usage: storm-loop.sh BOOTS RUNS}
KVER=$("$ROOT/scripts/setup.sh" --resolve "${KVER:-6.12}")
OUT=${OUT:-$ROOT/build/storm-loop}
TEST=${TEST:-test_storm}
export KVER OUT

mkdir -p "$OUT"
"$ROOT/scripts/mkinitramfs.sh" "$OUT/initramfs.cpio.gz" >/dev/null || exit 2
export INITRAMFS=$OUT/initramfs.cpio.gz

tests=$(for _ in $(seq "$RUNS"); do printf '%s,' "$TEST"; done)
tot_runs=0 tot_ok=0 tot_boots_bad=0 tot_sig=0
for b in $(seq "$BOOTS"); do
	VM_TIMEOUT=$(( 60 + RUNS * 60 )) "$ROOT/scripts/vm-run.sh" check \
		"${tests%,}" 2>/dev/null
	rc=$?
	started=$(grep -c "^# === $TEST ===" "$OUT/results.txt")
	ok=$(grep -c "^# exit $TEST 0" "$OUT/results.txt")
	reports=$(grep -cE 'Oops|BUG:|general protection|double fault|WARNING:|Call Trace|RIP: 0010' \
		"$OUT/console.log")
	sig=0
	for v in $(grep -ao 'EFLAGS: [0-9a-f]*' "$OUT/console.log" |
		   awk '{ print $2 }'); do
		if (( (0x$v & 0xffc08028) != 0 )); then
			sig=$((sig + 1))
		fi
	done
	[ "$sig" -gt 0 ] && tot_sig=$((tot_sig + 1))
	printf 'boot %d: vm rc %d, runs %d/%d ok (started %d), reports %d, reserved-bit RFLAGS %d\n' \
		"$b" "$rc" "$ok" "$RUNS" "$started" "$reports" "$sig"
	if [ "$reports" -gt 0 ] || [ "$ok" -ne "$RUNS" ]; then
		cp "$OUT/console.log" "$OUT/console-$b.log"
		cp "$OUT/results.txt" "$OUT/results-$b.txt"
		tot_boots_bad=$((tot_boots_bad + 1))
	fi
	tot_runs=$((tot_runs + started))
	tot_ok=$((tot_ok + ok))
done
printf 'total: %d boots, %d bad, %d with reserved-bit RFLAGS; %d runs started, %d exited 0; cpu %s\n' \
	"$BOOTS" "$tot_boots_bad" "$tot_sig" "$tot_runs" "$tot_ok" "${VM_CPU:-default}"
