#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: build the Debian packages pea-dkms, libpea0, libpea-dev and
# pea-tools (debian/) with dpkg-buildpackage -us -uc -b from a clean copy
# of the tree, into build/deb/, then run lintian over them.
#
# lintian: any error fails; a warning fails unless its tag is listed,
# with the reason, in debian/lintian-warnings.
#
# Environment: DEB_OUT (default build/deb).
#
# Prints the directory holding the .deb files as its last line.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${DEB_OUT:-$ROOT/build/deb}

log() { printf 'deb: %s\n' "$*" >&2; }
die() { printf 'deb: error: %s\n' "$*" >&2; exit 1; }

"$ROOT/scripts/setup.sh" --packaging >&2 || die "setup.sh --packaging failed"

VERSION=$(cat "$ROOT/VERSION")
SRC=$OUT/src/pea-$VERSION

# The version lives in ./VERSION; dkms.conf and debian/changelog repeat it.
grep -qx "PACKAGE_VERSION=\"$VERSION\"" "$ROOT/dkms.conf" ||
	die "dkms.conf's PACKAGE_VERSION is not $VERSION (./VERSION)"
head -n1 "$ROOT/debian/changelog" | grep -q "^pea ($VERSION)" ||
	die "debian/changelog's first entry is not $VERSION (./VERSION)"

# A copy without build outputs, caches or VCS data.
rm -rf "$OUT"
mkdir -p "$SRC"
tar -C "$ROOT" -c --exclude=./build --exclude=./.cache --exclude=.git \
	--exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' \
	--exclude='.*.cmd' --exclude='*.a' --exclude=Module.symvers \
	--exclude=modules.order --exclude='*.d' --exclude='.*.d' . |
	tar -C "$SRC" -x

log "dpkg-buildpackage -us -uc -b in $SRC"
(cd "$SRC" && dpkg-buildpackage -us -uc -b) > "$OUT/build.log" 2>&1 ||
	{ tail -n 40 "$OUT/build.log" >&2; die "dpkg-buildpackage failed (log: $OUT/build.log)"; }
mv "$OUT/src/"*.deb "$OUT/src/"*.changes "$OUT/src/"*.buildinfo "$OUT/"

for p in pea-dkms libpea0 libpea-dev pea-tools; do
	ls "$OUT/${p}_$VERSION"_*.deb >/dev/null 2>&1 || die "no $p package"
done

log "lintian"
changes=$(ls "$OUT"/pea_"$VERSION"_*.changes)
lintian --allow-root --tag-display-limit 0 "$changes" > "$OUT/lintian.txt" 2>&1 || true
cat "$OUT/lintian.txt" >&2
if grep -q '^E: ' "$OUT/lintian.txt"; then
	die "lintian reports errors ($OUT/lintian.txt)"
fi
allowed=$(sed -n 's/^\([a-z0-9-]*\):.*/\1/p' "$ROOT/debian/lintian-warnings")
bad=0
while read -r tag; do
	[ -n "$tag" ] || continue
	if ! printf '%s\n' "$allowed" | grep -qx "$tag"; then
		log "lintian warning $tag is not explained in debian/lintian-warnings"
		bad=1
	fi
done < <(sed -n 's/^W: [^:]*: \([a-z0-9-]*\).*/\1/p' "$OUT/lintian.txt" | sort -u)
[ "$bad" -eq 0 ] || die "unexplained lintian warnings"

log "packages in $OUT: $(cd "$OUT" && echo *.deb)"
printf '%s\n' "$OUT"
