#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: build pea, boot the test guest and run /bin/pea-demo in it
# (scripts/pea-demo.sh, or $PEA_DEMO): `pea trace` on the file-open path
# while a small workload opens files, `pea stat`, `pea profile`, then power
# off; make demo fails if pea-demo does (it checks its claims, such as
# the in-kernel histogram's count under a ring overflow). The flame graph `pea profile --svg` wrote in the guest comes back
# on the results channel, between markers: it is written to
# $OUT/flamegraph.svg (build/vm-demo/flamegraph.svg) and the last line
# says where.
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
	# The results channel as it comes, without the SVG's lines, until
	# the guest has powered off (tail --pid).
	: > "$OUT/results.txt"
	APPEND_EXTRA="${APPEND_EXTRA:+$APPEND_EXTRA }pea.demo=${DEMO:-trace}" \
		"$ROOT/scripts/vm-run.sh" demo &
	vm=$!
	tail -n +1 -F --pid="$vm" "$OUT/results.txt" 2>/dev/null | awk '
		/^#### pea-demo file / { skip = 1; next }
		/^#### pea-demo end / { skip = 0; next }
		!skip { print; fflush() }'
	rc=0
	wait "$vm" || rc=$?
	# The demo checks its claims (pea-demo exits 1 if one fails).
	if [ "$rc" -eq 0 ] && ! grep -q '^# exit pea-demo 0$' "$OUT/results.txt"; then
		echo "make demo: pea-demo failed ($(grep '^# exit pea-demo' "$OUT/results.txt" || echo 'no exit status'))" >&2
		rc=1
	fi
	SVG=$OUT/flamegraph.svg
	rm -f "$SVG"
	awk '/^#### pea-demo end flamegraph.svg/ { on = 0 }
	     on { print }
	     /^#### pea-demo file flamegraph.svg/ { on = 1 }' \
		"$OUT/results.txt" > "$SVG.tmp"
	if grep -q '</svg>' "$SVG.tmp"; then
		mv "$SVG.tmp" "$SVG"
		echo "make demo: the flame graph of pea profile is $SVG (open it in a browser)"
	else
		rm -f "$SVG.tmp"
		[ "${DEMO:-trace}" != trace ] ||
			echo "make demo: no flame graph came back from the guest" >&2
	fi
	exit "$rc"
fi
