#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# BTF for pea.ko where the kernel's build tree cannot make it (its kfuncs,
# module/pea_kfunc.c, need it; docs/kfuncs.md).
#
# Kbuild's "BTF [M]" step (scripts/Makefile.modfinal) runs pahole and
# resolve_btfids against $KDIR/vmlinux, and skips the step where the build
# tree has no vmlinux: Debian's 6.1 headers ship none, and its
# linux-kbuild-6.1 no resolve_btfids. This script does that step after the
# link with the same tools and flags:
#
#   scripts/module-btf.sh --prepare KVER KDIR
#       prints the path of KVER's own BTF (the base the module's BTF is
#       split against) when the step can run, after fetching what it needs
#       into .cache/btf/KVER: the BTF of the kernel image (the guest's
#       .cache/kernel/KVER/boot/vmlinuz-KVER, /boot/vmlinuz-KVER, or
#       /sys/kernel/btf/vmlinux when KVER is the running kernel) and
#       resolve_btfids built from Debian's linux-source-SERIES. Prints
#       nothing when kbuild does the step itself ($KDIR/vmlinux), or when
#       it cannot run: then it says why on stderr, and pea.ko is built
#       without kfuncs (Kbuild).
#   scripts/module-btf.sh --apply KVER KDIR BASE MODULE.ko...
#       pahole -J (the flags of $KDIR/scripts/pahole-flags.sh) into a
#       file, objcopy --add-section .BTF, and resolve_btfids -b BASE on
#       each module that has no .BTF yet.
#
# Environment: PEA_BTF_VMLINUX, a vmlinux (ELF or raw BTF) of KVER to use;
# PAHOLE (default pahole).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${PEA_CACHE:-$ROOT/.cache}
PAHOLE=${PAHOLE:-pahole}

log() { printf 'module-btf: %s\n' "$*" >&2; }
off() { log "no BTF for pea.ko ($KVER): $*; building without kfuncs"; exit 0; }

mode=${1:-}
KVER=${2:-}
KDIR=${3:-}
[ -n "$KVER" ] && [ -n "$KDIR" ] ||
	{ log "usage: $0 --prepare|--apply KVER KDIR [BASE MODULE.ko...]"; exit 2; }
DIR=$CACHE/btf/$KVER

# base_btf: KVER's vmlinux BTF as a raw BTF file in $DIR, cached under
# the SHA-256 of what it came from (the image, /sys/kernel/btf/vmlinux or
# PEA_BTF_VMLINUX): Debian may rebuild a kernel under the same KVER, and
# module BTF split against a stale base is refused, or worse, mistyped.
base_btf() {
	local img= src vml key
	if [ -n "${PEA_BTF_VMLINUX:-}" ]; then
		vml=$PEA_BTF_VMLINUX
	elif [ "$KVER" = "$(uname -r)" ] && [ -r /sys/kernel/btf/vmlinux ]; then
		vml=/sys/kernel/btf/vmlinux
	else
		for src in "$CACHE/kernel/$KVER/boot/vmlinuz-$KVER" "/boot/vmlinuz-$KVER"; do
			[ -r "$src" ] && { img=$src; break; }
		done
		[ -n "$img" ] || { log "no image of $KVER (run scripts/setup.sh $KVER)"; return 1; }
	fi
	key=$(sha256sum < "${img:-$vml}") || { log "cannot read ${img:-$vml}"; return 1; }
	key=${key%% *}
	if [ -s "$DIR/vmlinux.btf" ] && [ "$(cat "$DIR/vmlinux.btf.sha256" 2>/dev/null)" = "$key" ]; then
		printf '%s\n' "$DIR/vmlinux.btf"
		return 0
	fi
	# Replaced by rename only: other trees may share this cache.
	mkdir -p "$DIR"
	if [ -n "$img" ]; then
		extract=$(extract_vmlinux) || return 1
		vml=$DIR/vmlinux.elf
		"$extract" "$img" > "$vml.tmp" && [ -s "$vml.tmp" ] ||
			{ log "$extract could not unpack $img"; rm -f "$vml.tmp"; return 1; }
		mv "$vml.tmp" "$vml"
	fi
	if head -c 4 "$vml" | grep -q $'^\x7fELF'; then
		objcopy -O binary --only-section=.BTF "$vml" "$DIR/vmlinux.btf.tmp" ||
			{ log "$vml has no .BTF section"; return 1; }
	else
		cp "$vml" "$DIR/vmlinux.btf.tmp"
	fi
	rm -f "$DIR/vmlinux.elf"
	[ -s "$DIR/vmlinux.btf.tmp" ] || { log "$vml has no BTF"; return 1; }
	mv "$DIR/vmlinux.btf.tmp" "$DIR/vmlinux.btf"
	printf '%s\n' "$key" > "$DIR/vmlinux.btf.sha256"
	printf '%s\n' "$DIR/vmlinux.btf"
}

