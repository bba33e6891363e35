// SPDX-License-Identifier: GPL-2.0
/*
 * pea: sampling producers.
 *
 * PEA_MAP_IOC_ATTACH_SAMPLE on a map fd attaches a sampler and returns a
 * link fd (the link rules of pea_link.c). The producer is a kernel perf
 * event per online CPU (perf_event_create_kernel_counter(), pid -1):
 * cpu-clock, whose hrtimer overflows in hardirq context, or a hardware
 * event, whose PMU interrupt is an NMI on x86, at a frequency or a
 * period, with sample_type 0 and an overflow handler instead of a perf
 * ring. perf calls the handler once per overflow it does not throttle,
 * with the interrupted registers.
 *
 * With PEA_SAMPLE_F_TASK it is one kernel perf event of a task instead,
 * with attr.inherit: perf_event_open(pid, cpu) of the same event. perf
 * clones it, with its overflow handler and context, into each task the
 * sampled ones create (inherit_event()), and the release of the parent
 * releases the clones. The rule is then perf's for a task's event:
 * pea_perm_task() under the task's exec_update_lock, held until the
 * event is installed, as perf_event_open() holds it.
 *
 * The handler writes one struct pea_sample_record into this CPU's ring
 * (pea_output_reserve(): no lock, no allocation): the task, the
 * interrupted address, the kernel stack when the interrupt came in the
 * kernel (pea_kstack.c, from the interrupted registers) and the user
 * stack of the task (pea_ustack.c: its user registers, the interrupted
 * ones or those it entered the kernel with, then frame pointers with
 * non-faulting copies). Both stacks go into the link's scratch space of
 * this CPU first (allocated at attach, charged to the attacher), so that
 * the record is reserved at its exact size.
 *
 * With PEA_SAMPLE_F_USER_REGS the record also ends with the task's user
 * registers and a copy of the top of its user stack (pea_uregs.c: struct
 * pea_user_regs, perf's PERF_SAMPLE_REGS_USER and _STACK_USER), copied
 * into a scratch buffer of this CPU too (allocated at attach, charged),
 * for the same reason: the copy stops at the first page that cannot be
 * read, and the record holds what was copied, not what was asked for.
 *
 * With a table (PEA_LINK_IOC_AGG_CREATE) each sample is counted there
 * too, keyed by its stacks (PEA_AGG_KEY_KSTACK, _USTACK: the ones the
 * handler unwound) and the task; with PEA_AGG_F_NO_RECORDS only there,
 * which no full ring can lose (pea_agg.c).
 *
 * Counts (PEA_LINK_IOC_INFO): hits are the overflows of the process the
 * link filters on (all of them without a filter), filtered the other
 * tasks' overflows, written the records, dropped the overflows the ring
 * had no room for (its lost count and PERF_RECORD_LOST report them),
 * errors the other overflows without a record (a nested call, which
 * cannot happen: struct pea_sample_cpu). So records + lost == overflows
 * for a reader that drains the rings.
 */
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include "pea_internal.h"
#include "pea_agg.h"
#include "pea_link.h"
#include "pea_provider.h"
#include "pea_kstack.h"
#include "pea_ustack.h"
#include "pea_uregs.h"
#include "pea_perm.h"

/*
 * A CPU's scratch space of one link: the stacks, before the record is
 * reserved. One event's handler does not nest in itself on its CPU (a
 * PMU's NMI handler or an hrtimer callback is not re-entered), so one
 * slot per CPU serves; @busy makes that an assertion: a nested call
 * would count an error instead of overwriting the slot.
 */
struct pea_sample_cpu {
	int busy;
	u64 ips[];	/* kstack_depth kernel, then ustack_depth user */
};

