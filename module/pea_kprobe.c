// SPDX-License-Identifier: GPL-2.0
/*
 * pea: kprobe and kretprobe producers.
 *
 * PEA_MAP_IOC_ATTACH_PROBE on a map fd attaches a producer and returns a
 * link fd; closing the link detaches it, after in-flight handlers finish
 * (a kretprobe with calls in flight is retired first: pea_kprobe_retire()).
 * Every hit writes one struct pea_probe_record (plus optional bytes copied
 * from memory an argument points to, with the non-faulting copy routines)
 * through pea_output_reserve() on the current CPU.
 *
 * A kretprobe reads the arguments and the capture at entry, into its
 * instance data, and writes the record at return with the return value
 * and the latency. Its tgid filter applies at entry, its CPU filter at
 * return, on the CPU whose ring gets the record (as a perf kretprobe event
 * bound to a CPU counts the returns on that CPU).
 *
 * The probe is registered disabled, its resolved address published, and
 * only then armed: the first hit already carries the address.
 *
 * With kstack_depth the record ends with the kernel call stack of the hit
 * (pea_kstack.c); a kretprobe's is the one at entry.
 *
 * Fetch chains (pea_fetch.c) are evaluated where the record is written: a
 * kprobe's at the hit, a kretprobe's at the return.
 */
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/security.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include "pea_internal.h"
#include "pea_inflight.h"
#include "pea_kprobe.h"
#include "pea_link.h"
#include "pea_provider.h"
#include "pea_kstack.h"
#include "pea_ustack.h"
#include "pea_probe_rec.h"
#include "pea_fetch.h"
#include "pea_pred.h"
#include "pea_compat.h"
#include "pea_perm.h"

/* What a kretprobe keeps from entry to return. */
struct pea_rp_entry {
	u64 t0;
	u64 args[6];
	u16 flags;
	u16 capture_len;
	u32 kstack_nr;	/* entries at kstack_off in the instance data */
	u32 slot;	/* in the link's inflight table */
	u64 owner;	/* the slot's owner word */
	u8 capture[];
};

/* A kprobe link: the link, then its kprobe or kretprobe. */
struct pea_kprobe_link {
	struct pea_link link;	/* first: pea_link_free() frees it */
	union {
		struct kprobe kp;
		struct kretprobe rp;
	};
	u32 kstack_off;		/* kretprobes: where the stack sits in ri->data */
	struct pea_inflight inflight;	/* kretprobes: the calls in flight */
	bool retired;		/* kretprobes: closed (pea_kprobe_retire()) */
};

static_assert(offsetof(struct pea_kprobe_link, link) == 0);

static struct pea_kprobe_link *pea_kp(struct pea_link *l)
{
	return container_of(l, struct pea_kprobe_link, link);
}

static bool pea_link_is_ret(const struct pea_link *l)
{
	return l->flags & PEA_PROBE_F_RETPROBE;
}

static int pea_kprobe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct pea_kprobe_link *k = container_of(kp, struct pea_kprobe_link,
						 kp);
	struct pea_link *l = &k->link;
	u64 args[6];

	if (pea_link_filtered(l))
		return 0;
	pea_read_args(regs, args);
	pea_probe_hit(l, args, 0, regs);
	return 0;
}

/* The stack a kretprobe instance keeps from entry (kstack_depth slots). */
static u64 *pea_rp_kstack(struct pea_link *l, struct kretprobe_instance *ri)
{
	return (u64 *)(ri->data + pea_kp(l)->kstack_off);
}

static int pea_kretprobe_entry(struct kretprobe_instance *ri,
			       struct pt_regs *regs)
{
	struct pea_kprobe_link *k = container_of(get_kretprobe(ri),
						 struct pea_kprobe_link, rp);
	struct pea_rp_entry *e = (struct pea_rp_entry *)ri->data;
	struct pea_link *l = &k->link;
	int slot;

