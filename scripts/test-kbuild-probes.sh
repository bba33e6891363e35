#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of the Kbuild feature probes (pea_feature in ./Kbuild),
# run by `make check` for every test kernel; prints TAP.
#
#   scripts/test-kbuild-probes.sh [KVER...]   (default: the default kernel)
#
# For each kernel: (1) the -D flags ./Kbuild gives are those of the
# one-pattern probes it had before each probe needed a present and an
# absent pattern (REFERENCE below, a grep of the same headers); (2) a
# probe whose patterns match nothing (PEA_PROBE_SELFTEST=1) stops a real
# module build with an error naming the probe.

set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=0
FAIL=0

tap() {		# tap OK DESCRIPTION
	N=$((N + 1))
	if [ "$1" = 0 ]; then
		printf 'ok %d - %s\n' "$N" "$2"
	else
		printf 'not ok %d - %s\n' "$N" "$2"
		FAIL=$((FAIL + 1))
	fi
}

# The probes before (one pattern each: no match meant "old kernel").
REFERENCE=(
	"PEA_HAVE_VM_FLAGS_SET linux/mm.h void vm_flags_set"
	"PEA_HAVE_PERF_ALLOW_KERNEL linux/perf_event.h int perf_allow_kernel(void)"
	"PEA_HAVE_PERF_TIME_CTX linux/perf_event.h struct perf_time_ctx"
	"PEA_HAVE_HRTIMER_SETUP linux/hrtimer.h void hrtimer_setup"
	# Added after the change, with its present pattern.
	"PEA_HAVE_PF_USER_WORKER linux/sched.h define PF_USER_WORKER"
	"PEA_HAVE_PERF_EV_CAP_READ_SCOPE linux/perf_event.h define PERF_EV_CAP_READ_SCOPE"
	"PEA_HAVE_UPROBE_NOSYNC linux/uprobes.h void uprobe_unregister_nosync"
	"PEA_HAVE_URETPROBE_TRAMP_FIXUP linux/uprobes.h unsigned long uprobe_get_trampoline_vaddr(void);"
	"PEA_HAVE_UPROBE_HANDLER_DATA linux/uprobes.h struct pt_regs *regs, __u64 *data);"
	"PEA_HAVE_RETHOOK_OBJPOOL linux/rethook.h struct objpool_head"
	# The kfuncs' probes (given PEA_BTF_BASE, as where pea.ko gets BTF).
	"PEA_HAVE_BTF_KFUNCS_START linux/btf_ids.h define BTF_KFUNCS_START"
	"PEA_HAVE_BPF_KFUNC_TAG linux/btf.h define __bpf_kfunc"
	"PEA_HAVE_KFUNC_COMMON_HOOK linux/btf.h btf_kfunc_filter_t filter;"
	"PEA_HAVE_BPF_PROG_SLEEPABLE linux/bpf.h sleepable:1;"
)
# The configuration probes of pea.ko, checked against autoconf.h below,
# and the kfuncs' switch (PEA_HAVE_KFUNCS), checked on its own.
CONFIG_PROBES="-DPEA_HAVE_NETFILTER -DPEA_HAVE_DYNAMIC_FTRACE -DPEA_HAVE_KPROBE_EVENTS_ON_NOTRACE -DPEA_HAVE_KFUNCS"
# The fprobe links' four probes, checked together below.
CONFIG_PROBES+=" -DPEA_HAVE_FPROBE -DPEA_HAVE_KPROBES_ON_FTRACE -DPEA_HAVE_FPROBE_ENTRY_CB -DPEA_HAVE_FPROBE_PT_REGS"

