// SPDX-License-Identifier: GPL-2.0
/*
 * pea: user call stacks of the current task by frame-pointer unwinding,
 * as perf_callchain_user() walks them on x86 (arch/x86/events/core.c):
 * the user instruction pointer, then, from the frame the user's rbp
 * points at, each frame's return address and the next frame, until a
 * frame cannot be read, the chain stops going up the stack, or the depth
 * is reached.
 *
 * Every load is copy_from_user_nofault(): access_ok(), page faults
 * disabled (a page not present ends the walk instead of being faulted
 * in), and nmi_uaccess_okay() (from NMI, while the CPU is switching
 * mm, the user's memory is not the current task's: no frame is read).
 * No lock, no allocation, never sleeps: any context, NMI included.
 *
 * Code without frame pointers leaves rbp holding anything: the walk then
 * reads whatever that points at, within the task's own user memory, and
 * ends at the first unreadable or descending frame. A 32-bit task gets
 * its instruction pointer only (perf reads its 32-bit frames; pea does
 * not yet).
 */
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include "pea_compat.h"
#include "pea_ustack.h"

/**
 * pea_ustack_regs() - the user registers of the current task
 * @regs: the interrupted registers
 *
 * As get_perf_callchain(): @regs themselves if they are user mode, else
 * the ones the task entered the kernel with, or NULL for a task without
 * a user context: a kernel thread, a user worker (io_uring's, vhost's:
 * PEA_PF_NO_USER_CTX) or a task that has given up its memory (exiting).
 *
 * Return: user registers or NULL.
 */
struct pt_regs *pea_ustack_regs(struct pt_regs *regs)
{
	if (user_mode(regs))
		return regs;
	if ((current->flags & PEA_PF_NO_USER_CTX) || !current->mm)
		return NULL;
	return task_pt_regs(current);
}

#ifdef CONFIG_X86_64
/* The two words at the start of a frame: the caller's rbp, then rip. */
struct pea_uframe {
	u64 next;
	u64 ret;
};

/**
 * pea_ustack_save() - unwind the current task's user stack
 * @regs: user registers (pea_ustack_regs())
 * @ips: @max slots
 * @max: 0..PEA_USTACK_MAX
 *
 * Context: any, NMI included; preemption off.
 * Return: the entries written, 0..@max (the instruction pointer first).
 */
u32 pea_ustack_save(struct pt_regs *regs, u64 *ips, u32 max)
{
	struct pea_uframe f;
	u64 fp;
	u32 nr = 0;

	if (!max || !regs)
		return 0;
	ips[nr++] = regs->ip;
	if (!user_64bit_mode(regs))
		return nr;
	fp = regs->bp;
	while (nr < max) {
		if (!fp || (fp & 7))
			break;
		if (copy_from_user_nofault(&f, (const void __user *)fp,
					   sizeof(f)))
			break;
		if (!f.ret)
			break;
		ips[nr++] = f.ret;
		/* Frames go up the stack: anything else is not a chain. */
		if (f.next <= fp)
			break;
		fp = f.next;
	}
	return nr;
}
#else
u32 pea_ustack_save(struct pt_regs *regs, u64 *ips, u32 max)
{
	if (!max || !regs)
		return 0;
	ips[0] = instruction_pointer(regs);
	return 1;
}
#endif
