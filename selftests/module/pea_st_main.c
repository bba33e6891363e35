// SPDX-License-Identifier: GPL-2.0
/*
 * pea_selftest: a test-only producer of records for the selftests.
 *
 * /dev/pea_selftest takes ioctls that call pea_output() from task context
 * with chosen arguments, nest reservations until the slots run out, and
 * run a storm: on every online CPU at once, a bound kthread (task), a
 * pinned timer (softirq), a pinned hrtimer (hardirq) and real NMIs (an NMI
 * self-IPI sent by the hrtimer while it holds a reservation, so the NMI
 * writer nests inside the hardirq writer). Every storm record carries its
 * source, a per-source sequence number, the context it saw and a checksum.
 *
 * For counters it calls pea_read_value() and pea_read() from task, hardirq
 * (hrtimer), NMI and kprobe context, and registers a test PMU, "pea_st",
 * with one counter slot per CPU, so that the selftests can force
 * multiplexing in a guest without a hardware PMU, and "pea_st_pkg", whose
 * events live on one designated CPU and move on CPU hotplug, as uncore
 * PMUs' do.
 *
 * PEA_ST_IOC_CONTEXTS writes one record from each execution context a
 * producer may use (task, timer, hrtimer soft and hard, irq_work soft and
 * hard) and reports what each context was: PREEMPT_RT moves the soft ones
 * into preemptible threads.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/timer.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/preempt.h>
#include <linux/completion.h>
#include <linux/kprobes.h>
#include <linux/perf_event.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/device.h>
#include <linux/sched/clock.h>
#include <linux/sched/task.h>
#include <asm/apic.h>
#include <asm/ftrace.h>
#include <asm/nmi.h>
#include <linux/pea.h>
#include "pea_selftest.h"
#include "pea_st_order.h"
#include "pea_st_ctx.h"
#include "pea_st_kstack.h"
#include "pea_st_drop.h"
#include "pea_st_fetch.h"
#include "pea_st_lat.h"
#include "pea_st_fprobe.h"

struct st_cpu {
	struct hrtimer hrtimer;
	struct timer_list timer;
	struct task_struct *kthread;
	unsigned int cpu;
	unsigned int ticks;
	int nmi_pending;
	struct pea_st_counts c[PEA_ST_NR_SOURCES];
};

static DEFINE_PER_CPU(struct st_cpu, st_cpus);
static DEFINE_MUTEX(st_lock);
static struct pea_map *st_map;		/* the storm's map, NULL when idle */
static struct pea_st_storm st_cfg;
static struct pea_map *st_held;		/* PEA_ST_IOC_HOLD's map */
static bool st_stopping;
static bool st_nmi_registered;

static u32 st_ctx(void)
{
	if (in_nmi())
		return PEA_ST_CTX_NMI;
	if (in_hardirq())
		return PEA_ST_CTX_HARDIRQ;
	if (in_serving_softirq())
		return PEA_ST_CTX_SOFTIRQ;
	return PEA_ST_CTX_TASK;
}

static void st_count(struct pea_st_counts *c, long err)
{
	c->attempts++;
	if (!err) {
		c->ok++;
	} else if (err == -ENOSPC) {
		c->nospc++;
	} else {
		c->other++;
		c->last_other = err;
	}
}

static void st_fill(struct pea_output_handle *h, u32 src, u32 cpu, u64 seq)
{
	struct pea_st_record *r = h->data;
	u8 *d = (u8 *)(r + 1);
	u32 len = pea_st_len(src, seq);
	u32 i;

	r->source = src;
	r->cpu = cpu;
	r->seq = seq;
	r->ctx = st_ctx();
	r->len = len;
	r->csum = 0;
	r->pad = 0;
	for (i = 0; i < len; i++)
		d[i] = pea_st_pattern(src, cpu, seq, i);
	r->csum = pea_st_csum(r, sizeof(*r) + len);
}

/*
 * Reserve one storm record of @src on this CPU. On success the caller
 * fills and commits it; returns the error otherwise (already counted).
 */
static long st_begin(struct st_cpu *sc, u32 src, struct pea_output_handle *h,
		     u64 *seq)
{
	struct pea_st_counts *c = &sc->c[src];
	u64 size;
	long err;

	*seq = c->attempts;
	size = sizeof(struct pea_st_record) + pea_st_len(src, *seq);
	err = pea_output_reserve(st_map, PEA_F_CURRENT_CPU, size, h);
	st_count(c, err);
	return err;
}

static void st_produce(u32 src)
{
	struct st_cpu *sc = this_cpu_ptr(&st_cpus);
	struct pea_output_handle h;
	u64 seq;

	if (!st_begin(sc, src, &h, &seq)) {
		st_fill(&h, src, sc->cpu, seq);
		pea_output_commit(&h);
	}
}

static int st_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct st_cpu *sc = this_cpu_ptr(&st_cpus);

	if (!READ_ONCE(sc->nmi_pending))
		return NMI_DONE;
	WRITE_ONCE(sc->nmi_pending, 0);
	st_produce(PEA_ST_NMI);
	return NMI_HANDLED;
}

static enum hrtimer_restart st_hrtimer_fn(struct hrtimer *t)
{
	struct st_cpu *sc = container_of(t, struct st_cpu, hrtimer);
	bool nmi = (st_cfg.sources & (1U << PEA_ST_NMI)) && st_cfg.nmi_every &&
		   ++sc->ticks % st_cfg.nmi_every == 0;
	struct pea_output_handle h;
	u64 seq;

