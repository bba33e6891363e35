// SPDX-License-Identifier: GPL-2.0
/*
 * pea: fprobe producers, one link on many kernel functions (issue 21).
 *
 * PEA_MAP_IOC_ATTACH_FPROBE on a map fd takes a list of function names
 * and attaches one fprobe (kernel/trace/fprobe.c: one ftrace_ops whose
 * filter hash holds every function, registered in one ftrace update) in
 * place of a kprobe per function. Each hit writes the record a kprobe or
 * kretprobe on that function writes, through the same code
 * (pea_probe_rec.c): the arguments, captures, fetches and predicates,
 * stacks, filters and in-kernel tables of a kprobe link. Its id and
 * address name the function (the uapi's "Fprobe producers").
 *
 * Each name is resolved by the kprobe layer itself: a kprobe on it is
 * registered disabled (never armed: it patches nothing), then all are
 * unregistered at once (one grace period). The kprobe layer refuses what
 * it refuses for a kprobe link (unknown symbols, its blacklist), and a
 * function whose kprobe would not sit on an ftrace location has none to
 * hook (notrace, which trace_kprobe refuses too). The kprobe's address
 * is the function's ftrace location, the ip fprobe's handlers get.
 * Nothing stays registered with the kprobe layer: a link of thousands of
 * functions would otherwise lengthen the kprobe hash's chains, which
 * every kprobe hit walks.
 *
 * A module may go while the link lives: ftrace drops its functions, and
 * a module loaded later may take their addresses, which the link's
 * ftrace filter still holds. The link's module notifier, registered
 * before the names are resolved, marks such functions gone as the module
 * goes (and a module's init functions when its init memory is freed);
 * hits at a gone function's address are ignored, and one gone before
 * the fprobe is registered fails the attach (ENOENT); one that goes
 * later is only gone, as a kprobe's function is (pea_fp_register()).
 *
 * Handlers run from ftrace in any context the functions run in (NMI
 * included), with preemption off, under ftrace's recursion guard: a hit
 * inside another ftrace callback of the same context is counted in
 * fp.nmissed, not run. They take no lock and allocate nothing: the
 * function is found by binary search of a table sorted at attach.
 *
 * A return link keeps what a kretprobe keeps from entry to return in the
 * entry data of fprobe's rethook node. At close its fprobe is
 * unregistered; the kernel keeps the nodes of calls still in flight, and
 * with them the rethook's whole objpool, until they return. The link
 * holds a reference on that pool and stays retired, charged, while the
 * pool has any other (pea_fp_retire()).
 */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/rethook.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "pea_internal.h"
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
#include "pea_quota.h"

static unsigned int max_fprobe_funcs = 4096;
module_param(max_fprobe_funcs, uint, 0644);
MODULE_PARM_DESC(max_fprobe_funcs,
		 "functions of one fprobe link, at most 65536 (default 4096)");

/* register_kprobe()'s EINVALs before it is believed (pea_fp_kprobe()). */
#define PEA_FP_RESOLVE_TRIES	3

/* One function of a link. */
struct pea_fp_func {
	unsigned long ip;	/* its ftrace location: the handlers' ip */
	u32 index;		/* its place in the attr's list */
	bool gone;		/* its module went (pea_fp_module()) */
};

/* What a return link keeps from entry to return (the node's data). */
struct pea_fp_entry {
	u64 t0;
	u64 args[6];
	u16 flags;
	u16 capture_len;
	u32 kstack_nr;	/* entries at kstack_off in the entry data */
	u8 capture[];
};

/* An fprobe link: the link, then its fprobe and its functions. */
struct pea_fprobe_link {
	struct pea_link link;	/* first: pea_link_free() frees it */
	struct fprobe fp;
	struct pea_fp_func *funcs;	/* sorted by ip */
	u32 nr;			/* functions */
	u32 id_step;		/* 1: records carry id + index; 0: the id */
	u32 kstack_off;		/* return links: the stack in the entry data */
	struct rethook *held;	/* retired: its pool held (pea_fp_retire()) */
	bool registered;	/* the fprobe is */
	bool nb_registered;	/* @nb is */
	struct notifier_block nb;	/* modules going: pea_fp_module() */
	struct mutex lock;	/* @funcs against pea_fp_module() */
};

