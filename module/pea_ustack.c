// SPDX-License-Identifier: GPL-2.0
/*
 * pea: user call stacks of the current task by frame-pointer unwinding,
 * as perf_callchain_user() walks them on x86 (arch/x86/events/core.c):
 * the user instruction pointer, then (in a uprobe's handler at a
 * function's first instruction) the return address at the stack
 * pointer, then, from the frame the user's rbp
 * points at, each frame's return address and the next frame, until a
 * frame cannot be read, the chain stops going up the stack, or the depth
 * is reached. Then, where the kernel's perf does (6.12), each uretprobe
 * trampoline in the chain is replaced by the return address it stands
 * for (pea_ustack_fixup_uretprobes()).
 *
 * Every load of user memory is copy_from_user_nofault(): access_ok(), page faults
 * disabled (a page not present ends the walk instead of being faulted
 * in), and nmi_uaccess_okay() (from NMI, while the CPU is switching
 * mm, the user's memory is not the current task's: no frame is read).
 * The uretprobe instances are read with copy_from_kernel_nofault().
 * No lock, no allocation, never sleeps: any context, NMI included.
 *
 * Code without frame pointers leaves rbp holding anything: the walk then
 * reads whatever that points at, within the task's own user memory, and
 * ends at the first unreadable or descending frame. A 32-bit task gets
 * its instruction pointer only, never fixed up (perf reads its 32-bit
 * frames and fixes them; pea does not yet).
 */
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <asm/ibt.h>
#include "pea_compat.h"
#include "pea_internal.h"
#include "pea_link.h"
#include "pea_ustack.h"

/*
 * The user stack of a probe's or tracepoint's hit, unwound before the
 * record is reserved (so that it is reserved at its exact size): one
 * buffer per CPU and nesting level, as pea_scratch_get()'s slots, but
 * allocated at load (PEA_NEST_MAX x PEA_USTACK_MAX entries would not fit
 * in a module's static per-CPU area beside the scratch slots).
 */
struct pea_ustack_bufs {
	int level;
	u64 ips[PEA_NEST_MAX][PEA_USTACK_MAX];
};

static struct pea_ustack_bufs __percpu *pea_ustack_bufs;

/**
 * pea_ustack_init() - allocate the buffers, at module load
 *
 * Return: 0 or -ENOMEM.
 */
int pea_ustack_init(void)
{
	pea_ustack_bufs = alloc_percpu(struct pea_ustack_bufs);
	return pea_ustack_bufs ? 0 : -ENOMEM;
}

/**
 * pea_ustack_exit() - free them, at unload, once no link is left
 */
void pea_ustack_exit(void)
{
	free_percpu(pea_ustack_bufs);
}

/**
 * pea_ustack_buf_get() - this CPU's buffer for this nesting level
 *
 * Preemption must be off. Every call, whatever it returns, is paired with
 * a pea_ustack_buf_put(); levels nest as pea_scratch_get()'s do.
 *
 * Return: PEA_USTACK_MAX entries, or NULL past PEA_NEST_MAX levels.
 */
u64 *pea_ustack_buf_get(void)
{
	int level = this_cpu_inc_return(pea_ustack_bufs->level) - 1;

	barrier();
	if (level >= PEA_NEST_MAX)
		return NULL;
	return this_cpu_ptr(pea_ustack_bufs)->ips[level];
}

/**
 * pea_ustack_buf_put() - give back the buffer of pea_ustack_buf_get()
 */
void pea_ustack_buf_put(void)
{
	barrier();
	this_cpu_dec(pea_ustack_bufs->level);
}

/**
 * pea_ustack_check() - validate an attach attr's ustack_depth
 * @depth: user entries at most (0: none)
 *
 * Context: process context (reads kernel.perf_event_max_stack).
 * Return: 0, -EINVAL (past PEA_USTACK_MAX) or -EOVERFLOW (past
 * perf_event_max_stack, as perf_event_open() refuses a sample_max_stack
 * past it).
 */
