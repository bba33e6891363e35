#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check's host phase (make check-host alone): what needs no kernel is
# tested once, on the host. Builds the host tests' programs (make
# host-tests: selftests/host/*.c, linked with the tool's objects), then
# runs each build/host/test_* and selftests/host/test_*.sh; every one
# prints TAP. Prints their cases as one TAP stream; the exit status is
# non-zero if any failed. scripts/check.sh runs it before the guests and
# merges its cases, as "[host] ...", into build/vm/check.tap.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MAKE=${MAKE:-make}
log() { printf 'check-host: %s\n' "$*" >&2; }

mkdir -p "$ROOT/build"
# The set-up and the build share the tree with scripts/check-kernel.sh.
exec 8>> "$ROOT/build/.prepare.lock"
flock 8
if ! "$ROOT/scripts/setup.sh" --packages >&2; then
	echo "not ok 1 - host: set-up (scripts/setup.sh --packages)"
	echo "1..1"
	exit 1
fi
log "building ($MAKE host-tests tools)"
if ! "$MAKE" -C "$ROOT" --no-print-directory -j"$(nproc)" host-tests tools >&2; then
	echo "not ok 1 - host: build (make host-tests)"
	echo "1..1"
	exit 1
fi
flock -u 8
exec 8>&-

n=0
fail=0
# The programs the sources say there are, not those build/host holds: a
# binary missing or being relinked (a `make check` building in the same
# tree) is a failure, not a test passed over.
tests=()
for src in "$ROOT"/selftests/host/test_*.c; do
	b=${src##*/}
	tests+=("$ROOT/build/host/${b%.c}")
done
tests+=("$ROOT"/selftests/host/test_*.sh)
for t in "${tests[@]}"; do
	if [ ! -x "$t" ]; then
		n=$((n + 1))
		printf 'not ok %d - %s: not built (or not executable)\n' \
			"$n" "${t#"$ROOT"/}"
		fail=1
		continue
	fi
	log "running ${t#"$ROOT"/}"
	out=$(cd "$ROOT" && timeout 300 "$t" 2>&1)
	rc=$?
	cases=$(printf '%s\n' "$out" | grep -cE '^(not )?ok ')
	tfail=0
	while IFS= read -r line; do
		case "$line" in
		"ok "*|"not ok "*)
			n=$((n + 1))
			st=${line%%ok *}ok
			printf '%s %d - %s\n' "$st" "$n" "${line#*ok [0-9]* - }"
			[ "$st" = ok ] || tfail=1
			;;
		"# "*) printf '%s\n' "$line" ;;
		esac
	done <<< "$out"
	if [ "$rc" != 0 ] && [ "$tfail" = 0 ]; then
		# Failed without a failing case (a crash, a timeout).
		n=$((n + 1))
		printf 'not ok %d - %s exited with status %d after %d cases\n' \
			"$n" "${t#"$ROOT"/}" "$rc" "$cases"
		tfail=1
	fi
	[ "$tfail" = 0 ] || fail=1
done
if [ "$n" = 0 ]; then
	echo "not ok 1 - host: no test ran"
	n=1
	fail=1
fi
echo "1..$n"
exit "$fail"