static_assert(offsetof(struct pea_fprobe_link, link) == 0);

static struct pea_fprobe_link *pea_fp(struct pea_link *l)
{
	return container_of(l, struct pea_fprobe_link, link);
}

static bool pea_fp_is_ret(const struct pea_link *l)
{
	return l->flags & PEA_FPROBE_F_RETURN;
}

/*
 * The function at @ip, or NULL: not one of the link's, or one whose
 * module is gone (its address may be another module's function now).
 */
static const struct pea_fp_func *pea_fp_find(struct pea_fprobe_link *f,
					     unsigned long ip)
{
	u32 lo = 0, hi = f->nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (f->funcs[mid].ip == ip)
			return READ_ONCE(f->funcs[mid].gone) ?
			       NULL : &f->funcs[mid];
		if (f->funcs[mid].ip < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The id records of @fn carry. */
static u64 pea_fp_id(struct pea_fprobe_link *f, const struct pea_fp_func *fn)
{
	return f->link.rec_id + (u64)f->id_step * fn->index;
}

static int pea_fp_hit(struct fprobe *fp, unsigned long ip,
		      unsigned long ret_ip, struct pt_regs *regs, void *data)
{
	struct pea_fprobe_link *f = container_of(fp, struct pea_fprobe_link,
						 fp);
	struct pea_link *l = &f->link;
	const struct pea_fp_func *fn = pea_fp_find(f, ip);
	u64 args[6];

	if (!fn || pea_link_filtered(l))
		return 0;
	pea_read_args(regs, args);
	pea_probe_hit_at(l, pea_fp_id(f, fn), ip, args, 0, regs);
	return 0;
}

static u64 *pea_fp_kstack(struct pea_fprobe_link *f, void *data)
{
	return (u64 *)((u8 *)data + f->kstack_off);
}

/* A return link's entry: 0 keeps the call (its return is hooked). */
static int pea_fp_ret_entry(struct fprobe *fp, unsigned long ip,
			    unsigned long ret_ip, struct pt_regs *regs,
			    void *data)
{
	struct pea_fprobe_link *f = container_of(fp, struct pea_fprobe_link,
						 fp);
	struct pea_fp_entry *e = data;
	struct pea_link *l = &f->link;

	if (!pea_fp_find(f, ip))
		return 1;
	/*
	 * Where RCU is not watching (Debian's 6.12 lets fprobe run there):
	 * nothing of the link is touched, the hit counts as missed (review
	 * of fprobe links, F3).
	 */
	if (!rcu_is_watching()) {
		this_cpu_inc(l->stats->missed);
		return 1;
	}
	/* The CPU filter applies at return, where the record is written. */
	if (pea_link_filtered_tgid(l))
		return 1;
	pea_read_args(regs, e->args);
	e->flags = PEA_REC_F_RETPROBE;
	e->capture_len = 0;
	if (l->capture_mode != PEA_CAPTURE_NONE)
		e->capture_len = pea_capture(l, e->args, e->capture, &e->flags);
	/* The node is this call's alone until its return ran. */
	e->kstack_nr = pea_kstack_save(regs, ip, pea_fp_kstack(f, data),
				       l->kstack_depth);
	e->t0 = ktime_get_mono_fast_ns();
	return 0;
}

static void pea_fp_ret(struct fprobe *fp, unsigned long ip,
		       unsigned long ret_ip, struct pt_regs *regs, void *data)
{
	struct pea_fprobe_link *f = container_of(fp, struct pea_fprobe_link,
						 fp);
	struct pea_fp_entry *e = data;
	struct pea_link *l = &f->link;
	const struct pea_fp_func *fn = pea_fp_find(f, ip);

	if (fn && !pea_link_filtered_cpu(l)) {
		/* As at entry. */
		if (rcu_is_watching())
			pea_link_write_at(l, pea_fp_id(f, fn), ip, regs,
					  e->args,
					  (s64)regs_return_value(regs),
					  ktime_get_mono_fast_ns() - e->t0,
					  e->flags, e->capture, e->capture_len,
					  pea_fp_kstack(f, data), e->kstack_nr);
		else
			this_cpu_inc(l->stats->missed);
	}
}

static int pea_fp_check_attr(const struct pea_fprobe_attr *a)
{
	u32 max = min_t(u32, READ_ONCE(max_fprobe_funcs),
			PEA_FPROBE_FUNCS_MAX);
	int err;

	if (a->flags & ~PEA_FPROBE_FLAGS)
		return -EINVAL;
	if (!a->nr_syms || !a->syms)
		return -EINVAL;
	if (a->nr_syms > max)
		return -E2BIG;
	/* id + nr_syms - 1 must not wrap. */
	if (a->id > U64_MAX - (a->nr_syms - 1))
		return -EINVAL;
	if (a->maxactive > PEA_FPROBE_MAXACTIVE_MAX ||
	    (a->maxactive && !(a->flags & PEA_FPROBE_F_RETURN)))
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

static int pea_fp_kprobe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	return 0;	/* never armed */
}

static int pea_fp_func_cmp(const void *a, const void *b)
{
	const struct pea_fp_func *x = a, *y = b;

	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	return 0;
}

/*
 * A module going (or its init memory freed, MODULE_STATE_LIVE): its
 * functions on @f's list are gone before a later module can take their
 * addresses. Runs in process context, before the module's memory goes.
 */
static int pea_fp_module(struct notifier_block *nb, unsigned long state,
			 void *data)
{
	struct pea_fprobe_link *f = container_of(nb, struct pea_fprobe_link,
						 nb);
	struct module *mod = data;
	u32 i;

	if (state != MODULE_STATE_GOING && state != MODULE_STATE_LIVE)
		return NOTIFY_DONE;
	mutex_lock(&f->lock);
	for (i = 0; i < f->nr; i++) {
		unsigned long ip = f->funcs[i].ip;

		if (state == MODULE_STATE_GOING ? within_module(ip, mod) :
		    within_module_init(ip, mod))
			WRITE_ONCE(f->funcs[i].gone, true);
	}
	mutex_unlock(&f->lock);
	return NOTIFY_DONE;
}

/*
 * Register @kp, a disabled kprobe on @name. register_kprobe() looks the
 * name up, then the address's module: a module freed between the two
 * (its unload racing the attach) answers EINVAL, as an address in no
 * text would. Looked up again, the name is gone (ENOENT) or another
 * load's, so an EINVAL is tried again, a few times: a notrace or
 * blacklisted function answers EINVAL every time.
 */
static int pea_fp_kprobe(struct kprobe *kp, const char *name)
{
	int err, tries = 0;

	do {
		memset(kp, 0, sizeof(*kp));
		kp->symbol_name = name;
		kp->flags = KPROBE_FLAG_DISABLED;
		kp->pre_handler = pea_fp_kprobe_pre;
		err = register_kprobe(kp);
	} while (err == -EINVAL && ++tries < PEA_FP_RESOLVE_TRIES);
	return err;
}

/*
 * Resolve and judge @f's functions, named by @names, as kprobes on them
 * are: a disabled kprobe on each, which must sit on an ftrace location,
 * then all unregistered. Then sort the table by address; one function
 * twice is EINVAL. Under @f->lock: pea_fp_module() reads the table.
 */
static int pea_fp_resolve(struct pea_fprobe_link *f,
			  const char (*names)[PEA_SYM_LEN])
{
	struct kprobe *kps, **kpp;
	u32 i, n = 0;
	int err = 0;

	/* The caller's, for the attach's length (max_fprobe_funcs of each). */
	kps = kvcalloc(f->nr, sizeof(*kps), GFP_KERNEL_ACCOUNT);
	kpp = kvcalloc(f->nr, sizeof(*kpp), GFP_KERNEL_ACCOUNT);
	if (!kps || !kpp) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < f->nr && !err; i++) {
		/* A killed caller stops here: thousands of names take long. */
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		err = pea_fp_kprobe(&kps[i], names[i]);
		if (err)
			break;
		kpp[n++] = &kps[i];
		/* No ftrace location at its entry: notrace, nothing to hook. */
		if (!(kps[i].flags & KPROBE_FLAG_FTRACE))
			err = -EINVAL;
		mutex_lock(&f->lock);
		f->funcs[i].ip = (unsigned long)kps[i].addr;
		f->funcs[i].index = i;
		mutex_unlock(&f->lock);
	}
	/*
	 * A module that went before its function's address was in the
	 * table, which pea_fp_module() reads: the kprobe layer marked its
	 * kprobe gone. One that goes after it is pea_fp_module()'s.
	 */
	for (i = 0; i < n && !err; i++)
		if (kprobe_gone(kpp[i]))
			err = -ENOENT;
	if (n)
		unregister_kprobes(kpp, n);	/* one grace period for all */
	if (err)
		goto out;
	mutex_lock(&f->lock);
	sort(f->funcs, f->nr, sizeof(*f->funcs), pea_fp_func_cmp, NULL);
	for (i = 1; i < f->nr; i++)
		if (f->funcs[i].ip == f->funcs[i - 1].ip)
			err = -EINVAL;
	mutex_unlock(&f->lock);
out:
	kvfree(kpp);
	kvfree(kps);
	return err;
}

/* Copy the names and resolve them (pea_fp_resolve()). */
static int pea_fp_funcs(struct pea_fprobe_link *f,
			const struct pea_fprobe_attr *a)
{
	char (*names)[PEA_SYM_LEN];
	u32 i;
	int err;

	names = vmemdup_user(u64_to_user_ptr(a->syms),
			     (size_t)a->nr_syms * PEA_SYM_LEN);
	if (IS_ERR(names))
		return PTR_ERR(names);
	for (i = 0; i < a->nr_syms; i++) {
		if (!names[i][0] || !memchr(names[i], 0, PEA_SYM_LEN)) {
			kvfree(names);
			return -EINVAL;
		}
	}
	err = pea_fp_resolve(f, (const char (*)[PEA_SYM_LEN])names);
	if (!err) {
		memcpy(f->link.symbol, names[0], PEA_SYM_LEN);
		for (i = 0; i < f->nr; i++)
			if (!f->funcs[i].index)
				f->link.addr = f->funcs[i].ip;
	}
	kvfree(names);
	return err;
}

/* Whether a module of @f's functions went (pea_fp_module()). */
static bool pea_fp_any_gone(struct pea_fprobe_link *f)
{
	bool gone = false;
	u32 i;

	mutex_lock(&f->lock);
	for (i = 0; i < f->nr && !gone; i++)
		gone = f->funcs[i].gone;
	mutex_unlock(&f->lock);
	return gone;
}

/*
 * Register the fprobe on every function at once; its handlers find the
 * table, sorted already, from the first hit. A module gone since its
 * function's name was resolved fails the attach, ENOENT, as a kprobe on
 * it would: seen here, or by ftrace, which refuses an address whose
 * module released its records (EINVAL; the module notifier marked it
 * gone before, under @f->lock, which orders the two). Once registered the
 * attach does not fail: a module going from then on leaves its functions
 * gone (never recorded), as a kprobe whose module goes stays registered.
 * Not covered: a module whose load fails after its COMING notifiers
 * (prepare_coming_module()) is released without a GOING for the link's
 * notifier, which did not see it coming: an attach that resolved one of
 * its functions meanwhile answers EINVAL, or keeps the function without
 * its gone mark (root's module load failing within microseconds; the
 * review of fpret, note 1).
 */
static int pea_fp_register(struct pea_link *l, const void *arg)
{
	struct pea_fprobe_link *f = pea_fp(l);
	unsigned long *ips;
	u32 i;
	int err;

	ips = kvcalloc(f->nr, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		return -ENOMEM;
	for (i = 0; i < f->nr; i++)
		ips[i] = f->funcs[i].ip;
	err = pea_fp_any_gone(f) ? -ENOENT :
	      register_fprobe_ips(&f->fp, ips, f->nr);
	kvfree(ips);
	if (err == -EINVAL && pea_fp_any_gone(f))
		err = -ENOENT;
	f->registered = !err;
	return err;
}

/**
 * pea_fprobe_attach() - PEA_MAP_IOC_ATTACH_FPROBE: one producer on many
 * functions
 * @map: the map the producer writes into (the ioctl's map fd)
 * @ua: struct pea_fprobe_attr in user memory
 *
 * Return: a link fd, or what pea_kprobe_attach() answers for the same
 * attr fields in the same order (-EACCES, -EPERM, -E2BIG, -EFAULT,
 * -EINVAL, -EOPNOTSUPP, -EOVERFLOW, -EMLINK, -ENOMEM, -EMFILE), -E2BIG
 * (@nr_syms past max_fprobe_funcs), -EINVAL (no names, an empty or
 * unterminated name, a function twice, maxactive past
 * PEA_FPROBE_MAXACTIVE_MAX or without PEA_FPROBE_F_RETURN, @id + @nr_syms
 * wrapping), and for a function what a kprobe on it is answered
 * (-ENOENT, -EINVAL for the kprobe blacklist or a notrace function,
 * -EILSEQ ...).
 */
static long pea_fprobe_attach(struct pea_map *map, const void __user *ua)
{
	struct pea_kprobe_common c;
	struct pea_fprobe_link *f;
	struct pea_fprobe_attr a;
	struct pea_link *l;
	size_t data = 0;
	long err;

	err = pea_perm_kprobe();
	if (err)
		return err;
	err = pea_link_copy_attr(&a, sizeof(a), PEA_FPROBE_ATTR_SIZE_VER0, ua);
	if (err)
		return err;
	err = pea_fp_check_attr(&a);
	if (err)
		return err;
	/* A kprobe link's fields, rules and privilege for each function. */
	c = (struct pea_kprobe_common){
		.id = a.id, .flags = a.flags, .filter_tgid = a.filter_tgid,
		.filter_cpu = a.filter_cpu,
		.ret = a.flags & PEA_FPROBE_F_RETURN,
		.fetches = a.fetches, .nr_fetches = a.nr_fetches,
		.fetch_reserved = a.reserved2,
		.preds = a.preds, .nr_preds = a.nr_preds,
		.pred_reserved = a.reserved3,
		.capture_arg = a.capture_arg, .capture_mode = a.capture_mode,
		.capture_len = a.capture_len, .capture_flags = a.capture_flags,
		.kstack_depth = a.kstack_depth, .ustack_depth = a.ustack_depth,
	};
	l = pea_kprobe_link_alloc(map, &pea_fprobe_provider, &c);
	if (IS_ERR(l))
		return PTR_ERR(l);
	f = pea_fp(l);
	mutex_init(&f->lock);
	f->nr = a.nr_syms;
	f->id_step = a.id ? 1 : 0;
	if (a.flags & PEA_FPROBE_F_RETURN) {
		f->kstack_off = pea_kstack_offset(sizeof(struct pea_fp_entry) +
				(a.capture_mode ? a.capture_len + 1 : 0));
		data = f->kstack_off + a.kstack_depth * sizeof(u64);
		/* fprobe's default, made explicit and bounded: it is charged. */
		f->fp.nr_maxactive = a.maxactive ? a.maxactive :
			min_t(u64, (u64)a.nr_syms * 2 * num_possible_cpus(),
			      PEA_FPROBE_MAXACTIVE_MAX);
		f->fp.entry_data_size = data;
		f->fp.entry_handler = pea_fp_ret_entry;
		f->fp.exit_handler = pea_fp_ret;
	} else {
		f->fp.entry_handler = pea_fp_hit;
	}
	/*
	 * Charged before anything is allocated for the functions (the
	 * kprobes that judge them live only during the attach).
	 */
	err = pea_link_charge(l, pea_fetch_size(l->fetch) +
			      pea_pred_size(l->pred) +
			      (size_t)f->nr * sizeof(*f->funcs) +
			      pea_fprobe_mem(f->nr, f->fp.nr_maxactive, data));
	if (!err) {
		f->funcs = kvcalloc(f->nr, sizeof(*f->funcs),
				    GFP_KERNEL_ACCOUNT);
		if (!f->funcs)
			err = -ENOMEM;
	}
	/* Before the names are resolved: no module goes unseen. */
	if (!err) {
		f->nb.notifier_call = pea_fp_module;
		err = register_module_notifier(&f->nb);
		f->nb_registered = !err;
	}
	if (!err)
		err = pea_fp_funcs(f, &a);
	if (err) {
		pea_link_free(l);
		return err;
	}
	return pea_link_install(l, a.flags & PEA_FPROBE_F_CLOEXEC, &a);
}

static void pea_fp_unregister(struct pea_link *l)
{
	struct pea_fprobe_link *f = pea_fp(l);

	/*
	 * ftrace waits until no handler runs; a return in flight after it
	 * finds its rethook stopped and calls nothing of this link.
	 */
	if (f->registered)
		unregister_fprobe(&f->fp);
	f->registered = false;
}

/*
 * A return link at close. Unregistering the fprobe stops its rethook
 * (rethook_stop(), then ftrace's grace periods: no handler of the link
 * runs any more) and frees it (rethook_free(): after an RCU grace period
 * objpool_fini() drops the pool's own reference and the nodes it holds).
 * A call in flight then returns without calling the link, and its node
 * drops the reference it holds (rethook_recycle(), objpool_drop()); the
 * last one frees the pool (kernel/trace/rethook.c, lib/objpool.c). So
 * the kernel keeps memory of the link exactly while the pool's count
 * says so: the link takes a reference of its own first, and is retired,
 * charged, while any other is left (pea_fp_busy()); pea_fp_free() drops
 * it. Nothing else of the link is in the kernel's hands: the nodes call
 * nothing of it, and rethook_free() never touches @rh->data (&f->fp).
 */
static bool pea_fp_retire(struct pea_link *l)
{
	struct pea_fprobe_link *f = pea_fp(l);
	struct rethook *rh = f->fp.rethook;

	if (!pea_fp_is_ret(l) || !f->registered || IS_ERR_OR_NULL(rh))
		return false;
	/* Registered: the pool's own reference is still there. */
	refcount_inc(&rh->pool.ref);
	f->held = rh;
	unregister_fprobe(&f->fp);
	f->registered = false;
	/*
	 * rethook_free()'s objpool_fini(), and the drops of the nodes that
	 * returned meanwhile, are RCU callbacks: once they ran, a link with
	 * no call in flight is freed now, as before it had a pool to hold.
	 */
	rcu_barrier();
	return refcount_read(&rh->pool.ref) > 1;
}

/*
 * Retired: whether the kernel still holds the pool (its own reference
 * until the grace period after the unregister, a node's until its call
 * returned or its task was flushed). Called by the retired links' work
 * item (pea_link.c); reads one count.
 */
static bool pea_fp_busy(struct pea_link *l)
{
	return refcount_read(&pea_fp(l)->held->pool.ref) > 1;
}

/*
 * After the fprobe is gone (or was never registered). A held pool whose
 * count is still above one (module unload: pea_links_exit()) is freed by
 * its last node, as after any unregister.
 */
static void pea_fp_free(struct pea_link *l)
{
	struct pea_fprobe_link *f = pea_fp(l);

	/* Waits for a notifier call in progress. */
	if (f->nb_registered)
		unregister_module_notifier(&f->nb);
	kvfree(f->funcs);
	if (f->held)
		objpool_drop(f->held, &f->held->pool);
}

/*
 * Missed: fprobe's own count (recursion, no node left), and the hits
 * where RCU was not watching.
 */
static void pea_fp_info(struct pea_link *l, const struct pea_link_stats *sum,
			struct pea_link_info *info)
{
	info->missed = READ_ONCE(pea_fp(l)->fp.nmissed) + sum->missed;
}

const struct pea_provider pea_fprobe_provider = {
	.link_size = sizeof(struct pea_fprobe_link),
	.attach = pea_fprobe_attach,
	.reg = pea_fp_register,
	.unregister = pea_fp_unregister,
	.retire = pea_fp_retire,
	.busy = pea_fp_busy,
	.free = pea_fp_free,
	.info = pea_fp_info,
	.agg_check = pea_probe_agg_check,
};
