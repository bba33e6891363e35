#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The readers' instructions per record on the host (issue 23): libpea's
# ordered merge against its per-ring reader, on rings in memory
# (selftests/host/test_ordered_merge.c's profile mode), counted exactly
# by valgrind --tool=callgrind inside pea_ordered_consume() or
# pea_cpu_buf_consume(), the callback excluded. Records of 8 bytes with
# TIME, 64 a drain, 1000 drains; "RINGS x TURN": written to RINGS rings
# in turns of TURN records, so a merge switches rings every TURN records
# (make bench-icount has one vCPU, hence one ring: this is the cross-CPU
# case). Not part of make check.
#
# Usage: scripts/reader-profile.sh   (builds build/host/test_ordered_merge;
# about 20 s)

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
command -v valgrind >/dev/null || { echo "valgrind missing" >&2; exit 1; }
make --no-print-directory build/host/test_ordered_merge >/dev/null

count() {
	PEA_MERGE_PROFILE=$1 valgrind --tool=callgrind \
		--callgrind-out-file=/dev/null \
		--toggle-collect=pea_ordered_consume \
		--toggle-collect=pea_cpu_buf_consume \
		--toggle-collect=prof_cb build/host/test_ordered_merge 2>&1 |
		awk '/Collected :/ { printf "%.1f", $4 / 64000 }'
}

printf '%-12s %10s %10s %8s\n' "rings x turn" unordered ordered ratio
for rt in 1:64 2:1 2:8 2:32 4:1 4:16 16:1 16:4; do
	u=$(count "unordered:$rt")
	o=$(count "ordered:$rt")
	printf '%-12s %10s %10s %8s\n' "${rt/:/ x }" "$u" "$o" \
		"$(awk -v a="$o" -v b="$u" 'BEGIN { printf "%.2f", a / b }')"
done
