#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) and cache pea's debug kernel: Debian's linux-source-6.1
# with x86_64_defconfig plus scripts/debug-kernel/debug.config (KASAN,
# lockdep, UBSAN, DEBUG_OBJECTS, ...). See docs/checking.md.
#
# Usage:
#   scripts/debug-kernel.sh [--variant V]           build if needed; print
#                                     the cache directory (last line of stdout)
#   scripts/debug-kernel.sh [--variant V] --key     only print the cache key
#   scripts/debug-kernel.sh [--variant V] --dir     only print the cache
#                                     directory (it may not exist yet)
#
# Variants: "debug" (the default) is debug.config alone. Any other V is
# debug.config with scripts/debug-kernel/V.config on top: every option
# that V.config names replaces debug.config's line for it. "kcsan" swaps
# KASAN for KCSAN, the data-race detector (the two exclude each other).
# A variant has its own cache root, $PEA_DEBUG_KERNEL_CACHE-V (default
# /var/cache/pea/debug-kernel-V), so its build neither waits on the lock
# of another variant's build nor touches its cache.
#
# The cache directory $PEA_DEBUG_KERNEL_CACHE/KEY/ (default
# /var/cache/pea/debug-kernel/KEY/) holds:
#   vmlinuz         the kernel image the guest boots
#   build/          an external-module build tree (KDIR for pea)
#   kernelrelease   the release (KVER), e.g. 6.1.192-pea-debug
#   config          the final .config
#   build.log       the end of the build's log
# KEY is the linux-source-6.1 package version plus a hash of the config
# fragment, RECIPE below and the compiler version, so a change to any of
# them builds a new kernel (bump RECIPE when the build steps change). The source and build tree (~1.3 GB) live in a
# temporary directory next to the cache and are deleted afterwards.
#
# Environment:
#   PEA_DEBUG_KERNEL_CACHE  cache root (default /var/cache/pea/debug-kernel)
#   JOBS                    parallel make jobs (default: nproc)
#   NICE                    nice level of the build (default 10)
#   KEEP_TREE=1             keep the source and build tree (for debugging
#                           this script; printed on stderr)
#   SRC_TREE=DIR            build in this already unpacked (possibly
#                           partly built) linux-source-6.1 tree instead of
#                           a fresh one: kbuild rebuilds what the config
#                           change touches; the tree is left in place
#
# Progress goes to stderr.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE_FRAGMENT=$ROOT/scripts/debug-kernel/debug.config
# The build steps' version: part of the cache key.
RECIPE=1
CACHE_ROOT=${PEA_DEBUG_KERNEL_CACHE:-/var/cache/pea/debug-kernel}
SRCPKG=linux-source-6.1
SRCTAR=/usr/src/linux-source-6.1.tar.xz
JOBS=${JOBS:-$(nproc)}
export DEBIAN_FRONTEND=noninteractive

log() { printf 'debug-kernel: %s\n' "$*" >&2; }
die() { printf 'debug-kernel: error: %s\n' "$*" >&2; exit 1; }

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 && SUDO=sudo
fi

pkg_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

# Everything a kernel build needs, and the source itself.
install_deps() {
	local pkgs=(build-essential gcc make bc flex bison libelf-dev libssl-dev
		    dwarves xz-utils cpio kmod perl python3 "$SRCPKG")
	local missing=() p
	for p in "${pkgs[@]}"; do
		pkg_installed "$p" || missing+=("$p")
	done
	[ "${#missing[@]}" -eq 0 ] && return 0
	# apt takes turns with the set-up of the kernels scripts/check.sh
	# tests beside this build (see scripts/check-kernel.sh).
	mkdir -p "$ROOT/build"
	exec 7>> "$ROOT/build/.prepare.lock"
	flock 7
	log "apt-get install ${missing[*]}"
	$SUDO apt-get update -qq >&2 || die "apt-get update failed"
	$SUDO apt-get install -y -qq --no-install-recommends \
		-o DPkg::Lock::Timeout=600 "${missing[@]}" >&2 ||
		die "apt-get install ${missing[*]} failed"
	flock -u 7
	exec 7>&-
}

cache_key() {
	local ver sum
	ver=$(dpkg-query -W -f='${Version}' "$SRCPKG" 2>/dev/null || true)
	[ -n "$ver" ] || die "$SRCPKG is not installed"
	sum=$( { cat "$FRAGMENT"; echo "recipe $RECIPE"; gcc --version | head -n1; } |
		sha256sum | cut -c1-12)
	printf '%s-%s\n' "$ver" "$sum"
}

VARIANT=debug
TMPFRAG=
if [ "${1:-}" = --variant ]; then
	VARIANT=${2:-}
	shift 2 || die "--variant needs a name"
