#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the busybox initramfs the test guest boots.
#
# Usage: scripts/mkinitramfs.sh OUT.cpio.gz [FILE[:/GUEST/PATH]]...
#
# Each FILE is put into the image:
#   *.ko             -> /lib/modules/pea/NAME.ko
#   anything else    -> /bin/NAME (test_* programs, pea-demo, helpers)
#   FILE:/some/path  -> exactly /some/path
# With no FILE the repo layout is used: pea.ko,
# selftests/module/pea_selftest.ko, build/selftests/test_*,
# scripts/pea-demo.sh (or $PEA_DEMO) as /bin/pea-demo and, if they exist,
# build/tools/pea as /bin/pea and build/selftests/pea-storm as /bin/pea-storm,
# and the host's babeltrace2 with its ctf, text and utils plugins, and its
# lttng-relayd unless TESTS leaves out test_tool_relayd.
#
# Environment:
#   BUSYBOX     busybox binary to use (default: /bin/busybox from
#               busybox-static; must be statically linked)
#   GUEST_INIT  the /init script (default: scripts/guest-init.sh)
#   TESTS       the tests the guest runs (scripts/check-kernel.sh): without
#               test_tool_relayd, no lttng-relayd
#
# Dynamically linked programs get their shared libraries copied along,
# but test programs are expected to be static.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() { printf 'mkinitramfs: error: %s\n' "$*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: $0 OUT.cpio.gz [FILE[:/GUEST/PATH]]..."
OUT=$1
shift

BUSYBOX=${BUSYBOX:-/bin/busybox}
GUEST_INIT=${GUEST_INIT:-$ROOT/scripts/guest-init.sh}

[ -x "$BUSYBOX" ] || die "$BUSYBOX missing (apt-get install busybox-static)"
if ldd "$BUSYBOX" >/dev/null 2>&1; then
	die "$BUSYBOX is dynamically linked; install busybox-static"
fi
[ -f "$GUEST_INIT" ] || die "$GUEST_INIT missing"
command -v cpio >/dev/null || die "cpio missing (apt-get install cpio)"