/* A sampling link: the link, then one kernel perf event per CPU. */
struct pea_sample_link {
	struct pea_link link;	/* first: pea_link_free() frees it */
	struct perf_event **events;	/* nr_events entries, NULL if none */
	unsigned int nr_events;	/* nr_cpu_ids, or 1 for a task's */
	struct pea_sample_cpu __percpu *cpu;
	u32 ustack_depth;
	u32 max_stack;		/* both parts together, at most */
	u32 stack_user;		/* with PEA_SAMPLE_F_USER_REGS */
	/*
	 * With it, per possible CPU: a struct pea_user_regs and stack_user
	 * bytes, which @busy guards as the ips; kvmalloc'ed, since up to 64
	 * KiB is past what a per-CPU allocation takes (PCPU_MIN_UNIT_SIZE).
	 */
	void **ubuf;
};

static_assert(offsetof(struct pea_sample_link, link) == 0);

static struct pea_sample_link *pea_sl(struct pea_link *l)
{
	return container_of(l, struct pea_sample_link, link);
}

/*
 * The interrupted address; for a user-only event (exclude_kernel) that a
 * PMU's skid let overflow in the kernel, the user's (or 0 for none): a
 * sampler the kernel rule did not admit never sees a kernel address.
 */
static u64 pea_sample_ip(struct pea_link *l, struct pt_regs *regs, bool user)
{
	struct pt_regs *uregs;

	if (user || !(l->flags & PEA_SAMPLE_F_NO_KERNEL))
		return instruction_pointer(regs);
	uregs = pea_ustack_regs(regs);
	return uregs ? instruction_pointer(uregs) : 0;
}

static void pea_sample_overflow(struct perf_event *event,
				struct perf_sample_data *data,
				struct pt_regs *regs)
{
	struct pea_link *l = event->overflow_handler_context;
	struct pea_sample_link *sl = pea_sl(l);
	u32 kdepth = l->kstack_depth, knr = 0, unr = 0, urn = 0;
	struct task_struct *task = current;
	struct pea_agg_sample as = {};
	struct pea_output_handle h;
	struct pea_sample_record *r;
	struct pea_user_regs *ur;
	struct pea_sample_cpu *sc;
	bool user = user_mode(regs);
	long err;

	if (pea_link_filtered_tgid(l))
		return;
	sc = this_cpu_ptr(sl->cpu);
	if (sc->busy) {
		pea_link_count_hit(l);
		this_cpu_inc(l->stats->errors);
		return;
	}
	sc->busy = 1;
	barrier();	/* the slot is ours from here (this CPU only) */
	if (!user && kdepth)
		knr = pea_kstack_save(regs, 0, sc->ips, kdepth);
	/* One budget for both parts, as perf_event_max_stack is perf's. */
	if (sl->ustack_depth && knr < sl->max_stack)
		unr = pea_ustack_save(regs, sc->ips + kdepth,
				      min(sl->ustack_depth,
					  sl->max_stack - knr));
	as.kips = sc->ips;
	as.knr = knr;
	as.uips = sc->ips + kdepth;
	as.unr = unr;
	/* In the table only (PEA_AGG_F_NO_RECORDS): no record attempted. */
	if (pea_agg_hit(l, &as))
		goto out;
	pea_link_count_hit(l);
	ur = sl->ubuf ? sl->ubuf[smp_processor_id()] : NULL;
	if (ur)
		urn = pea_uregs_save(regs, ur, sl->stack_user);
	err = pea_output_reserve(l->map, PEA_F_CURRENT_CPU,
				 sizeof(*r) + (knr + unr) * sizeof(u64) + urn,
				 &h);
	if (err) {
		pea_link_count_err(l, err);
		goto out;
	}
	/* header.misc by where the overflow came, as perf_misc_flags(). */
	if (user)
		pea_ring_set_user(&h);
	r = h.data;
	r->time_ns = ktime_get_mono_fast_ns();
	r->id = l->rec_id;
	r->ip = pea_sample_ip(l, regs, user);
	r->cpu = smp_processor_id();
	r->pid = task_pid_nr_ns(task, l->pid_ns);
	r->tgid = task_tgid_nr_ns(task, l->pid_ns);
	/*
	 * As perf_event_pid(): a task its parent is reaping on another CPU
	 * (still running to its last switch) has no pid any more; -1, not
	 * idle's 0.
	 */
	if (!pid_alive(task)) {
		r->pid = (u32)-1;
		r->tgid = (u32)-1;
	}
	r->flags = PEA_REC_F_SAMPLE | (user ? PEA_REC_F_USER_MODE : 0) |
		   (urn ? PEA_REC_F_UREGS : 0);
	r->reserved = 0;
	strscpy_pad(r->comm, task->comm, sizeof(r->comm));
	r->period = data->period;
	r->kstack_nr = knr;
	r->ustack_nr = unr;
	r->reserved2 = 0;
	memcpy(r->ips, sc->ips, knr * sizeof(u64));
	memcpy(r->ips + knr, sc->ips + kdepth, unr * sizeof(u64));
	memcpy(r->ips + knr + unr, ur, urn);
	pea_output_commit(&h);
	this_cpu_inc(l->stats->written);
out:
	barrier();
	sc->busy = 0;
}