fi
case "$VARIANT" in
debug)	FRAGMENT=$BASE_FRAGMENT ;;
*[!a-z0-9]*|"") die "bad variant name '$VARIANT'" ;;
*)	[ -f "$ROOT/scripts/debug-kernel/$VARIANT.config" ] ||
		die "no scripts/debug-kernel/$VARIANT.config"
	CACHE_ROOT=$CACHE_ROOT-$VARIANT
	# debug.config without the options the variant sets, then the
	# variant's fragment: one line per option, so each is verified
	# against what the variant asked for.
	FRAGMENT=$(mktemp)
	TMPFRAG=$FRAGMENT
	trap 'rm -f "$TMPFRAG"' EXIT
	opts=$(sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1/p; s/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1/p' \
		"$ROOT/scripts/debug-kernel/$VARIANT.config")
	{
		printf '%s\n' "$opts" | sed 's/.*/^(# )?&[= ]/' > "$FRAGMENT.drop"
		grep -vEf "$FRAGMENT.drop" "$BASE_FRAGMENT"
		cat "$ROOT/scripts/debug-kernel/$VARIANT.config"
	} > "$FRAGMENT.new"
	rm -f "$FRAGMENT.drop"
	mv "$FRAGMENT.new" "$FRAGMENT" ;;
esac

case "${1:-}" in
--key)	cache_key; exit 0 ;;
--dir)	printf '%s/%s\n' "$CACHE_ROOT" "$(cache_key)"; exit 0 ;;
"")	;;
*)	die "usage: $0 [--variant V] [--key|--dir]" ;;
esac

install_deps
KEY=$(cache_key)
DEST=$CACHE_ROOT/$KEY
mkdir -p "$CACHE_ROOT"

# One build at a time per cache root; a second caller waits and reuses it.
exec 9> "$CACHE_ROOT/.lock"
if ! flock -n 9; then
	log "another build holds $CACHE_ROOT/.lock: waiting"
	flock 9
fi

if [ -f "$DEST/done" ]; then
	log "cached: $DEST"
	printf '%s\n' "$DEST"
	exit 0
fi

[ -f "$SRCTAR" ] || die "$SRCTAR missing (package $SRCPKG)"
WORK=$(mktemp -d "$CACHE_ROOT/build.XXXXXX")
if [ "${KEEP_TREE:-0}" = 1 ]; then
	log "KEEP_TREE=1: the tree stays in $WORK"
else
	trap 'rm -rf "$WORK" ${TMPFRAG:+"$TMPFRAG"}' EXIT
fi
T0=$(date +%s)
log "building $KEY in $WORK (log: $WORK/build.log)"

if [ -n "${SRC_TREE:-}" ]; then
	SRC=$SRC_TREE
	[ -f "$SRC/Makefile" ] || die "SRC_TREE=$SRC is no kernel tree"
else
	tar -xJf "$SRCTAR" -C "$WORK"
	SRC=$WORK/linux-source-6.1
fi
cd "$SRC"

KMAKE=(nice -n "${NICE:-10}" make -j"$JOBS" ARCH=x86_64)
"${KMAKE[@]}" x86_64_defconfig > "$WORK/build.log" 2>&1 || die "defconfig failed"
scripts/kconfig/merge_config.sh -m .config "$FRAGMENT" >> "$WORK/build.log" 2>&1 ||
	die "merge_config.sh failed"
"${KMAKE[@]}" olddefconfig >> "$WORK/build.log" 2>&1 || die "olddefconfig failed"

# Every option of the fragment must have survived olddefconfig.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF -- "$line" .config && continue
		log "requested $line, got: $(grep -E "^(# )?${line%%=*}[= ]" .config || echo 'nothing')"
		bad=1 ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }
		opt=${opt%% *}
		grep -qE "^$opt=" .config || continue
		log "requested '$line', got: $(grep -E "^$opt=" .config)"
		bad=1 ;;
	esac
done < "$FRAGMENT"
[ "$bad" -eq 0 ] || die "the config fragment did not apply (see above)"
log "config verified: every option of the $VARIANT fragment is set"

log "compiling with $JOBS jobs (nice ${NICE:-10})"
if ! "${KMAKE[@]}" all >> "$WORK/build.log" 2>&1; then
	tail -n 40 "$WORK/build.log" >&2
	die "kernel build failed"
fi
KREL=$(make -s ARCH=x86_64 kernelrelease)

# The external-module build tree: what `make -C KDIR M=...` reads.
STAGE=$WORK/stage
mkdir -p "$STAGE/build"
{
	find . arch/x86 -maxdepth 1 -name 'Makefile*'
	find include scripts arch/x86/include -type f
	find arch/x86 -name 'Kbuild.platforms' -o -name Platform
	find arch/x86/scripts arch/x86/tools -type f 2>/dev/null || true
	grep -q '^CONFIG_OBJTOOL=y' .config && echo tools/objtool/objtool
	echo Module.symvers
	echo .config
	echo System.map
} | sort -u | tar -cf - -T - | tar -xf - -C "$STAGE/build"
cp arch/x86/boot/bzImage "$STAGE/vmlinuz"
cp .config "$STAGE/config"
printf '%s\n' "$KREL" > "$STAGE/kernelrelease"
tail -n 200 "$WORK/build.log" > "$STAGE/build.log"
secs=$(( $(date +%s) - T0 ))
printf 'seconds %s\nkey %s\n' "$secs" "$KEY" > "$STAGE/done.tmp"

rm -rf "$DEST"
mv "$STAGE" "$DEST"
mv "$DEST/done.tmp" "$DEST/done"
log "built $KREL in ${secs}s: $DEST ($(du -sh "$DEST" | cut -f1))"
cd /
printf '%s\n' "$DEST"
