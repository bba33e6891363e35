#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The optional bench step of the set-up: what `make bench` needs beyond
# `make check` (scripts/setup.sh): clang and llvm for the BPF programs,
# bpftool for their skeleton, and Debian's libbpf (libbpf-dev ships
# libbpf.a) with the static libraries it links against. Idempotent: no
# network when everything is installed.

set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
log() { printf 'bench-setup: %s\n' "$*" >&2; }
die() { printf 'bench-setup: error: %s\n' "$*" >&2; exit 1; }

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 && SUDO=sudo
fi

PKGS=(clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev libzstd-dev)
missing=()
for p in "${PKGS[@]}"; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] ||
		missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	log "apt-get update"
	$SUDO apt-get update -qq >&2 || die "apt-get update failed"
	log "apt-get install ${missing[*]}"
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		die "apt-get install ${missing[*]} failed"
fi
for f in /usr/lib/x86_64-linux-gnu/libbpf.a /usr/lib/x86_64-linux-gnu/libelf.a \
	 /usr/lib/x86_64-linux-gnu/libz.a /usr/lib/x86_64-linux-gnu/libzstd.a; do
	[ -f "$f" ] || die "$f missing"
done