/**
 * pea_sample_unregister() - release a sampling link's perf events
 * @l: the link
 *
 * perf_event_release_kernel() removes each event from its CPU (an IPI
 * that cannot run while the handler runs there: it runs with interrupts
 * off, or in NMI, which the PMU's stop waits out); the grace period then
 * covers any reader of the event list still walking it. After this no
 * handler of @l runs.
 */
static void pea_sample_unregister(struct pea_link *l)
{
	struct pea_sample_link *sl = pea_sl(l);
	unsigned int cpu;

	if (!sl->events)
		return;
	for (cpu = 0; cpu < sl->nr_events; cpu++)
		if (sl->events[cpu])
			perf_event_release_kernel(sl->events[cpu]);
	synchronize_rcu();
	kfree(sl->events);
	sl->events = NULL;
}

/* The event of @cpu (-1 with @task) in slot @slot. */
static int pea_sample_create(struct pea_link *l, struct perf_event_attr *attr,
			     int cpu, struct task_struct *task,
			     unsigned int slot)
{
	struct perf_event *ev;

	ev = perf_event_create_kernel_counter(attr, cpu, task,
					      pea_sample_overflow, l);
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	pea_sl(l)->events[slot] = ev;
	return 0;
}

/* The perf event of @a (sample_period and sample_freq share a union). */
static void pea_sample_perf_attr(const struct pea_sample_attr *a,
				 struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = a->type;
	attr->size = sizeof(*attr);
	attr->config = a->config;
	attr->sample_period = a->sample;
	attr->freq = !!(a->flags & PEA_SAMPLE_F_FREQ);
	attr->exclude_kernel = !!(a->flags & PEA_SAMPLE_F_NO_KERNEL);
	attr->exclude_user = !!(a->flags & PEA_SAMPLE_F_NO_USER);
	attr->inherit = !!(a->flags & PEA_SAMPLE_F_TASK);
}

/* What reg is handed: the attr, and the task of PEA_SAMPLE_F_TASK. */
struct pea_sample_req {
	const struct pea_sample_attr *attr;
	struct task_struct *task;
};

/*
 * The CPU-wide rule (perf_allow_cpu(): paranoid <= 0 or CAP_PERFMON),
 * before pea takes a link slot or memory: for a caller it refuses, ask
 * perf_event_create_kernel_counter() for the event, disabled, which
 * answers what perf_event_open() answers in its order (the PMU's ENOENT,
 * then EACCES from find_get_context(), with the LSM hook) and keeps
 * nothing. Return: 0 or that error.
 */