	/* Closed: whether disarming it worked or not, no call is kept. */
	if (READ_ONCE(k->retired))
		return 1;
	/* The CPU filter applies at return, where the record is written. */
	if (pea_link_filtered_tgid(l))
		return 1;	/* no return handler for this call */
	slot = pea_inflight_claim(&k->inflight, &e->owner);
	if (slot < 0) {
		/* Every slot held by a live call: as if the pool were empty. */
		this_cpu_inc(l->stats->missed);
		return 1;
	}
	e->slot = slot;
	pea_read_args(regs, e->args);
	e->flags = PEA_REC_F_RETPROBE;
	e->capture_len = 0;
	if (l->capture_mode != PEA_CAPTURE_NONE)
		e->capture_len = pea_capture(l, e->args, e->capture, &e->flags);
	/* The instance is this call's alone until its return handler ran. */
	e->kstack_nr = pea_kstack_save(regs, READ_ONCE(l->addr),
				       pea_rp_kstack(l, ri), l->kstack_depth);
	e->t0 = ktime_get_mono_fast_ns();
	return 0;
}

static int pea_kretprobe_ret(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	struct pea_kprobe_link *k = container_of(get_kretprobe(ri),
						 struct pea_kprobe_link, rp);
	struct pea_rp_entry *e = (struct pea_rp_entry *)ri->data;
	struct pea_link *l = &k->link;

	/* A retired link's calls only give their slots back. */
	if (!READ_ONCE(k->retired) && !pea_link_filtered_cpu(l))
		pea_link_write_stack(l, regs, e->args,
				     (s64)regs_return_value(regs),
				     ktime_get_mono_fast_ns() - e->t0,
				     e->flags, e->capture, e->capture_len,
				     pea_rp_kstack(l, ri), e->kstack_nr);
	pea_inflight_release(&k->inflight, e->slot, e->owner);
	return 0;
}

static int pea_check_probe_attr(const struct pea_probe_attr *a)
{
	const char *end = memchr(a->symbol, 0, sizeof(a->symbol));
	int err;

	if (a->flags & ~PEA_PROBE_FLAGS)
		return -EINVAL;
	if (!(a->flags & PEA_PROBE_F_COUNTERS) && a->counter_map)
		return -EINVAL;
	if (!end || end == a->symbol)
		return -EINVAL;
	if ((a->flags & PEA_PROBE_F_RETPROBE) && a->offset)
		return -EINVAL;
	/* kprobe.offset is an unsigned int: refuse what it cannot hold. */
	if (a->offset > UINT_MAX)
		return -EINVAL;
	/* As tracefs: maxactive is for kretprobes, at most 4096 of them. */
	if (a->maxactive > PEA_MAXACTIVE_MAX ||
	    (a->maxactive && !(a->flags & PEA_PROBE_F_RETPROBE)))
		return -EINVAL;
	if (a->filter_tgid < 0 || a->filter_cpu < -1 ||
	    a->filter_cpu >= (int)nr_cpu_ids)
		return -EINVAL;
	err = pea_link_tree_check(a->flags, a->filter_tgid);
	if (err)
		return err;
	err = pea_kstack_check(a->kstack_depth, 0);
	if (err)
		return err;
	err = pea_ustack_check(a->ustack_depth);
	if (err)
		return err;
	if (a->capture_mode == PEA_CAPTURE_NONE)
		return a->capture_arg || a->capture_len || a->capture_flags ?
			-EINVAL : 0;
	if (a->capture_mode > PEA_CAPTURE_FIXED || a->capture_arg > 5 ||
	    !a->capture_len || a->capture_len > PEA_CAPTURE_MAX ||
	    (a->capture_flags & ~PEA_CAPTURE_USER))
		return -EINVAL;
	return 0;
}

/*
 * Arm a kprobe registered disabled, once its address is published and its
 * function passed trace_kprobe's notrace rule. The address is stored
 * before enable_kprobe() patches the probe in: arming synchronises every
 * CPU (text_poke_bp()'s IPIs, or ftrace's update) after the store, so a
 * handler that runs finds it (READ_ONCE(), paired with this WRITE_ONCE()).
 */
static int pea_kprobe_arm(struct pea_link *l, struct kprobe *kp)
{
	int err;

	WRITE_ONCE(l->addr, (unsigned long)kp->addr);
	err = pea_kprobe_notrace(kp);
	if (!err)
		err = enable_kprobe(kp);
	return err;
}

