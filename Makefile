# SPDX-License-Identifier: GPL-2.0
#
# pea: top-level Makefile.
#
#   make [all]        pea.ko + selftests/module/pea_selftest.ko, build/libpea.a
#                     and build/selftests/test_*
#   make module       only the kernel modules (kbuild, see ./Kbuild)
#   make lib          only build/libpea.a
#   make selftests    only the user-space test programs (with the 32-bit
#                     ones in selftests/m32/: needs gcc-multilib) and
#                     build/selftests/pea-storm (the demo's storm driver)
#   make examples     build/examples/bpf/*: libbpf tools writing into pea
#                     maps with pea's kfunc (docs/kfuncs.md)
#   make tools        build/tools/pea from tools/pea/*.c
#   make host-tests   build/host/*: the host tests' programs (selftests/host/,
#                     linked with the tool's objects but its main), which
#                     make check runs on the host (scripts/check-host.sh)
#   make sparse       the kernel modules through sparse (C=2; warnings fail)
#   make checkpatch   checkpatch.pl --strict (Debian's 6.1 source) over every
#                     kernel file; exceptions in scripts/checkpatch-exceptions
#   make check        set up, build, boot the test VM, report TAP
#                     (TESTS=test_a,test_b to run a subset); Debian's 6.1
#                     and 6.12 kernels, their PREEMPT_RT flavours (6.1-rt,
#                     6.12-rt), then the debug kernel (docs/checking.md)
#   make check-host   only make check's host phase: the tests of what needs
#                     no kernel (selftests/host/, scripts/check-host.sh)
#   make check-debug  only the debug kernel (KASAN, lockdep, UBSAN, ...):
#                     every selftest, then the canary (docs/checking.md)
#   make check-kcsan  the debug kernel's KCSAN variant (the data-race
#                     detector): every selftest (those of scripts/mt-tests
#                     under multi-threaded TCG), then its canary; run it
#                     before landing a change to module/ (docs/checking.md)
#   make canary       selftests/canary/pea_canary.ko (debug kernel only:
#                     needs KDIR and KVER of scripts/debug-kernel.sh)
#   make fuzz         boot the VM and run only the fuzzer, FUZZ_SECONDS long
#                     (default 600; FUZZ_SEED=S replays a run, KVERS as
#                     check; docs/fuzzing.md, scripts/fuzz.sh)
#   make soak         producers at full speed from every context while
#                     consumers, maps and probes come and go, DURATION
#                     seconds (default 300); exact accounting, slab and
#                     vmalloc back to their baseline (not part of check)
#   make demo         boot the VM and run the demo
#   make vm-shell     boot the VM into an interactive shell
#   make bench        pea against the perf buffer and the BPF ring buffer in
#                     the test guest: a table and a JSON file (scripts/bench.sh)
#   make bench-icount the same costs in instructions per record (one vCPU
#                     under QEMU -icount), asserted repeatable within 1%
#   make qemu-repro   boot the guest with only scripts/qemu-repro/cx16-flags
#                     in it: QEMU's CMPXCHG16B flags fault, no pea involved
#                     (it boots -cpu max, which shows it; VM_CPU=max,-cx16
#                     cannot; docs/qemu-cmpxchg16b.md)
#   make install      pea.ko into /lib/modules/KVER/updates (then depmod),
#                     libpea (libpea.so.0, libpea.a), its headers in
#                     PREFIX/include/pea/, pea.pc, the pea tool and the man
#                     pages; DESTDIR, PREFIX (default /usr/local) and more:
#                     scripts/install.mk. make uninstall removes them.
#   make deb          the Debian packages pea-dkms, libpea0, libpea-dev and
#                     pea-tools into build/deb/ (scripts/build-deb.sh)
#   make check-install  install, uninstall, the packages in a clean
#                     bookworm root, DKMS, and a smoke test in the guest
#                     (scripts/check-install.sh)
#   make clean        remove build outputs (distclean: also .cache/)
#
# Variables: KVER (kernel release, default: what linux-headers-amd64 pulls
# in; short forms 6.12, 6.1-rt, 6.12-rt, see scripts/setup.sh), KDIR (its
# kbuild tree), CC, EXTRA_CFLAGS.