static int pea_sample_cpu_rule(const struct pea_sample_attr *a)
{
	struct perf_event_attr attr;
	struct perf_event *ev;
	int cpu;

	if (pea_perf_paranoid() <= 0 || perfmon_capable())
		return 0;
	pea_sample_perf_attr(a, &attr);
	attr.disabled = 1;
	cpu = a->filter_cpu >= 0 ? a->filter_cpu :
	      cpumask_first(cpu_online_mask);
	ev = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	perf_event_release_kernel(ev);
	return 0;
}

/*
 * For a task's sampler, the PMU's answer (ENOENT without one, the
 * event_init's EINVAL or EOPNOTSUPP) before the task's rule, as
 * perf_event_open() allocates the event before perf_check_permission():
 * a disabled event on a CPU, released at once; its CPU-wide refusal
 * (EACCES, which comes after the PMU's) is not this mode's rule and is
 * ignored. Return: 0 or the PMU's error.
 */
static int pea_sample_pmu_first(const struct pea_sample_attr *a)
{
	struct perf_event_attr attr;
	struct perf_event *ev;

	pea_sample_perf_attr(a, &attr);
	attr.disabled = 1;
	attr.inherit = 0;
	ev = perf_event_create_kernel_counter(&attr,
					      cpumask_first(cpu_online_mask),
					      NULL, NULL, NULL);
	if (IS_ERR(ev))
		return PTR_ERR(ev) == -EACCES ? 0 : PTR_ERR(ev);
	perf_event_release_kernel(ev);
	return 0;
}

static int pea_sample_register(struct pea_link *l, const void *arg)
{
	const struct pea_sample_req *req = arg;
	const struct pea_sample_attr *a = req->attr;
	struct pea_sample_link *sl = pea_sl(l);
	struct perf_event_attr attr;
	unsigned int cpu, nr = a->filter_cpu >= 0 ? 1 : num_online_cpus();
	size_t scratch = struct_size_t(struct pea_sample_cpu, ips,
				       a->kstack_depth + a->ustack_depth);
	size_t ubuf = a->flags & PEA_SAMPLE_F_USER_REGS ?
		      sizeof(struct pea_user_regs) + a->stack_user : 0;
	int err;

	pea_sample_perf_attr(a, &attr);
	/*
	 * A task's event: one; the clones perf makes for the tasks it
	 * creates are perf's, bounded as those of perf_event_open() with
	 * inherit, by the tasks the user may create.
	 */
	sl->nr_events = req->task ? 1 : nr_cpu_ids;
	if (req->task)
		nr = 1;
	/* Events array, scratch space, a perf event per CPU sampled. */
	err = pea_link_charge(l, kmalloc_size_roundup(sl->nr_events *
						      sizeof(*sl->events)) +
			      scratch * num_possible_cpus() +
			      (ubuf ? kmalloc_size_roundup(nr_cpu_ids *
							   sizeof(void *)) +
			       kmalloc_size_roundup(ubuf) *
			       num_possible_cpus() : 0) +
			      nr * sizeof(struct perf_event));
	if (err)
		return err;
	if (ubuf) {
		sl->ubuf = kcalloc(nr_cpu_ids, sizeof(*sl->ubuf),
				   GFP_KERNEL_ACCOUNT);
		if (!sl->ubuf)
			return -ENOMEM;
		for_each_possible_cpu(cpu) {
			sl->ubuf[cpu] = kvmalloc_node(ubuf, GFP_KERNEL_ACCOUNT,
						      cpu_to_node(cpu));
			if (!sl->ubuf[cpu])
				return -ENOMEM;
		}
	}
	sl->cpu = __alloc_percpu_gfp(scratch, __alignof__(u64),
				     GFP_KERNEL_ACCOUNT);
	if (!sl->cpu)
		return -ENOMEM;
	sl->events = kcalloc(sl->nr_events, sizeof(*sl->events),
			     GFP_KERNEL_ACCOUNT);
	if (!sl->events)
		return -ENOMEM;
	/* A task's, or one CPU's: its errors are the answer. */
	if (req->task || a->filter_cpu >= 0) {
		err = pea_sample_create(l, &attr, a->filter_cpu, req->task,
					req->task ? 0 : a->filter_cpu);
		goto out;
	}
	/*
	 * As pea_tp.c, not under cpus_read_lock(): a CPU that goes offline
	 * meanwhile gives -ENODEV and is skipped; one that comes online is
	 * not sampled, as one that comes online later.
	 */
	for_each_online_cpu(cpu) {
		err = pea_sample_create(l, &attr, cpu, NULL, cpu);
		if (err == -ENODEV)
			err = 0;
		if (err)
			break;
	}
out:
	if (err)
		pea_sample_unregister(l);
	return err;
}

