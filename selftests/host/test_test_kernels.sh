#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test (no kernel): the lists that say which kernels of `make check`
# run which guest test (scripts/test-kernels) and which tests run under
# multi-threaded TCG (scripts/mt-tests) name real tests and real kernels,
# each test once: a name mistyped there would leave a test out of a
# kernel, or keep it in, without a word (docs/checking.md). TAP on stdout.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TAP_NAME='test lists'
. "$ROOT/selftests/host/host_tap.sh"
KERNELS=" 6.1 6.12 6.1-rt 6.12-rt debug "

# check FILE: every line a selftests/ test, once; with kernels, known ones.
check() {
	local file=$1 t kernels k bad='' seen=' ' n=0

	while read -r t kernels; do
		case "$t" in ''|'#'*) continue ;; esac
		n=$((n + 1))
		[ -f "$ROOT/selftests/$t.c" ] ||
			bad+="$t: no selftests/$t.c"$'\n'
		case "$seen" in *" $t "*) bad+="$t: listed twice"$'\n' ;; esac
		seen+="$t "
		for k in $kernels; do
			case "$KERNELS" in
			*" $k "*) ;;
			*) bad+="$t: no kernel named $k (of$KERNELS)"$'\n' ;;
			esac
		done
	done < "$ROOT/scripts/$file"
	[ "$n" -gt 0 ] || bad+="no test listed"$'\n'
	[ -z "$bad" ]
	ok $? "scripts/$file: $n tests, each a selftest listed once${2:+, $2}" "$bad"
}

check test-kernels "each kernel one of 6.1, 6.12, 6.1-rt, 6.12-rt, debug"
# Kernel lists belong to test-kernels only.
check mt-tests
awk '!/^#/ && NF > 1 { bad = bad $0 "\n" } END { printf "%s", bad; exit bad != "" }' \
	"$ROOT/scripts/mt-tests" > /tmp/pea-mt-tests.$$
ok $? "scripts/mt-tests: one test a line" "$(cat /tmp/pea-mt-tests.$$)"
rm -f /tmp/pea-mt-tests.$$

echo "1..$N"
[ "$FAILED" = 0 ]
