#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-install: pea installed as users install it, proven in the
# test guest. Prints TAP; the last line is "N passed, M failed".
#
#  1. make install DESTDIR=... lays out exactly the files listed below
#     (libpea.so.0 exports exactly libpea.h's LIBPEA_API functions; modinfo
#     shows the version, the license and every parameter with a
#     description), and make uninstall leaves no file behind.
#  2. make deb builds pea-dkms, libpea0, libpea-dev and pea-tools (lintian
#     clean, scripts/build-deb.sh).
#  3. A clean bookworm root (debootstrap --variant=minbase, plus a compiler,
#     pkg-config and the test kernel's headers, as a user's machine has),
#     cached as a tarball in $PEA_INSTALL_CACHE keyed by a hash of what
#     went into it; every run unpacks a fresh copy. apt installs the four
#     .debs there (dkms and the rest resolve from the archive, whose .debs
#     are cached too), DKMS builds pea.ko for the 6.1 test kernel, and a
#     consumer is compiled there with cc $(pkg-config --cflags --libs pea).
#     The root first lacks what 6.1's build needs for pea.ko's BTF: DKMS
#     says so and pea.ko has no kfuncs; then pahole, linux-source-6.1 and
#     the kernel's image are added and DKMS rebuilds it with them.
#  4. The test guest boots with that root's /lib/modules/KVER (modules.dep
#     from DKMS's depmod), kmod's modprobe, the installed pea tool and
#     libpea.so.0, loads pea with `modprobe pea` (pea.load=modprobe) and
#     runs scripts/install-smoke/test_install, which also runs a BPF
#     program calling pea's kfunc (examples/bpf/opensnoop) (scripts/check-kernel.sh
#     does the boot, the kernel log scan and the unload).
#
# Environment: PEA_INSTALL_CACHE (default /var/cache/pea/install-root),
# DEBIAN_MIRROR (default http://deb.debian.org/debian), OUT (default
# build/check-install).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
T0=$(date +%s)
OUT=${OUT:-$ROOT/build/check-install}
CACHE=${PEA_INSTALL_CACHE:-/var/cache/pea/install-root}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
SUITE=bookworm
export DEBIAN_FRONTEND=noninteractive

log() { printf 'check-install: %s\n' "$*" >&2; }

mkdir -p "$OUT"
TAPFILE=$OUT/check-install.tap
RECORDS=$OUT/records
: > "$RECORDS"
pass() { printf 'P\t%s\n' "$*" >> "$RECORDS"; }
failc() { printf 'F\t%s\n' "$*" >> "$RECORDS"; }
comment() { printf 'C\t%s\n' "$*" >> "$RECORDS"; }
expect() {	# expect DESCRIPTION GOT WANT
	if [ "$2" = "$3" ]; then pass "$1"; else
		failc "$1"; comment "got:  $2"; comment "want: $3"; fi
}
phase_time() { comment "$1 took $(( $(date +%s) - $2 ))s"; }

report() {
	local rc=0
	awk -F '\t' -v took="$(( $(date +%s) - T0 ))" '
	$1 == "P" { n++; pass++; printf "ok %d - %s\n", n, $2; next }
	$1 == "F" { n++; fail++; printf "not ok %d - %s\n", n, $2; next }
	$1 == "C" { s = $0; sub(/^C\t/, "", s); printf "# %s\n", s; next }
	END {
		printf "1..%d\n# took %ss\n%d passed, %d failed\n", n, took, pass, fail
		exit (fail > 0 || n == 0 ? 1 : 0)
	}' "$RECORDS" > "$TAPFILE" || rc=$?
	{ echo "TAP version 13"; cat "$TAPFILE"; } > "$TAPFILE.tmp"
	mv "$TAPFILE.tmp" "$TAPFILE"
	cat "$TAPFILE"
	exit "$rc"
}