	if (READ_ONCE(st_stopping))
		return HRTIMER_NORESTART;
	if (st_cfg.sources & (1U << PEA_ST_HARDIRQ)) {
		if (!st_begin(sc, PEA_ST_HARDIRQ, &h, &seq)) {
			/* The NMI writer nests inside this reservation. */
			if (nmi) {
				WRITE_ONCE(sc->nmi_pending, 1);
				apic->send_IPI_self(NMI_VECTOR);
				nmi = false;
			}
			st_fill(&h, PEA_ST_HARDIRQ, sc->cpu, seq);
			pea_output_commit(&h);
		}
	}
	if (nmi) {
		WRITE_ONCE(sc->nmi_pending, 1);
		apic->send_IPI_self(NMI_VECTOR);
	}
	hrtimer_forward_now(t, ns_to_ktime(st_cfg.hrtimer_us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void st_timer_fn(struct timer_list *t)
{
	struct st_cpu *sc = from_timer(sc, t, timer);

	if (READ_ONCE(st_stopping))
		return;
	st_produce(PEA_ST_SOFTIRQ);
	mod_timer(&sc->timer, jiffies + 1);
}

static int st_kthread_fn(void *arg)
{
	u32 i;

	while (!kthread_should_stop()) {
		for (i = 0; i < st_cfg.task_burst; i++)
			st_produce(PEA_ST_TASK);
		usleep_range(st_cfg.task_sleep_us, st_cfg.task_sleep_us + 50);
	}
	return 0;
}

static void st_start_hrtimer(void *arg)
{
	struct st_cpu *sc = this_cpu_ptr(&st_cpus);

	hrtimer_start(&sc->hrtimer, ns_to_ktime(st_cfg.hrtimer_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static void st_storm_stop_all(void)
{
	unsigned int cpu;

	WRITE_ONCE(st_stopping, true);
	for_each_online_cpu(cpu) {
		struct st_cpu *sc = per_cpu_ptr(&st_cpus, cpu);

		if (sc->kthread) {
			kthread_stop(sc->kthread);
			put_task_struct(sc->kthread);
			sc->kthread = NULL;
		}
		del_timer_sync(&sc->timer);
		hrtimer_cancel(&sc->hrtimer);
	}
	if (st_nmi_registered) {
		/* Waits for running handlers. */
		unregister_nmi_handler(NMI_LOCAL, "pea_selftest");
		st_nmi_registered = false;
	}
}

static long st_storm_start(struct pea_st_storm __user *uarg)
{
	struct pea_map *map;
	unsigned int cpu;
	long err;

	if (copy_from_user(&st_cfg, uarg, sizeof(st_cfg)))
		return -EFAULT;
	st_cfg.map[sizeof(st_cfg.map) - 1] = 0;
	if (!st_cfg.hrtimer_us)
		st_cfg.hrtimer_us = 200;
	if (!st_cfg.task_sleep_us)
		st_cfg.task_sleep_us = 100;
	if (st_map)
		return -EBUSY;
	if (num_online_cpus() > PEA_ST_MAX_CPUS)
		return -E2BIG;
	map = pea_map_get_by_name(st_cfg.map);
	if (IS_ERR(map))
		return PTR_ERR(map);

	st_map = map;
	st_stopping = false;
	if (st_cfg.sources & (1U << PEA_ST_NMI)) {
		err = register_nmi_handler(NMI_LOCAL, st_nmi_handler, 0,
					   "pea_selftest");
		if (err)
			goto fail;
		st_nmi_registered = true;
	}
	for_each_online_cpu(cpu) {
		struct st_cpu *sc = per_cpu_ptr(&st_cpus, cpu);

		memset(sc, 0, sizeof(*sc));
		sc->cpu = cpu;
		hrtimer_init(&sc->hrtimer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		sc->hrtimer.function = st_hrtimer_fn;
		timer_setup(&sc->timer, st_timer_fn, TIMER_PINNED);
	}
	for_each_online_cpu(cpu) {
		struct st_cpu *sc = per_cpu_ptr(&st_cpus, cpu);

		if (st_cfg.sources & (1U << PEA_ST_TASK)) {
			sc->kthread = kthread_create_on_cpu(st_kthread_fn, NULL,
							    cpu, "pea_st/%u");
			if (IS_ERR(sc->kthread)) {
				err = PTR_ERR(sc->kthread);
				sc->kthread = NULL;
				goto fail;
			}
			get_task_struct(sc->kthread);
			wake_up_process(sc->kthread);
		}
		if (st_cfg.sources & (1U << PEA_ST_SOFTIRQ)) {
			sc->timer.expires = jiffies + 1;
			add_timer_on(&sc->timer, cpu);
		}
		if (st_cfg.sources &
		    ((1U << PEA_ST_HARDIRQ) | (1U << PEA_ST_NMI)))
			smp_call_function_single(cpu, st_start_hrtimer,
						 NULL, 1);
	}
	return 0;

fail:
	st_storm_stop_all();
	pea_map_put(st_map);
	st_map = NULL;
	return err;
}

static long st_storm_stop(struct pea_st_result __user *uarg)
{
	struct pea_st_result *res;
	unsigned int cpu;
	long err = 0;

	if (!st_map)
		return -ENOENT;
	st_storm_stop_all();
	pea_map_put(st_map);
	st_map = NULL;

	res = kzalloc(sizeof(*res), GFP_KERNEL);
	if (!res)
		return -ENOMEM;
	res->nr_cpus = nr_cpu_ids;
	for_each_online_cpu(cpu)
		if (cpu < PEA_ST_MAX_CPUS)
			memcpy(res->c[cpu], per_cpu_ptr(&st_cpus, cpu)->c,
			       sizeof(res->c[cpu]));
	if (copy_to_user(uarg, res, sizeof(*res)))
		err = -EFAULT;
	kfree(res);
	return err;
}

static long st_output(struct pea_st_output __user *uarg)
{
	struct pea_st_output arg;
	struct pea_map *map;
	u64 copy;
	void *buf;
	u32 i;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	arg.map[sizeof(arg.map) - 1] = 0;
	/*
	 * Sizes past 1 MiB are passed to pea_output() unchanged with a
	 * 1-byte buffer: it must refuse them (E2BIG) before touching data.
	 */
	copy = arg.size > (1U << 20) ? 1 : arg.size;
	buf = kvmalloc(copy ? copy : 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, u64_to_user_ptr(arg.data), copy)) {
		kvfree(buf);
		return -EFAULT;
	}
	map = pea_map_get_by_name(arg.map);
	if (IS_ERR(map)) {
		kvfree(buf);
		return PTR_ERR(map);
	}
	arg.n_ok = 0;
	arg.ret = 0;
	for (i = 0; i < arg.count; i++) {
		arg.ret = pea_output(map, arg.flags, buf, arg.size);
		if (!arg.ret)
			arg.n_ok++;
	}
	arg.cpu = raw_smp_processor_id();
	pea_map_put(map);
	kvfree(buf);
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

/* ---- PEA_ST_IOC_CONTEXTS: one pea_output() per execution context ---- */

static struct {
	struct pea_map *map;
	struct pea_st_contexts arg;
	struct timer_list timer;
	struct hrtimer hrtimer;
	struct hrtimer hrtimer_hard;
	struct irq_work work;
	struct irq_work work_hard;
	struct completion done[PEA_ST_EXEC_NR];
} st_exec;

static void st_exec_here(enum pea_st_exec which)
{
	struct pea_st_exec_info *e = &st_exec.arg.e[which];
	u32 payload = which;

	e->ctx = st_ctx();
	e->preemptible = preemptible();
	e->kthread = !!(current->flags & PF_KTHREAD);
	e->cpu = raw_smp_processor_id();
	strscpy(e->comm, current->comm, sizeof(e->comm));
	e->ret = pea_output(st_exec.map, PEA_F_CURRENT_CPU, &payload,
			    sizeof(payload));
	complete(&st_exec.done[which]);
}

static void st_exec_timer_fn(struct timer_list *t)
{
	st_exec_here(PEA_ST_EXEC_TIMER);
}

static enum hrtimer_restart st_exec_hrtimer_fn(struct hrtimer *t)
{
	st_exec_here(t == &st_exec.hrtimer_hard ? PEA_ST_EXEC_HRTIMER_HARD :
			     PEA_ST_EXEC_HRTIMER);
	return HRTIMER_NORESTART;
}

static void st_exec_work_fn(struct irq_work *w)
{
	st_exec_here(w == &st_exec.work_hard ? PEA_ST_EXEC_IRQ_WORK_HARD :
			     PEA_ST_EXEC_IRQ_WORK);
}

static long st_contexts(struct pea_st_contexts __user *uarg)
{
	unsigned long left;
	long err = 0;
	int cpu, i;

	if (copy_from_user(&st_exec.arg, uarg, sizeof(st_exec.arg)))
		return -EFAULT;
	st_exec.arg.map[sizeof(st_exec.arg.map) - 1] = 0;
	memset(st_exec.arg.e, 0, sizeof(st_exec.arg.e));
	st_exec.arg.preempt_rt = 0;
#ifdef PEA_ST_HAVE_PREEMPT_RT
	st_exec.arg.preempt_rt = 1;
#endif
	st_exec.map = pea_map_get_by_name(st_exec.arg.map);
	if (IS_ERR(st_exec.map))
		return PTR_ERR(st_exec.map);
	for (i = 0; i < PEA_ST_EXEC_NR; i++)
		init_completion(&st_exec.done[i]);
	timer_setup(&st_exec.timer, st_exec_timer_fn, TIMER_PINNED);
	hrtimer_init(&st_exec.hrtimer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
	st_exec.hrtimer.function = st_exec_hrtimer_fn;
	hrtimer_init(&st_exec.hrtimer_hard, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_PINNED_HARD);
	st_exec.hrtimer_hard.function = st_exec_hrtimer_fn;
	init_irq_work(&st_exec.work, st_exec_work_fn);
	st_exec.work_hard = IRQ_WORK_INIT_HARD(st_exec_work_fn);

	st_exec_here(PEA_ST_EXEC_TASK);
	cpu = get_cpu();
	st_exec.arg.cpu = cpu;
	st_exec.timer.expires = jiffies + 1;
	add_timer_on(&st_exec.timer, cpu);
	hrtimer_start(&st_exec.hrtimer, ns_to_ktime(NSEC_PER_MSEC),
		      HRTIMER_MODE_REL_PINNED);
	hrtimer_start(&st_exec.hrtimer_hard, ns_to_ktime(NSEC_PER_MSEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
	irq_work_queue(&st_exec.work);
	irq_work_queue(&st_exec.work_hard);
	put_cpu();

	for (i = 0; i < PEA_ST_EXEC_NR; i++) {
		left = wait_for_completion_timeout(&st_exec.done[i], 30 * HZ);
		if (!left)
			err = -ETIMEDOUT;
	}
	del_timer_sync(&st_exec.timer);
	hrtimer_cancel(&st_exec.hrtimer);
	hrtimer_cancel(&st_exec.hrtimer_hard);
	irq_work_sync(&st_exec.work);
	irq_work_sync(&st_exec.work_hard);
	pea_map_put(st_exec.map);
	st_exec.map = NULL;
	if (!err && copy_to_user(uarg, &st_exec.arg, sizeof(st_exec.arg)))
		err = -EFAULT;
	return err;
}

static long st_nest(struct pea_st_nest __user *uarg)
{
	struct pea_output_handle h[PEA_NEST_MAX + 1];
	struct pea_st_nest arg;
	struct pea_map *map;
	u32 depth = 0;
	long ret = 0;
	int i;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	arg.map[sizeof(arg.map) - 1] = 0;
	map = pea_map_get_by_name(arg.map);
	if (IS_ERR(map))
		return PTR_ERR(map);
	while (depth <= PEA_NEST_MAX) {
		ret = pea_output_reserve(map, PEA_F_CURRENT_CPU, arg.size,
					 &h[depth]);
		if (ret)
			break;
		memset(h[depth].data, 0xa0 + depth, arg.size);
		depth++;
	}
	arg.cpu = raw_smp_processor_id();
	/* Commit innermost first, as nested contexts would. */
	for (i = depth - 1; i >= 0; i--)
		pea_output_commit(&h[i]);
	pea_map_put(map);
	arg.depth = depth;
	arg.ret = ret;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

static long st_hold(struct pea_st_hold __user *uarg)
{
	struct pea_st_hold arg;
	struct pea_map *map;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	arg.map[sizeof(arg.map) - 1] = 0;
	if (st_held)
		return -EBUSY;
	map = pea_map_get_by_name(arg.map);
	if (IS_ERR(map))
		return PTR_ERR(map);
	st_held = map;
	return 0;
}

static long st_release(void)
{
	if (!st_held)
		return -ENOENT;
	pea_map_put(st_held);
	st_held = NULL;
	return 0;
}

/* ---- counter reads from every context (PEA_ST_IOC_READ) ---- */

struct st_read_req {
	struct pea_map *map;
	u64 flags;
	u32 size;
	long ret;
	u64 buf[4];
	u64 read_ret;
	int cpu;
	u32 ctx;
	int done;
};

static struct st_read_req st_rd;	/* under st_lock */
static DEFINE_PER_CPU(int, st_read_nmi_armed);
static struct completion st_read_done;
static struct hrtimer st_read_timer;

static void st_do_read(struct st_read_req *r)
{
	memset(r->buf, 0xa5, sizeof(r->buf));
	r->ret = pea_read_value(r->map, r->flags,
				(struct pea_event_value *)r->buf, r->size);
	r->read_ret = pea_read(r->map, r->flags);
	r->cpu = raw_smp_processor_id();
	r->ctx = st_ctx();
	WRITE_ONCE(r->done, 1);
}

static int st_read_nmi(unsigned int type, struct pt_regs *regs)
{
	if (!this_cpu_read(st_read_nmi_armed))
		return NMI_DONE;
	this_cpu_write(st_read_nmi_armed, 0);
	st_do_read(&st_rd);
	return NMI_HANDLED;
}

static enum hrtimer_restart st_read_timer_fn(struct hrtimer *t)
{
	st_do_read(&st_rd);
	complete(&st_read_done);
	return HRTIMER_NORESTART;
}

/* The kprobe's target: called by the ioctl, never inlined. */
static noinline void st_kprobe_target(struct st_read_req *r)
{
	asm volatile("" : : "r"(r) : "memory");
}

static int st_kprobe_armed;

static int st_kprobe_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (READ_ONCE(st_kprobe_armed))
		st_do_read(&st_rd);
	return 0;
}

static struct kprobe st_kp;
static bool st_kp_registered;

static int st_kprobe_register_at(unsigned long addr)
{
	memset(&st_kp, 0, sizeof(st_kp));
	st_kp.addr = (kprobe_opcode_t *)addr;
	st_kp.pre_handler = st_kprobe_pre;
	return register_kprobe(&st_kp);
}

/*
 * One kprobe for the module's lifetime, at an int3 site: the instruction
 * after the function's ftrace call when there is one (code patching at
 * ftrace sites under TCG is the README's known issue; see there).
 */
static int st_kprobe_register(void)
{
	int err;

	if (st_kp_registered)
		return 0;
	err = st_kprobe_register_at((unsigned long)st_kprobe_target);
	if (err)
		return err;
	if (kprobe_ftrace(&st_kp)) {
		unsigned long next = (unsigned long)st_kp.addr + MCOUNT_INSN_SIZE;

		unregister_kprobe(&st_kp);
		err = st_kprobe_register_at(next);
		if (err)
			return err;
	}
	st_kp_registered = true;
	return 0;
}

static long st_read_in_kprobe(struct st_read_req *r)
{
	long err = st_kprobe_register();

	if (err)
		return err;
	WRITE_ONCE(st_kprobe_armed, 1);
	st_kprobe_target(r);
	WRITE_ONCE(st_kprobe_armed, 0);
	return 0;
}

static long st_read_in_nmi(struct st_read_req *r)
{
	u64 start;

	preempt_disable();
	this_cpu_write(st_read_nmi_armed, 1);
	apic->send_IPI_self(NMI_VECTOR);
	start = local_clock();
	while (!READ_ONCE(r->done) && local_clock() - start < NSEC_PER_SEC)
		cpu_relax();
	this_cpu_write(st_read_nmi_armed, 0);
	preempt_enable();
	return 0;
}

static long st_read(struct pea_st_read __user *uarg)
{
	struct pea_st_read arg;
	struct st_read_req *r = &st_rd;
	long err = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	arg.map[sizeof(arg.map) - 1] = 0;
	if (arg.size > sizeof(arg.buf) || arg.ctx >= PEA_ST_READ_NR_CTX)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->map = pea_map_get_by_name(arg.map);
	if (IS_ERR(r->map))
		return PTR_ERR(r->map);
	r->flags = arg.flags;
	r->size = arg.size;

	switch (arg.ctx) {
	case PEA_ST_READ_TASK:
		st_do_read(r);
		break;
	case PEA_ST_READ_HARDIRQ:
		reinit_completion(&st_read_done);
		preempt_disable();
		hrtimer_start(&st_read_timer, ns_to_ktime(NSEC_PER_USEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
		preempt_enable();
		wait_for_completion(&st_read_done);
		break;
	case PEA_ST_READ_NMI:
		err = st_read_in_nmi(r);
		break;
	case PEA_ST_READ_KPROBE:
		err = st_read_in_kprobe(r);
		break;
	}
	pea_map_put(r->map);
	r->map = NULL;
	if (err)
		return err;
	if (!r->done)
		return -ETIMEDOUT;	/* the handler never ran */

	arg.ret = r->ret;
	memcpy(arg.buf, r->buf, sizeof(arg.buf));
	arg.read_ret = r->read_ret;
	arg.cpu = r->cpu;
	arg.seen_ctx = r->ctx;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

/* ---- the test PMU: one counter slot per CPU, so it multiplexes ---- */

static DEFINE_PER_CPU(int, st_pmu_used);

static void st_pmu_update(struct perf_event *event)
{
	u64 now = local_clock();
	u64 prev = local64_xchg(&event->hw.prev_count, now);

	local64_add(now - prev, &event->count);
}

static void st_pmu_start(struct perf_event *event, int flags)
{
	local64_set(&event->hw.prev_count, local_clock());
	event->hw.state = 0;
}

static void st_pmu_stop(struct perf_event *event, int flags)
{
	if (event->hw.state & PERF_HES_STOPPED)
		return;
	event->hw.state |= PERF_HES_STOPPED;
	st_pmu_update(event);
	event->hw.state |= PERF_HES_UPTODATE;
}

/* NMI-safe: the stopped check and the xchg never count a delta twice. */
static void st_pmu_read(struct perf_event *event)
{
	if (!(READ_ONCE(event->hw.state) & PERF_HES_STOPPED))
		st_pmu_update(event);
}

static int st_pmu_add(struct perf_event *event, int flags)
{
	if (__this_cpu_read(st_pmu_used) >= PEA_ST_PMU_SLOTS)
		return -EAGAIN;
	__this_cpu_inc(st_pmu_used);
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	if (flags & PERF_EF_START)
		st_pmu_start(event, flags);
	return 0;
}

static void st_pmu_del(struct perf_event *event, int flags)
{
	st_pmu_stop(event, PERF_EF_UPDATE);
	__this_cpu_dec(st_pmu_used);
}

static int st_pmu_event_init(struct perf_event *event)
{
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	if (event->cpu < 0 || is_sampling_event(event))
		return -EINVAL;
	switch (event->attr.config) {
	case PEA_ST_PMU_NS:
		return 0;
	case PEA_ST_PMU_UNSUPPORTED:
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
}

PMU_FORMAT_ATTR(event, "config:0-7");

static struct attribute *st_pmu_format_attrs[] = {
	&format_attr_event.attr,
	NULL,
};

static const struct attribute_group st_pmu_format_group = {
	.name = "format",
	.attrs = st_pmu_format_attrs,
};

PMU_EVENT_ATTR_STRING(ns, st_pmu_event_ns, "event=0x00");

static struct attribute *st_pmu_events_attrs[] = {
	&st_pmu_event_ns.attr.attr,
	NULL,
};

static const struct attribute_group st_pmu_events_group = {
	.name = "events",
	.attrs = st_pmu_events_attrs,
};

static const struct attribute_group *st_pmu_attr_groups[] = {
	&st_pmu_format_group,
	&st_pmu_events_group,
	NULL,
};

static struct pmu st_pmu = {
	.module = THIS_MODULE,
	.task_ctx_nr = perf_invalid_context,
	.capabilities = PERF_PMU_CAP_NO_INTERRUPT,
	.attr_groups = st_pmu_attr_groups,
	.event_init = st_pmu_event_init,
	.add = st_pmu_add,
	.del = st_pmu_del,
	.start = st_pmu_start,
	.stop = st_pmu_stop,
	.read = st_pmu_read,
};

/*
 * ---- the package test PMU: events live on one designated CPU ----
 *
 * What uncore, RAPL and cstate PMUs do: event_init rewrites event->cpu to
 * the designated CPU, and the CPU hotplug callback moves the events when
 * that CPU goes down. The count and the prev_count stamp are updated with
 * atomic operations, so that a read from any CPU (perf allows it for a
 * PERF_EV_CAP_READ_ACTIVE_PKG event) neither loses nor doubles a delta.
 */

static int st_pkg_cpu = -1;
static int st_pkg_hp_state = -1;
static atomic64_t st_pkg_total = ATOMIC64_INIT(0);
static atomic64_t st_pkg_reads = ATOMIC64_INIT(0);
static atomic64_t st_pkg_wrong_reads = ATOMIC64_INIT(0);

static atomic_long_t *st_local64(local64_t *l)
{
	return &l->a.a;		/* x86-64: local64_t is a local_t */
}

static void st_pkg_update(struct perf_event *event)
{
	atomic_long_t *prev_count = st_local64(&event->hw.prev_count);
	long prev, now = (long)local_clock();

	do {
		prev = atomic_long_read(prev_count);
		if (now - prev <= 0)
			return;
	} while (atomic_long_cmpxchg(prev_count, prev, now) != prev);
	atomic_long_add(now - prev, st_local64(&event->count));
	atomic64_add(now - prev, &st_pkg_total);
}

static void st_pkg_start(struct perf_event *event, int flags)
{
	atomic_long_set(st_local64(&event->hw.prev_count), (long)local_clock());
	WRITE_ONCE(event->hw.state, 0);
}

static void st_pkg_stop(struct perf_event *event, int flags)
{
	if (event->hw.state & PERF_HES_STOPPED)
		return;
	WRITE_ONCE(event->hw.state, event->hw.state | PERF_HES_STOPPED);
	st_pkg_update(event);
	event->hw.state |= PERF_HES_UPTODATE;
}

static void st_pkg_read(struct perf_event *event)
{
	atomic64_inc(&st_pkg_reads);
	if (smp_processor_id() != READ_ONCE(event->oncpu))
		atomic64_inc(&st_pkg_wrong_reads);
	if (!(READ_ONCE(event->hw.state) & PERF_HES_STOPPED))
		st_pkg_update(event);
}

static int st_pkg_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	if (flags & PERF_EF_START)
		st_pkg_start(event, flags);
	return 0;
}

static void st_pkg_del(struct perf_event *event, int flags)
{
	st_pkg_stop(event, PERF_EF_UPDATE);
}

static int st_pkg_event_init(struct perf_event *event)
{
	int cpu;

	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	if (event->cpu < 0 || is_sampling_event(event))
		return -EINVAL;
	if (event->attr.config > PEA_ST_PKG_NS_PKGREAD)
		return -EINVAL;
	cpu = READ_ONCE(st_pkg_cpu);
	if (cpu < 0)
		return -EINVAL;
	event->cpu = cpu;
	if (event->attr.config == PEA_ST_PKG_NS_PKGREAD)
		event->event_caps |= PERF_EV_CAP_READ_ACTIVE_PKG;
	return 0;
}

static ssize_t cpumask_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	int cpu = READ_ONCE(st_pkg_cpu);

	return cpu < 0 ? sysfs_emit(buf, "\n") : sysfs_emit(buf, "%d\n", cpu);
}
static DEVICE_ATTR_RO(cpumask);

static ssize_t st_total_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&st_pkg_total));
}
static DEVICE_ATTR_RO(st_total);

static ssize_t st_reads_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&st_pkg_reads));
}
static DEVICE_ATTR_RO(st_reads);

static ssize_t st_wrong_reads_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&st_pkg_wrong_reads));
}
static DEVICE_ATTR_RO(st_wrong_reads);

static struct attribute *st_pkg_attrs[] = {
	&dev_attr_cpumask.attr,
	&dev_attr_st_total.attr,
	&dev_attr_st_reads.attr,
	&dev_attr_st_wrong_reads.attr,
	NULL,
};

static const struct attribute_group st_pkg_group = {
	.attrs = st_pkg_attrs,
};

static const struct attribute_group *st_pkg_attr_groups[] = {
	&st_pmu_format_group,
	&st_pkg_group,
	NULL,
};

static struct pmu st_pkg_pmu = {
	.module = THIS_MODULE,
	.task_ctx_nr = perf_invalid_context,
	.capabilities = PERF_PMU_CAP_NO_INTERRUPT,
	.attr_groups = st_pkg_attr_groups,
	.event_init = st_pkg_event_init,
	.add = st_pkg_add,
	.del = st_pkg_del,
	.start = st_pkg_start,
	.stop = st_pkg_stop,
	.read = st_pkg_read,
};

/* As uncore: on the dying CPU, hand its events to another online CPU. */
static int st_pkg_cpu_offline(unsigned int cpu)
{
	unsigned int c, to = nr_cpu_ids;

	if (cpu != READ_ONCE(st_pkg_cpu))
		return 0;
	/* The last other one: CPU 0, which may not go offline, comes last. */
	for_each_online_cpu(c)
		if (c != cpu)
			to = c;
	WRITE_ONCE(st_pkg_cpu, to < nr_cpu_ids ? (int)to : -1);
	if (to < nr_cpu_ids)
		perf_pmu_migrate_context(&st_pkg_pmu, cpu, to);
	return 0;
}

static int st_pkg_cpu_online(unsigned int cpu)
{
	if (READ_ONCE(st_pkg_cpu) < 0)
		WRITE_ONCE(st_pkg_cpu, cpu);
	return 0;
}

#ifdef PEA_ST_HAVE_PMU_SCOPE
/*
 * "pea_st_scope": the same counter with a system-wide pmu->scope: perf
 * keeps each event on the CPU asked for, marks it PERF_EV_CAP_READ_SCOPE
 * (readable from any CPU of the scope) and shows the scope's CPU in sysfs.
 */
static int st_scope_event_init(struct perf_event *event)
{
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	if (event->cpu < 0 || is_sampling_event(event))
		return -EINVAL;
	return event->attr.config == PEA_ST_PKG_NS ? 0 : -EINVAL;
}

static const struct attribute_group *st_scope_attr_groups[] = {
	&st_pmu_format_group,
	NULL,
};

static struct pmu st_scope_pmu = {
	.module = THIS_MODULE,
	.task_ctx_nr = perf_invalid_context,
	.capabilities = PERF_PMU_CAP_NO_INTERRUPT,
	.scope = PERF_PMU_SCOPE_SYS_WIDE,
	.attr_groups = st_scope_attr_groups,
	.event_init = st_scope_event_init,
	.add = st_pkg_add,
	.del = st_pkg_del,
	.start = st_pkg_start,
	.stop = st_pkg_stop,
	.read = st_pkg_read,
};
#endif

static int st_pkg_register(void)
{
	int err;

	cpus_read_lock();
	st_pkg_cpu = cpumask_last(cpu_online_mask);
	err = perf_pmu_register(&st_pkg_pmu, PEA_ST_PKG_PMU_NAME, -1);
	if (!err) {
		err = cpuhp_setup_state_nocalls_cpuslocked(CPUHP_AP_ONLINE_DYN,
							   "pea_st/pkg:online",
							   st_pkg_cpu_online,
							   st_pkg_cpu_offline);
		if (err < 0)
			perf_pmu_unregister(&st_pkg_pmu);
		else
			st_pkg_hp_state = err;
	}
	cpus_read_unlock();
	if (err < 0)
		return err;
#ifdef PEA_ST_HAVE_PMU_SCOPE
	err = perf_pmu_register(&st_scope_pmu, PEA_ST_SCOPE_PMU_NAME, -1);
	if (err) {
		cpuhp_remove_state_nocalls(st_pkg_hp_state);
		perf_pmu_unregister(&st_pkg_pmu);
		return err;
	}
#endif
	return 0;
}

static void st_pkg_unregister(void)
{
#ifdef PEA_ST_HAVE_PMU_SCOPE
	perf_pmu_unregister(&st_scope_pmu);
#endif
	cpuhp_remove_state_nocalls(st_pkg_hp_state);
	perf_pmu_unregister(&st_pkg_pmu);
}

/*
 * Anchors: one disabled kernel counter of each software event type perf
 * counts through perf_sw_event(), held while this module is loaded. The
 * first and the last event of a type flip a jump label in hot paths (the
 * page-fault handler, the scheduler); under TCG, patching one while other
 * vCPUs run through it has crashed the guest (see the README's known
 * issues). With an anchor, the counter selftests never flip them.
 */
static struct perf_event *st_anchors[PERF_COUNT_SW_MAX];

/*
 * anchors=0 (the tests pass it under multi-threaded TCG, where no counter
 * test runs): creating the anchors flips those labels itself, at load,
 * and releasing them at unload, so there they are left out.
 */
static bool anchors = true;
module_param(anchors, bool, 0444);
MODULE_PARM_DESC(anchors, "hold a disabled counter of each software event type (default 1)");

static void st_anchors_create(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.disabled = 1,
	};
	struct perf_event *pe;
	u64 id;

	for (id = 0; id < PERF_COUNT_SW_MAX; id++) {
		/* The clocks are hrtimers, BPF_OUTPUT is pea's own kind. */
		if (id == PERF_COUNT_SW_CPU_CLOCK ||
		    id == PERF_COUNT_SW_TASK_CLOCK ||
		    id == PERF_COUNT_SW_BPF_OUTPUT)
			continue;
		attr.config = id;
		pe = perf_event_create_kernel_counter(&attr, 0, NULL, NULL,
						      NULL);
		if (!IS_ERR(pe))
			st_anchors[id] = pe;
	}
}

static void st_anchors_release(void)
{
	int id;

	for (id = 0; id < PERF_COUNT_SW_MAX; id++)
		if (st_anchors[id])
			perf_event_release_kernel(st_anchors[id]);
}

/* ---- a record from a task that has exited (PEA_ST_IOC_EXIT_MARK) ---- */

static struct task_struct *st_exit_task;	/* the marked task, a reference */
static struct pea_map *st_exit_map;
static struct kprobe st_exit_kp;
static bool st_exit_registered;

static int st_exit_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct task_struct *task = READ_ONCE(st_exit_task);

	if (task != current || cmpxchg(&st_exit_task, task, NULL) != task)
		return 0;
	pea_output(st_exit_map, PEA_F_CURRENT_CPU, PEA_ST_EXIT_PAYLOAD, 8);
	/* Not the last reference: the task is still running here. */
	put_task_struct(task);
	return 0;
}

/* Functions do_exit() calls right after exit_notify(), in that order. */
static const char * const st_exit_symbols[] = {
	"proc_exit_connector",	/* CONFIG_PROC_EVENTS */
	"mpol_put_task_policy",	/* CONFIG_NUMA */
};

static int st_exit_register(void)
{
	int i, err = -ENOENT;

	for (i = 0; i < ARRAY_SIZE(st_exit_symbols); i++) {
		memset(&st_exit_kp, 0, sizeof(st_exit_kp));
		st_exit_kp.symbol_name = st_exit_symbols[i];
		st_exit_kp.pre_handler = st_exit_pre;
		err = register_kprobe(&st_exit_kp);
		if (!err)
			break;
	}
	return err;
}

static void st_exit_unmark(void)
{
	struct task_struct *task = xchg(&st_exit_task, NULL);

	if (task)
		put_task_struct(task);
}

/* Called with st_lock held. */
static long st_exit_mark(struct pea_st_exit __user *uarg)
{
	struct pea_st_exit arg;
	struct pea_map *map;
	int err;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	arg.map[sizeof(arg.map) - 1] = 0;
	map = pea_map_get_by_name(arg.map);
	if (IS_ERR(map))
		return PTR_ERR(map);
	if (!st_exit_registered) {
		err = st_exit_register();
		if (err) {
			pea_map_put(map);
			return err;
		}
		st_exit_registered = true;
	}
	st_exit_unmark();
	/* No handler uses the old map once the old mark is gone. */
	synchronize_rcu();
	if (st_exit_map)
		pea_map_put(st_exit_map);
	st_exit_map = map;
	WRITE_ONCE(st_exit_task, get_task_struct(current));
	return 0;
}

static long st_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	long err;

