// SPDX-License-Identifier: GPL-2.0
/*
 * pea: tracepoint producers.
 *
 * PEA_MAP_IOC_ATTACH_TP on a map fd attaches to a trace event and returns
 * a link fd (the link rules of pea_link.c). The producer is a kernel perf
 * event per online CPU: type PERF_TYPE_TRACEPOINT, config the event id,
 * sample_period 1, sample_type PERF_SAMPLE_RAW | PERF_SAMPLE_PERIOD, and
 * an overflow handler instead of a perf ring. perf builds the event's
 * entry exactly as ftrace does (trace_event_raw_event_* and the perf_trace_*
 * twins come from the same TRACE_EVENT definition; syscall events from
 * perf_syscall_enter()/_exit()), so the record carries the layout tracefs
 * describes without pea knowing any event. Why this and not
 * tracepoint_probe_register(): docs/tracepoints.md.
 *
 * PERF_SAMPLE_PERIOD matters: with it perf_swevent_event() overflows once
 * per hit whatever the hit's count (__perf_count() events such as
 * sched_stat_runtime count nanoseconds), and the first overflow of a hit
 * is never throttled. Without it a count of N would call the handler N
 * times and perf would throttle the event after max_samples_per_tick.
 *
 * The handler runs where the tracepoint fires (any context, NMI included),
 * with preemption and, since perf serialises it against the removal IPI,
 * interrupts disabled. It writes through pea_output_reserve(): no lock,
 * no allocation.
 *
 * With kstack_depth the handler unwinds from the registers perf hands it
 * (perf_fetch_caller_regs() at the tracepoint's call site) into its
 * scratch slot first, and the stack ends the record (pea_kstack.c).
 */
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include "pea_internal.h"
#include "pea_agg.h"
#include "pea_intval.h"
#include "pea_link.h"
#include "pea_pred.h"
#include "pea_provider.h"
#include "pea_kstack.h"
#include "pea_perm.h"

/* A tracepoint link: the link, then one kernel perf event per CPU. */
struct pea_tp_link {
	struct pea_link link;	/* first: pea_link_free() frees it */
	struct perf_event **events;	/* nr_cpu_ids entries, NULL if none */
	u32 event_id;
	u32 nr_preds;
	struct pea_tp_pred preds[PEA_TP_PRED_MAX];
};

static_assert(offsetof(struct pea_tp_link, link) == 0);

static struct pea_tp_link *pea_tp(struct pea_link *l)
{
	return container_of(l, struct pea_tp_link, link);
}

static bool pea_tp_str_match(const struct pea_tp_pred *p, const char *s,
			     size_t max)
{
	size_t n = strnlen(s, max);
	bool eq;

	if (p->op == PEA_TP_OP_GLOB)
		return pea_glob(p->str, s, n);
	eq = n == strnlen(p->str, PEA_TP_STR_MAX) && !memcmp(s, p->str, n);
	return p->op == PEA_TP_OP_EQ ? eq : !eq;
}

/* One predicate on the @len bytes of entry @e; never reads past them. */
static bool pea_tp_pred_match(const struct pea_tp_pred *p, const u8 *e,
			      u32 len)
{
	u32 loc, off, n;
	bool sgn;

	if ((u32)p->offset + p->size > len)
		return false;
	switch (p->kind) {
	case PEA_TP_FIELD_UINT:
	case PEA_TP_FIELD_SINT:
		sgn = p->kind == PEA_TP_FIELD_SINT;
		return pea_int_cmp(p->op, pea_int_load(e + p->offset, p->size,
						       sgn), p->value, sgn);
	case PEA_TP_FIELD_STR:
		return pea_tp_str_match(p, (const char *)e + p->offset,
					p->size);
	default:	/* __data_loc, __rel_loc: u32 (length << 16 | offset) */
		memcpy(&loc, e + p->offset, 4);
		off = loc & 0xffff;
		n = loc >> 16;
		if (p->kind == PEA_TP_FIELD_REL_LOC)
			off += p->offset + 4;
		if (off + n > len)
			return false;
		return pea_tp_str_match(p, (const char *)e + off, n);
	}
}

