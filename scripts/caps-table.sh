#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The capability matrix of docs/security.md, written from test_caps runs:
# each "# caps OP|WHO|PARANOID|linux=E|pea=E" line the test printed in the
# guests' results (build/vm/KVER/results.txt), as one markdown table.
#
# Usage:
#   scripts/caps-table.sh LABEL=RESULTS [LABEL=RESULTS ...]
#       e.g. 6.1=build/vm/6.1.0-56-amd64/results.txt
#            6.12=build/vm/6.12.117+deb12-amd64/results.txt
#
# A row per operation and perf_event_paranoid level, a column per caller.
# A cell is the answer when pea and Linux agree ("0": allowed, else the
# errno), "pea E / Linux E" when they differ, "pea E" where Linux has no
# counterpart; when the kernels answer differently the cell lists each
# kernel's answer.

set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 LABEL=RESULTS..." >&2; exit 2; }

for arg in "$@"; do
	label=${arg%%=*}
	file=${arg#*=}
	[ -r "$file" ] || { echo "$0: cannot read $file" >&2; exit 1; }
	sed -n "s/^# caps \(.*|linux=.*\)\$/$label|\1/p" "$file"
done | awk -F'|' '
function cell(lin, pea) {
	sub(/^linux=/, "", lin)
	sub(/^pea=/, "", pea)
	if (lin == "-")
		return "pea " pea
	if (lin == pea)
		return pea
	return "pea " pea " / Linux " lin
}
{
	k = $1; op = $2; who = $3; par = $4
	c = cell($5, $6)
	row = op SUBSEP par
	if (!(op in opseen)) {
		opseen[op] = 1
		ops[++nops] = op
	}
	if (!(par in parseen)) {
		parseen[par] = 1
		pars[++npars] = par
	}
	if (!(who in whoseen)) {
		whoseen[who] = 1
		whos[++nwhos] = who
	}
	if (!(k in kseen)) {
		kseen[k] = 1
		ks[++nks] = k
	}
	v[row, who, k] = c
}
END {
	printf "| operation | paranoid |"
	for (i = 1; i <= nwhos; i++)
		printf " %s |", whos[i]
	printf "\n|---|---|"
	for (i = 1; i <= nwhos; i++)
		printf "---|"
	printf "\n"
	for (o = 1; o <= nops; o++) for (q = 1; q <= npars; q++) {
		row = ops[o] SUBSEP pars[q]
		printf "| %s | %s |", ops[o], pars[q]
		for (i = 1; i <= nwhos; i++) {
			first = v[row, whos[i], ks[1]]
			same = 1
			for (j = 2; j <= nks; j++)
				if (v[row, whos[i], ks[j]] != first)
					same = 0
			if (same) {
				printf " %s |", first
				continue
			}
			s = ""
			for (j = 1; j <= nks; j++)
				s = s (j > 1 ? "; " : "") ks[j] ": " v[row, whos[i], ks[j]]
			printf " %s |", s
		}
		printf "\n"
	}
}'