int pea_ustack_check(u32 depth)
{
	if (depth > PEA_USTACK_MAX)
		return -EINVAL;
	if (depth > pea_perf_max_stack())
		return -EOVERFLOW;
	return 0;
}

/**
 * pea_ustack_link() - set a probe link's user stack depth and budget
 * @l: the link
 * @depth: its attr's ustack_depth, checked
 *
 * The budget of both stacks is perf_event_max_stack at the attach, as the
 * sampler's (pea_sample.c).
 */
void pea_ustack_link(struct pea_link *l, u32 depth)
{
	l->ustack_depth = depth;
	l->max_stack = pea_perf_max_stack();
}

/**
 * pea_ustack_hit() - the user stack of a probe's or tracepoint's hit
 * @l: the link, with ustack_depth
 * @regs: the registers of the hit (user ones for a uprobe)
 * @knr: kernel entries the record already holds
 * @ips: a buffer of pea_ustack_buf_get()
 *
 * As get_perf_callchain() does after the kernel part: the task's user
 * registers (pea_ustack_regs()), then frames until the depth or what the
 * kernel part left of the budget.
 *
 * Return: the entries in @ips (0: no user context, or no budget left).
 */
u32 pea_ustack_hit(struct pea_link *l, struct pt_regs *regs, u32 knr,
		   u64 *ips)
{
	if (knr >= l->max_stack)
		return 0;
	return pea_ustack_save(pea_ustack_regs(regs), ips,
			       min(l->ustack_depth, l->max_stack - knr));
}

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
/*
 * As perf_callchain_user()'s is_uprobe_at_func_entry() (both Debian
 * kernels): in a uprobe's handler, probed on a function's first
 * instruction (push %rbp, or endbr64), the frame is still the caller's
 * and the return address is at the stack pointer.
 */
static bool pea_ustack_at_func_entry(struct pt_regs *regs)
{
#ifdef CONFIG_UPROBES
	struct arch_uprobe *auprobe;

	if (!current->utask)
		return false;
	auprobe = current->utask->auprobe;
	if (!auprobe)
		return false;
	if (auprobe->insn[0] == 0x55)	/* push %rbp */
		return true;
	return is_endbr(*(u32 *)auprobe->insn);
#else
	return false;
#endif
}

#if defined(PEA_HAVE_URETPROBE_TRAMP_FIXUP) && defined(CONFIG_UPROBES)
/*
 * As fixup_uretprobe_trampoline_entries() (kernel/events/callchain.c,
 * which get_perf_callchain() applies to the user part of every
 * callchain, ip included): each pending uretprobe has replaced a return
 * address on the stack by the uretprobe trampoline; perf replaces the
 * n-th trampoline entry of the chain by the n-th pending instance's
 * orig_ret_vaddr, newest first. Kernels without it (6.1) keep the
 * trampoline, and so does pea there.
 *
 * The trampoline's address is uprobe_get_trampoline_vaddr(), which is not
 * exported (its xol_area is private to uprobes.c). It is read instead
 * where the kernel wrote it: an instance's return-address slot, its
 * ->stack (prepare_uretprobe() records the stack pointer at the
 * function's first instruction, where the return address is, and
 * arch_uretprobe_hijack_return_addr() writes the trampoline there). Every
 * entry perf replaces equals the trampoline and was read from such a
 * slot, so the value taken is the first slot's, newest instance first,
 * that is an entry of the chain: a slot at or above the user stack
 * pointer (its function still runs); a slot below it (returned through)
 * only if its value is the ip itself (the ip is the trampoline, whose
 * first instruction has not run: 6.12's syscall trampoline then pushes
 * rax over that slot, and the chained sibling of the instance whose
 * handlers run shares it). No such slot: perf replaces nothing, nor does
 * pea. A stale instance (left by longjmp()) whose slot now lies in a live
 * frame, with a word there that is itself an entry of the chain, is the
 * one case this tells wrong. In a uretprobe's own handler its instance is
 * already off the list and the ip is already the real return
 * (uprobe_handle_trampoline()).
 *
 * The instances belong to the current task, which adds and removes them
 * in process context; this may interrupt it (NMI, timer), or run inside
 * it (a probe in cleanup_return_instances(), which frees instances before
 * the list head moves past them: a freed instance may already hold
 * another object). Each instance is therefore read with
 * copy_from_kernel_nofault(), never dereferenced, and taken only if it
 * looks as the kernel makes them: a stack and a return address in user
 * space, the next instance NULL or where virt_addr_valid() says (the
 * direct map or the kernel image). The list is walked whole first (at
 * most MAX_URETPROBE_DEPTH instances, and no more than the task's depth
 * counts); any instance that fails, or a longer list, and nothing is
 * replaced. Left (review of prof3's fix, R1): the depth rule catches only
 * a freed head not yet reused, after cleanup_return_instances()' first
 * decrement; between a kfree() and its decrement, or once the freed
 * object is reused with a NULL or plausible word where next was, a
 * word of it below TASK_SIZE_MAX can still be written as a return
 * address (kernel pointers cannot). R2: just after 6.12's syscall
 * trampoline pushed rax over a returned-through slot (ip past the
 * trampoline's first instruction, before sys_uretprobe() moves the stack
 * pointer back), that slot is at the stack pointer and its rax is taken
 * as the trampoline if it equals an entry of the chain.
 */
