// SPDX-License-Identifier: GPL-2.0
/*
 * pea: kernel call stacks in probe and tracepoint records
 * (PEA_REC_F_KSTACK, struct pea_kstack).
 *
 * A handler unwinds into a per-CPU scratch slot (one per nesting level,
 * as the captures use, pea_link.c), then reserves the record at its
 * exact size and copies the stack behind everything else it holds. A
 * kretprobe unwinds at entry into its instance data instead.
 *
 * On x86 the unwinder is the kernel's own (<asm/unwind.h>: ORC, or frame
 * pointers), the one perf_callchain_kernel() drives from NMI: it reads
 * the stacks with non-faulting, KASAN-quiet loads, takes no lock and
 * allocates nothing. stack_trace_save_regs() is not exported to modules;
 * the unwind_*() calls are (GPL), alike on every kernel pea builds for.
 * Elsewhere kstack_depth != 0 is EOPNOTSUPP.
 */
#include <linux/errno.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/types.h>
#ifdef CONFIG_X86
#include <asm/processor-flags.h>
#include <asm/unwind.h>
#endif
#include "pea_internal.h"
#include "pea_kstack.h"

/**
 * pea_kstack_check() - validate an attach attr's kstack fields
 * @depth: kstack_depth, frames at most (0: no stack)
 * @reserved: the reserved word that follows it
 *
 * Context: process context (reads kernel.perf_event_max_stack).
 * Return: 0, -EINVAL (depth past PEA_KSTACK_MAX, reserved not zero),
 * -EOPNOTSUPP (a stack asked for where pea cannot unwind) or -EOVERFLOW
 * (depth past perf_event_max_stack, as perf_event_open() refuses a
 * sample_max_stack past it).
 */
int pea_kstack_check(u32 depth, u32 reserved)
{
	if (reserved || depth > PEA_KSTACK_MAX)
		return -EINVAL;
	if (depth && !IS_ENABLED(CONFIG_X86))
		return -EOPNOTSUPP;
	if (depth > pea_perf_max_stack())
		return -EOVERFLOW;
	return 0;
}

#ifdef CONFIG_X86
/*
 * Real registers (an int3 or ftrace kprobe, an interrupted context) have
 * the always-one EFLAGS bit set; those perf_fetch_caller_regs() makes for
 * a tracepoint have flags 0, and only ip, sp and bp are meaningful.
 */
static bool pea_regs_real(const struct pt_regs *regs)
{
	return regs->flags & X86_EFLAGS_FIXED;
}

/**
 * pea_kstack_save() - unwind the kernel stack of the current hit
 * @regs: the hit's registers (kprobe, kretprobe entry), the synthetic
 *        ones of a tracepoint, or NULL (unwind from here)
 * @ip0: with real @regs, what ips[0] is to hold (the probed address);
 *       0 for regs->ip
 * @ips: @max slots
 * @max: 1..PEA_KSTACK_MAX
 *
 * Real registers: ips[0] is the hit's address, then the unwinder starts
 * from @regs and skips their own frame, giving the return addresses of
 * the callers. Synthetic ones: the unwinder starts here and skips every
 * frame below regs->sp (perf's and pea's own), so ips[0] is the return
 * address into the tracepoint's call site. Registers from user mode (the
 * syscalls:* events hand perf the user's) carry no kernel stack: the
 * unwinder starts here, pea's own frames included.
 *
 * Any context (NMI included), preemption off: no lock, no allocation;
 * the unwinder's state lives on this stack.
 *
 * Return: the entries written, 1..@max (0 only if @max is 0).
 */
u32 pea_kstack_save(struct pt_regs *regs, u64 ip0, u64 *ips, u32 max)
{
	struct unwind_state state;
	unsigned long addr;
	u32 nr = 0;

	if (!max)
		return 0;
	if (regs && user_mode(regs))
		regs = NULL;
	if (regs && pea_regs_real(regs)) {
		ips[nr++] = ip0 ? ip0 : regs->ip;
		unwind_start(&state, current, regs, NULL);
	} else if (regs) {
		unwind_start(&state, current, NULL, (unsigned long *)regs->sp);
	} else {
		unwind_start(&state, current, NULL, NULL);
	}
	for (; nr < max && !unwind_done(&state); unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr)
			break;
		ips[nr++] = addr;
	}
	/* An unwinder that found nothing still leaves the hit's address. */
	if (!nr)
		ips[nr++] = regs ? regs->ip : _THIS_IP_;
	return nr;
}
#else
u32 pea_kstack_save(struct pt_regs *regs, u64 ip0, u64 *ips, u32 max)
{
	return 0;
}
#endif

/**
 * pea_kstack_put() - write @nr entries of @ips as a struct pea_kstack
 * @rec: the reserved record
 * @used: bytes of @rec written so far
 * @ips: the stack
 * @nr: its entries (not 0)
 *
 * Zeroes the padding up to the 8-byte boundary: the record reaches user
 * space whole, and the ring's reservation holds what an earlier record
 * left there.
 */
void pea_kstack_put(void *rec, u32 used, const u64 *ips, u32 nr)
{
	u32 off = pea_kstack_offset(used);
	struct pea_kstack *ks = rec + off;

	memset(rec + used, 0, off - used);
	ks->nr = nr;
	ks->reserved = 0;
	memcpy(ks->ips, ips, nr * sizeof(ips[0]));
}
