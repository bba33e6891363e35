#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything pea needs to build and to test in a QEMU guest, and
# fetch the Debian kernel image the guest boots. Idempotent: it does nothing
# (and touches no network) when everything is already in place.
#
# Usage:
#   scripts/setup.sh [KVER]          install, print the path of vmlinuz
#   scripts/setup.sh --resolve [KVER] only print the resolved kernel version
#   scripts/setup.sh --packages      only install the packages (for a
#                                    locally built kernel, e.g. the debug
#                                    kernel of scripts/debug-kernel.sh)
#   scripts/setup.sh --packaging     only the packaging tools of make deb
#                                    and make check-install (debhelper,
#                                    dh-dkms, dkms, lintian, debootstrap)
#
# KVER may be:
#   (empty)            the kernel that the linux-headers-amd64 metapackage
#                      pulls in (e.g. 6.1.0-56-amd64); cached in .cache/kver
#   6.12               the kernel of the linux-headers-6.12-amd64 metapackage
#                      (e.g. 6.12.117+deb12-amd64)
#   6.12-rt            its PREEMPT_RT flavour, linux-headers-6.12-rt-amd64
#                      (e.g. 6.12.117+deb12-rt-amd64)
#   6.1-rt             the PREEMPT_RT flavour of the default kernel series:
#                      linux-headers-6.1-rt-amd64 if the archive has it,
#                      else linux-headers-rt-amd64 when the default kernel
#                      is a 6.1 (e.g. 6.1.0-56-rt-amd64)
#   6.1.0-56-amd64     a full kernel release name, used as is
#
# The kernel image is extracted (never installed) into
# .cache/kernel/$KVER/ with `dpkg -x`; the guest boots
# .cache/kernel/$KVER/boot/vmlinuz-$KVER.
#
# Progress goes to stderr; stdout carries only the result.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${PEA_CACHE:-$ROOT/.cache}
export DEBIAN_FRONTEND=noninteractive

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 && SUDO=sudo
fi

APT_UPDATED=0
apt_update() {
	if [ "$APT_UPDATED" -eq 0 ]; then
		log "apt-get update"
		$SUDO apt-get update -qq >&2 || die "apt-get update failed"
		APT_UPDATED=1
	fi
}

# pkg_installed PKG: true if dpkg reports PKG as installed.
pkg_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

# pkg_known PKG: true if apt has a candidate for PKG.
pkg_known() {
	local cand
	cand=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2 }')
	[ -n "$cand" ] && [ "$cand" != "(none)" ]
}

# meta_target META PREFIX: the versioned package a kernel metapackage
# depends on, with PREFIX removed (linux-headers-amd64 -> 6.1.0-56-amd64).
# Uses the dpkg status first (works without apt lists), then apt-cache.
meta_target() {
	local meta=$1 prefix=$2 deps=
	if pkg_installed "$meta"; then
		deps=$(dpkg-query -W -f='${Depends}' "$meta" 2>/dev/null || true)
	fi
	if [ -z "$deps" ]; then
		deps=$(apt-cache depends "$meta" 2>/dev/null |
		       awk '/Depends:/ { print $2 }' || true)
	fi
	printf '%s\n' "$deps" | tr ', ' '\n\n' |
		sed -n "s/^${prefix}\([0-9][^ ]*\)\$/\1/p" | head -n1
}

# rt_meta SERIES [ALLOW_UPDATE]: the headers metapackage of the PREEMPT_RT
# flavour of SERIES (6.12 -> linux-headers-6.12-rt-amd64). The distribution's
# default series has the unversioned linux-headers-rt-amd64 instead (bookworm:
# 6.1), recognised by the kernel that metapackage pulls in.
rt_meta() {
	local series=$1 allow_update=${2:-0} kver
	if pkg_installed "linux-headers-$series-rt-amd64" ||
	   pkg_known "linux-headers-$series-rt-amd64"; then
		printf '%s\n' "linux-headers-$series-rt-amd64"
		return 0
	fi
	kver=$(meta_target linux-headers-rt-amd64 linux-headers-)
	if [ -z "$kver" ] && [ "$allow_update" -eq 1 ]; then
		apt_update
		kver=$(meta_target linux-headers-rt-amd64 linux-headers-)
	fi
	case "$kver" in
	"$series".*) printf '%s\n' linux-headers-rt-amd64 ;;
	*) die "no PREEMPT_RT kernel of series $series (linux-headers-rt-amd64 is ${kver:-unknown})" ;;
	esac
}