/*
 * The task of @vpid in the caller's pid namespace (0: the caller), held,
 * as find_lively_task_by_vpid(), or ERR_PTR(-ESRCH).
 */
static struct task_struct *pea_sample_find_task(pid_t vpid)
{
	struct task_struct *task;
	struct pid *pid;

	if (!vpid) {
		get_task_struct(current);
		return current;
	}
	pid = find_get_pid(vpid);
	task = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
	put_pid(pid);
	return task ?: ERR_PTR(-ESRCH);
}

/*
 * With PEA_SAMPLE_F_USER_REGS, @stack_user as perf_copy_attr() checks
 * sample_stack_user with PERF_SAMPLE_STACK_USER (below USHRT_MAX, a
 * multiple of 8: EINVAL). perf_event_open() copies and checks its attr
 * before any permission check, so this comes before pea_perm_sample()
 * (review of dwunw, finding 1). What perf does not refuse (its
 * sample_stack_user without PERF_SAMPLE_STACK_USER, user registers with
 * exclude_user) is pea's own rule, checked after the permission checks
 * as pea's other reserved fields are (pea_sample_check_uregs_rules();
 * review of dwunw's fix, finding 1).
 */
static int pea_sample_check_uregs_attr(const struct pea_sample_attr *a)
{
	if (!(a->flags & PEA_SAMPLE_F_USER_REGS))
		return 0;
	if (a->stack_user > PEA_STACK_USER_MAX ||
	    !IS_ALIGNED(a->stack_user, sizeof(u64)))
		return -EINVAL;
	return 0;
}

/* @stack_user only with user registers, never without the user's context. */
static int pea_sample_check_uregs_rules(const struct pea_sample_attr *a)
{
	if (a->reserved3)
		return -EINVAL;
	if (!(a->flags & PEA_SAMPLE_F_USER_REGS))
		return a->stack_user ? -EINVAL : 0;
	return a->flags & PEA_SAMPLE_F_NO_USER ? -EINVAL : 0;
}

/*
 * With PEA_SAMPLE_F_USER_REGS, the record at its largest in one record
 * (E2BIG, as a payload past a record is for pea_output()), once the
 * stack depths are checked.
 */
static int pea_sample_check_uregs(const struct pea_sample_attr *a)
{
	u64 max;

	if (!(a->flags & PEA_SAMPLE_F_USER_REGS))
		return 0;
	max = sizeof(struct pea_sample_record) +
	      ((u64)a->kstack_depth + a->ustack_depth) * sizeof(u64) +
	      sizeof(struct pea_user_regs) + a->stack_user;
	return max > PEA_SAMPLE_RECORD_MAX ? -E2BIG : 0;
}

