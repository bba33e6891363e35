# SPDX-License-Identifier: GPL-2.0
# The host shell tests' TAP, sourced after setting TAP_NAME:
#   ok STATUS TEXT [DETAIL]
# prints case N as passed when STATUS is 0, else as failed followed by
# DETAIL's first TAP_DETAIL_LINES lines (10) as comments; N counts the
# cases, FAILED the failures, for the plan and exit status at the end.
N=0
FAILED=0

ok() {
	N=$((N + 1))
	if [ "$1" = 0 ]; then
		printf 'ok %d - %s: %s\n' "$N" "$TAP_NAME" "$2"
	else
		printf 'not ok %d - %s: %s\n' "$N" "$TAP_NAME" "$2"
		FAILED=$((FAILED + 1))
		[ -n "${3:-}" ] && printf '%s\n' "$3" |
			head -n "${TAP_DETAIL_LINES:-10}" | sed 's/^/# /'
	fi
}