#define PEA_URETPROBE_DEPTH_MAX	64	/* uprobes.c's MAX_URETPROBE_DEPTH */

static bool pea_ri_read(struct return_instance *ri, struct return_instance *r)
{
	if (!virt_addr_valid(ri) || copy_from_kernel_nofault(r, ri, sizeof(*r)))
		return false;
	return r->stack < TASK_SIZE_MAX && r->orig_ret_vaddr < TASK_SIZE_MAX &&
	       (!r->next || virt_addr_valid(r->next));
}

static bool pea_in_chain(const u64 *ips, u32 nr, u64 v)
{
	u32 i;

	for (i = 0; i < nr; i++)
		if (ips[i] == v)
			return true;
	return false;
}

static void pea_ustack_fixup_uretprobes(struct pt_regs *regs, u64 *ips,
					u32 nr)
{
	struct uprobe_task *utask = current->utask;
	struct return_instance *ri, *top, r;
	const void __user *slot;
	unsigned long tramp = 0, v;
	bool found = false;
	u32 i, depth;

	if (likely(!utask))
		return;
	top = READ_ONCE(utask->return_instances);
	if (likely(!top))
		return;
	depth = READ_ONCE(utask->depth);
	/* Validate the whole list, and find the trampoline's value. */
	for (i = 0, ri = top; ri; i++, ri = r.next) {
		if (i >= PEA_URETPROBE_DEPTH_MAX || i >= depth ||
		    !pea_ri_read(ri, &r))
			return;
		if (found)
			continue;
		slot = (const void __user *)r.stack;
		if (copy_from_user_nofault(&v, slot, sizeof(v)))
			continue;
		if (r.stack >= regs->sp ? pea_in_chain(ips, nr, v) :
					  v == ips[0]) {
			tramp = v;
			found = true;
		}
	}
	if (!found)
		return;
	/* perf's loop: the n-th trampoline entry, the n-th instance. */
	ri = top;
	for (i = 0; i < nr && ri; i++) {
		if (ips[i] != tramp)
			continue;
		if (!pea_ri_read(ri, &r))
			return;
		ips[i] = r.orig_ret_vaddr;
		ri = r.next;
	}
}
#else
static inline void pea_ustack_fixup_uretprobes(struct pt_regs *regs,
					       u64 *ips, u32 nr)
{
}
#endif

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
	u64 fp, ret;
	u32 nr = 0;

	if (!max || !regs)
		return 0;
	ips[nr++] = regs->ip;
	if (!user_64bit_mode(regs))
		return nr;
	/* The direct caller first, at a uprobe on a function's entry. */
	if (nr < max && pea_ustack_at_func_entry(regs) &&
	    !copy_from_user_nofault(&ret, (const void __user *)regs->sp,
				    sizeof(ret)))
		ips[nr++] = ret;
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
	pea_ustack_fixup_uretprobes(regs, ips, nr);
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
