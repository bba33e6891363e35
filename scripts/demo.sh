#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: build pea, boot the test guest and run /bin/pea-demo in it
# (scripts/pea-demo.sh, or $PEA_DEMO): `pea trace` on the file-open path
# while a small workload opens files, `pea stat`, then power off.
# DEMO=storm runs the all-context storm (build/selftests/pea-storm) instead,
# DEMO=kfunc only the trace demo's last part (a BPF program and pea's own
# probe writing into one map, one ordered stream).
#
# Usage: scripts/demo.sh [demo|shell]
#   shell   boot into an interactive busybox shell on the console instead
#           (pea.ko loaded; leave the shell to power the guest off)
#
# Environment: DEMO (trace, kfunc or storm), KVER, SKIP_BUILD=1, PEA_FILES, OUT,
# SMP, MEM, VM_TIMEOUT, VERBOSE, as for scripts/check.sh and
# scripts/vm-run.sh.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

MODE=${1:-demo}
case "$MODE" in
demo|shell) ;;
*) echo "usage: $0 [demo|shell]" >&2; exit 2 ;;
esac

VMLINUZ=$("$ROOT/scripts/setup.sh" ${KVER:+"$KVER"} | tail -n1)
KVER=${VMLINUZ##*/vmlinuz-}
export KVER VMLINUZ

if [ "${SKIP_BUILD:-0}" != 1 ]; then
	"${MAKE:-make}" -C "$ROOT" --no-print-directory -j"$(nproc)" all KVER="$KVER" >&2
fi

export OUT=${OUT:-$ROOT/build/vm-demo}
export INITRAMFS=$OUT/initramfs.cpio.gz
read -r -a FILES <<< "${PEA_FILES:-}"
"$ROOT/scripts/mkinitramfs.sh" "$INITRAMFS" "${FILES[@]}" >/dev/null

if [ "$MODE" = shell ]; then
	VM_TIMEOUT=${VM_TIMEOUT:-3600} "$ROOT/scripts/vm-run.sh" shell
else
	case "${DEMO:-trace}" in
	trace|kfunc|storm) ;;
	*) echo "DEMO must be trace, kfunc or storm" >&2; exit 2 ;;
	esac
	APPEND_EXTRA="${APPEND_EXTRA:+$APPEND_EXTRA }pea.demo=${DEMO:-trace}" \
		FOLLOW=results "$ROOT/scripts/vm-run.sh" demo
fi
