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
 *
 * A link may carry fetch chains whose base is a field of the entry (an
 * eprobe's "+0($field):string", trace_eprobe.c): evaluated by the probes'
 * engine (pea_fetch.c) after the field filter, into this nesting level's
 * block buffer, their predicate deciding before the record is reserved,
 * the block following the entry as it follows a probe record's other
 * parts. The fields they start at are checked against the event's own
 * field table once the first perf event holds the event
 * (pea_tp_field.c).
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
#include "pea_fetch.h"
#include "pea_link.h"
#include "pea_pred.h"
#include "pea_provider.h"
#include "pea_tp_filter.h"
#include "pea_kstack.h"
#include "pea_ustack.h"
#include "pea_perm.h"

/* A tracepoint link: the link, then one kernel perf event per CPU. */
struct pea_tp_link {
	struct pea_link link;	/* first: pea_link_free() frees it */
	struct perf_event **events;	/* nr_cpu_ids entries, NULL if none */
	u32 event_id;
	u32 nr_preds;
	struct pea_tp_pred preds[PEA_TP_PRED_MAX];
	struct pea_tp_prog *prog;	/* a filter program, or NULL */
};

static_assert(offsetof(struct pea_tp_link, link) == 0);

static struct pea_tp_link *pea_tp(struct pea_link *l)
{
	return container_of(l, struct pea_tp_link, link);
}

/* The link's filter: its inline predicates or its program. */
static bool pea_tp_match(const struct pea_tp_link *tp, const u8 *e, u32 len)
{
	if (tp->prog)
		return pea_tp_prog_match(tp->prog, e, len, tp->link.pid_ns);
	return pea_tp_preds_match(tp->preds, tp->nr_preds, e, len);
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
	u32 size, used, nr = 0, unr = 0, foff = 0, flen = 0;
	bool ubuf = false, sbuf = false, fbuf = false;
	u64 *uips = NULL;
	void *fb = NULL;
	long err;

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
	if (!pea_tp_match(pea_tp(l), raw->frag.data, raw->frag.size)) {
		this_cpu_inc(l->stats->filtered);
		return;
	}
	as.raw = raw->frag.data;
	as.raw_len = raw->frag.size;
	as.regs = regs;
	size = pea_tp_raw_size(raw);
	used = sizeof(*r) + size;
	if (l->fetch) {
		/*
		 * Paired with the put at the end whatever it returns; the
		 * fields are read from the first fragment, as the filter's.
		 */
		fb = pea_fetch_buf_get();
		fbuf = true;
		if (!fb) {
			pea_link_count_hit(l);
			this_cpu_inc(l->stats->errors);
			goto put;
		}
		flen = pea_fetch_eval_entry(l->fetch, raw->frag.data,
					    raw->frag.size, l->pid_ns, fb);
		if (l->pred && !pea_pred_eval(l->pred, l->fetch, fb)) {
			this_cpu_inc(l->stats->filtered);
			goto put;
		}
		as.fetch = fb;	/* a table reads the same values */
		foff = ALIGN(used, 8);
		used = foff + flen;
	}
	/* In the table only (PEA_AGG_F_NO_RECORDS): no record attempted. */
	if (pea_agg_hit(l, &as))
		goto put;
	pea_link_count_hit(l);
	if (l->kstack_depth) {
		/*
		 * Unwound before the reservation, into this nesting level's
		 * slot: the record is reserved at its exact size, and an
		 * NMI handler that nests here takes the next slot.
		 */
		s = pea_scratch_get();
		sbuf = true;
		if (!s) {
			this_cpu_inc(l->stats->errors);
			goto put;
		}
		nr = pea_kstack_save(regs, 0, s->ips, l->kstack_depth);
	}
	if (l->ustack_depth) {
		/* A syscall event's regs are the user's; else the task's. */
		uips = pea_ustack_buf_get();
		ubuf = true;
		if (!uips) {
			this_cpu_inc(l->stats->errors);
			goto put;
		}
		unr = pea_ustack_hit(l, regs, nr, uips);
	}
	err = pea_output_reserve(l->map, PEA_F_CURRENT_CPU,
				 pea_kstack_rec_size(pea_kstack_rec_size(used, nr),
						     unr), &h);
	if (err) {
		pea_link_count_err(l, err);
		goto put;
	}
	/*
	 * header.misc as perf_misc_flags(regs): a syscall event's regs are
	 * the task's user registers (perf_syscall_enter()/_exit()).
	 */
	if (user_mode(regs))
		pea_ring_set_user(&h);
	r = h.data;
	r->time_ns = ktime_get_mono_fast_ns();
	r->id = l->rec_id;
	r->event_id = pea_tp(l)->event_id;
	r->cpu = smp_processor_id();
	r->pid = task_pid_nr_ns(task, l->pid_ns);
	r->tgid = task_tgid_nr_ns(task, l->pid_ns);
	r->flags = PEA_REC_F_TRACEPOINT | (nr ? PEA_REC_F_KSTACK : 0) |
		   (unr ? PEA_REC_F_USTACK : 0) | (fb ? PEA_REC_F_FETCH : 0);
	r->reserved = 0;
	strscpy_pad(r->comm, task->comm, sizeof(r->comm));
	r->raw_size = size;
	r->reserved2 = 0;
	pea_tp_raw_copy((u8 *)(r + 1), raw);
	if (fb) {
		/* The bytes between the entry and the block are zeroed. */
		memset((u8 *)(r + 1) + size, 0, foff - (sizeof(*r) + size));
		memcpy((u8 *)r + foff, fb, flen);
	}
	if (nr)
		pea_kstack_put(r, used, s->ips, nr);
	if (unr)
		pea_kstack_put(r, pea_kstack_rec_size(used, nr), uips, unr);
	pea_output_commit(&h);
	this_cpu_inc(l->stats->written);
put:
	if (ubuf)
		pea_ustack_buf_put();
	if (sbuf)
		pea_scratch_put();
	if (fbuf)
		pea_fetch_buf_put();
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
	u32 i;

	/*
	 * Fields to check: the first event is created disabled, its event's
	 * field table checked (pea_tp_field.c), then enabled; no hit of
	 * fields the event lacks is ever recorded.
	 */
	for (i = 0; l->fetch && i < l->fetch->nr; i++)
		if (l->fetch->f[i].base == PEA_FETCH_BASE_FIELD)
			attr.disabled = 1;

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
		if (attr.disabled) {
			err = pea_tp_fields_check(ev->tp_event, l->fetch);
			if (err)
				break;
			perf_event_enable(ev);
			attr.disabled = 0;
		}
	}
	if (err)
		pea_tp_unregister(l);
	return err;
}