static int pea_sample_check_attr(const struct pea_sample_attr *a)
{
	bool nok = a->flags & PEA_SAMPLE_F_NO_KERNEL;
	bool nou = a->flags & PEA_SAMPLE_F_NO_USER;
	int err;

	if ((a->flags & ~PEA_SAMPLE_FLAGS) || a->reserved ||
	    pea_sample_check_uregs_rules(a))
		return -EINVAL;
	if (nok && nou)
		return -EINVAL;	/* nothing left to sample */
	if (a->type == PERF_TYPE_SOFTWARE) {
		if (a->config != PERF_COUNT_SW_CPU_CLOCK)
			return -EINVAL;
	} else if (a->type != PERF_TYPE_HARDWARE) {
		return -EINVAL;
	}
	/*
	 * Branch instructions at period 1 is BTS on Intel
	 * (intel_pmu_has_bts_period()), whose records perf writes into the
	 * event's own ring, which a kernel counter has none of: a sampler
	 * that would never fire, holding the LBR. Refused, PMU or not.
	 */
	if (a->type == PERF_TYPE_HARDWARE &&
	    (a->config & PERF_HW_EVENT_MASK) ==
	    PERF_COUNT_HW_BRANCH_INSTRUCTIONS &&
	    !(a->flags & PEA_SAMPLE_F_FREQ) && a->sample == 1)
		return -EOPNOTSUPP;
	if (a->flags & PEA_SAMPLE_F_FREQ) {
		/* As perf_event_open(): past the sysctl is EINVAL. */
		if (!a->sample || a->sample > pea_perf_max_sample_rate())
			return -EINVAL;
	} else if (!a->sample || (a->sample & (1ULL << 63))) {
		return -EINVAL;
	}
	if (a->filter_tgid < 0 || a->filter_cpu < -1 ||
	    a->filter_cpu >= (int)nr_cpu_ids)
		return -EINVAL;
	if ((nok && a->kstack_depth) || (nou && a->ustack_depth))
		return -EINVAL;
	err = pea_kstack_check(a->kstack_depth, 0);
	if (err)
		return err;
	if (a->ustack_depth > PEA_USTACK_MAX)
		return -EINVAL;
	if (a->ustack_depth > pea_perf_max_stack())
		return -EOVERFLOW;
	return pea_sample_check_uregs(a);
}

/**
 * pea_sample_attach() - PEA_MAP_IOC_ATTACH_SAMPLE: attach a sampler
 * @map: the map the producer writes into (the ioctl's map fd)
 * @ua: struct pea_sample_attr in user memory
 *
 * The attr is copied first (perf_event_open() copies its attr before its
 * checks too): whether the event counts in the kernel decides the rule.
 *
 * Return: a link fd, or -EFAULT, -EINVAL (attr; size below the struct's;
 * a frequency past perf_event_max_sample_rate; a stack depth past
 * PEA_KSTACK_MAX or PEA_USTACK_MAX, or with the mode it cannot see),
 * -E2BIG (attr tail; with PEA_SAMPLE_F_USER_REGS a record past
 * PEA_SAMPLE_RECORD_MAX), -EACCES (as perf_event_open() of the event for
 * every task on a CPU: pea_perm_sample(); with PEA_SAMPLE_F_TASK, for the
 * task: pea_perm_task(), and with PEA_SAMPLE_F_USER_REGS of another
 * process CAP_PERFMON: pea_perm_task_mem()), -ESRCH (PEA_SAMPLE_F_TASK: no such task),
 * -EINTR (a signal while waiting for the task's exec), -EOPNOTSUPP (kstack_depth
 * where pea cannot unwind), -EOVERFLOW (a depth past
 * perf_event_max_stack), -EMLINK (PEA_MAX_LINKS live, or the caller's
 * max_user_links), -ENOENT (no such hardware event: no PMU), -ENODEV
 * (filter_cpu offline), perf's other errors, -ENOMEM (also
 * max_user_probe_kb or max_probe_kb reached), -EMFILE.
 */