[ $# -gt 0 ] || set -- "$("$ROOT/scripts/setup.sh" --resolve 2>/dev/null)"
for kver in "$@"; do
	kdir=/usr/src/linux-headers-$kver
	[ -f "$kdir/Makefile" ] || kdir=/lib/modules/$kver/build
	# Debian splits the headers: the arch directory includes the common one.
	srctree=$kdir
	[ -f "$srctree/include/linux/mm.h" ] ||
		srctree=$(sed -n 's|^include \(.*\)/Makefile$|\1|p' "$kdir/Makefile")
	if [ ! -f "$srctree/include/linux/mm.h" ]; then
		tap 1 "[$kver] kbuild probes: no kernel headers for $kver"
		continue
	fi

	want=
	for r in "${REFERENCE[@]}"; do
		read -r macro header pattern <<< "$r"
		grep -qsF -- "$pattern" "$srctree/include/$header" &&
			want+="-D$macro "
	done
	got=$(printf 'ccflags-y :=\ninclude %s/Kbuild\nall:\n\t@echo $(filter-out $(CONFIG_PROBES),$(filter -DPEA_HAVE_%%,$(ccflags-y)))\n' "$ROOT" |
		make -s --no-print-directory -f - srctree="$srctree" objtree="$kdir" src="$ROOT" CONFIG_PROBES="$CONFIG_PROBES" PEA_BTF_BASE=/base.btf 2>&1)
	tap "$([ "$got" = "$(echo $want)" ]; echo $?)" \
		"[$kver] kbuild probes give '${got}', as the one-pattern probes ('$(echo $want)')"

	# The kfuncs: built where kbuild makes BTF (a vmlinux in the build
	# tree) or the Makefile gives PEA_BTF_BASE; else left out, saying why.
	kf="ccflags-y :=\ninclude %s/Kbuild\nall:\n\t@echo '\$(filter -DPEA_HAVE_KFUNCS,\$(ccflags-y))\$(if \$(pea_kfunc_off),off: \$(pea_kfunc_off))'\n"
	nobtf=
	grep -qsx '#define CONFIG_DEBUG_INFO_BTF_MODULES 1' "$kdir/include/generated/autoconf.h" ||
		nobtf="off: the kernel has no module BTF (CONFIG_DEBUG_INFO_BTF_MODULES)"
	want=-DPEA_HAVE_KFUNCS
	[ -f "$kdir/vmlinux" ] ||
		want="off: built without BTF ($kdir has no vmlinux and scripts/module-btf.sh found no kernel BTF and resolve_btfids)"
	want=${nobtf:-$want}
	got=$(printf "$kf" "$ROOT" | make -s --no-print-directory -f - srctree="$srctree" objtree="$kdir" src="$ROOT" 2>&1 | grep -v '^pea: building without kfuncs')
	tap "$([ "$got" = "$want" ]; echo $?)" \
		"[$kver] kfuncs without PEA_BTF_BASE: '${got}' (want '$want')"
	got=$(printf "$kf" "$ROOT" | make -s --no-print-directory -f - srctree="$srctree" objtree="$kdir" src="$ROOT" PEA_BTF_BASE=/base.btf 2>&1 | grep -v '^pea: building without kfuncs')
	want=${nobtf:--DPEA_HAVE_KFUNCS}
	tap "$([ "$got" = "$want" ]; echo $?)" \
		"[$kver] kfuncs with PEA_BTF_BASE: '${got}' (want '$want')"

	# scripts/module-btf.sh's cache of the kernel's BTF follows what it
	# came from, not KVER alone: a kernel rebuilt under the same KVER
	# (here another PEA_BTF_VMLINUX) gives a new base, never the cached one.
	if [ ! -f "$kdir/vmlinux" ] && [ -z "$nobtf" ] &&
	   [ -s "$ROOT/.cache/btf/$kver/vmlinux.btf" ]; then
		t=$(mktemp -d)
		mkdir -p "$t/btf"
		for rb in "$ROOT"/.cache/btf/resolve_btfids-*; do
			[ -x "$rb/resolve_btfids" ] && ln -s "$(readlink -f "$rb")" "$t/btf/"
		done
		cp "$ROOT/.cache/btf/$kver/vmlinux.btf" "$t/a.btf"
		{ cat "$t/a.btf"; printf 'x'; } > "$t/b.btf"
		ok=1
		for f in a b a; do
			got=$(PEA_CACHE=$t PEA_BTF_VMLINUX=$t/$f.btf \
			      "$ROOT/scripts/module-btf.sh" --prepare "$kver" "$kdir" 2>/dev/null)
			cmp -s "$got" "$t/$f.btf" || ok=0
		done
		tap "$([ "$ok" = 1 ]; echo $?)" \
			"[$kver] module-btf.sh's cached kernel BTF follows its source's SHA-256 (a, b, a again)"
		rm -rf "$t"
	fi

	# The configuration probe of pea.ko: pea_nf.c where netfilter is.
	want=
	grep -qsx '#define CONFIG_NETFILTER 1' "$kdir/include/generated/autoconf.h" &&
		want=-DPEA_HAVE_NETFILTER
	got=$(printf 'ccflags-y :=\ninclude %s/Kbuild\nall:\n\t@echo $(filter -DPEA_HAVE_NETFILTER,$(ccflags-y)) $(filter %%pea_nf.o,$(pea-y))\n' "$ROOT" |
		make -s --no-print-directory -f - srctree="$srctree" objtree="$kdir" src="$ROOT" PEA_BTF_BASE=/base.btf 2>&1)
	tap "$([ "$got" = "$(echo $want ${want:+module/pea_nf.o})" ]; echo $?)" \
		"[$kver] the NETFILTER config probe gives '${got}', as autoconf.h ('$want')"

	# The notrace rule's configuration probes (pea_notrace.c).
	want=
	for c in DYNAMIC_FTRACE KPROBE_EVENTS_ON_NOTRACE; do
		grep -qsx "#define CONFIG_$c 1" "$kdir/include/generated/autoconf.h" &&
			want+="-DPEA_HAVE_$c "
	done
	got=$(printf 'ccflags-y :=\ninclude %s/Kbuild\nall:\n\t@echo $(filter -DPEA_HAVE_DYNAMIC_FTRACE -DPEA_HAVE_KPROBE_EVENTS_ON_NOTRACE,$(ccflags-y))\n' "$ROOT" |
		make -s --no-print-directory -f - srctree="$srctree" objtree="$kdir" src="$ROOT" PEA_BTF_BASE=/base.btf 2>&1)
	tap "$([ "$got" = "$(echo $want)" ]; echo $?)" \
		"[$kver] the notrace config probes give '${got}', as autoconf.h ('$(echo $want)')"

	# fprobe links (pea_fprobe.c): CONFIG_FPROBE and CONFIG_KPROBES_ON_FTRACE
	# in autoconf.h, handlers that return int and take struct pt_regs, and
	# an objpool of rethook nodes: all or none.
	want=
	fpmk='ccflags-y :=\ninclude %s/Kbuild\nall:\n\t@echo $(filter -DPEA_HAVE_FPROBE -DPEA_HAVE_KPROBES_ON_FTRACE -DPEA_HAVE_FPROBE_ENTRY_CB -DPEA_HAVE_FPROBE_PT_REGS,$(ccflags-y)) $(filter %%pea_fprobe.o,$(pea-y))\n'
	if grep -qsx '#define CONFIG_FPROBE 1' "$kdir/include/generated/autoconf.h" &&
	   grep -qsx '#define CONFIG_KPROBES_ON_FTRACE 1' "$kdir/include/generated/autoconf.h" &&
	   grep -qsF 'typedef int (*fprobe_entry_cb)(struct fprobe *fp' "$srctree/include/linux/fprobe.h" &&
	   grep -qsF 'unsigned long ret_ip, struct pt_regs *regs' "$srctree/include/linux/fprobe.h" &&
	   grep -qsF 'struct objpool_head' "$srctree/include/linux/rethook.h"; then
		want="-DPEA_HAVE_FPROBE -DPEA_HAVE_KPROBES_ON_FTRACE -DPEA_HAVE_FPROBE_ENTRY_CB -DPEA_HAVE_FPROBE_PT_REGS module/pea_fprobe.o"
	fi
	got=$(printf "$fpmk" "$ROOT" |
		make -s --no-print-directory -f - srctree="$srctree" objtree="$kdir" src="$ROOT" PEA_BTF_BASE=/base.btf 2>&1)
	tap "$([ "$got" = "$want" ]; echo $?)" \
		"[$kver] the fprobe probes give '${got}' ('$want')"
	# The same headers with 6.14's callbacks (struct ftrace_regs, returns
	# on fgraph's shadow stack): no fprobe link, not a failing build.
	if [ -n "$want" ]; then
		t=$(mktemp -d)
		cp -rs "$(readlink -f "$srctree/include")" "$t/include"
		rm "$t/include/linux/fprobe.h"
		sed 's/unsigned long ret_ip, struct pt_regs \*regs/unsigned long ret_ip, struct ftrace_regs *regs/' \
			"$srctree/include/linux/fprobe.h" > "$t/include/linux/fprobe.h"
		got=$(printf "$fpmk" "$ROOT" |
			make -s --no-print-directory -f - srctree="$t" objtree="$kdir" src="$ROOT" PEA_BTF_BASE=/base.btf 2>&1)
		tap "$([ -z "$got" ] && grep -q 'ftrace_regs \*regs' "$t/include/linux/fprobe.h"; echo $?)" \
			"[$kver] fprobe callbacks on struct ftrace_regs (6.14): the probes give '${got}' (none, no pea_fprobe.o)"
		rm -rf "$t"
	fi

	# The configuration probe (pea_config_feature) of the test module.
	want=
	grep -qsx '#define CONFIG_PREEMPT_RT 1' "$kdir/include/generated/autoconf.h" &&
		want=-DPEA_ST_HAVE_PREEMPT_RT
	got=$(printf 'ccflags-y :=\ninclude %s/selftests/module/Kbuild\nall:\n\t@echo $(filter -DPEA_ST_HAVE_PREEMPT_RT,$(ccflags-y))\n' "$ROOT" |
		make -s --no-print-directory -f - srctree="$srctree" objtree="$kdir" src="$ROOT/selftests/module" 2>&1)
	tap "$([ "$got" = "$want" ]; echo $?)" \
		"[$kver] the PREEMPT_RT config probe gives '${got}', as autoconf.h ('$want')"

	out=$(make -C "$kdir" M="$ROOT" PEA_PROBE_SELFTEST=1 modules 2>&1)
	rc=$?
	tap "$([ $rc != 0 ] && grep -q 'pea feature probe PEA_HAVE_NOTHING: .*matches neither' <<< "$out"; echo $?)" \
		"[$kver] a probe matching neither pattern stops the build (exit $rc) naming the probe"
done
printf '1..%d\n' "$N"
exit $((FAIL > 0))