# kbuild reads ./Kbuild; should it ever fall back to this file, hand over.
ifneq ($(KERNELRELEASE),)
include $(src)/Kbuild
else

ifeq ($(origin KVER),undefined)
KVER := $(shell cat .cache/kver 2>/dev/null || scripts/setup.sh --resolve 2>/dev/null)
else ifeq ($(findstring -,$(patsubst %-rt,%,$(KVER))),)
# A short form such as KVER=6.12 or KVER=6.12-rt: the release its
# metapackage pulls in.
override KVER := $(shell scripts/setup.sh --resolve $(KVER) 2>/dev/null)
endif
KDIR ?= $(firstword $(wildcard /usr/src/linux-headers-$(KVER)/Makefile \
	/lib/modules/$(KVER)/build/Makefile) /usr/src/linux-headers-$(KVER))
KDIR := $(patsubst %/Makefile,%,$(KDIR))

BUILD := build

USER_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11 -Iinclude/uapi \
	-Iinclude/uapi/linux -Ilib \
	-D_GNU_SOURCE -pthread $(EXTRA_CFLAGS)

LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(patsubst lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
LIBPEA := $(BUILD)/libpea.a

TEST_SRCS := $(wildcard selftests/test_*.c)
TEST_BINS := $(patsubst selftests/%.c,$(BUILD)/selftests/%,$(TEST_SRCS))

# 32-bit test programs (compat ioctls): selftests/m32/test_*.c, built with
# -m32 (gcc-multilib) into build/selftests/ next to the others.
TEST32_SRCS := $(wildcard selftests/m32/test_*.c)
TEST32_BINS := $(patsubst selftests/m32/%.c,$(BUILD)/selftests/%,$(TEST32_SRCS))

# The fuzzer (and soak): every selftests/fuzz/*.c linked into one program.
FUZZ_SRCS := $(wildcard selftests/fuzz/*.c)
FUZZ_OBJS := $(patsubst selftests/fuzz/%.c,$(BUILD)/selftests/fuzz-objs/%.o,$(FUZZ_SRCS))
FUZZ_BIN := $(BUILD)/selftests/test_fuzz

# The storm driver of `DEMO=storm make demo`: it talks to the test module.
STORM_BIN := $(BUILD)/selftests/pea-storm

# The pea command-line tool: every tools/pea/*.c linked into one program.
PEA_SRCS := $(wildcard tools/pea/*.c)
PEA_OBJS := $(patsubst tools/pea/%.c,$(BUILD)/tools/pea-objs/%.o,$(PEA_SRCS))
PEA_TOOL := $(BUILD)/tools/pea
# ktypes.c reads the kernel's BTF with Debian's libbpf (libbpf-dev), linked
# statically with what it needs (libelf, zlib, zstd), as the bench is;
# udwarf.c a user program's DWARF with elfutils' libdw (libdw-dev), linked
# the same way with what its static library needs (bzip2, xz).
PEA_LIBS := -lbpf -ldw -lelf -lz -lbz2 -llzma -lzstd -lpthread

KBUILD := $(MAKE) -C $(KDIR) M=$(CURDIR)

# BPF programs (bench/, selftests/kfunc/): clang, and bpftool for skeletons.
BPF_CLANG ?= clang
BPFTOOL ?= $(firstword $(wildcard /usr/sbin/bpftool) bpftool)

# sparse warnings fail `make sparse`; SPARSE_CF= makes them non-fatal.
SPARSE_CF ?= -Wsparse-error

.PHONY: all module lib selftests tools sparse checkpatch check check-host check-debug check-kcsan \
	canary fuzz \
	soak demo vm-shell qemu-repro clean distclean kdir-check

all: module lib selftests tools examples

kdir-check:
	@test -n "$(KVER)" || { echo "KVER is unknown: run scripts/setup.sh" >&2; exit 1; }
	@test -f $(KDIR)/Makefile || { echo "no kernel headers in $(KDIR): run scripts/setup.sh $(KVER)" >&2; exit 1; }

# pea.ko's BTF where the kernel's build tree cannot make it (no vmlinux
# there: Debian's 6.1): the kernel's BTF as the base, then the BTF step
# after the link (scripts/module-btf.sh). Empty: kbuild makes the BTF, or
# nothing can (Kbuild then builds pea.ko without kfuncs and says why).
PEA_BTF_BASE_CMD = scripts/module-btf.sh --prepare "$(KVER)" "$(KDIR)"

module: kdir-check
	@+base=$$($(PEA_BTF_BASE_CMD)) && \
	echo "$(KBUILD) modules PEA_BTF_BASE=$$base" && \
	$(KBUILD) modules PEA_BTF_BASE="$$base" && \
	if [ -n "$$base" ]; then \
		scripts/module-btf.sh --apply "$(KVER)" "$(KDIR)" "$$base" pea.ko; \
	fi

sparse: kdir-check
	@command -v sparse >/dev/null || { echo "sparse missing: run scripts/setup.sh" >&2; exit 1; }
	@+base=$$($(PEA_BTF_BASE_CMD)) && \
	$(KBUILD) C=2 CF="$(SPARSE_CF)" PEA_BTF_BASE="$$base" modules && \
	if [ -n "$$base" ]; then \
		scripts/module-btf.sh --apply "$(KVER)" "$(KDIR)" "$$base" pea.ko; \
	fi

checkpatch:
	@scripts/checkpatch.sh

lib: $(LIBPEA)

$(LIBPEA): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -MMD -MP -c -o $@ $<

selftests: $(TEST_BINS) $(TEST32_BINS) $(FUZZ_BIN) $(STORM_BIN)

$(TEST32_BINS): $(BUILD)/selftests/%: selftests/m32/%.c
	@mkdir -p $(@D)
	$(CC) -m32 $(USER_CFLAGS) -MMD -MP -static -o $@ $< -lpthread

$(FUZZ_BIN): $(FUZZ_OBJS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -static -o $@ $(FUZZ_OBJS) -lbpf -lelf -lz -lzstd \
		-lpthread

# The kfunc family's BPF programs (selftests/kfunc/fuzz_kfunc.bpf.c).
FUZZ_KFUNC_BPF := $(BUILD)/selftests/kfunc/fuzz_kfunc.bpf.o
FUZZ_KFUNC_SKEL := $(BUILD)/selftests/kfunc/fuzz_kfunc.skel.h
$(FUZZ_KFUNC_BPF): selftests/kfunc/fuzz_kfunc.bpf.c selftests/kfunc/fuzz_kfunc.h
	@mkdir -p $(@D)
	$(BPF_CLANG) -O2 -g -target bpf -Wall -Werror -Iinclude/uapi \
		-I/usr/include/$(shell $(CC) -dumpmachine) -c -o $@ $<

$(FUZZ_KFUNC_SKEL): $(FUZZ_KFUNC_BPF)
	$(BPFTOOL) gen skeleton $< name fuzz_kfunc > $@.tmp && mv $@.tmp $@

$(BUILD)/selftests/fuzz-objs/%.o: selftests/fuzz/%.c $(FUZZ_KFUNC_SKEL)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Iselftests/kfunc -I$(BUILD)/selftests/kfunc \
		-MMD -MP -c -o $@ $<

$(BUILD)/selftests/test_%: selftests/test_%.c $(LIBPEA)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -MMD -MP -static -o $@ $< $(LIBPEA) -lpthread

# test_kfunc: BPF programs calling pea's kfuncs (selftests/kfunc/), built
# with clang and embedded through a bpftool skeleton; the test links
# Debian's libbpf statically, as bench/ does (scripts/setup.sh installs
# clang, bpftool and libbpf-dev).
KFUNC_BPF := $(BUILD)/selftests/kfunc/test_kfunc.bpf.o
KFUNC_SKEL := $(BUILD)/selftests/kfunc/test_kfunc.skel.h
$(KFUNC_BPF): selftests/kfunc/test_kfunc.bpf.c selftests/kfunc/test_kfunc.h
	@mkdir -p $(@D)
	$(BPF_CLANG) -O2 -g -target bpf -Wall -Werror -Iinclude/uapi \
		-I/usr/include/$(shell $(CC) -dumpmachine) -c -o $@ $<

$(KFUNC_SKEL): $(KFUNC_BPF)
	$(BPFTOOL) gen skeleton $< name test_kfunc > $@.tmp && mv $@.tmp $@

KFUNC_ZC_BPF := $(BUILD)/selftests/kfunc/test_kfunc_zc.bpf.o
KFUNC_ZC_SKEL := $(BUILD)/selftests/kfunc/test_kfunc_zc.skel.h
$(KFUNC_ZC_BPF): selftests/kfunc/test_kfunc_zc.bpf.c selftests/kfunc/test_kfunc.h
	@mkdir -p $(@D)
	$(BPF_CLANG) -O2 -g -target bpf -Wall -Werror -Iinclude/uapi \
		-I/usr/include/$(shell $(CC) -dumpmachine) -c -o $@ $<

$(KFUNC_ZC_SKEL): $(KFUNC_ZC_BPF)
	$(BPFTOOL) gen skeleton $< name test_kfunc_zc > $@.tmp && mv $@.tmp $@

$(BUILD)/selftests/test_kfunc: selftests/test_kfunc.c $(KFUNC_SKEL) $(KFUNC_ZC_SKEL) $(LIBPEA)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Wno-unused-parameter -Iselftests/kfunc \
		-I$(BUILD)/selftests/kfunc \
		-MMD -MP -static -o $@ $< $(LIBPEA) -lbpf -lelf -lz -lzstd -lpthread

# test_caps: finds pea's module BTF with libbpf, linked as test_kfunc's.
$(BUILD)/selftests/test_caps: selftests/test_caps.c $(LIBPEA)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -MMD -MP -static -o $@ $< $(LIBPEA) -lbpf -lelf \
		-lz -lzstd -lpthread

# examples/bpf/: libbpf tools written for pea's kfunc (docs/kfuncs.md),
# built as test_kfunc is; test_kfunc runs them in the guest.
EXAMPLES := $(BUILD)/examples/bpf/opensnoop
$(BUILD)/examples/bpf/%.bpf.o: examples/bpf/%.bpf.c examples/bpf/%.h
	@mkdir -p $(@D)
	$(BPF_CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
		-Iinclude/uapi -I/usr/include/$(shell $(CC) -dumpmachine) \
		-c -o $@ $<

$(BUILD)/examples/bpf/%.skel.h: $(BUILD)/examples/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $* > $@.tmp && mv $@.tmp $@

$(EXAMPLES): $(BUILD)/examples/bpf/%: examples/bpf/%.c \
		$(BUILD)/examples/bpf/%.skel.h $(LIBPEA)
	$(CC) $(USER_CFLAGS) -Wno-unused-parameter -Iexamples/bpf \
		-I$(BUILD)/examples/bpf -MMD -MP -static -o $@ $< $(LIBPEA) \
		-lbpf -lelf -lz -lzstd -lpthread

.PHONY: examples
examples: $(EXAMPLES)

# test_uprobe and test_tool_uprobe embed a small shared object (the guest
# has no dynamic libc: the tests write it out, map its text and call it);
# test_tool_udwarf too, as a file without DWARF.
PT_UPROBE_SO := $(BUILD)/selftests/pt_uprobe_so.so
$(PT_UPROBE_SO): selftests/pt_uprobe_so.c
	@mkdir -p $(@D)
	$(CC) -O2 -fPIC -shared -nostdlib -Wl,-e,pt_so_fn -o $@ $<

PT_UPROBE_TESTS := $(BUILD)/selftests/test_uprobe \
	$(BUILD)/selftests/test_tool_uprobe $(BUILD)/selftests/test_tool_udwarf
$(PT_UPROBE_TESTS): $(PT_UPROBE_SO)
$(PT_UPROBE_TESTS): USER_CFLAGS += -DPT_UPROBE_SO='"$(PT_UPROBE_SO)"'

# test_tool_udwarf also embeds a C++ program (g++ -g, static: the guest has
# no dynamic libc) whose functions it traces by their qualified names.
PT_UDWARF_CXX := $(BUILD)/selftests/pt_udwarf_cxx
$(PT_UDWARF_CXX): selftests/pt_udwarf_cxx.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g -Wall -Wextra -Werror -fno-exceptions -fno-rtti -static \
		-o $@ $<
$(BUILD)/selftests/test_tool_udwarf: $(PT_UDWARF_CXX)
$(BUILD)/selftests/test_tool_udwarf: USER_CFLAGS += -DPT_UDWARF_CXX='"$(PT_UDWARF_CXX)"'

# test_uprobe also embeds a 32-bit program (uretprobes on compat tasks).
PT_UPROBE32 := $(BUILD)/selftests/pt_uprobe32
$(PT_UPROBE32): selftests/m32/pt_uprobe32.c
	@mkdir -p $(@D)
	$(CC) -m32 $(USER_CFLAGS) -static -o $@ $<
$(BUILD)/selftests/test_uprobe: $(PT_UPROBE32)
$(BUILD)/selftests/test_uprobe: USER_CFLAGS += -DPT_UPROBE32='"$(PT_UPROBE32)"'

# test_ustack32 embeds a 32-bit chain of frame-pointer functions; not
# position-independent, so that each begins with push %ebp.
PT_USTACK32 := $(BUILD)/selftests/pt_ustack32
$(PT_USTACK32): selftests/m32/pt_ustack32.c
	@mkdir -p $(@D)
	$(CC) -m32 $(USER_CFLAGS) -fno-omit-frame-pointer -fno-pie -no-pie \
		-static -o $@ $<
$(BUILD)/selftests/test_ustack32: $(PT_USTACK32)
$(BUILD)/selftests/test_ustack32: USER_CFLAGS += -DPT_USTACK32='"$(PT_USTACK32)"'

# test_sample walks its own user stacks by frame pointers: every frame
# kept, no call turned into a jump.
# It embeds a shared object it maps after its exec (pea profile's test).
# Both are linked with known build-ids, which test_tool_profile expects
# from pea profile --build-ids: the ids are in this Makefile, so a change
# of it relinks them (and test_tool_profile, which is told them).
PT_SAMPLE_BID := 0x7065612070726f66696c6520746573745f73616d
PT_PROF_SO_BID := 0x7065612070745f70726f665f736f2e736f212121
PT_PROF_SO := $(BUILD)/selftests/pt_prof_so.so
$(PT_PROF_SO): selftests/pt_prof_so.c Makefile
	@mkdir -p $(@D)
	$(CC) -O2 -fPIC -shared -nostdlib -fno-omit-frame-pointer \
		-Wl,-e,pt_prof_so_spin -Wl,--build-id=$(PT_PROF_SO_BID) -o $@ $<

$(BUILD)/selftests/test_sample: selftests/test_sample.c $(LIBPEA) $(PT_PROF_SO) Makefile
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fno-omit-frame-pointer -fno-optimize-sibling-calls \
		-DPT_PROF_SO='"$(PT_PROF_SO)"' -MMD -MP -static -o $@ $< \
		$(LIBPEA) -lpthread -Wl,--build-id=$(PT_SAMPLE_BID)
$(BUILD)/selftests/test_tool_profile: Makefile
$(BUILD)/selftests/test_tool_profile: USER_CFLAGS += \
	-DPT_SAMPLE_BID='"$(PT_SAMPLE_BID)"' -DPT_PROF_SO_BID='"$(PT_PROF_SO_BID)"'

# test_agg_stack checks the user stacks a sampler counts in the kernel,
# as test_sample does: frame pointers, no call turned into a jump.
$(BUILD)/selftests/test_agg_stack: USER_CFLAGS += -fno-omit-frame-pointer \
	-fno-optimize-sibling-calls
# test_ustack and test_tool_ustack check user stacks of a chain of their
# own functions exactly:
# frame pointers, and no call turned into a jump.
$(BUILD)/selftests/test_ustack $(BUILD)/selftests/test_tool_ustack: \
	USER_CFLAGS += -fno-omit-frame-pointer -fno-optimize-sibling-calls
# test_uregs embeds a 32-bit program (a compat task's user registers).
PT_UREGS32 := $(BUILD)/selftests/pt_uregs32
$(PT_UREGS32): selftests/m32/pt_uregs32.c
	@mkdir -p $(@D)
	$(CC) -m32 $(USER_CFLAGS) -static -o $@ $<
$(BUILD)/selftests/test_uregs: $(PT_UREGS32)
$(BUILD)/selftests/test_uregs: USER_CFLAGS += -DPT_UREGS32='"$(PT_UREGS32)"'
# test_tool_dwunw profiles itself WITHOUT frame pointers, unwound by DWARF
# call frame information (.eh_frame): no call turned into a jump.
$(BUILD)/selftests/test_tool_dwunw: USER_CFLAGS += -fomit-frame-pointer \
	-fno-optimize-sibling-calls -fasynchronous-unwind-tables
# test_tool_profile_self execs its own file: a static PIE, so that the
# exec loads it at another address; frame pointers for its stacks.
$(BUILD)/selftests/test_tool_profile_self: selftests/test_tool_profile_self.c $(LIBPEA)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fno-omit-frame-pointer -MMD -MP -static-pie \
		-o $@ $< $(LIBPEA) -lpthread

tools: $(PEA_TOOL)

$(PEA_TOOL): $(PEA_OBJS) $(LIBPEA)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -static -o $@ $(PEA_OBJS) $(LIBPEA) $(PEA_LIBS)

$(BUILD)/tools/pea-objs/%.o: tools/pea/%.c
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Itools/pea -MMD -MP -c -o $@ $<

# Host tests (no kernel): each selftests/host/*.c is one program, linked
# with every object of the tool but main.o.
HOST_SRCS := $(wildcard selftests/host/*.c)
HOST_BINS := $(patsubst selftests/host/%.c,$(BUILD)/host/%,$(HOST_SRCS))
HOST_TOOL_OBJS := $(filter-out %/main.o,$(PEA_OBJS))

.PHONY: host-tests
host-tests: $(HOST_BINS)

$(BUILD)/host/%: selftests/host/%.c $(HOST_TOOL_OBJS) $(LIBPEA)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Itools/pea -MMD -MP -o $@ $< $(HOST_TOOL_OBJS) \
		$(LIBPEA) $(PEA_LIBS)

$(STORM_BIN): selftests/pea-storm.c $(LIBPEA)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -MMD -MP -static -o $@ $< $(LIBPEA) -lpthread

check:
	@scripts/check.sh

fuzz:
	@scripts/fuzz.sh fuzz

soak:
	@scripts/fuzz.sh soak

check-host:
	@scripts/check-host.sh

check-debug:
	@KVERS=debug SPARSE=0 HOST_TESTS=0 scripts/check.sh

check-kcsan:
	@KVERS="kcsan mt-kcsan" SPARSE=0 HOST_TESTS=0 scripts/check.sh

canary: kdir-check
	$(MAKE) -C $(KDIR) M=$(CURDIR)/selftests/canary modules

demo:
	@scripts/demo.sh

vm-shell:
	@scripts/demo.sh shell

qemu-repro:
	@scripts/qemu-repro/run.sh

clean:
	if [ -f $(KDIR)/Makefile ]; then $(KBUILD) clean; \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/selftests/canary clean; fi
	rm -rf $(BUILD)

distclean: clean
	rm -rf .cache

include scripts/install.mk

.PHONY: deb check-install

deb:
	@scripts/build-deb.sh

check-install:
	@scripts/check-install.sh

-include $(wildcard $(BUILD)/lib/*.d $(BUILD)/selftests/*.d $(BUILD)/tools/*.d \
	$(BUILD)/tools/pea-objs/*.d $(BUILD)/selftests/fuzz-objs/*.d \
	$(BUILD)/host/*.d)

# ---- make bench: pea against the kernel's perf buffer and BPF ring buffer
# (scripts/bench.sh). The BPF programs are built with clang and the
# program links Debian's libbpf statically (scripts/bench-setup.sh
# installs both). bench/module/pea_bench.ko is built with the modules.
BENCH_SRCS := $(filter-out %.bpf.c,$(wildcard bench/*.c))
BENCH_OBJS := $(patsubst bench/%.c,$(BUILD)/bench/objs/%.o,$(BENCH_SRCS))
BENCH_BIN := $(BUILD)/bench/pea-bench
BENCH_LIBS := -lbpf -lelf -lz -lzstd -lpthread

.PHONY: bench bench-icount bench-tools

bench:
	@scripts/bench.sh

# Instructions per record under QEMU's icount, measured twice: fails if
# the two passes differ by more than 1% (bench/icount.c). Not in check.
bench-icount:
	@scripts/bench.sh --icount

bench-tools: $(BENCH_BIN)

$(BUILD)/bench/bench.bpf.o: bench/bench.bpf.c
	@mkdir -p $(@D)
	$(BPF_CLANG) -O2 -g -target bpf -Wall -Werror -Iinclude/uapi \
		-I/usr/include/$(shell $(CC) -dumpmachine) -c -o $@ $<

$(BUILD)/bench/bench.skel.h: $(BUILD)/bench/bench.bpf.o
	$(BPFTOOL) gen skeleton $< name bench > $@.tmp && mv $@.tmp $@

# bench/kfunc.bpf.c: the kfunc figure's programs (pea's kfuncs).
$(BUILD)/bench/bench_kfunc.bpf.o: bench/kfunc.bpf.c
	@mkdir -p $(@D)
	$(BPF_CLANG) -O2 -g -target bpf -Wall -Werror -Iinclude/uapi \
		-I/usr/include/$(shell $(CC) -dumpmachine) -c -o $@ $<

$(BUILD)/bench/bench_kfunc.skel.h: $(BUILD)/bench/bench_kfunc.bpf.o
	$(BPFTOOL) gen skeleton $< name bench_kfunc > $@.tmp && mv $@.tmp $@

# bench/sample.c unwinds its own user stack: frame pointers.
$(BUILD)/bench/objs/sample.o: USER_CFLAGS += -fno-omit-frame-pointer \
	-fno-optimize-sibling-calls

$(BUILD)/bench/objs/%.o: bench/%.c $(BUILD)/bench/bench.skel.h \
		$(BUILD)/bench/bench_kfunc.skel.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Wno-unused-parameter -Ibench -I$(BUILD)/bench \
		-MMD -MP -c -o $@ $<

$(BENCH_BIN): $(BENCH_OBJS) $(LIBPEA)
	$(CC) $(USER_CFLAGS) -static -o $@ $(BENCH_OBJS) $(LIBPEA) $(BENCH_LIBS)

-include $(wildcard $(BUILD)/bench/objs/*.d)

endif
