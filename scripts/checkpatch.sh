#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make checkpatch`: checkpatch.pl --strict from Debian's kernel source over
# every kernel file of pea (module/, include/, selftests/module/,
# selftests/canary/, bench/module/). Every finding fails the run unless
# scripts/checkpatch-exceptions lists its file and type with a reason; an
# exception that no longer matches anything fails it too, so the list stays
# true (checked when every file is checked).
#
# checkpatch.pl, spelling.txt and const_structs.checkpatch (all it reads
# with --no-tree) are taken once from the linux-source-6.1 package's
# tarball, the source scripts/debug-kernel.sh builds, and cached in
# $PEA_CHECKPATCH_CACHE/VERSION/ (default /var/cache/pea/checkpatch/).
#
# Usage: scripts/checkpatch.sh [FILE...]   (default: every kernel file)
#        scripts/checkpatch.sh --path      only fetch; print checkpatch.pl
# The last line is "checkpatch: clean ..." or "checkpatch: N finding(s) ...";
# the exit status is non-zero when anything is not excused.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE_ROOT=${PEA_CHECKPATCH_CACHE:-/var/cache/pea/checkpatch}
SRCPKG=linux-source-6.1
SRCTAR=/usr/src/linux-source-6.1.tar.xz
EXCEPTIONS=$ROOT/scripts/checkpatch-exceptions
WANT=(scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch)

log() { printf 'checkpatch: %s\n' "$*" >&2; }
die() { printf 'checkpatch: error: %s\n' "$*" >&2; exit 2; }

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 && SUDO=sudo
fi

# The cached checkpatch.pl, fetched from the source package if missing.
checkpatch_path() {
	local ver dest tmp f
	if [ "$(dpkg-query -W -f='${db:Status-Status}' "$SRCPKG" 2>/dev/null)" != installed ]; then
		log "apt-get install $SRCPKG"
		export DEBIAN_FRONTEND=noninteractive
		$SUDO apt-get update -qq >&2 || die "apt-get update failed"
		$SUDO apt-get install -y -qq --no-install-recommends "$SRCPKG" >&2 ||
			die "apt-get install $SRCPKG failed"
	fi
	ver=$(dpkg-query -W -f='${Version}' "$SRCPKG")
	dest=$CACHE_ROOT/$ver
	if [ ! -f "$dest/done" ]; then
		[ -f "$SRCTAR" ] || die "$SRCTAR missing (package $SRCPKG)"
		log "extracting ${WANT[*]} from $SRCTAR"
		$SUDO mkdir -p "$CACHE_ROOT"
		tmp=$($SUDO mktemp -d "$CACHE_ROOT/tmp.XXXXXX")
		$SUDO tar -xJf "$SRCTAR" -C "$tmp" \
			"${WANT[@]/#/linux-source-6.1/}" ||
			{ $SUDO rm -rf "$tmp"; die "cannot extract checkpatch from $SRCTAR"; }
		for f in "${WANT[@]}"; do
			[ -s "$tmp/linux-source-6.1/$f" ] ||
				{ $SUDO rm -rf "$tmp"; die "$SRCTAR has no $f"; }
		done
		$SUDO touch "$tmp/linux-source-6.1/scripts/done"
		$SUDO rm -rf "$dest"
		$SUDO mv "$tmp/linux-source-6.1/scripts" "$dest"
		$SUDO rm -rf "$tmp"
	fi
	printf '%s\n' "$dest/checkpatch.pl"
}

CP=$(checkpatch_path)
if [ "${1:-}" = --path ]; then
	printf '%s\n' "$CP"
	exit 0
fi

cd "$ROOT"
ALL=0
if [ "$#" -gt 0 ]; then
	FILES=("$@")
else
	ALL=1
	# Sources only: not kbuild's generated *.mod.c.
	mapfile -t FILES < <(find module include selftests/module \
		selftests/canary bench/module -type f \
		\( -name '*.c' -o -name '*.h' -o -name Kbuild \) \
		! -name '*.mod.c' | LC_ALL=C sort)
fi
[ "${#FILES[@]}" -gt 0 ] || die "no files to check"

# Findings, one a line: "FILE:LINE: LEVEL:TYPE: message".
OUTF=$(mktemp)
trap 'rm -f "$OUTF"' EXIT
perl "$CP" --strict --no-tree --terse --show-types --no-summary \
	-f "${FILES[@]}" > "$OUTF" 2>&1 || true
# A checkpatch that could not run says so in lines of another shape.
if grep -qv -E '^[^:]+:[0-9]+: [A-Z]+:[A-Z0-9_]+: ' "$OUTF"; then
	cat "$OUTF" >&2
	die "checkpatch.pl printed something that is not a finding"
fi

# scripts/checkpatch-exceptions: "FILE TYPE reason", '#' comments.
awk -v nfiles="${#FILES[@]}" -v all="$ALL" '
FNR == NR {
	if ($0 ~ /^[ \t]*(#|$)/)
		next
	if (NF < 3) {
		printf "checkpatch: bad exception line %d (FILE TYPE reason): %s\n", FNR, $0
		bad++
		next
	}
	key = $1 " " $2
	exc[key] = FNR
	next
}
{
	file = $0
	sub(/:.*/, "", file)
	type = $0
	sub(/^[^:]+:[0-9]+: [A-Z]+:/, "", type)
	sub(/:.*/, "", type)
	key = file " " type
	if (key in exc) {
		used[key] = 1
		excused++
		printf "excused: %s\n", $0
	} else {
		found++
		print
	}
}
END {
	for (key in exc)
		if (all && !(key in used)) {
			printf "checkpatch: exception at line %d matches nothing: %s\n", exc[key], key
			bad++
		}
	if (found + bad == 0) {
		printf "checkpatch: clean (%d files, %d finding(s) excused)\n", nfiles, excused
		exit 0
	}
	printf "checkpatch: %d finding(s), %d bad exception(s) (%d files, %d excused)\n", found, bad, nfiles, excused
	exit 1
}' "$EXCEPTIONS" "$OUTF"
