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
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/timer.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/preempt.h>
#include <asm/apic.h>
#include <asm/nmi.h>
#include <linux/pea.h>
#include "pea_selftest.h"

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
	default:
		err = -ENOTTY;
	}
	mutex_unlock(&st_lock);
	return err;
}

static const struct file_operations st_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = st_ioctl,
};

static struct miscdevice st_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "pea_selftest",
	.fops = &st_fops,
	.mode = 0600,
};

static int __init st_init(void)
{
	return misc_register(&st_miscdev);
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
}

module_init(st_init);
module_exit(st_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pea selftest producers (test only)");
