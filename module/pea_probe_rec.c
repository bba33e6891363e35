// SPDX-License-Identifier: GPL-2.0
/*
 * pea: struct pea_probe_record, what kprobes, kretprobes, uprobes and
 * uretprobes write: the six arguments, the bytes an argument points to
 * (copied with the non-faulting routines), the return and latency of a
 * return, the counters of PEA_PROBE_F_COUNTERS and the kernel stack of
 * kstack_depth (pea_kstack.c). Shared by those producers, named by none
 * of them in particular.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/pid_namespace.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include "pea_internal.h"
#include "pea_agg.h"
#include "pea_link.h"
#include "pea_kstack.h"
#include "pea_probe_rec.h"

/**
 * pea_read_args() - the six arguments of the calling convention
 * @regs: the registers at function entry (kernel or user)
 * @args: six slots to fill
 */
void pea_read_args(struct pt_regs *regs, u64 *args)
{
	unsigned int i;

	for (i = 0; i < 6; i++)
		args[i] = regs_get_kernel_argument(regs, i);
}

/*
 * copy_from_kernel_nofault() refuses non-canonical addresses by the CPU's
 * virtual address width (x86_virt_bits, from CPUID), not by the width the
 * page tables use. With 4-level paging on a CPU that has LA57 (booted
 * no5lvl) an address canonical for 57 bits but not for 48 passes that
 * check, and the load takes a #GP, which the exception fixup survives but
 * reports with a WARNING ("General protection fault in user access"):
 * panic_on_warn would turn a capture into a crash. Check the whole range
 * against the paging mode in use first.
 */
static bool pea_kernel_range_ok(const void *src, size_t len)
{
#ifdef CONFIG_X86_64
	unsigned long start = (unsigned long)src, last = start + len - 1;

	return last >= start &&
	       __is_canonical_address(start, __VIRTUAL_MASK_SHIFT + 1) &&
	       __is_canonical_address(last, __VIRTUAL_MASK_SHIFT + 1);
#else
	return true;
#endif
}

static long pea_copy_nofault(void *dst, const void *src, size_t len,
			     bool user)
{
	if (user)
		return copy_from_user_nofault(dst, (const void __user *)src,
					      len);
	if (!pea_kernel_range_ok(src, len))
		return -EFAULT;
	return copy_from_kernel_nofault(dst, src, len);
}

/*
 * strncpy_from_{user,kernel}_nofault() are not exported to modules: copy
 * page by page (a chunk within one page is readable or not as a whole)
 * and stop at the first NUL. Return the length with the NUL, @count if
 * there is none in @count bytes, or -EFAULT.
 */
static long pea_strncpy_nofault(u8 *dst, const u8 *src, size_t count,
				bool user)
{
	size_t n = 0, chunk;
	u8 *nul;

	while (n < count) {
		chunk = min(count - n, PAGE_SIZE -
			    offset_in_page((unsigned long)(src + n)));
		if (pea_copy_nofault(dst + n, src + n, chunk, user))
			return -EFAULT;
		nul = memchr(dst + n, 0, chunk);
		if (nul)
			return nul - dst + 1;
		n += chunk;
	}
	return count;
}

/**
 * pea_capture() - copy what argument capture_arg points to
 * @l: the link
 * @args: the six arguments
 * @buf: capture_len + 1 bytes
 * @flags: gets PEA_REC_F_CAPTURE and maybe _FAULT or _TRUNCATED
 *
 * Return: the bytes kept in @buf.
 */
u32 pea_capture(struct pea_link *l, const u64 *args, u8 *buf, u16 *flags)
{
	const void *ptr = (const void *)(unsigned long)args[l->capture_arg];
	bool user = l->capture_flags & PEA_CAPTURE_USER;
	u32 len = l->capture_len;
	long n;

	*flags |= PEA_REC_F_CAPTURE;
	if (l->capture_mode == PEA_CAPTURE_FIXED) {
		if (pea_copy_nofault(buf, ptr, len, user)) {
			*flags |= PEA_REC_F_FAULT;
			return 0;
		}
		return len;
	}

	/* A string: ask for one byte more to learn whether it was cut. */
	n = pea_strncpy_nofault(buf, ptr, len + 1, user);
	if (n <= 0) {
		*flags |= PEA_REC_F_FAULT;
		return 0;
	}
	if (n == len + 1 && buf[len]) {
		*flags |= PEA_REC_F_TRUNCATED;
		return len;
	}
	return n - 1;	/* the NUL is not kept */
}

/**
 * pea_link_write_stack() - pea_link_write() with a kernel stack
 * @l: the link
 * @args: the six arguments
 * @ret: the return value (returns), else 0
 * @latency: entry to return in ns (returns), else 0
 * @flags: PEA_REC_F_*
 * @cap: the capture, @caplen bytes
 * @caplen: bytes of @cap
 * @ips: the stack, @nr entries
 * @nr: entries of @ips (0: no stack)
 *
 * Preemption must be off: the record goes to this CPU's event.
 */