# resolve_kver [ARG] [ALLOW_UPDATE]: print the full kernel release name.
resolve_kver() {
	local arg=${1:-} allow_update=${2:-0} meta kver
	case "$arg" in
	"")
		meta=linux-headers-amd64 ;;
	[0-9]*.[0-9]*-rt)
		meta=$(rt_meta "${arg%-rt}" "$allow_update") ;;
	[0-9]*.[0-9]*-*|[0-9]*.[0-9]*.[0-9]*)
		printf '%s\n' "$arg"; return 0 ;;
	[0-9]*.[0-9]*)
		meta=linux-headers-$arg-amd64 ;;
	*)
		die "cannot understand kernel version '$arg'" ;;
	esac
	kver=$(meta_target "$meta" linux-headers-)
	if [ -z "$kver" ] && [ "$allow_update" -eq 1 ]; then
		apt_update
		kver=$(meta_target "$meta" linux-headers-)
	fi
	[ -n "$kver" ] || die "cannot resolve a kernel version from $meta"
	printf '%s\n' "$kver"
}

if [ "${1:-}" = "--resolve" ]; then
	shift
	if [ -z "${1:-}" ] && [ -s "$CACHE/kver" ]; then
		cat "$CACHE/kver"
	else
		resolve_kver "${1:-}" 0
	fi
	exit 0
fi

PACKAGES_ONLY=0
if [ "${1:-}" = "--packaging" ]; then
	PACKAGING=1
	shift
else
	PACKAGING=0
fi
if [ "${1:-}" = "--packages" ]; then
	PACKAGES_ONLY=1
	shift
fi
ARG=${1:-}

# --- packages --------------------------------------------------------------
# busybox-static: the guest userland; cpio/gzip: initramfs; kmod: modinfo;
# sparse: `make sparse`; build-essential + libc6-dev: static test programs;
# gcc-multilib: the 32-bit (compat ioctl) test program; babeltrace2:
# test_tool_ctf reads CTF traces back with it in the guest, and the host
# tests (selftests/host/) with lttng-tools' lttng-relayd (installed
# without its recommends; its lttng-sessiond service is not needed).
PKGS=(build-essential gcc make libc6-dev gcc-multilib qemu-system-x86
      busybox-static cpio gzip sparse kmod coreutils babeltrace2 lttng-tools)
# libbpf-dev and what its static library needs (libelf, zlib, zstd): the
# pea tool reads the kernel's BTF with libbpf (tools/pea/ktypes.c).
PKGS+=(libbpf-dev libelf-dev zlib1g-dev libzstd-dev libdw-dev libbz2-dev liblzma-dev)
[ -z "$ARG" ] && [ "$PACKAGES_ONLY" -eq 0 ] && PKGS+=(linux-headers-amd64)
[[ "$ARG" =~ ^[0-9]+\.[0-9]+$ ]] && PKGS+=("linux-headers-$ARG-amd64")
# pahole: pea.ko's BTF (its kfuncs, scripts/module-btf.sh); clang, bpftool,
# libbpf-dev and the static libraries libbpf links against: the BPF
# programs of test_kfunc and examples/bpf/.
PKGS+=(pahole clang bpftool libbpf-dev libelf-dev zlib1g-dev libzstd-dev)
# chromium, python3 and a known font: the host test of the SVG flame graph
# (selftests/host/test_flame.sh) renders it headless and checks the
# screenshot's pixels; DejaVu Sans Mono is the font its labels are cut for.
PKGS+=(chromium python3 fonts-dejavu-core)
if [[ "$ARG" =~ ^[0-9]+\.[0-9]+-rt$ ]]; then
	meta=$(rt_meta "${ARG%-rt}" 1) || exit 1
	PKGS+=("$meta")
fi

install_pkgs() {
	local missing=() p
	for p in "$@"; do
		pkg_installed "$p" || missing+=("$p")
	done
	[ "${#missing[@]}" -eq 0 ] && return 0
	apt_update
	log "apt-get install ${missing[*]}"
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		die "apt-get install ${missing[*]} failed"
}

