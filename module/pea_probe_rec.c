// SPDX-License-Identifier: GPL-2.0
/*
 * pea: struct pea_probe_record, what kprobes, kretprobes, uprobes and
 * uretprobes write: the six arguments, the bytes an argument points to
 * (copied with the non-faulting routines), the return and latency of a
 * return, the counters of PEA_PROBE_F_COUNTERS, the values of the
 * probe's fetch chains (pea_fetch.c) and the kernel stack of kstack_depth
 * (pea_kstack.c). Shared by those producers, named by none
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
#include "pea_fetch.h"
#include "pea_pred.h"
#include "pea_kstack.h"
#include "pea_ustack.h"
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
		if (pea_read_nofault(buf, ptr, len, user)) {
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
 * pea_link_write_at() - pea_link_write_stack() for one of a link's sites
 * @l: the link
 * @id: what the record (and a PEA_AGG_KEY_PROBE key) carries
 * @addr: the probed address the record carries (and a stack's first
 *	  entry at an entry hit)
 * @regs: the registers of the hit (a return's at the return)
 * @args: the six arguments
 * @ret: the return value (returns), else 0
 * @latency: entry to return in ns (returns), else 0
 * @flags: PEA_REC_F_*
 * @cap: the capture, @caplen bytes
 * @caplen: bytes of @cap
 * @ips: the stack, @nr entries
 * @nr: entries of @ips (0: no stack)
 *
 * The link's fetches are evaluated here, before the record is reserved,
 * into this nesting level's block buffer: the record has their exact
 * size. A hit their predicate rejects counts as filtered, not as a hit.
 * Preemption must be off: the record goes to this CPU's event.
 */
void pea_link_write_at(struct pea_link *l, u64 id, u64 addr,
		       struct pt_regs *regs, const u64 *args, s64 ret,
		       u64 latency, u16 flags, const void *cap, u32 caplen,
		       const u64 *ips, u32 nr)
{
	struct pea_output_handle h;
	struct pea_probe_record *r;
	struct task_struct *task = current;
	u32 extra = l->counter_map ? sizeof(struct pea_event_value) : 0;
	u32 used = sizeof(*r) + extra + caplen, foff = 0, flen = 0, unr = 0;
	/* A return's stack is unwound from the return: the caller's. */
	struct pea_agg_sample as = {
		.args = args, .ret = ret, .latency = latency, .regs = regs,
		.ip0 = flags & PEA_REC_F_RETPROBE ? 0 : addr,
		.rec_id = id,
	};
	bool ubuf = false;
	u64 *uips = NULL;
	void *fb = NULL;
	long err;

	if (l->fetch) {
		fb = pea_fetch_buf_get();
		if (!fb) {
			pea_link_count_hit(l);
			this_cpu_inc(l->stats->errors);
			goto out;
		}
		flen = pea_fetch_eval(l->fetch, regs, args, ret,
				      flags & PEA_REC_F_UPROBE, l->pid_ns, fb);
		/* The predicate decides before anything is reserved. */
		if (l->pred && !pea_pred_eval(l->pred, l->fetch, fb)) {
			this_cpu_inc(l->stats->filtered);
			goto out;
		}
		flags |= PEA_REC_F_FETCH;
		as.fetch = fb;	/* the table reads the same values */
		foff = ALIGN(used, 8);
		used = foff + flen;
	}
	if (nr)
		flags |= PEA_REC_F_KSTACK;
	/* In the table only (PEA_AGG_F_NO_RECORDS): no record attempted. */
	if (pea_agg_hit(l, &as))
		goto out;
	pea_link_count_hit(l);
	if (l->ustack_depth) {
		uips = pea_ustack_buf_get();
		ubuf = true;
		if (!uips) {
			this_cpu_inc(l->stats->errors);
			goto out;
		}
		unr = pea_ustack_hit(l, regs, nr, uips);
		if (unr)
			flags |= PEA_REC_F_USTACK;
	}
	err = pea_output_reserve(l->map, PEA_F_CURRENT_CPU,
				 pea_kstack_rec_size(pea_kstack_rec_size(used, nr),
						     unr), &h);
	if (err) {
		pea_link_count_err(l, err);
		goto out;
	}
	/* header.misc as perf_misc_flags(regs): uprobes' are user regs. */
	if (regs && user_mode(regs))
		pea_ring_set_user(&h);
	r = h.data;
	if (extra) {
		flags |= PEA_REC_F_COUNTERS;
		if (pea_read_value(l->counter_map, PEA_F_CURRENT_CPU,
				   (struct pea_event_value *)(r + 1), extra))
			flags |= PEA_REC_F_COUNTER_ERR;
	}
	r->time_ns = ktime_get_mono_fast_ns();
	r->id = id;
	r->addr = addr;
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
	if (flen) {
		/* The bytes between the capture and the block are zeroed. */
		memset((u8 *)(r + 1) + extra + caplen, 0,
		       foff - (sizeof(*r) + extra + caplen));
		memcpy((u8 *)r + foff, fb, flen);
	}
	if (nr)
		pea_kstack_put(r, used, ips, nr);
	if (unr)
		pea_kstack_put(r, pea_kstack_rec_size(used, nr), uips, unr);
	pea_output_commit(&h);
	this_cpu_inc(l->stats->written);
out:
	if (ubuf)
		pea_ustack_buf_put();
	if (l->fetch)
		pea_fetch_buf_put();
}

