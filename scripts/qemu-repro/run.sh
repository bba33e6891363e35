#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the test guest with only cx16-flags in it (no pea) and print what
# it finds (docs/qemu-cmpxchg16b.md). `make qemu-repro` runs this.
#
# Usage: scripts/qemu-repro/run.sh [SECONDS_PER_B_PHASE]   (default 10)
# Environment: KVER (default 6.12), VM_CPU (QEMU -cpu model, default max:
#              the CPU that shows the fault; max,-cx16 is the workaround),
#              OUT (default build/qemu-repro/vm), CC (default gcc)
#
# Exit status: cx16-flags' own (0 flags right, 1 flags wrong, 2 no
# CMPXCHG16B), or 3 when the guest did not run it.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SECS=${1:-10}
OUT=${OUT:-$ROOT/build/qemu-repro/vm}
BIN=$ROOT/build/qemu-repro/cx16-flags
KVER=$("$ROOT/scripts/setup.sh" --resolve "${KVER:-6.12}")
export KVER OUT VM_CPU=${VM_CPU:-max}

mkdir -p "$OUT" "$(dirname "$BIN")"
"${CC:-gcc}" -O2 -g -Wall -Wextra -Werror -static -o "$BIN" \
	"$ROOT/scripts/qemu-repro/cx16-flags.c"
"$BIN" 1 > "$OUT/host.txt" 2>&1 || true
printf 'qemu-repro: on the host: %s\n' "$(tail -n1 "$OUT/host.txt")" >&2

# A wrapper passes the argument (guest-init runs /bin/test_* bare).
WRAP=$OUT/test_cx16_flags
printf '#!/bin/sh\nexec /bin/cx16-flags %s\n' "$SECS" > "$WRAP"
chmod +x "$WRAP"
INITRAMFS=$OUT/initramfs.cpio.gz "$ROOT/scripts/mkinitramfs.sh" \
	"$OUT/initramfs.cpio.gz" "$BIN:/bin/cx16-flags" "$WRAP" >/dev/null
INITRAMFS=$OUT/initramfs.cpio.gz VM_TIMEOUT=$((300 + 4 * SECS)) \
	"$ROOT/scripts/vm-run.sh" check test_cx16_flags || true

printf 'qemu-repro: guest %s, -cpu %s:\n' "$KVER" "$VM_CPU"
sed -n '/^# === test_cx16_flags ===/,/^# exit test_cx16_flags/p' \
	"$OUT/results.txt" | tr -d '\r'
rc=$(sed -n 's/^# exit test_cx16_flags \([0-9]*\).*/\1/p' "$OUT/results.txt" | tr -d '\r')
if grep -qE 'Oops|BUG:|general protection|double fault|WARNING:' "$OUT/console.log"; then
	printf 'qemu-repro: the guest kernel reported errors, see %s\n' "$OUT/console.log"
fi
exit "${rc:-3}"