# The kernel series (6.1) of KVER, and Debian's source of it.
series() { printf '%s\n' "$KVER" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p'; }

# tools_tree: the kernel source's scripts/ and tools/, unpacked once.
tools_tree() {
	local s tarball tree
	s=$(series)
	tarball=/usr/src/linux-source-$s.tar.xz
	tree=$CACHE/btf/src-$s/linux-source-$s
	if [ ! -f "$tree/.done" ]; then
		[ -r "$tarball" ] ||
			{ log "$tarball missing (the linux-source-$s package; scripts/setup.sh installs it)"; return 1; }
		log "unpacking tools/ and scripts/ of $tarball"
		rm -rf "$CACHE/btf/src-$s"
		mkdir -p "$CACHE/btf/src-$s"
		tar -C "$CACHE/btf/src-$s" -xJf "$tarball" \
			"linux-source-$s/tools" "linux-source-$s/scripts" >&2 ||
			{ log "unpacking $tarball failed"; return 1; }
		touch "$tree/.done"
	fi
	printf '%s\n' "$tree"
}

extract_vmlinux() {
	local tree
	if [ -x "$KDIR/scripts/extract-vmlinux" ]; then
		printf '%s\n' "$KDIR/scripts/extract-vmlinux"
		return 0
	fi
	tree=$(tools_tree) || return 1
	printf '%s\n' "$tree/scripts/extract-vmlinux"
}

# resolve_btfids: the build tree's, or one built from the kernel's source.
resolve_btfids() {
	local tree out
	if [ -x "$KDIR/tools/bpf/resolve_btfids/resolve_btfids" ]; then
		printf '%s\n' "$KDIR/tools/bpf/resolve_btfids/resolve_btfids"
		return 0
	fi
	out=$CACHE/btf/resolve_btfids-$(series)
	if [ ! -x "$out/resolve_btfids" ]; then
		tree=$(tools_tree) || return 1
		log "building resolve_btfids from linux-source-$(series)"
		mkdir -p "$out"
		make -s -C "$tree/tools/bpf/resolve_btfids" OUTPUT="$out/" >&2 ||
			{ log "building resolve_btfids failed (libelf-dev, zlib1g-dev, python3?)"; return 1; }
	fi
	printf '%s\n' "$out/resolve_btfids"
}

case "$mode" in
--prepare)
	[ -f "$KDIR/vmlinux" ] && exit 0
	grep -qs '^#define CONFIG_DEBUG_INFO_BTF_MODULES 1$' \
		"$KDIR/include/generated/autoconf.h" || exit 0
	command -v "$PAHOLE" >/dev/null || off "$PAHOLE missing (the pahole package; scripts/setup.sh installs it)"
	resolve_btfids >/dev/null || off "no resolve_btfids"
	base=$(base_btf) || off "no BTF of the kernel $KVER"
	printf '%s\n' "$base"
	;;
--apply)
	base=${4:-}
	shift 4 || { log "--apply needs BASE and modules"; exit 2; }
	[ -s "$base" ] || { log "$base missing"; exit 1; }
	rb=$(resolve_btfids) || exit 1
	flags=
	if [ -x "$KDIR/scripts/pahole-flags.sh" ]; then
		flags=$(PAHOLE=$PAHOLE "$KDIR/scripts/pahole-flags.sh")
	fi
	for ko in "$@"; do
		if readelf -S "$ko" | grep ' \.BTF ' > /dev/null; then
			continue
		fi
		printf '  %-7s %s\n' "BTF [M]" "$ko (scripts/module-btf.sh)" >&2
		# The BTF into a file, then into the module with binutils'
		# objcopy: pahole 1.24 adds the section itself only with
		# llvm-objcopy, which a machine building with gcc may lack
		# (DKMS). The kernel finds a module's .BTF with or without
		# SHF_ALLOC (find_any_sec()), as it finds llvm-objcopy's.
		# shellcheck disable=SC2086
		"$PAHOLE" -J $flags --btf_base "$base" \
			--btf_encode_detached="$ko.btf" "$ko"
		objcopy --add-section .BTF="$ko.btf" "$ko"
		rm -f "$ko.btf"
		"$rb" -b "$base" "$ko"
	done
	;;
*)
	log "usage: $0 --prepare|--apply KVER KDIR [BASE MODULE.ko...]"
	exit 2
	;;
esac