/*
 * With every kprobe disarmed (debugfs kprobes/enabled 0) enable_kprobe()
 * succeeds but leaves the probe disabled, and re-arming all kprobes skips
 * disabled ones: such a link would never fire. Registered again without
 * KPROBE_FLAG_DISABLED (its address published, its function checked), it
 * is armed with the others, as Linux's kprobe events are. Nothing fires
 * in between: no kprobe is armed.
 */
static int pea_kprobe_rearm(struct pea_link *l)
{
	struct pea_kprobe_link *k = pea_kp(l);
	struct kprobe *kp = pea_link_is_ret(l) ? &k->rp.kp : &k->kp;

	if (!kprobe_disabled(kp))
		return 0;
	if (pea_link_is_ret(l))
		unregister_kretprobe(&k->rp);
	else
		unregister_kprobe(&k->kp);
	kp->addr = NULL;	/* resolved from the symbol again */
	kp->flags = 0;
	return pea_link_is_ret(l) ? register_kretprobe(&k->rp) :
				    register_kprobe(&k->kp);
}

static int pea_kprobe_register(struct pea_link *l, const void *arg)
{
	struct pea_kprobe_link *k = pea_kp(l);
	const struct pea_probe_attr *a = arg;
	size_t isize;
	int err;

	if (pea_link_is_ret(l)) {
		k->rp.kp.symbol_name = l->symbol;
		k->rp.kp.flags = KPROBE_FLAG_DISABLED;
		k->rp.entry_handler = pea_kretprobe_entry;
		k->rp.handler = pea_kretprobe_ret;
		k->kstack_off = pea_kstack_offset(sizeof(struct pea_rp_entry) +
				(a->capture_mode ? a->capture_len + 1 : 0));
		k->rp.data_size = k->kstack_off +
				  a->kstack_depth * sizeof(u64);
		/* register_kretprobe()'s default, made explicit: it is charged. */
		k->rp.maxactive = a->maxactive ? a->maxactive :
				  max_t(unsigned int, 10,
					2 * num_possible_cpus());
		isize = sizeof(struct kretprobe_instance) + k->rp.data_size;
		err = pea_link_charge(l, pea_kretprobe_mem(k->rp.maxactive,
							   isize) +
				      pea_inflight_size(k->rp.maxactive));
		if (!err)
			err = pea_inflight_init(&k->inflight, k->rp.maxactive);
		if (err)
			return err;
		err = register_kretprobe(&k->rp);
		if (err)
			return err;
		err = pea_kprobe_arm(l, &k->rp.kp);
		if (err)
			unregister_kretprobe(&k->rp);
	} else {
		k->kp.symbol_name = l->symbol;
		k->kp.offset = a->offset;
		k->kp.flags = KPROBE_FLAG_DISABLED;
		k->kp.pre_handler = pea_kprobe_pre;
		err = register_kprobe(&k->kp);
		if (err)
			return err;
		err = pea_kprobe_arm(l, &k->kp);
		if (err)
			unregister_kprobe(&k->kp);
	}
	return err ? err : pea_kprobe_rearm(l);
}

/**
 * pea_kprobe_link_alloc() - a kprobe link's fetches, predicates and the
 * permissions they need, then the link (pea_kprobe_attach(), and
 * pea_fprobe_attach() for each of its functions)
 * @map: the map the producer writes into
 * @provider: the link's kind
 * @c: the attr's fields, checked already
 *
 * Copies and checks the fetch chains and predicates, asks the permission
 * to read memory behind an argument (a kprobe program's rule:
 * bpf_probe_read_user() as bpf_probe_read_kernel(); kernel memory also
 * lockdown's), allocates the link and sets what @c gives it: its filters,
 * fetches, predicates, capture and stacks.
 *
 * Return: the link, which owns the fetches and predicates, or what
 * pea_fetch_copy(), pea_pred_copy(), pea_perm_kernel_read(),
 * pea_perm_probe_lockdown() or pea_link_alloc() answer.
 */