static bool pea_tp_preds_match(const struct pea_tp_link *tp, const u8 *e,
			       u32 len)
{
	u32 i;

	for (i = 0; i < tp->nr_preds; i++)
		if (!pea_tp_pred_match(&tp->preds[i], e, len))
			return false;
	return true;
}

/* Bytes of the raw record, all fragments together. */
static u32 pea_tp_raw_size(const struct perf_raw_record *raw)
{
	const struct perf_raw_frag *frag = &raw->frag;
	u32 size = 0;

	for (;;) {
		size += frag->size;
		if (perf_raw_frag_last(frag))
			return size;
		frag = frag->next;
	}
}

static void pea_tp_raw_copy(u8 *dst, const struct perf_raw_record *raw)
{
	const struct perf_raw_frag *frag = &raw->frag;

	for (;;) {
		if (frag->copy)
			frag->copy(dst, frag->data, 0, frag->size);
		else
			memcpy(dst, frag->data, frag->size);
		dst += frag->size;
		if (perf_raw_frag_last(frag))
			return;
		frag = frag->next;
	}
}

static void pea_tp_overflow(struct perf_event *event,
			    struct perf_sample_data *data,
			    struct pt_regs *regs)
{
	struct pea_link *l = event->overflow_handler_context;
	const struct perf_raw_record *raw;
	struct task_struct *task = current;
	struct pea_output_handle h;
	struct pea_scratch *s = NULL;
	struct pea_agg_sample as = {};
	struct pea_tp_record *r;
	u32 size, used, nr = 0;

	if (pea_link_filtered(l))
		return;
	if (!(data->sample_flags & PERF_SAMPLE_RAW) || !data->raw) {
		pea_link_count_hit(l);
		this_cpu_inc(l->stats->errors);
		return;
	}
	raw = data->raw;
	/*
	 * Trace events come in one fragment; predicates see the first one
	 * only, bounded by its size.
	 */
	if (!pea_tp_preds_match(pea_tp(l), raw->frag.data, raw->frag.size)) {
		this_cpu_inc(l->stats->filtered);
		return;
	}
	as.raw = raw->frag.data;
	as.raw_len = raw->frag.size;
	as.regs = regs;
	/* In the table only (PEA_AGG_F_NO_RECORDS): no record attempted. */
	if (pea_agg_hit(l, &as))
		return;
	pea_link_count_hit(l);
	size = pea_tp_raw_size(raw);
	used = sizeof(*r) + size;
	if (l->kstack_depth) {
		/*
		 * Unwound before the reservation, into this nesting level's
		 * slot: the record is reserved at its exact size, and an
		 * NMI handler that nests here takes the next slot.
		 */
		s = pea_scratch_get();
		if (!s) {
			this_cpu_inc(l->stats->errors);
			goto put;
		}
		nr = pea_kstack_save(regs, 0, s->ips, l->kstack_depth);
	}
	if (pea_output_reserve(l->map, PEA_F_CURRENT_CPU,
			       pea_kstack_rec_size(used, nr), &h)) {
		this_cpu_inc(l->stats->errors);
		goto put;
	}
	r = h.data;
	r->time_ns = ktime_get_mono_fast_ns();
	r->id = l->rec_id;
	r->event_id = pea_tp(l)->event_id;
	r->cpu = smp_processor_id();
	r->pid = task_pid_nr_ns(task, l->pid_ns);
	r->tgid = task_tgid_nr_ns(task, l->pid_ns);
	r->flags = PEA_REC_F_TRACEPOINT | (nr ? PEA_REC_F_KSTACK : 0);
	r->reserved = 0;
	strscpy_pad(r->comm, task->comm, sizeof(r->comm));
	r->raw_size = size;
	r->reserved2 = 0;
	pea_tp_raw_copy((u8 *)(r + 1), raw);
	if (nr)
		pea_kstack_put(r, used, s->ips, nr);
	pea_output_commit(&h);
	this_cpu_inc(l->stats->written);
put:
	if (l->kstack_depth)
		pea_scratch_put();
}