static int pea_tp_check_attr(const struct pea_tp_attr *a)
{
	const char *end = memchr(a->name, 0, sizeof(a->name));
	int err;

	if (a->flags & ~PEA_TP_FLAGS)
		return -EINVAL;
	if (!end || end == a->name || !a->event_id)
		return -EINVAL;
	if (a->filter_tgid < 0 || a->filter_cpu < -1 ||
	    a->filter_cpu >= (int)nr_cpu_ids)
		return -EINVAL;
	err = pea_link_tree_check(a->flags, a->filter_tgid);
	if (err)
		return err;
	if (a->nr_preds > PEA_TP_PRED_MAX)
		return -EINVAL;
	err = pea_kstack_check(a->kstack_depth, 0);
	if (err)
		return err;
	err = pea_ustack_check(a->ustack_depth);
	if (err)
		return err;
	return pea_tp_preds_check(a);
}

/**
 * pea_tp_attach() - PEA_MAP_IOC_ATTACH_TP: attach a tracepoint producer
 * @map: the map the producer writes into (the ioctl's map fd)
 * @ua: struct pea_tp_attr in user memory
 *
 * Return: a link fd, or -EACCES or -EPERM (as perf_event_open() of the
 * event with PERF_SAMPLE_RAW for every task: pea_perm_tracepoint(); and
 * -EPERM for a term of the uid or gid without CAP_BPF and CAP_PERFMON,
 * as a tracepoint program's bpf_get_current_uid_gid(), before the
 * program is checked: pea_tp_prog_copy()), -EFAULT,
 * -EINVAL (attr, a predicate, the filter program or a term of it; size
 * below PEA_TP_ATTR_SIZE_VER0, kstack_depth past PEA_KSTACK_MAX, reserved
 * not zero; no trace event has this id, as perf_event_open() says),
 * -EOPNOTSUPP (kstack_depth where pea cannot unwind), -EOVERFLOW
 * (kstack_depth past perf_event_max_stack), -E2BIG (attr tail; more than
 * PEA_TP_TERM_MAX terms, PEA_TP_PROG_MAX instructions or
 * PEA_PRED_DEPTH_MAX values pending: pea_tp_prog_copy(); fetches past
 * PEA_FETCH_MAX or PEA_FETCH_DATA_MAX: pea_fetch_copy(); a fetch
 * predicate past PEA_PRED_MAX: pea_pred_copy()), -EINVAL (a fetch or
 * its predicate malformed; a fetch's field not an integer or pointer
 * field of the event: pea_tp_fields_check(), once the first perf event
 * is made), -EOPNOTSUPP (the event's field table does not look like the
 * struct pea reads: a kernel whose layout differs), -EPERM (a fetch that
 * reads memory without CAP_BPF and CAP_PERFMON, or that may read kernel
 * memory under lockdown's confidentiality: pea_perm_tp_read()), -EMLINK
 * (PEA_MAX_LINKS live, or the caller's max_user_links), perf's other
 * errors, -ENOMEM (also max_user_probe_kb or max_probe_kb reached: a perf
 * event per CPU and the filter program are charged), -EMFILE.
 */
