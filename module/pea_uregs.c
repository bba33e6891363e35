// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the user registers of the current task and a copy of the top of
 * its user stack, for DWARF unwinding in user space (struct
 * pea_user_regs), as perf's PERF_SAMPLE_REGS_USER and
 * PERF_SAMPLE_STACK_USER (kernel/events/core.c: perf_sample_regs_user(),
 * perf_sample_ustack_size(), perf_output_sample_ustack()).
 *
 * The registers are those pea_ustack_regs() picks, as perf: the
 * interrupted ones in user mode, else task_pt_regs() (x86-64's
 * perf_get_regs_user()), none for a task without a user context. They
 * are stored in DWARF's x86-64 numbering so that an unwinder takes them
 * as they are.
 *
 * The stack is copied from the user stack pointer up, at most the bytes
 * asked for, and no further than TASK_SIZE (perf_ustack_task_size()).
 * perf copies with copy_from_user_nmi(), which stops at the first byte
 * it cannot read; pea copies page by page with copy_from_user_nofault()
 * (access_ok(), page faults disabled, nmi_uaccess_okay()) and stops at
 * the first page that fails. A fault is a page's, so the bytes kept are
 * the same: perf's dyn_size. No lock, no allocation, never sleeps: any
 * context, NMI included.
 */
#include <linux/mm.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "pea_internal.h"
#include "pea_ustack.h"
#include "pea_uregs.h"

#ifdef CONFIG_X86_64
/* pt_regs in DWARF order (PEA_UREG_*). */
static void pea_uregs_fill(const struct pt_regs *r, u64 *v)
{
	v[PEA_UREG_AX] = r->ax;
	v[PEA_UREG_DX] = r->dx;
	v[PEA_UREG_CX] = r->cx;
	v[PEA_UREG_BX] = r->bx;
	v[PEA_UREG_SI] = r->si;
	v[PEA_UREG_DI] = r->di;
	v[PEA_UREG_BP] = r->bp;
	v[PEA_UREG_SP] = r->sp;
	v[PEA_UREG_R8 + 0] = r->r8;
	v[PEA_UREG_R8 + 1] = r->r9;
	v[PEA_UREG_R8 + 2] = r->r10;
	v[PEA_UREG_R8 + 3] = r->r11;
	v[PEA_UREG_R8 + 4] = r->r12;
	v[PEA_UREG_R8 + 5] = r->r13;
	v[PEA_UREG_R8 + 6] = r->r14;
	v[PEA_UREG_R8 + 7] = r->r15;
	v[PEA_UREG_IP] = r->ip;
}

/*
 * Copy up to @size bytes from @sp, page by page; return the bytes copied
 * before the first page that could not be read.
 */
static u32 pea_uregs_copy_stack(u8 *dst, unsigned long sp, u32 size)
{
	u32 done = 0;

	while (done < size) {
		unsigned long from = sp + done;
		u32 n = min_t(u64, size - done,
			      PAGE_SIZE - offset_in_page(from));

		if (copy_from_user_nofault(dst + done,
					   (const void __user *)from, n))
			break;
		done += n;
	}
	return done;
}

/**
 * pea_uregs_save() - the current task's user registers and stack top
 * @regs: the interrupted registers
 * @ur: where to write them: struct pea_user_regs and @stack_user bytes
 * @stack_user: the bytes of stack asked for (a multiple of 8)
 *
 * Context: any, NMI included; no lock, no allocation, never sleeps.
 * Return: the bytes written at @ur (the struct, the copied stack, zeroes
 * to an 8-byte boundary), or 0 for a task without a user context (then
 * nothing is written).
 */
u32 pea_uregs_save(struct pt_regs *regs, struct pea_user_regs *ur,
		   u32 stack_user)
{
	struct pt_regs *uregs = pea_ustack_regs(regs);
	unsigned long sp;
	u32 size = 0, pad;

	if (!uregs)
		return 0;
	ur->abi = user_64bit_mode(uregs) ? PEA_UREGS_ABI_64 :
		  PEA_UREGS_ABI_32;
	pea_uregs_fill(uregs, ur->regs);
	if (ur->abi == PEA_UREGS_ABI_32)
		memset(&ur->regs[PEA_UREG_R8], 0, 8 * sizeof(u64));
	sp = user_stack_pointer(uregs);
	/* perf_ustack_task_size(): nothing at or past TASK_SIZE. */
	if (stack_user && sp && sp < TASK_SIZE)
		size = pea_uregs_copy_stack(ur->stack, sp,
					    min_t(u64, stack_user,
						  TASK_SIZE - sp));
	ur->stack_size = size;
	pad = round_up(size, sizeof(u64)) - size;
	memset(ur->stack + size, 0, pad);
	return sizeof(*ur) + size + pad;
}
#else
u32 pea_uregs_save(struct pt_regs *regs, struct pea_user_regs *ur,
		   u32 stack_user)
{
	return 0;
}
#endif
