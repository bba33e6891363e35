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
 * ends at the first unreadable or descending frame. A 32-bit (compat)
 * task's frames are walked as perf_callchain_user32() walks them: 4-byte
 * words (pea_ustack_walk()).
 */
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <asm/ibt.h>
#include <asm/unistd.h>
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
	return pea_ustack_save(regs, ips, min(l->ustack_depth,
					      l->max_stack - knr));
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
	if (auprobe->insn[0] == 0x55)	/* push %rbp, or %ebp */
		return true;
	/* endbr64 in a 64-bit task only (is_endbr() takes endbr32 too) */
	return user_64bit_mode(regs) && is_endbr(*(u32 *)auprobe->insn);
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
 * first instruction has not run). No such slot: perf replaces nothing,
 * nor does pea. In a uretprobe's own handler its instance is already off
 * the list and the ip is already the real return
 * (uprobe_handle_trampoline()).
 *
 * A slot may hold something else that is an entry of the chain: 6.12's
 * syscall trampoline pushes rax over the slot it returned through (at or
 * above the stack pointer until sys_uretprobe() moves it back), and a
 * stale instance (left by longjmp()) may have its slot in a live frame.
 * The pushed rax is there while the user ip is inside that trampoline,
 * past its first instruction (a sample there; sys_enter of the uretprobe
 * syscall and its entry path, at 13 bytes in), and in a signal handler
 * entered there (a task single-stepping itself: then, as for a stale
 * slot below, a page-aligned value of its own can still be taken for
 * the trampoline; the kernel's own address, in the private struct
 * xol_area, is not read; re-review F1). Inside the trampoline the
 * trampoline's address is then the ip's page, which holds its code
 * (__create_xol_area() copies arch_uprobe_trampoline() to the [uprobes]
 * page's offset 0; it is running, so the page is there), and is taken
 * from the ip alone (pea_ustack_in_tramp()). Elsewhere a slot's value is
 * also checked to be what the kernel puts at the trampoline's address
 * (pea_ustack_is_tramp()): the start of a page holding that code, read
 * back with copy_from_user_nofault(). The page is faulted in lazily
 * (xol_fault()): until the trampoline or a single-step slot first runs
 * it cannot be read, and a page-aligned value is then taken on the slot
 * rule alone. Left telling it wrong: a stale slot in a live frame that
 * holds the trampoline's address or such a page-aligned value, and a
 * task whose own code, at the start of a page, is a copy of the
 * trampoline's (or an int3) and a return address of the chain (its own
 * values only).
 *
 * The instances belong to the current task, which adds and removes them
 * in process context; this may interrupt it (NMI, timer), or run inside
 * it (a probe in cleanup_return_instances(), which frees instances before
 * the list head moves past them: a freed instance may already hold
 * another object). Each instance is therefore read with
 * copy_from_kernel_nofault(), never dereferenced, and taken only if it
 * looks as the kernel makes them (pea_ri_read()). The list is walked
 * whole first (at most MAX_URETPROBE_DEPTH instances, and no more than
 * the task's depth counts); any instance that fails, or a longer list,
 * and nothing is replaced.
 *
 * And nothing is replaced inside the task's own breakpoint handling,
 * outside the uprobe's consumers, when the head instance is dead by
 * arch_uretprobe_is_alive()'s rule for a call (its slot at or below the
 * stack pointer): handle_swbp() has set the user ip back to the
 * breakpoint (an int3 byte there, the entry's orig_ax -1) before
 * handler_chain() -> prepare_uretprobe() -> cleanup_return_instances(),
 * the one place where the head is a freed instance, and cleanup frees
 * exactly such dead ones from the head on; handler_chain() has cleared
 * utask->auprobe, which it sets while the consumers run, before
 * prepare_uretprobe(). A hit in the kernel (a probe, a tracepoint, a
 * sample of the kernel) in that state gets no fix-up; perf's (6.12) reads
 * the freed instance. The cost: such a hit while a live instance's slot
 * is at the user stack pointer keeps the trampolines where perf replaces
 * them: in the breakpoint handling (outside the consumers) of a function
 * a uretprobed function tail-called, or of a uprobe inside a uretprobed
 * function before it moves its stack pointer, or in any exception's
 * handling of a task about to run such a breakpoint, or with a stale
 * instance at the head.
 */
#define PEA_URETPROBE_DEPTH_MAX	64	/* uprobes.c's MAX_URETPROBE_DEPTH */

/*
 * The trampolines arch_uprobe_trampoline() makes (arch/x86/kernel/
 * uprobes.c): where the kernel has the uretprobe syscall, a 64-bit
 * task's is push %rax; push %rcx; push %r11; mov $__NR_uretprobe,%rax;
 * syscall; pop %r11; pop %rcx; ret. Else (and a task that was not in
 * 64-bit mode when its area was made) an int3.
 */
#ifdef __NR_uretprobe
static const u8 pea_tramp_syscall[] = {
	0x50, 0x51, 0x41, 0x53, 0x48, 0xc7, 0xc0,
	__NR_uretprobe & 0xff, (__NR_uretprobe >> 8) & 0xff,
	(__NR_uretprobe >> 16) & 0xff, (__NR_uretprobe >> 24) & 0xff,
	0x0f, 0x05, 0x41, 0x5b, 0x59, 0xc3,
};
#endif

/*
 * The trampoline's address when the user ip @ip is inside 6.12's syscall
 * trampoline past its first instruction (the rax it pushed may be in a
 * slot), else 0.
 */
static unsigned long pea_ustack_in_tramp(unsigned long ip)
{
#ifdef __NR_uretprobe
	unsigned long t = ip & PAGE_MASK, off = ip & ~PAGE_MASK;
	u8 code[sizeof(pea_tramp_syscall)];

	if (!off || off >= sizeof(pea_tramp_syscall))
		return 0;
	if (copy_from_user_nofault(code, (const void __user *)t, sizeof(code)))
		return 0;
	return memcmp(code, pea_tramp_syscall, sizeof(code)) ? 0 : t;
#else
	return 0;
#endif
}

/*
 * Whether @v is the trampoline's address: page-aligned, and a page not
 * faulted in yet (unless @strict) or one starting with the trampoline.
 */
static bool pea_ustack_is_tramp(unsigned long v, bool strict)
{
	u8 code[17];
	size_t n = 1;

	if (v & ~PAGE_MASK)
		return false;
#ifdef __NR_uretprobe
	BUILD_BUG_ON(sizeof(code) != sizeof(pea_tramp_syscall));
	n = sizeof(pea_tramp_syscall);
#endif
	/* One read: the page is there or not (it holds all n bytes). */
	if (copy_from_user_nofault(code, (const void __user *)v, n))
		return !strict;	/* not faulted in yet: none of it has run */
#ifdef __NR_uretprobe
	if (!memcmp(code, pea_tramp_syscall, n))
		return true;
#endif
	return code[0] == UPROBE_SWBP_INSN;
}

/* A kmalloc'd object's address: aligned, in the direct map. */
static bool pea_kobj_ok(const void *p)
{
	return IS_ALIGNED((unsigned long)p, sizeof(long)) &&
	       virt_addr_valid(p) && p < high_memory;
}

/*
 * An instance as prepare_uretprobe() makes it: its uprobe a kernel
 * object, its function, stack and return address user addresses,
 * chained a bool, next NULL or a kernel object. A freed instance holds
 * SLUB's (hardened, on Debian's kernels) freelist word where chained is.
 */
static bool pea_ri_read(struct return_instance *ri, struct return_instance *r)
{
	u8 chained;

	if (!pea_kobj_ok(ri) || copy_from_kernel_nofault(r, ri, sizeof(*r)))
		return false;
	memcpy(&chained, &r->chained, 1);
	return pea_kobj_ok(r->uprobe) && r->func < TASK_SIZE_MAX &&
	       r->stack < TASK_SIZE_MAX && r->orig_ret_vaddr < TASK_SIZE_MAX &&
	       chained <= 1 && (!r->next || pea_kobj_ok(r->next));
}

/*
 * Whether a hit in the kernel is inside the task's breakpoint handling
 * with a dead instance at the head (see above): @regs the user ones.
 */
static bool pea_ustack_in_swbp(struct pt_regs *regs,
			       const struct return_instance *head)
{
	u8 insn;

	if (regs->orig_ax != -1 || head->stack > regs->sp ||
	    READ_ONCE(current->utask->auprobe))
		return false;
	if (copy_from_user_nofault(&insn, (const void __user *)regs->ip, 1))
		return false;
	return insn == UPROBE_SWBP_INSN;
}

/*
 * A return-address slot: 8 bytes, or 4 in a compat task, whose call
 * pushed 4 (arch_uretprobe_hijack_return_addr() writes sizeof_long()).
 */
static long pea_ustack_read_slot(const void __user *slot, bool compat,
				 unsigned long *v)
{
	u32 v32;

	if (!compat)
		return copy_from_user_nofault(v, slot, sizeof(*v));
	if (copy_from_user_nofault(&v32, slot, sizeof(v32)))
		return -EFAULT;
	*v = v32;
	return 0;
}

static bool pea_in_chain(const u64 *ips, u32 nr, u64 v)
{
	u32 i;

	for (i = 0; i < nr; i++)
		if (ips[i] == v)
			return true;
	return false;
}

static void pea_ustack_fixup_uretprobes(struct pt_regs *regs, bool kernel,
					u64 *ips, u32 nr)
{
	struct uprobe_task *utask = current->utask;
	struct return_instance *ri, *top, r;
	const void __user *slot;
	unsigned long tramp, v;
	bool found, unread = false, compat = !user_64bit_mode(regs), strict;
	u32 i, depth;

	if (likely(!utask))
		return;
	/*
	 * A 64-bit process running 32-bit code: its trampoline is mostly
	 * above 4 GiB, which no 4-byte frame names (perf replaces nothing
	 * there), but below it without ASLR (review ustk32-fix F1). A
	 * 4-byte slot's value is its trampoline only if its page is there
	 * and holds it: an unmapped page the task names would otherwise
	 * pass (review ustk32 F2).
	 */
	strict = compat && !test_thread_flag(TIF_ADDR32);
	top = READ_ONCE(utask->return_instances);
	if (likely(!top))
		return;
	depth = READ_ONCE(utask->depth);
	/* In the syscall trampoline: its address, whatever the slots hold. */
	tramp = pea_ustack_in_tramp(ips[0]);
	found = tramp != 0;
	/* Validate the whole list, and find the trampoline's value. */
	for (i = 0, ri = top; ri; i++, ri = r.next) {
		if (i >= PEA_URETPROBE_DEPTH_MAX || i >= depth ||
		    !pea_ri_read(ri, &r))
			return;
		if (!i && kernel && pea_ustack_in_swbp(regs, &r))
			return;
		if (found || unread)
			continue;
		slot = (const void __user *)r.stack;
		/*
		 * One slot that cannot be read ends the search: each try
		 * is a page fault in the sampler's NMI, and a task could
		 * leave 64 instances with zapped slots (re-review F2).
		 */
		if (pea_ustack_read_slot(slot, compat, &v)) {
			unread = true;
			continue;
		}
		if ((r.stack >= regs->sp ? pea_in_chain(ips, nr, v) :
					   v == ips[0]) &&
		    pea_ustack_is_tramp(v, strict)) {
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
					       bool kernel, u64 *ips, u32 nr)
{
}
#endif

/*
 * The frame at @fp: the caller's frame pointer, then the return address,
 * words of @w bytes (8, or 4 in a compat task).
 */
static bool pea_uframe_read(unsigned long fp, unsigned int w,
			    unsigned long *next, unsigned long *ret)
{
	union {
		u64 q[2];
		u32 d[2];
	} f;

	if (copy_from_user_nofault(&f, (const void __user *)fp, 2 * w))
		return false;
	*next = w == 8 ? f.q[0] : f.d[0];
	*ret = w == 8 ? f.q[1] : f.d[1];
	return true;
}

/*
 * The frames after the ip (@nr entries so far), in words of @w bytes, as
 * perf_callchain_user() reads them, or perf_callchain_user32() in a
 * compat task (@w 4, the frame pointer's low 32 bits): the direct caller
 * first, at the stack pointer, at a uprobe on a function's entry; then,
 * from the frame the frame pointer points at, each frame's return
 * address, until a frame is unaligned, unreadable or holds no return
 * address, or the chain stops going up the stack (pea's rules: anything
 * else is not a chain).
 */
static u32 pea_ustack_walk(struct pt_regs *regs, unsigned int w, u64 *ips,
			   u32 nr, u32 max)
{
	unsigned long fp, next, ret = 0;

	if (nr < max && pea_ustack_at_func_entry(regs) &&
	    !copy_from_user_nofault(&ret, (const void __user *)regs->sp, w))
		ips[nr++] = ret;
	fp = w == 8 ? regs->bp : (u32)regs->bp;
	while (nr < max) {
		if (!fp || (fp & (w - 1)))
			break;
		if (!pea_uframe_read(fp, w, &next, &ret) || !ret)
			break;
		ips[nr++] = ret;
		if (next <= fp)
			break;
		fp = next;
	}
	return nr;
}

/*
 * Whether a task not in 64-bit mode is a compat task on the flat
 * __USER32_CS and __USER_DS every compat task runs on, whose bases (0)
 * perf_callchain_user32() adds to the addresses. A task on segments of
 * its own (modify_ldt()) gets its ip only: get_segment_base() is not
 * exported.
 */
static bool pea_ustack_flat32(struct pt_regs *regs)
{
	return IS_ENABLED(CONFIG_IA32_EMULATION) && regs->cs == __USER32_CS &&
	       regs->ss == __USER_DS;
}

/**
 * pea_ustack_save() - unwind the current task's user stack
 * @hregs: the registers of the hit (pea_ustack_regs() finds the user's)
 * @ips: @max slots
 * @max: 0..PEA_USTACK_MAX
 *
 * Context: any, NMI included; preemption off.
 * Return: the entries written, 0..@max (the instruction pointer first).
 */
u32 pea_ustack_save(struct pt_regs *hregs, u64 *ips, u32 max)
{
	struct pt_regs *regs = pea_ustack_regs(hregs);
	u32 nr = 0;

	if (!max || !regs)
		return 0;
	ips[nr++] = regs->ip;
	if (user_64bit_mode(regs))
		nr = pea_ustack_walk(regs, 8, ips, nr, max);
	else if (pea_ustack_flat32(regs))
		nr = pea_ustack_walk(regs, 4, ips, nr, max);
	pea_ustack_fixup_uretprobes(regs, !user_mode(hregs), ips, nr);
	return nr;
}
#else
u32 pea_ustack_save(struct pt_regs *hregs, u64 *ips, u32 max)
{
	struct pt_regs *regs = pea_ustack_regs(hregs);

	if (!max || !regs)
		return 0;
	ips[0] = instruction_pointer(regs);
	return 1;
}
#endif