static long pea_tp_attach(struct pea_map *map, const void __user *ua)
{
	struct pea_fetch_set *fs;
	struct pea_pred_set *ps;
	struct pea_tp_prog *prog;
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
	prog = pea_tp_prog_copy(&a);
	if (IS_ERR(prog))
		return PTR_ERR(prog);
	fs = pea_fetch_copy(a.fetches, a.nr_fetches, a.reserved3,
			    PEA_FETCH_KIND_TP);
	if (IS_ERR(fs)) {
		pea_tp_prog_free(prog);
		return PTR_ERR(fs);
	}
	ps = pea_pred_copy(a.fetch_preds, a.nr_fetch_preds, a.reserved4, fs);
	/*
	 * Memory behind a field, user or kernel: a tracepoint program's rule
	 * (bpf_probe_read_user() as bpf_probe_read_kernel()); a read the
	 * attacher does not mark user also lockdown's kernel-read rule.
	 */
	err = IS_ERR(ps) ? PTR_ERR(ps) : 0;
	if (!err && fs && fs->mem_read)
		err = pea_perm_tp_read(fs->kernel_read);
	if (err) {
		if (!IS_ERR(ps))
			pea_pred_free(ps);
		pea_fetch_free(fs);
		pea_tp_prog_free(prog);
		return err;
	}
	l = pea_link_alloc(map, &pea_tp_provider, a.id, a.flags, a.filter_tgid,
			   a.filter_cpu);
	if (IS_ERR(l)) {
		pea_pred_free(ps);
		pea_fetch_free(fs);
		pea_tp_prog_free(prog);
		return PTR_ERR(l);
	}
	l->filter_tree = pea_link_tree(a.flags);
	/* Freed with the link; charged as a probe's predicate is. */
	pea_tp(l)->prog = prog;
	l->fetch = fs;
	l->pred = ps;
	err = prog || fs ? pea_link_charge(l, pea_tp_prog_size(prog) +
					   pea_fetch_size(fs) +
					   pea_pred_size(ps)) : 0;
	if (err) {
		pea_link_free(l);
		return err;
	}
	l->addr = a.event_id;
	pea_tp(l)->event_id = a.event_id;
	pea_tp(l)->nr_preds = a.nr_preds;
	l->kstack_depth = a.kstack_depth;
	pea_ustack_link(l, a.ustack_depth);
	memcpy(pea_tp(l)->preds, a.preds, sizeof(pea_tp(l)->preds));
	memcpy(l->symbol, a.name, sizeof(l->symbol));
	return pea_link_install(l, a.flags & PEA_TP_F_CLOEXEC, NULL);
}

/*
 * A tracepoint's table takes a field of its entry (first fragment), the
 * kernel stack of its call site, and its fetched values (the fetch set
 * checked by pea_agg_check()).
 */
static int pea_tp_agg_check(struct pea_link *l, const struct pea_agg_attr *a)
{
	if (pea_agg_attr_has_key(a, PEA_AGG_KEY_USTACK))
		return -EINVAL;
	return a->value == PEA_AGG_VAL_NONE || a->value == PEA_AGG_VAL_FIELD ||
	       a->value == PEA_AGG_VAL_FETCH ? 0 : -EINVAL;
}

static void pea_tp_free(struct pea_link *l)
{
	pea_tp_prog_free(pea_tp(l)->prog);
}

const struct pea_provider pea_tp_provider = {
	.link_size = sizeof(struct pea_tp_link),
	.attach = pea_tp_attach,
	.reg = pea_tp_register,
	.unregister = pea_tp_unregister,
	.free = pea_tp_free,
	.agg_check = pea_tp_agg_check,
};
