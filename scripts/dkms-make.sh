#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS's build of pea.ko (dkms.conf MAKE[0]), run in DKMS's copy of the
# sources: kbuild with PEA_ONLY=1, and pea.ko's BTF where the kernel's
# build tree cannot make it (Debian's 6.1: no vmlinux, no resolve_btfids),
# as `make module` does in a checkout (scripts/module-btf.sh):
#
#   scripts/dkms-make.sh KVER KDIR
#
# Where the BTF cannot be made (pahole, resolve_btfids or the kernel's BTF
# missing) module-btf.sh says why in DKMS's make.log and pea.ko is built
# without kfuncs (modinfo pea: "kfuncs: off: ..."); docs/kfuncs.md lists
# what a 6.1 machine needs for them.

set -euo pipefail

KVER=${1:?usage: $0 KVER KDIR}
KDIR=${2:?usage: $0 KVER KDIR}
cd "$(dirname "${BASH_SOURCE[0]}")/.."

base=$(scripts/module-btf.sh --prepare "$KVER" "$KDIR")
make -C "$KDIR" M="$PWD" PEA_ONLY=1 PEA_BTF_BASE="$base" modules
if [ -n "$base" ]; then
	scripts/module-btf.sh --apply "$KVER" "$KDIR" "$base" pea.ko
fi