void pea_link_write_stack(struct pea_link *l, const u64 *args, s64 ret,
			  u64 latency, u16 flags, const void *cap,
			  u32 caplen, const u64 *ips, u32 nr)
{
	struct pea_output_handle h;
	struct pea_probe_record *r;
	struct task_struct *task = current;
	u32 extra = l->counter_map ? sizeof(struct pea_event_value) : 0;
	u32 used = sizeof(*r) + extra + caplen;
	struct pea_agg_sample as = {
		.args = args, .ret = ret, .latency = latency,
	};

	if (nr)
		flags |= PEA_REC_F_KSTACK;
	/* In the table only (PEA_AGG_F_NO_RECORDS): no record attempted. */
	if (pea_agg_hit(l, &as))
		return;
	pea_link_count_hit(l);
	if (pea_output_reserve(l->map, PEA_F_CURRENT_CPU,
			       pea_kstack_rec_size(used, nr), &h)) {
		this_cpu_inc(l->stats->errors);
		return;
	}
	r = h.data;
	if (extra) {
		flags |= PEA_REC_F_COUNTERS;
		if (pea_read_value(l->counter_map, PEA_F_CURRENT_CPU,
				   (struct pea_event_value *)(r + 1), extra))
			flags |= PEA_REC_F_COUNTER_ERR;
	}
	r->time_ns = ktime_get_mono_fast_ns();
	r->id = l->rec_id;
	r->addr = READ_ONCE(l->addr);	/* published before arming */
	r->cpu = smp_processor_id();
	r->pid = task_pid_nr_ns(task, l->pid_ns);
	r->tgid = task_tgid_nr_ns(task, l->pid_ns);
	r->flags = flags;
	r->capture_len = caplen;
	strscpy_pad(r->comm, task->comm, sizeof(r->comm));
	memcpy(r->args, args, sizeof(r->args));
	r->ret = ret;
	r->latency_ns = latency;
	memcpy((u8 *)(r + 1) + extra, cap, caplen);
	if (nr)
		pea_kstack_put(r, used, ips, nr);
	pea_output_commit(&h);
	this_cpu_inc(l->stats->written);
}

/**
 * pea_link_write() - write one struct pea_probe_record into the link's map
 * @l: the link
 * @args: the six arguments
 * @ret: the return value (returns), else 0
 * @latency: entry to return in ns (returns), else 0
 * @flags: PEA_REC_F_*
 * @cap: the capture, @caplen bytes
 * @caplen: bytes of @cap
 *
 * Preemption must be off: the record goes to this CPU's event.
 */
void pea_link_write(struct pea_link *l, const u64 *args, s64 ret,
		    u64 latency, u16 flags, const void *cap, u32 caplen)
{
	pea_link_write_stack(l, args, ret, latency, flags, cap, caplen, NULL,
			     0);
}

/**
 * pea_probe_hit() - write the record of an entry hit, with its capture
 * and, with kstack_depth, its kernel stack
 * @l: the link
 * @args: the six arguments
 * @flags: PEA_REC_F_* the record carries beyond the capture's
 * @regs: the registers at the hit (the stack is unwound from them)
 *
 * The capture and the stack go into this nesting level's scratch slot
 * first, so that the record is reserved at its exact size. Preemption
 * must be off: the slot is this CPU's.
 */
void pea_probe_hit(struct pea_link *l, const u64 *args, u16 flags,
		   struct pt_regs *regs)
{
	struct pea_scratch *s;
	u32 caplen = 0, nr;

	if (l->capture_mode == PEA_CAPTURE_NONE && !l->kstack_depth) {
		pea_link_write(l, args, 0, 0, flags, NULL, 0);
		return;
	}
	/* Handlers run with preemption off; a nested one takes the next slot. */
	s = pea_scratch_get();
	if (s) {
		if (l->capture_mode != PEA_CAPTURE_NONE)
			caplen = pea_capture(l, args, s->cap, &flags);
		nr = pea_kstack_save(regs, READ_ONCE(l->addr), s->ips,
				     l->kstack_depth);
		pea_link_write_stack(l, args, 0, 0, flags, s->cap, caplen,
				     s->ips, nr);
	} else {
		this_cpu_inc(l->stats->errors);
	}
	pea_scratch_put();
}

/**
 * pea_probe_agg_check() - the values a probe's table may take
 * @l: a kprobe or uprobe link (their PEA_*_F_RETPROBE is the same bit)
 * @a: the table's attr
 *
 * Every hit gives its arguments; a return also its value and latency.
 *
 * Return: 0 or -EINVAL.
 */
int pea_probe_agg_check(struct pea_link *l, const struct pea_agg_attr *a)
{
	switch (a->value) {
	case PEA_AGG_VAL_NONE:
	case PEA_AGG_VAL_ARG:
		return 0;
	case PEA_AGG_VAL_LATENCY:
	case PEA_AGG_VAL_RET:
		return l->flags & PEA_PROBE_F_RETPROBE ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}