/**
 * pea_link_write_stack() - pea_link_write() with a kernel stack
 * @l: the link
 * @regs: the registers of the hit (a return's at the return)
 * @args: the six arguments
 * @ret: the return value (returns), else 0
 * @latency: entry to return in ns (returns), else 0
 * @flags: PEA_REC_F_*
 * @cap: the capture, @caplen bytes
 * @caplen: bytes of @cap
 * @ips: the stack, @nr entries
 * @nr: entries of @ips (0: no stack)
 *
 * The record carries the link's id and address (published before the
 * producer is armed): pea_link_write_at().
 */
void pea_link_write_stack(struct pea_link *l, struct pt_regs *regs,
			  const u64 *args, s64 ret, u64 latency, u16 flags,
			  const void *cap, u32 caplen, const u64 *ips, u32 nr)
{
	pea_link_write_at(l, l->rec_id, READ_ONCE(l->addr), regs, args, ret,
			  latency, flags, cap, caplen, ips, nr);
}

/**
 * pea_link_write() - write one struct pea_probe_record into the link's map
 * @l: the link
 * @regs: the registers of the hit (a return's at the return)
 * @args: the six arguments
 * @ret: the return value (returns), else 0
 * @latency: entry to return in ns (returns), else 0
 * @flags: PEA_REC_F_*
 * @cap: the capture, @caplen bytes
 * @caplen: bytes of @cap
 *
 * Preemption must be off: the record goes to this CPU's event.
 */
void pea_link_write(struct pea_link *l, struct pt_regs *regs,
		    const u64 *args, s64 ret, u64 latency, u16 flags,
		    const void *cap, u32 caplen)
{
	pea_link_write_stack(l, regs, args, ret, latency, flags, cap, caplen,
			     NULL, 0);
}

/**
 * pea_probe_hit_at() - write the record of an entry hit at one of a
 * link's sites, with its capture and, with kstack_depth, its kernel stack
 * @l: the link
 * @id: what the record carries (pea_link_write_at())
 * @addr: the probed address the record carries, the stack's first entry
 * @args: the six arguments
 * @flags: PEA_REC_F_* the record carries beyond the capture's
 * @regs: the registers at the hit (the stack is unwound from them)
 *
 * The capture and the stack go into this nesting level's scratch slot
 * first, so that the record is reserved at its exact size. Preemption
 * must be off: the slot is this CPU's.
 */
void pea_probe_hit_at(struct pea_link *l, u64 id, u64 addr, const u64 *args,
		      u16 flags, struct pt_regs *regs)
{
	struct pea_scratch *s;
	u32 caplen = 0, nr;

	if (l->capture_mode == PEA_CAPTURE_NONE && !l->kstack_depth) {
		pea_link_write_at(l, id, addr, regs, args, 0, 0, flags, NULL,
				  0, NULL, 0);
		return;
	}
	/* Handlers run with preemption off; a nested one takes the next slot. */
	s = pea_scratch_get();
	if (s) {
		if (l->capture_mode != PEA_CAPTURE_NONE)
			caplen = pea_capture(l, args, s->cap, &flags);
		nr = pea_kstack_save(regs, addr, s->ips, l->kstack_depth);
		pea_link_write_at(l, id, addr, regs, args, 0, 0, flags, s->cap,
				  caplen, s->ips, nr);
	} else {
		this_cpu_inc(l->stats->errors);
	}
	pea_scratch_put();
}

/**
 * pea_probe_hit() - write the record of an entry hit, with its capture
 * and, with kstack_depth, its kernel stack
 * @l: the link
 * @args: the six arguments
 * @flags: PEA_REC_F_* the record carries beyond the capture's
 * @regs: the registers at the hit (the stack is unwound from them)
 *
 * pea_probe_hit_at() with the link's id and address. Preemption must be
 * off.
 */
void pea_probe_hit(struct pea_link *l, const u64 *args, u16 flags,
		   struct pt_regs *regs)
{
	pea_probe_hit_at(l, l->rec_id, READ_ONCE(l->addr), args, flags, regs);
}

/**
 * pea_probe_agg_check() - the values a probe's table may take
 * @l: a kprobe or uprobe link (their PEA_*_F_RETPROBE is the same bit)
 * @a: the table's attr
 *
 * Every hit gives its arguments and its fetched values (if the link
 * has fetches: pea_agg_check()); a return also its value and latency;
 * a kprobe or kretprobe its kernel stack (uprobes refuse it first,
 * pea_uprobe.c). No user stack.
 *
 * Return: 0 or -EINVAL.
 */
int pea_probe_agg_check(struct pea_link *l, const struct pea_agg_attr *a)
{
	if (pea_agg_attr_has_key(a, PEA_AGG_KEY_USTACK))
		return -EINVAL;
	switch (a->value) {
	case PEA_AGG_VAL_NONE:
	case PEA_AGG_VAL_ARG:
	case PEA_AGG_VAL_FETCH:	/* the fetch: pea_agg_check() */
		return 0;
	case PEA_AGG_VAL_LATENCY:
	case PEA_AGG_VAL_RET:
		return l->flags & PEA_PROBE_F_RETPROBE ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}