/**
 * pea_tp_unregister() - release a tracepoint link's perf events
 * @l: the link
 *
 * perf_event_release_kernel() removes each event from its CPU with an IPI
 * that cannot run while the handler runs there (perf disables interrupts
 * around it); the grace period then covers any reader of the event list
 * still walking it. After this no handler of @l runs.
 */
static void pea_tp_unregister(struct pea_link *l)
{
	struct pea_tp_link *tp = pea_tp(l);
	unsigned int cpu;

	if (!tp->events)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (tp->events[cpu])
			perf_event_release_kernel(tp->events[cpu]);
	synchronize_rcu();
	kfree(tp->events);
	tp->events = NULL;
}

static int pea_tp_register(struct pea_link *l, const void *arg)
{
	struct pea_tp_link *tp = pea_tp(l);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = tp->event_id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_PERIOD,
	};
	struct perf_event *ev;
	unsigned int cpu;
	int err = 0;

	/* The events array, and a perf event per CPU online now. */
	err = pea_link_charge(l, kmalloc_size_roundup(nr_cpu_ids *
						      sizeof(*tp->events)) +
			      num_online_cpus() * sizeof(struct perf_event));
	if (err)
		return err;
	tp->events = kcalloc(nr_cpu_ids, sizeof(*tp->events),
			     GFP_KERNEL_ACCOUNT);
	if (!tp->events)
		return -ENOMEM;
	/*
	 * Not under cpus_read_lock(): registering the tracepoint takes it
	 * again (static_call_update()), a recursive read lock that lockdep
	 * rightly reports (a waiting writer would deadlock it). A CPU that
	 * goes offline meanwhile gives -ENODEV and is skipped; one that comes
	 * online is not traced, as one that comes online later.
	 */
	for_each_online_cpu(cpu) {
		ev = perf_event_create_kernel_counter(&attr, cpu, NULL,
						      pea_tp_overflow, l);
		if (IS_ERR(ev)) {
			err = PTR_ERR(ev);
			if (err == -ENODEV) {
				err = 0;
				continue;
			}
			break;
		}
		tp->events[cpu] = ev;
	}
	if (err)
		pea_tp_unregister(l);
	return err;
}