	mutex_lock(&st_lock);
	switch (cmd) {
	case PEA_ST_IOC_OUTPUT:
		err = st_output(uarg);
		break;
	case PEA_ST_IOC_NEST:
		err = st_nest(uarg);
		break;
	case PEA_ST_IOC_STORM_START:
		err = st_storm_start(uarg);
		break;
	case PEA_ST_IOC_STORM_STOP:
		err = st_storm_stop(uarg);
		break;
	case PEA_ST_IOC_HOLD:
		err = st_hold(uarg);
		break;
	case PEA_ST_IOC_RELEASE:
		err = st_release();
		break;
	case PEA_ST_IOC_READ:
		err = st_read(uarg);
		break;
	case PEA_ST_IOC_EXIT_MARK:
		err = st_exit_mark(uarg);
		break;
	case PEA_ST_IOC_CONTEXTS:
		err = st_contexts(uarg);
		break;
	case PEA_ST_IOC_CTX_OUTPUT:
		err = st_ctx_output(uarg);
		break;
	case PEA_ST_IOC_KSTACK_NMI:
		err = st_kstack_nmi(uarg);
		break;
	case PEA_ST_IOC_DROP_ARM:
		err = st_drop_arm(uarg);
		break;
	case PEA_ST_IOC_DROP_END:
		err = st_drop_end(uarg);
		break;
	case PEA_ST_IOC_FETCH:
		err = st_fetch(uarg);
		break;
	case PEA_ST_IOC_LAT:
		err = st_lat(uarg);
		break;
	case PEA_ST_IOC_FPROBE:
		err = st_fprobe(uarg);
		break;
	default:
		err = st_order_ioctl(cmd, uarg);
	}
	mutex_unlock(&st_lock);
	return err;
}

