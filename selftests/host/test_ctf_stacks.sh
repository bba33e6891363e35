#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test (no kernel): pea's CTF writer (fed by build/host/ctf_feed
# --stacks) carries --kstack's and --ustack's stacks as sequences of names
# and addresses, and an event without a user stack (a kernel thread's hit)
# as empty ones; babeltrace2 decodes every event exactly. TAP on stdout.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TAP_NAME='ctf stacks'
. "$ROOT/selftests/host/host_tap.sh"
BIN=$ROOT/build/host
TMP=$(mktemp -d /tmp/pea-ctfstacks.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

"$BIN/ctf_feed" --events 12 --live-interval-ms 0 --stacks "$TMP/t" > /dev/null
ok $? "ctf_feed --stacks"
grep -q '	uint32_t __ustack_length;' "$TMP/t/metadata" &&
	grep -q '	string _ustack\[__ustack_length\];' "$TMP/t/metadata" &&
	grep -q '	xint64_t _ustack_addr\[__ustack_length\];' "$TMP/t/metadata"
ok $? "the metadata has __ustack_length, _ustack and _ustack_addr"
babeltrace2 --clock-cycles "$TMP/t" > "$TMP/bt" 2> "$TMP/err"
ok $? "babeltrace2 reads the trace" "$(head -c 500 "$TMP/err")"

# The kprobe's events are n = 0, 3, 6, 9 (n % 3 == 0 is the kretprobe's:
# probe = n % 3 == 0 is 1 for those): see ctf_feed's loop.
# babeltrace2 prints the length fields, the names as the writer gave
# them and the hex integers in upper case.
want() {
	local n=$1 k0 k1 K0 K1 u U
	k0=$(printf '0x%x' $((0xffffffff81000100 + n)))
	k1=$(printf '0x%x' $((0xffffffff81000200 + n)))
	K0=$(printf '0x%X' $((0xffffffff81000100 + n)))
	K1=$(printf '0x%X' $((0xffffffff81000200 + n)))
	if [ $((n % 2)) = 0 ]; then
		u=(); U=()
		for i in 0 1 2; do
			u+=("$(printf '0x%x' $((0x400000 + i * 0x100000 + n * 16)))")
			U+=("$(printf '0x%X' $((0x400000 + i * 0x100000 + n * 16)))")
		done
		printf '_kstack_length = 2, kstack = [ [0] = "%s", [1] = "%s" ], kstack_addr = [ [0] = %s, [1] = %s ], _ustack_length = 3, ustack = [ [0] = "%s", [1] = "%s", [2] = "%s" ], ustack_addr = [ [0] = %s, [1] = %s, [2] = %s ] }' \
			"$k0" "$k1" "$K0" "$K1" "${u[@]}" "${U[@]}"
	else
		printf '_kstack_length = 1, kstack = [ [0] = "%s" ], kstack_addr = [ [0] = %s ], _ustack_length = 0, ustack = [ ], ustack_addr = [ ] }' \
			"$k0" "$K0"
	fi
}
for n in 0 3 6 9; do
	t=$(printf '%020d' $((1000000000 + n * 250000)))
	line=$(grep "^\[$t\] .*kprobe:feed_other" "$TMP/bt")
	w=$(want "$n")
	case "$line" in
	*", $w") ok 0 "event $n: $w" ;;
	*) ok 1 "event $n: $w" "$line" ;;
	esac
done
n=$(grep -c 'kprobe:feed_other' "$TMP/bt")
[ "$n" = 4 ]
ok $? "4 kprobe events ($n)"
n=$(grep 'kretprobe:feed_fn' "$TMP/bt" | grep -c 'stack')
[ "$n" = 0 ]
ok $? "the kretprobe without --kstack or --ustack has no stack field ($n)"

echo "1..$N"
[ "$FAILED" = 0 ]