static int pea_tp_check_pred(const struct pea_tp_pred *p)
{
	bool num = p->kind == PEA_TP_FIELD_UINT || p->kind == PEA_TP_FIELD_SINT;

	if (p->reserved)
		return -EINVAL;
	switch (p->kind) {
	case PEA_TP_FIELD_UINT:
	case PEA_TP_FIELD_SINT:
		if (p->size != 1 && p->size != 2 && p->size != 4 &&
		    p->size != 8)
			return -EINVAL;
		break;
	case PEA_TP_FIELD_STR:
		if (!p->size)
			return -EINVAL;
		break;
	case PEA_TP_FIELD_DATA_LOC:
	case PEA_TP_FIELD_REL_LOC:
		if (p->size != 4)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (num) {
		if (p->op < PEA_TP_OP_EQ || p->op > PEA_TP_OP_AND ||
		    memchr_inv(p->str, 0, sizeof(p->str)))
			return -EINVAL;
		return 0;
	}
	if (p->op != PEA_TP_OP_EQ && p->op != PEA_TP_OP_NE &&
	    p->op != PEA_TP_OP_GLOB)
		return -EINVAL;
	if (p->value || !memchr(p->str, 0, sizeof(p->str)))
		return -EINVAL;
	return 0;
}

static int pea_tp_check_attr(const struct pea_tp_attr *a)
{
	const char *end = memchr(a->name, 0, sizeof(a->name));
	u32 i;
	int err;

	if (a->flags & ~PEA_TP_FLAGS)
		return -EINVAL;
	if (!end || end == a->name || !a->event_id)
		return -EINVAL;
	if (a->filter_tgid < 0 || a->filter_cpu < -1 ||
	    a->filter_cpu >= (int)nr_cpu_ids)
		return -EINVAL;
	if (a->nr_preds > PEA_TP_PRED_MAX)
		return -EINVAL;
	err = pea_kstack_check(a->kstack_depth, a->reserved);
	if (err)
		return err;
	for (i = 0; i < a->nr_preds; i++) {
		err = pea_tp_check_pred(&a->preds[i]);
		if (err)
			return err;
	}
	if (memchr_inv(&a->preds[a->nr_preds], 0,
		       (PEA_TP_PRED_MAX - a->nr_preds) * sizeof(a->preds[0])))
		return -EINVAL;
	return 0;
}

/**
 * pea_tp_attach() - PEA_MAP_IOC_ATTACH_TP: attach a tracepoint producer
 * @map: the map the producer writes into (the ioctl's map fd)
 * @ua: struct pea_tp_attr in user memory
 *
 * Return: a link fd, or -EACCES or -EPERM (as perf_event_open() of the
 * event with PERF_SAMPLE_RAW for every task: pea_perm_tracepoint()), -EFAULT,
 * -EINVAL (attr, a predicate; size below PEA_TP_ATTR_SIZE_VER0,
 * kstack_depth past PEA_KSTACK_MAX, reserved not zero; no trace event has
 * this id, as perf_event_open() says), -EOPNOTSUPP (kstack_depth where pea
 * cannot unwind), -EOVERFLOW (kstack_depth past perf_event_max_stack),
 * -E2BIG (attr tail), -EMLINK (PEA_MAX_LINKS live, or the caller's
 * max_user_links), perf's other errors, -ENOMEM (also
 * max_user_probe_kb or max_probe_kb reached: a perf event per CPU is
 * charged), -EMFILE.
 */
static long pea_tp_attach(struct pea_map *map, const void __user *ua)
{
	struct pea_tp_attr a;
	struct pea_link *l;
	long err;

	/* As perf_event_open() of the event with PERF_SAMPLE_RAW, pid -1. */
	err = pea_perm_tracepoint();
	if (err)
		return err;
	err = pea_link_copy_attr(&a, sizeof(a), PEA_TP_ATTR_SIZE_VER0, ua);
	if (err)
		return err;
	err = pea_tp_check_attr(&a);
	if (err)
		return err;
	l = pea_link_alloc(map, &pea_tp_provider, a.id, a.flags, a.filter_tgid,
			   a.filter_cpu);
	if (IS_ERR(l))
		return PTR_ERR(l);
	l->addr = a.event_id;
	pea_tp(l)->event_id = a.event_id;
	pea_tp(l)->nr_preds = a.nr_preds;
	l->kstack_depth = a.kstack_depth;
	memcpy(pea_tp(l)->preds, a.preds, sizeof(pea_tp(l)->preds));
	memcpy(l->symbol, a.name, sizeof(l->symbol));
	return pea_link_install(l, a.flags & PEA_TP_F_CLOEXEC, NULL);
}

/*
 * A tracepoint's table takes a field of its entry (first fragment), and
 * the kernel stack of its call site.
 */
static int pea_tp_agg_check(struct pea_link *l, const struct pea_agg_attr *a)
{
	if (pea_agg_attr_has_key(a, PEA_AGG_KEY_USTACK))
		return -EINVAL;
	return a->value == PEA_AGG_VAL_NONE || a->value == PEA_AGG_VAL_FIELD ?
		0 : -EINVAL;
}

const struct pea_provider pea_tp_provider = {
	.link_size = sizeof(struct pea_tp_link),
	.attach = pea_tp_attach,
	.reg = pea_tp_register,
	.unregister = pea_tp_unregister,
	.agg_check = pea_tp_agg_check,
};