static long pea_sample_attach(struct pea_map *map, const void __user *ua)
{
	struct pea_sample_req req = {};
	struct pea_sample_attr a;
	struct pea_link *l;
	bool task = false;
	long err;

	err = pea_link_copy_attr(&a, sizeof(a), sizeof(a), ua);
	if (err)
		return err;
	err = pea_sample_check_uregs_attr(&a);
	if (err)
		return err;
	err = pea_perm_sample(!(a.flags & PEA_SAMPLE_F_NO_KERNEL));
	if (err)
		return err;
	err = pea_sample_check_attr(&a);
	if (err)
		return err;
	req.attr = &a;
	if (a.flags & PEA_SAMPLE_F_TASK) {
		/*
		 * perf_event_open(): the task, the PMU's answer, then under
		 * the task's lock the rule.
		 */
		req.task = pea_sample_find_task(a.filter_tgid);
		if (IS_ERR(req.task))
			return PTR_ERR(req.task);
		err = pea_sample_pmu_first(&a);
		if (err)
			goto put_task;
		err = down_read_interruptible(&req.task->signal->exec_update_lock);
		if (err)
			goto put_task;
		task = true;
		err = pea_perm_task(req.task);
		/*
		 * Another process's stack memory: not on task_ptrace's
		 * ptrace access without the LSM hook (review of dwunw,
		 * finding 2).
		 */
		if (!err && (a.flags & PEA_SAMPLE_F_USER_REGS))
			err = pea_perm_task_mem(req.task);
	} else {
		err = pea_sample_cpu_rule(&a);
	}
	if (err)
		goto unlock;
	/* A task's sampler filters nothing: its clones are other processes. */
	l = pea_link_alloc(map, &pea_sample_provider, a.id, a.flags,
			   task ? 0 : a.filter_tgid, task ? -1 : a.filter_cpu);
	if (IS_ERR(l)) {
		err = PTR_ERR(l);
		goto unlock;
	}
	l->addr = a.config;
	l->kstack_depth = a.kstack_depth;
	pea_sl(l)->ustack_depth = a.ustack_depth;
	pea_sl(l)->max_stack = pea_perf_max_stack();
	pea_sl(l)->stack_user = a.stack_user;
	if (task)
		snprintf(l->symbol, sizeof(l->symbol), "sample:%s:task %d",
			 a.type == PERF_TYPE_SOFTWARE ? "cpu-clock" : "hardware",
			 task_pid_nr_ns(req.task, l->pid_ns));
	else
		snprintf(l->symbol, sizeof(l->symbol), "sample:%s",
			 a.type == PERF_TYPE_SOFTWARE ? "cpu-clock" :
			 "hardware");
	err = pea_link_install(l, a.flags & PEA_SAMPLE_F_CLOEXEC, &req);
unlock:
	if (task)
		up_read(&req.task->signal->exec_update_lock);
put_task:
	if (req.task)
		put_task_struct(req.task);
	return err;
}

/*
 * A sampler's table counts samples (no value) by the stacks its handler
 * unwinds: at most as deep as those, and a kernel stack only where the
 * sampler sees the kernel.
 */
static int pea_sample_agg_check(struct pea_link *l,
				const struct pea_agg_attr *a)
{
	if (a->value != PEA_AGG_VAL_NONE)
		return -EINVAL;
	if (pea_agg_attr_has_key(a, PEA_AGG_KEY_KSTACK) &&
	    a->stack_depth > l->kstack_depth)
		return -EINVAL;
	if (pea_agg_attr_has_key(a, PEA_AGG_KEY_USTACK) &&
	    a->stack_depth > pea_sl(l)->ustack_depth)
		return -EINVAL;
	return 0;
}

/* The scratch space, whether registering got that far or not. */
static void pea_sample_free(struct pea_link *l)
{
	struct pea_sample_link *sl = pea_sl(l);
	unsigned int cpu;

	free_percpu(sl->cpu);
	if (!sl->ubuf)
		return;
	for_each_possible_cpu(cpu)
		kvfree(sl->ubuf[cpu]);
	kfree(sl->ubuf);
}

const struct pea_provider pea_sample_provider = {
	.link_size = sizeof(struct pea_sample_link),
	.attach = pea_sample_attach,
	.reg = pea_sample_register,
	.unregister = pea_sample_unregister,
	.free = pea_sample_free,
	.agg_check = pea_sample_agg_check,
};