FILES=("$@")
if [ "${#FILES[@]}" -eq 0 ]; then
	FILES=("$ROOT/pea.ko" "$ROOT/selftests/module/pea_selftest.ko")
	shopt -s nullglob
	for t in "$ROOT"/build/selftests/test_*; do
		[ -x "$t" ] && FILES+=("$t")
	done
	shopt -u nullglob
	demo=${PEA_DEMO:-$ROOT/scripts/pea-demo.sh}
	[ -x "$demo" ] && FILES+=("$demo:/bin/pea-demo")
	[ -x "$ROOT/build/selftests/pea-storm" ] &&
		FILES+=("$ROOT/build/selftests/pea-storm:/bin/pea-storm")
	[ -x "$ROOT/build/tools/pea" ] && FILES+=("$ROOT/build/tools/pea:/bin/pea")
	# The BPF examples (build/examples/bpf/) in /usr/bin: test_kfunc
	# runs them.
	for e in "$ROOT"/build/examples/bpf/*; do
		[ -f "$e" ] && [ -x "$e" ] && FILES+=("$e:/usr/bin/$(basename "$e")")
	done
	# Modules of the booted kernel that tests load themselves (test_uprobe
	# mounts overlayfs), uncompressed for busybox's insmod.
	kmods=${PEA_CACHE:-$ROOT/.cache}/kernel/${KVER:-none}/lib/modules/${KVER:-none}
	for m in "$kmods"/kernel/fs/overlayfs/overlay.ko*; do
		[ -f "$m" ] || continue
		mkdir -p "${TMPDIR:-/tmp}/pea-kmods.$$"
		case "$m" in
		*.xz)  xz -dc "$m" ;;
		*.zst) zstd -dcq "$m" ;;
		*)     cat "$m" ;;
		esac > "${TMPDIR:-/tmp}/pea-kmods.$$/overlay.ko"
		FILES+=("${TMPDIR:-/tmp}/pea-kmods.$$/overlay.ko")
	done
	# babeltrace2 (test_tool_ctf reads pea's CTF traces back with it):
	# the binary, its libraries and the plugins it needs (ctf: the
	# source, text: the pretty sink, utils: the muxer), where it looks.
	if [ -x /usr/bin/babeltrace2 ]; then
		FILES+=("/usr/bin/babeltrace2:/usr/bin/babeltrace2")
		for p in ctf text utils; do
			p=/usr/lib/x86_64-linux-gnu/babeltrace2/plugins/babeltrace-plugin-$p.so
			[ -f "$p" ] && FILES+=("$p:$p")
		done
	fi
	# lttng-relayd (test_tool_relayd streams pea's CTF trace to it on the
	# guest's loopback): 41 MB with its libraries (31 MB of ICU data,
	# through libxml2), so only when that test may run: every test, or
	# TESTS naming it.
	want=" $(printf '%s' "${TESTS:-}" | tr ',' ' ') "
	if [ -x /usr/bin/lttng-relayd ] &&
	   { [ -z "${TESTS:-}" ] || [[ "$want" == *" test_tool_relayd "* ]] ||
	     [[ "$want" == *" tool_relayd "* ]]; }; then
		FILES+=("/usr/bin/lttng-relayd:/usr/bin/lttng-relayd")
	fi
fi

TREE=$(mktemp -d "${TMPDIR:-/tmp}/pea-initramfs.XXXXXX")
trap 'rm -rf "$TREE" "${TMPDIR:-/tmp}/pea-kmods.$$"' EXIT

mkdir -p "$TREE"/{bin,sbin,usr/bin,usr/sbin,lib/modules/pea,dev,proc,sys,tmp,run,root,etc,home/nobody}
chmod 1777 "$TREE/tmp"

# busybox and one symlink per applet, in busybox's own idea of where each
# applet lives (bin/ls, sbin/insmod, usr/bin/timeout, ...).
cp "$BUSYBOX" "$TREE/bin/busybox"
"$BUSYBOX" --list-full | while read -r applet; do
	case "$applet" in
	""|linuxrc|bin/busybox) continue ;;
	esac
	[ -e "$TREE/$applet" ] && continue
	mkdir -p "$TREE/$(dirname "$applet")"
	# Relative link to /bin/busybox from the applet's directory.
	up=$(dirname "$applet" | sed 's|[^/]*|..|g')
	ln -s "$up/bin/busybox" "$TREE/$applet"
done
[ -e "$TREE/bin/sh" ] || ln -s busybox "$TREE/bin/sh"

install -m 0755 "$GUEST_INIT" "$TREE/init"

cat > "$TREE/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/home/nobody:/bin/false
EOF
cat > "$TREE/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
chmod 0644 "$TREE/etc/passwd" "$TREE/etc/group"
echo pea-vm > "$TREE/etc/hostname"

# The kernel opens /dev/console for init before anything is mounted.
if [ "$(id -u)" -eq 0 ]; then
	mknod -m 0600 "$TREE/dev/console" c 5 1
	mknod -m 0666 "$TREE/dev/null" c 1 3
fi

# copy_libs BINARY: copy the shared libraries (and loader) BINARY needs.
copy_libs() {
	local lib
	# A file with no libraries (the loader itself) lists none: not an error.
	ldd "$1" 2>/dev/null | { grep -o '/[^ ]*' || true; } | while read -r lib; do
		[ -f "$lib" ] || continue
		mkdir -p "$TREE$(dirname "$lib")"
		[ -e "$TREE$lib" ] || cp -L "$lib" "$TREE$lib"
	done
}

for spec in "${FILES[@]}"; do
	src=${spec%%:/*}
	if [ "$src" != "$spec" ]; then
		dst=/${spec#*:/}
	else
		case "$src" in
		*.ko) dst=/lib/modules/pea/$(basename "$src") ;;
		*)    dst=/bin/$(basename "$src") ;;
		esac
	fi
	[ -f "$src" ] || die "$src does not exist"
	mkdir -p "$TREE$(dirname "$dst")"
	case "$dst" in
	*.ko) install -m 0644 "$src" "$TREE$dst" ;;
	*)    install -m 0755 "$src" "$TREE$dst"
	      ldd "$src" >/dev/null 2>&1 && copy_libs "$src" ;;
	esac
done

mkdir -p "$(dirname "$OUT")"
(cd "$TREE" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc -R 0:0) | gzip -6 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
printf '%s\n' "$OUT"