struct pea_link *pea_kprobe_link_alloc(struct pea_map *map,
				       const struct pea_provider *provider,
				       const struct pea_kprobe_common *c)
{
	bool capture = c->capture_mode != PEA_CAPTURE_NONE;
	struct pea_fetch_set *fs;
	struct pea_pred_set *ps;
	struct pea_link *l;
	long err = 0;

	fs = pea_fetch_copy(c->fetches, c->nr_fetches, c->fetch_reserved,
			    c->ret ? PEA_FETCH_KIND_RET : 0);
	if (IS_ERR(fs))
		return ERR_CAST(fs);
	ps = pea_pred_copy(c->preds, c->nr_preds, c->pred_reserved, fs);
	if (IS_ERR(ps)) {
		pea_fetch_free(fs);
		return ERR_CAST(ps);
	}
	if (capture || (fs && fs->mem_read))
		err = pea_perm_kernel_read();
	if (!err)
		err = pea_perm_probe_lockdown((capture &&
					       !(c->capture_flags & PEA_CAPTURE_USER)) ||
					      (fs && fs->kernel_read));
	l = err ? ERR_PTR(err) :
	    pea_link_alloc(map, provider, c->id, c->flags, c->filter_tgid,
			   c->filter_cpu);
	if (IS_ERR(l)) {
		pea_pred_free(ps);
		pea_fetch_free(fs);
		return l;
	}
	l->filter_tree = pea_link_tree(c->flags);
	l->fetch = fs;
	l->pred = ps;
	l->capture_arg = c->capture_arg;
	l->capture_mode = c->capture_mode;
	l->capture_len = c->capture_len;
	l->capture_flags = c->capture_flags;
	l->kstack_depth = c->kstack_depth;
	pea_ustack_link(l, c->ustack_depth);
	return l;
}

/**
 * pea_kprobe_attach() - PEA_MAP_IOC_ATTACH_PROBE: attach a producer
 * @map: the map the producer writes into (the ioctl's map fd)
 * @ua: struct pea_probe_attr in user memory
 *
 * Return: a link fd, or -EACCES (as the kprobe PMU: CAP_PERFMON or
 * CAP_SYS_ADMIN; at perf_event_paranoid 3, CAP_SYS_ADMIN), -EPERM (a
 * capture or a fetch that reads memory, user or kernel, without CAP_BPF
 * and CAP_PERFMON; kernel lockdown), -E2BIG (fetches past PEA_FETCH_MAX, PEA_FETCH_DEPTH_MAX or
 * PEA_FETCH_DATA_MAX: pea_fetch_copy(); a predicate past PEA_PRED_MAX or
 * PEA_PRED_DEPTH_MAX: pea_pred_copy()),
 * -EFAULT, -EINVAL (attr; size below PEA_PROBE_ATTR_SIZE_VER0; offset past
 * UINT_MAX, maxactive past PEA_MAXACTIVE_MAX or on a kprobe, kstack_depth
 * past PEA_KSTACK_MAX, reserved not zero), -E2BIG (attr tail), -EBADF
 * (counter_map is not a map fd), -EOPNOTSUPP (kstack_depth where pea
 * cannot unwind), -EOVERFLOW (kstack_depth past perf_event_max_stack),
 * -EMLINK (PEA_MAX_LINKS live, or the caller's
 * max_user_links), -ENOENT (no such symbol), -EILSEQ (offset not at an
 * instruction), -EINVAL (a function kprobes refuse; a notrace function,
 * as trace_kprobe), -ENOMEM (no memory; max_user_probe_kb or
 * max_probe_kb reached), -EMFILE.
 */