static const struct file_operations st_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = st_ioctl,
	.compat_ioctl = compat_ptr_ioctl,	/* one layout for 32-bit callers */
};

static struct miscdevice st_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "pea_selftest",
	.fops = &st_fops,
	.mode = 0600,
};

static int __init st_init(void)
{
	int err;

	init_completion(&st_read_done);
	hrtimer_init(&st_read_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_PINNED_HARD);
	st_read_timer.function = st_read_timer_fn;
	err = register_nmi_handler(NMI_LOCAL, st_read_nmi, 0, "pea_st_read");
	if (err)
		return err;
	err = perf_pmu_register(&st_pmu, PEA_ST_PMU_NAME, -1);
	if (err)
		goto out_nmi;
	err = st_pkg_register();
	if (err)
		goto out_pmu;
	err = misc_register(&st_miscdev);
	if (err)
		goto out_pkg;
	if (anchors)
		st_anchors_create();
	return 0;

out_pkg:
	st_pkg_unregister();
out_pmu:
	perf_pmu_unregister(&st_pmu);
out_nmi:
	unregister_nmi_handler(NMI_LOCAL, "pea_st_read");
	return err;
}

static void __exit st_exit(void)
{
	misc_deregister(&st_miscdev);
	mutex_lock(&st_lock);
	if (st_map) {
		st_storm_stop_all();
		pea_map_put(st_map);
		st_map = NULL;
	}
	st_release();
	mutex_unlock(&st_lock);
	st_anchors_release();
	if (st_kp_registered)
		unregister_kprobe(&st_kp);
	if (st_exit_registered)
		unregister_kprobe(&st_exit_kp);
	st_drop_exit();
	st_exit_unmark();
	if (st_exit_map)
		pea_map_put(st_exit_map);
	/* Their events hold this module: none is left. */
	st_pkg_unregister();
	perf_pmu_unregister(&st_pmu);
	unregister_nmi_handler(NMI_LOCAL, "pea_st_read");
}

module_init(st_init);
module_exit(st_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pea selftest producers (test only)");