# Mounts and the scratch root go away on every exit.
WORK=
MOUNTS=()
cleanup() {
	local i
	for (( i = ${#MOUNTS[@]} - 1; i >= 0; i-- )); do
		umount -l "${MOUNTS[i]}" 2>/dev/null || true
	done
	MOUNTS=()
	[ -n "$WORK" ] && rm -rf --one-file-system "$WORK"
	WORK=
}
trap cleanup EXIT
mount_root() {	# mount_root DIR: proc, dev and the apt archive cache
	mount -t proc proc "$1/proc" && MOUNTS+=("$1/proc")
	mount --bind /dev "$1/dev" && MOUNTS+=("$1/dev")
	mkdir -p "$CACHE/apt-archives/partial" "$1/var/cache/apt/archives"
	mount --bind "$CACHE/apt-archives" "$1/var/cache/apt/archives" &&
		MOUNTS+=("$1/var/cache/apt/archives")
}
umount_all() {
	local i
	for (( i = ${#MOUNTS[@]} - 1; i >= 0; i-- )); do
		umount "${MOUNTS[i]}" || umount -l "${MOUNTS[i]}"
	done
	MOUNTS=()
}

# --- set-up ----------------------------------------------------------------
"$ROOT/scripts/setup.sh" --packaging >&2 || { failc "setup.sh --packaging"; report; }
VMLINUZ=$("$ROOT/scripts/setup.sh" | tail -n1) || { failc "setup.sh"; report; }
KVER=${VMLINUZ##*/vmlinuz-}
VERSION=$(cat VERSION)
comment "pea $VERSION, test kernel $KVER"

# --- 1. make install / make uninstall --------------------------------------
t=$(date +%s)
DEST=$OUT/destdir
rm -rf "$DEST"
if make --no-print-directory -j"$(nproc)" install DESTDIR="$DEST" KVER="$KVER" \
	> "$OUT/install.log" 2>&1; then
	pass "make install DESTDIR=... (PREFIX /usr/local)"
else
	failc "make install DESTDIR=... (PREFIX /usr/local)"
	tail -n 20 "$OUT/install.log" | sed 's/^/C\t/' >> "$RECORDS"
fi
# The documented layout (README, "Install"), files and symlinks.
WANT="/lib/modules/$KVER/updates/pea.ko
/usr/local/include/pea/libpea.h
/usr/local/include/pea/pea.h
/usr/local/lib/libpea.a
/usr/local/lib/libpea.so -> libpea.so.0
/usr/local/lib/libpea.so.0 -> libpea.so.$VERSION
/usr/local/lib/libpea.so.$VERSION
/usr/local/lib/pkgconfig/pea.pc
/usr/local/sbin/pea
/usr/local/share/man/man3/libpea.3
/usr/local/share/man/man8/pea.8"
GOT=$(cd "$DEST" 2>/dev/null &&
	{ find . -type f -printf '/%P\n'; find . -type l -printf '/%P -> %l\n'; } |
	LC_ALL=C sort)
expect "make install lays out exactly the documented files" "$GOT" "$WANT"

SO=$DEST/usr/local/lib/libpea.so.0
expect "libpea.so.0's soname" \
	"$(readelf -d "$SO" 2>&1 | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" libpea.so.0
PUBLIC=$(awk '/^LIBPEA_API/ { f = 1 } f { b = b " " $0; if ($0 ~ /\(/) { print b; b = ""; f = 0 } }' \
	lib/libpea.h | grep -o '[A-Za-z_0-9]*(' | tr -d '(' | LC_ALL=C sort -u)
EXPORTED=$(nm -D --defined-only "$SO" 2>&1 | awk '{ print $3 }' |
	sed 's/@@PEA_0$//' | grep -vx PEA_0 | LC_ALL=C sort)
expect "libpea.so.0 exports exactly libpea.h's $(echo "$PUBLIC" | wc -l) LIBPEA_API functions (nm -D --defined-only)" \
	"$EXPORTED" "$PUBLIC"
MAPPED=$(sed -n 's/^[[:space:]]*\(pea_[a-z0-9_]*\);$/\1/p' lib/libpea.map | LC_ALL=C sort)
expect "lib/libpea.map lists exactly libpea.h's LIBPEA_API functions" "$MAPPED" "$PUBLIC"

KO=$DEST/lib/modules/$KVER/updates/pea.ko
MI=$(/sbin/modinfo "$KO" 2>&1 || true)
expect "modinfo: version" "$(printf '%s\n' "$MI" | sed -n 's/^version: *//p')" "$VERSION"
expect "modinfo: built for the test kernel" \
	"$(printf '%s\n' "$MI" | sed -n 's/^vermagic: *\([^ ]*\) .*/\1/p')" "$KVER"
expect "modinfo: license" "$(printf '%s\n' "$MI" | sed -n 's/^license: *//p')" GPL
# The module_params of the sources, less those of a file Kbuild builds
# only where the kernel has its feature (pea-$(if ...)) when none of
# that file's parameters is in this kernel's module (modinfo's parm:
# lines name every parameter, described or not): pea_fprobe.c on 6.1.
ALLPARMS=" $(printf '%s\n' "$MI" | sed -n 's/^parm: *\([a-z_]*\):.*/\1/p' | tr '\n' ' ')"
SKIPPED=
for c in $(sed -n 's/^pea-\$(if .*+= *module\/\([a-z_]*\)\.o.*/\1/p' Kbuild); do
	built=
	for v in $(grep -ho 'module_param([a-z_]*' "module/$c.c" | sed 's/.*(//'); do
		case "$ALLPARMS " in *" $v "*) built=1 ;; esac
	done
	if [ -z "$built" ] && grep -q 'module_param(' "module/$c.c"; then
		SKIPPED="$SKIPPED module/$c.c"
	fi
done
PARAMS=$(for f in module/*.c; do
	case " $SKIPPED " in *" $f "*) continue ;; esac
	grep -ho 'module_param([a-z_]*' "$f" || true
done | sed 's/.*(//' | LC_ALL=C sort)
DESCRIBED=$(printf '%s\n' "$MI" | sed -n 's/^parm: *\([a-z_]*\):[^(]*[^ ].* ([a-z]*)$/\1/p' | LC_ALL=C sort)
expect "modinfo: every module_param ($(echo $PARAMS)) has a description${SKIPPED:+ (not built for this kernel:$SKIPPED)}" "$DESCRIBED" "$PARAMS"

# pkg-config from the staging root: a program builds and links.
cat > "$OUT/pc-test.c" <<'PCEOF'
#include <pea/libpea.h>
int main(void) { return pea_open_dev() < 0 && PEA_ABI_VERSION < 0; }
PCEOF
PCFLAGS=$(PKG_CONFIG_SYSROOT_DIR=$DEST PKG_CONFIG_LIBDIR=$DEST/usr/local/lib/pkgconfig \
	pkg-config --cflags --libs pea 2>&1 || true)
if cc -Wall -Werror -o "$OUT/pc-test" "$OUT/pc-test.c" $PCFLAGS > "$OUT/pc-test.log" 2>&1; then
	pass "cc \$(pkg-config --cflags --libs pea) against the staged install"
else
	failc "cc \$(pkg-config --cflags --libs pea) against the staged install"
	sed 's/^/C\t/' "$OUT/pc-test.log" >> "$RECORDS"
fi

if make --no-print-directory uninstall DESTDIR="$DEST" KVER="$KVER" \
	>> "$OUT/install.log" 2>&1; then
	pass "make uninstall DESTDIR=..."
else
	failc "make uninstall DESTDIR=..."
fi
expect "make uninstall leaves no file behind" \
	"$(find "$DEST" \( -type f -o -type l \) 2>/dev/null | wc -l)" 0
phase_time "make install/uninstall" "$t"

# --- 2. make deb -----------------------------------------------------------
t=$(date +%s)
DEBS=$ROOT/build/deb
if DEB_OUT=$DEBS "$ROOT/scripts/build-deb.sh" > "$OUT/deb.log" 2>&1; then
	pass "make deb: pea-dkms, libpea0, libpea-dev, pea-tools, lintian clean"
else
	failc "make deb: pea-dkms, libpea0, libpea-dev, pea-tools, lintian clean"
	tail -n 30 "$OUT/deb.log" | sed 's/^/C\t/' >> "$RECORDS"
	report
fi
phase_time "make deb" "$t"

# --- 3. a clean bookworm root ---------------------------------------------
# What the root has before the packages: a compiler, make, pkg-config and
# the test kernel's headers, as on a user's machine. dkms and its
# dependencies come in through apt-get install ./*.deb.
BASE_PKGS="gcc libc6-dev make pkg-config kmod linux-headers-$KVER"
KEY=$(printf '%s\n' 1 "$SUITE" "$MIRROR" "$SECURITY_MIRROR" "$BASE_PKGS" |
	sha256sum | cut -c1-16)
TARBALL=$CACHE/bookworm-$KEY.tar.zst
mkdir -p "$CACHE"
t=$(date +%s)
if [ ! -s "$TARBALL" ]; then
	log "creating the pristine root ($TARBALL)"
	WORK=$(mktemp -d /var/tmp/pea-root.XXXXXX)
	R=$WORK/root
	ok=1
	debootstrap --variant=minbase "$SUITE" "$R" "$MIRROR" > "$OUT/debootstrap.log" 2>&1 || ok=0
	if [ "$ok" -eq 1 ]; then
		cat > "$R/etc/apt/sources.list" <<SRCEOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY_MIRROR $SUITE-security main
SRCEOF
		mount_root "$R"
		{ chroot "$R" apt-get update -qq &&
		  chroot "$R" apt-get install -y -qq --no-install-recommends $BASE_PKGS &&
		  chroot "$R" apt-get clean; } >> "$OUT/debootstrap.log" 2>&1 || ok=0
		umount_all
	fi
	if [ "$ok" -eq 1 ] &&
	   tar -C "$R" -I 'zstd -1 -T0' -cf "$TARBALL.tmp" . 2>> "$OUT/debootstrap.log"; then
		mv "$TARBALL.tmp" "$TARBALL"
		pass "pristine bookworm root created (debootstrap minbase + $BASE_PKGS)"
	else
		rm -f "$TARBALL.tmp"
		failc "pristine bookworm root created (debootstrap minbase + $BASE_PKGS)"
		tail -n 30 "$OUT/debootstrap.log" | sed 's/^/C\t/' >> "$RECORDS"
		report
	fi
	cleanup
	phase_time "debootstrap and the base packages" "$t"
else
	comment "pristine root from the cache: $TARBALL"
fi

t=$(date +%s)
WORK=$(mktemp -d /var/tmp/pea-install.XXXXXX)
R=$WORK/root
mkdir -p "$R"
tar -C "$R" -I zstd -xf "$TARBALL"
mount_root "$R"
mkdir -p "$R/tmp/debs"
cp "$DEBS"/pea-dkms_"$VERSION"_all.deb "$DEBS"/libpea0_"$VERSION"_*.deb \
	"$DEBS"/libpea-dev_"$VERSION"_*.deb "$DEBS"/pea-tools_"$VERSION"_*.deb "$R/tmp/debs/"
APT_INSTALL=(apt-get install -y -q --no-install-recommends
	/tmp/debs/pea-dkms_"$VERSION"_all.deb /tmp/debs/libpea0_"$VERSION"_amd64.deb
	/tmp/debs/libpea-dev_"$VERSION"_amd64.deb /tmp/debs/pea-tools_"$VERSION"_amd64.deb)
if chroot "$R" "${APT_INSTALL[@]}" > "$OUT/apt.log" 2>&1 ||
   { log "apt-get install failed: apt-get update and again";
     chroot "$R" apt-get update -qq >> "$OUT/apt.log" 2>&1 &&
     chroot "$R" "${APT_INSTALL[@]}" >> "$OUT/apt.log" 2>&1; }; then
	pass "apt-get install ./pea-dkms ./libpea0 ./libpea-dev ./pea-tools in the root"
else
	failc "apt-get install ./pea-dkms ./libpea0 ./libpea-dev ./pea-tools in the root"
	tail -n 30 "$OUT/apt.log" | sed 's/^/C\t/' >> "$RECORDS"
	report
fi
comment "apt pulled in: $(sed -n 's/^Setting up \([^ ]*\) .*/\1/p' "$OUT/apt.log" | tr '\n' ' ')"
# pea-dkms's postinst builds for the newest kernel of /lib/modules, the
# only one there; install explicitly if it did not.
if ! chroot "$R" dkms status -m pea -v "$VERSION" -k "$KVER" 2>/dev/null | grep -q installed; then
	chroot "$R" dkms install -m pea -v "$VERSION" -k "$KVER" >> "$OUT/apt.log" 2>&1 || true
fi
expect "dkms status: pea built and installed for $KVER in the root" \
	"$(chroot "$R" dkms status -m pea -v "$VERSION" -k "$KVER" 2>/dev/null | sed 's/,[^,]*x86_64//')" \
	"pea/$VERSION, $KVER: installed"
# Without pahole, resolve_btfids' source and the kernel's image (the
# root has none of them yet), 6.1's build cannot make pea.ko's BTF: it
# says so, and pea.ko has no kfuncs.
# DKMS keeps a build's make.log beside the module it built.
makelog() {
	local f
	for f in "$R/var/lib/dkms/pea/$VERSION/$KVER"/*/log/make.log; do
		[ -f "$f" ] && { printf '%s\n' "$f"; return; }
	done
	printf '%s\n' "$R/var/lib/dkms/pea/$VERSION/build/make.log"
}
MAKELOG=$(makelog)
expect "DKMS without pahole: make.log says there is no BTF, so no kfuncs" \
	"$(grep -c "^module-btf: no BTF for pea.ko ($KVER): pahole missing .*; building without kfuncs$" "$MAKELOG" 2>&1)" 1
KF=$(chroot "$R" modinfo -k "$KVER" -F kfuncs pea 2>&1 || true)
case "$KF" in
"off: built without BTF"*) pass "DKMS without pahole: modinfo -F kfuncs pea: off (${KF%%(*})" ;;
*) failc "DKMS without pahole: modinfo -F kfuncs pea: off"; comment "got $KF" ;;
esac
# What a 6.1 machine adds for the kfuncs (docs/kfuncs.md): pahole,
# linux-source-6.1 (resolve_btfids is built from it) with libelf-dev,
# zlib1g-dev, xz-utils and python3, and the kernel's image in /boot, where the BTF of the
# kernel comes from. The host's copies of the .debs, if any, save the
# download.
for deb in /var/cache/apt/archives/pahole_*.deb /var/cache/apt/archives/linux-source-6.1_*.deb \
	/var/cache/apt/archives/libelf-dev_*.deb /var/cache/apt/archives/zlib1g-dev_*.deb; do
	if [ -f "$deb" ]; then cp -n "$deb" "$CACHE/apt-archives/" || true; fi
done
BTF_PKGS=(pahole "linux-source-$(printf '%s\n' "$KVER" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')"
	libelf-dev zlib1g-dev xz-utils python3)
cp "$VMLINUZ" "$R/boot/vmlinuz-$KVER"
if chroot "$R" apt-get install -y -q --no-install-recommends "${BTF_PKGS[@]}" >> "$OUT/apt.log" 2>&1 &&
   chroot "$R" dkms build --force -m pea -v "$VERSION" -k "$KVER" >> "$OUT/apt.log" 2>&1 &&
   chroot "$R" dkms install --force -m pea -v "$VERSION" -k "$KVER" >> "$OUT/apt.log" 2>&1; then
	pass "DKMS rebuilt pea for $KVER with ${BTF_PKGS[*]} and /boot/vmlinuz-$KVER"
else
	failc "DKMS rebuilt pea for $KVER with ${BTF_PKGS[*]} and /boot/vmlinuz-$KVER"
	tail -n 30 "$OUT/apt.log" | sed 's/^/C\t/' >> "$RECORDS"
	tail -n 30 "$(makelog)" | sed 's/^/C\t/' >> "$RECORDS"
fi
expect "DKMS: make.log shows the BTF step (scripts/module-btf.sh)" \
	"$(grep -c 'BTF \[M\] pea.ko (scripts/module-btf.sh)' "$(makelog)" 2>&1)" 1
KF=$(chroot "$R" modinfo -k "$KVER" -F kfuncs pea 2>&1 || true)
case "$KF" in
"pea_kf_output for "*) pass "DKMS with BTF: modinfo -F kfuncs pea: $KF" ;;
*) failc "DKMS with BTF: modinfo -F kfuncs pea: pea_kf_output for ..."; comment "got $KF" ;;
esac
MODPATH=$(chroot "$R" modinfo -k "$KVER" -n pea 2>&1 || true)
case "$MODPATH" in
/lib/modules/$KVER/updates/dkms/pea.ko*) pass "modinfo -k $KVER -n pea in the root: $MODPATH" ;;
*) failc "modinfo -k $KVER -n pea in the root"; comment "got $MODPATH" ;;
esac
cp scripts/install-smoke/pea-consumer.c "$R/tmp/"
if chroot "$R" sh -c 'cc -Wall -Werror -o /tmp/pea-consumer /tmp/pea-consumer.c $(pkg-config --cflags --libs pea)' \
	> "$OUT/consumer.log" 2>&1; then
	pass "pea-consumer compiled in the root with cc \$(pkg-config --cflags --libs pea)"
else
	failc "pea-consumer compiled in the root with cc \$(pkg-config --cflags --libs pea)"
	sed 's/^/C\t/' "$OUT/consumer.log" >> "$RECORDS"
	report
fi
expect "pea-consumer links libpea.so.0" \
	"$(chroot "$R" ldd /tmp/pea-consumer | grep -c 'libpea.so.0 => /lib/x86_64-linux-gnu/libpea.so.0')" 1
umount_all
phase_time "the root: unpack, apt install, DKMS, consumer" "$t"

# --- 4. the guest -----------------------------------------------------------
t=$(date +%s)
# A BPF program calling pea's kfunc in the guest, against the DKMS module:
# examples/bpf/opensnoop (static, libbpf and libpea inside).
if make --no-print-directory examples KVER="$KVER" > "$OUT/examples.log" 2>&1; then
	pass "make examples: opensnoop, a libbpf tool calling pea_kf_output()"
else
	failc "make examples: opensnoop, a libbpf tool calling pea_kf_output()"
	tail -n 20 "$OUT/examples.log" | sed 's/^/C\t/' >> "$RECORDS"
fi
FILES=()
# Shared libraries first, from the root (mkinitramfs then skips the host's).
for b in /usr/sbin/pea /tmp/pea-consumer /usr/bin/kmod; do
	for lib in $(chroot "$R" ldd "$b" | grep -o '/[^ ]*'); do
		FILES+=("$R$lib:$lib")
	done
done
while read -r f; do
	FILES+=("$R/lib/modules/$KVER/$f:/lib/modules/$KVER/$f")
done < <(cd "$R/lib/modules/$KVER/" && find . -type f -printf '%P\n')
echo "$VERSION" > "$WORK/pea-version"
FILES+=("$R/usr/bin/kmod:/sbin/modprobe" "$R/usr/bin/kmod:/sbin/modinfo"
	"$R/usr/sbin/pea:/usr/sbin/pea" "$R/tmp/pea-consumer:/usr/bin/pea-consumer"
	"$WORK/pea-version:/etc/pea-version"
	"$ROOT/scripts/install-smoke/test_install:/bin/test_install"
	"$ROOT/build/examples/bpf/opensnoop:/usr/bin/opensnoop")
VMRC=0
KVER=$KVER SKIP_BUILD=1 TESTS=test_install PEA_FILES="${FILES[*]}" \
	APPEND_EXTRA="pea.load=modprobe" OUT="$OUT/vm" \
	"$ROOT/scripts/check-kernel.sh" > "$OUT/vm.tap" 2> "$OUT/vm.log" || VMRC=$?
sed -n 's/^ok [0-9]* - /P\tguest: /p; s/^not ok [0-9]* - /F\tguest: /p; s/^# /C\t/p' \
	"$OUT/vm.tap" >> "$RECORDS"
grep -q '^ok .*test_install exited 0' "$OUT/vm.tap" || failc "the guest ran test_install"
[ "$VMRC" -eq 0 ] || comment "scripts/check-kernel.sh exited $VMRC"
phase_time "the guest" "$t"
cleanup
report