static long pea_kprobe_attach(struct pea_map *map, const void __user *ua)
{
	struct pea_kprobe_common c;
	struct pea_probe_attr a;
	struct pea_link *l;
	long err;

	err = pea_perm_kprobe();
	if (err)
		return err;
	err = pea_link_copy_attr(&a, sizeof(a), PEA_PROBE_ATTR_SIZE_VER0, ua);
	if (err)
		return err;
	err = pea_check_probe_attr(&a);
	if (err)
		return err;
	c = (struct pea_kprobe_common){
		.id = a.id, .flags = a.flags, .filter_tgid = a.filter_tgid,
		.filter_cpu = a.filter_cpu,
		.ret = a.flags & PEA_PROBE_F_RETPROBE,
		.fetches = a.fetches, .nr_fetches = a.nr_fetches,
		.fetch_reserved = a.reserved2,
		.preds = a.preds, .nr_preds = a.nr_preds,
		.pred_reserved = a.reserved3,
		.capture_arg = a.capture_arg, .capture_mode = a.capture_mode,
		.capture_len = a.capture_len, .capture_flags = a.capture_flags,
		.kstack_depth = a.kstack_depth, .ustack_depth = a.ustack_depth,
	};
	l = pea_kprobe_link_alloc(map, &pea_kprobe_provider, &c);
	if (IS_ERR(l))
		return PTR_ERR(l);
	/* Freed with the link; charged as its other memory is. */
	err = l->fetch ? pea_link_charge(l, pea_fetch_size(l->fetch) +
					 pea_pred_size(l->pred)) : 0;
	if (err) {
		pea_link_free(l);
		return err;
	}
	memcpy(l->symbol, a.symbol, sizeof(l->symbol));
	if (a.flags & PEA_PROBE_F_COUNTERS) {
		l->counter_map = pea_map_fget(a.counter_map);
		if (IS_ERR(l->counter_map)) {
			err = PTR_ERR(l->counter_map);
			l->counter_map = NULL;
			pea_link_free(l);
			return err;
		}
	}
	return pea_link_install(l, a.flags & PEA_PROBE_F_CLOEXEC, &a);
}

static void pea_kprobe_unregister(struct pea_link *l)
{
	struct pea_kprobe_link *k = pea_kp(l);

	if (pea_link_is_ret(l))
		unregister_kretprobe(&k->rp);
	else
		unregister_kprobe(&k->kp);
	/*
	 * Both wait for an RCU grace period after disarming: no handler of
	 * this link runs any more. Calls of a kretprobe's function still in
	 * flight return through the rethook with its handler cleared.
	 */
}

/*
 * A kretprobe closed while calls of its function are in flight cannot
 * give their instances back: the kernel keeps them until the calls return
 * (and, on 6.12, the whole objpool until the last one is back), charged
 * to nobody once pea let go. So it is retired (pea_link.c) until its
 * inflight table is empty. Entries stop at disable_kretprobe() and, were
 * disarming to fail, at @retired; after the grace period no handler that
 * saw the link live runs any more (kprobe and rethook handlers run with
 * preemption off), so the table takes no new claim and every later return
 * sees @retired and touches neither maps nor filters.
 */
static bool pea_kprobe_retire(struct pea_link *l)
{
	struct pea_kprobe_link *k = pea_kp(l);

	if (!pea_link_is_ret(l))
		return false;
	WRITE_ONCE(k->retired, true);
	disable_kretprobe(&k->rp);
	synchronize_rcu();
	return pea_inflight_busy(&k->inflight);
}

static bool pea_kprobe_busy(struct pea_link *l)
{
	return pea_inflight_busy(&pea_kp(l)->inflight);
}

static void pea_kprobe_free(struct pea_link *l)
{
	pea_inflight_free(&pea_kp(l)->inflight);
}

/*
 * Missed: the hits the kprobe layer itself missed, and a kretprobe's
 * calls that found every slot of its table held by a live call.
 */
static void pea_kprobe_info(struct pea_link *l,
			    const struct pea_link_stats *sum,
			    struct pea_link_info *info)
{
	struct pea_kprobe_link *k = pea_kp(l);

	info->missed = pea_link_is_ret(l) ? k->rp.nmissed + k->rp.kp.nmissed +
					    sum->missed :
					    k->kp.nmissed;
}

const struct pea_provider pea_kprobe_provider = {
	.link_size = sizeof(struct pea_kprobe_link),
	.attach = pea_kprobe_attach,
	.reg = pea_kprobe_register,
	.unregister = pea_kprobe_unregister,
	.retire = pea_kprobe_retire,
	.busy = pea_kprobe_busy,
	.free = pea_kprobe_free,
	.info = pea_kprobe_info,
	.agg_check = pea_probe_agg_check,
};