# Only for make deb and make check-install (scripts/build-deb.sh,
# scripts/check-install.sh), so that make check needs none of it.
install_packaging() {
	install_pkgs build-essential make debhelper dh-dkms dkms dpkg-dev \
		fakeroot lintian debootstrap pkg-config kmod busybox-static \
		cpio gzip qemu-system-x86
	# debian/control's Build-Depends for the tool (libbpf, statically)
	install_pkgs libbpf-dev libelf-dev zlib1g-dev libzstd-dev libdw-dev libbz2-dev liblzma-dev
}

if [ "$PACKAGING" -eq 1 ]; then
	install_packaging
	exit 0
fi

install_pkgs "${PKGS[@]}"
[ "$PACKAGES_ONLY" -eq 1 ] && exit 0

KVER=$(resolve_kver "$ARG" 1)
log "kernel version: $KVER"
install_pkgs "linux-headers-$KVER"
[ -f "/usr/src/linux-headers-$KVER/Makefile" ] ||
	[ -e "/lib/modules/$KVER/build/Makefile" ] ||
	die "headers for $KVER are not where they should be"
# Headers without a vmlinux (Debian's 6.1) cannot give pea.ko BTF: the
# kernel's source gives resolve_btfids (scripts/module-btf.sh).
if [ ! -f "/usr/src/linux-headers-$KVER/vmlinux" ] &&
   [ ! -f "/lib/modules/$KVER/build/vmlinux" ]; then
	series=$(printf '%s\n' "$KVER" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
	if pkg_known "linux-source-$series" || pkg_installed "linux-source-$series"; then
		install_pkgs "linux-source-$series"
	else
		log "no linux-source-$series: pea.ko for $KVER is built without kfuncs"
	fi
fi

mkdir -p "$CACHE"
# Only the default kernel becomes the cached default of the Makefile.
if [ -z "$ARG" ] && [ "$(cat "$CACHE/kver" 2>/dev/null || true)" != "$KVER" ]; then
	printf '%s\n' "$KVER" > "$CACHE/kver"
fi

# --- kernel image for the guest --------------------------------------------
KDEST=$CACHE/kernel/$KVER
VMLINUZ=$KDEST/boot/vmlinuz-$KVER

if [ ! -s "$VMLINUZ" ]; then
	img=
	for cand in "linux-image-$KVER-unsigned" "linux-image-$KVER"; do
		if pkg_known "$cand"; then
			img=$cand
			break
		fi
	done
	if [ -z "$img" ]; then
		apt_update
		for cand in "linux-image-$KVER-unsigned" "linux-image-$KVER"; do
			if pkg_known "$cand"; then
				img=$cand
				break
			fi
		done
	fi
	[ -n "$img" ] || die "no linux-image package for $KVER"

	debdir=$CACHE/deb
	mkdir -p "$debdir"
	deb=$(ls "$debdir/${img}_"*.deb 2>/dev/null | head -n1 || true)
	if [ -z "$deb" ]; then
		log "apt-get download $img"
		if ! (cd "$debdir" && apt-get download -qq -o APT::Sandbox::User=root "$img" >&2); then
			# The lists may be older than the archive: refresh once.
			APT_UPDATED=0
			apt_update
			(cd "$debdir" && apt-get download -qq -o APT::Sandbox::User=root "$img" >&2) ||
				die "apt-get download $img failed"
		fi
		deb=$(ls "$debdir/${img}_"*.deb 2>/dev/null | head -n1 || true)
		[ -n "$deb" ] || die "download of $img left no .deb"
	fi

	log "extracting $(basename "$deb") into $KDEST"
	tmp=$(mktemp -d "$CACHE/kernel.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	dpkg -x "$deb" "$tmp"
	[ -s "$tmp/boot/vmlinuz-$KVER" ] || die "$deb has no boot/vmlinuz-$KVER"
	rm -rf "$KDEST"
	mkdir -p "$(dirname "$KDEST")"
	mv "$tmp" "$KDEST"
	trap - EXIT
	rm -f "$deb"
fi

printf '%s\n' "$VMLINUZ"
