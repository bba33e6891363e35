#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Whether the files of module/ depend on each other in a circle
# (docs/design.md, "The module"). Two graphs, each sorted with tsort(1),
# which names the files of any loop:
#
#   calls     file A -> file B when A's object leaves a symbol undefined
#             (nm -u) that B's object defines (nm --defined-only -g):
#             a call, or a reference to B's data; calls through a
#             provider's or the attach table's pointers are not edges
#   includes  file A -> header B for each #include "B" in A
#
# Run after `make module` (the objects are module/*.o). -v prints every
# edge with the symbols or the header behind it. Exit status 1 on a loop.
set -euo pipefail
export LC_ALL=C

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT/module"
verbose=0
[ "${1:-}" = -v ] && verbose=1

objs=()
for o in *.o; do
	case "$o" in *.mod.o) continue ;; esac
	objs+=("$o")
done
[ ${#objs[@]} -gt 0 ] || { echo "no module/*.o: run make module" >&2; exit 2; }

# "symbol file" for every global definition, then "file symbol" for
# every undefined one; the join gives "user definer symbol".
defs=$(for o in "${objs[@]}"; do
	nm --defined-only -g "$o" | awk -v f="${o%.o}" 'NF == 3 { print $3, f }'
done | sort)
uses=$(for o in "${objs[@]}"; do
	nm -u "$o" | awk -v f="${o%.o}" '{ print $2, f }'
done | sort)
declare -A edges
edges[calls]=$(join <(printf '%s\n' "$defs") <(printf '%s\n' "$uses") |
	awk '$2 != $3 { print $3, $2, $1 }' | sort)
edges[includes]=$(grep -o '^#include "[^"]*"' ./*.[ch] |
	sed 's|^\./||; s|:#include "| |; s|"$||' | sort)

status=0
for g in calls includes; do
	if [ "$verbose" = 1 ]; then
		printf '%s\n' "${edges[$g]}" |
			awk -v g="$g" '{ k = $1 " -> " $2; n[k] = 1
				if ($3 != "") w[k] = w[k] " " $3 }
				END { for (k in n) print g ": " k (w[k] == "" ? "" : ":" w[k]) }' |
			sort
	fi
	if out=$(printf '%s\n' "${edges[$g]}" | awk '{ print $1, $2 }' | tsort 2>&1 >/dev/null) &&
	   [ -z "$out" ]; then
		echo "$g: no circle among module/ files"
	else
		echo "$g: circle:"
		printf '%s\n' "$out" | sed 's/^/  /'
		status=1
	fi
done
exit "$status"
