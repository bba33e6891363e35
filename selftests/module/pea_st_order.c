// SPDX-License-Identifier: GPL-2.0
/*
 * pea_selftest: producers for the ordered-delivery tests.
 *
 * PEA_ST_IOC_TOKEN passes a token between CPUs: the holder writes a
 * record, then hands the token to a random other CPU in a random context
 * (waking a bound kthread, a function call IPI to it, or sending it an
 * NMI); the receiver writes a record and passes on. Causality runs from
 * each record written before a hand-off to the one written after it, so a
 * time-ordered reader must deliver them in that order.
 *
 * PEA_ST_IOC_MIDRES makes an NMI writer land inside a task writer's
 * reservation, between its head load and its cmpxchg, every time: a
 * kprobe on pea_ring_clock() (called exactly there) sends an NMI to its
 * own CPU and waits until the NMI handler has written its record.
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/uaccess.h>
#include <linux/sched.h>
#include <asm/apic.h>
#include <asm/nmi.h>
#include <linux/pea.h>
#include "pea_selftest.h"
#include "pea_st_order.h"

/* ---- the token ---- */

struct tk_cpu {
	struct task_struct *thread;
	call_single_data_t recv_csd;	/* hardirq reception (an IPI) */
	struct irq_work pass_work;	/* passing on after an NMI reception */
	int task_pending;
	int nmi_pending;
};

static DEFINE_PER_CPU(struct tk_cpu, tk_cpus);

static struct {
	struct pea_map *map;
	u32 n;			/* hand-offs to make */
	u32 k;			/* the hand-off in progress */
	u32 rng;
	int next_cpu;
	u32 next_ctx;
	bool stop;
	struct completion done;
	atomic64_t recv[PEA_ST_TOK_NR_CTX];
	atomic64_t written;
	atomic64_t failed;
	atomic64_t last_err;
} tk;

static u32 tk_ctx_bits(void)
{
	if (in_nmi())
		return PEA_ST_CTX_NMI;
	if (in_hardirq())
		return PEA_ST_CTX_HARDIRQ;
	return PEA_ST_CTX_TASK;
}

static void tk_write(u32 kind, u64 k)
{
	struct pea_st_tok_rec r = {
		.kind = kind,
		.cpu = raw_smp_processor_id(),
		.k = k,
		.ctx = tk_ctx_bits(),
	};
	long err = pea_output(tk.map, PEA_F_CURRENT_CPU, &r, sizeof(r));

	if (err) {
		atomic64_inc(&tk.failed);
		atomic64_set(&tk.last_err, err);
	} else {
		atomic64_inc(&tk.written);
	}
}

static u32 tk_random(void)
{
	tk.rng = tk.rng * 1103515245u + 12345u;
	return tk.rng >> 8;
}

/* A random online CPU other than @self. */
static int tk_pick_cpu(int self)
{
	unsigned int n = num_online_cpus(), i, skip;
	int cpu;

	skip = tk_random() % (n - 1);
	i = 0;
	for_each_online_cpu(cpu) {
		if (cpu == self)
			continue;
		if (i++ == skip)
			return cpu;
	}
	return cpumask_any_but(cpu_online_mask, self);
}

/* Hand the token to tk.next_cpu in tk.next_ctx. Not from NMI. */
static void tk_pass(void)
{
	int cpu = READ_ONCE(tk.next_cpu);
	struct tk_cpu *tc = per_cpu_ptr(&tk_cpus, cpu);
	unsigned long flags;

	switch (READ_ONCE(tk.next_ctx)) {
	case PEA_ST_TOK_TASK:
		/* Visible to the kthread with its wake-up (a full barrier). */
		WRITE_ONCE(tc->task_pending, 1);
		wake_up_process(tc->thread);	/* stopped only after the chain */
		break;
	case PEA_ST_TOK_HARDIRQ:
		smp_call_function_single_async(cpu, &tc->recv_csd);
		break;
	default:
		WRITE_ONCE(tc->nmi_pending, 1);
		smp_mb();	/* the flag before the NMI that reads it */
		local_irq_save(flags);
		apic->send_IPI(cpu, NMI_VECTOR);
		local_irq_restore(flags);
		break;
	}
}

/* This CPU received hand-off tk.k in context @ctx. */
static void tk_receive(u32 ctx)
{
	u32 k = READ_ONCE(tk.k);
	int self = raw_smp_processor_id();

	smp_rmb();	/* the hand-off's state after the signal */
	/*
	 * Counted by the context the writer sees: a function call IPI may
	 * also run from the idle loop's queue flush, in task context.
	 */
	atomic64_inc(&tk.recv[in_nmi() ? PEA_ST_TOK_NMI :
			      in_hardirq() ? PEA_ST_TOK_HARDIRQ :
			      PEA_ST_TOK_TASK]);
	tk_write(PEA_ST_TOK_AFTER, k);
	if (k + 1 >= tk.n || READ_ONCE(tk.stop)) {
		WRITE_ONCE(tk.k, k + 1);
		complete(&tk.done);
		return;
	}
	tk_write(PEA_ST_TOK_BEFORE, k + 1);
	tk.next_cpu = tk_pick_cpu(self);
	tk.next_ctx = tk_random() % PEA_ST_TOK_NR_CTX;
	WRITE_ONCE(tk.k, k + 1);
	/* The state before the signal. */
	smp_wmb();
	if (ctx == PEA_ST_TOK_NMI)
		irq_work_queue(&this_cpu_ptr(&tk_cpus)->pass_work);
	else
		tk_pass();
}

static int tk_thread_fn(void *arg)
{
	struct tk_cpu *tc = arg;

	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (xchg(&tc->task_pending, 0)) {
			__set_current_state(TASK_RUNNING);
			tk_receive(PEA_ST_TOK_TASK);
			continue;
		}
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static void tk_recv_irq(void *info)
{
	tk_receive(PEA_ST_TOK_HARDIRQ);
}

static void tk_pass_irq(struct irq_work *w)
{
	tk_pass();
}

static int tk_nmi(unsigned int type, struct pt_regs *regs)
{
	struct tk_cpu *tc = this_cpu_ptr(&tk_cpus);

	if (!READ_ONCE(tc->nmi_pending))
		return NMI_DONE;
	WRITE_ONCE(tc->nmi_pending, 0);
	tk_receive(PEA_ST_TOK_NMI);
	return NMI_HANDLED;
}

static void tk_teardown(void)
{
	unsigned int cpu;

	/*
	 * End the chain first: the next receiver sees stop and completes
	 * instead of passing on (a lost token never completes: go on).
	 */
	WRITE_ONCE(tk.stop, true);
	wait_for_completion_timeout(&tk.done, HZ);
	for_each_possible_cpu(cpu) {
		struct tk_cpu *tc = per_cpu_ptr(&tk_cpus, cpu);

		if (tc->thread) {
			kthread_stop(tc->thread);
			put_task_struct(tc->thread);
			tc->thread = NULL;
		}
		irq_work_sync(&tc->pass_work);
	}
	unregister_nmi_handler(NMI_LOCAL, "pea_st_token");
	/* A pass queued by the last NMI ran; none is left. */
	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu_ptr(&tk_cpus, cpu)->pass_work);
}

static long st_token(struct pea_st_token __user *uarg)
{
	struct pea_st_token arg;
	unsigned int cpu, i;
	unsigned long left;
	long err;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	arg.map[sizeof(arg.map) - 1] = 0;
	if (!arg.handoffs || num_online_cpus() < 2)
		return -EINVAL;
	tk.map = pea_map_get_by_name(arg.map);
	if (IS_ERR(tk.map))
		return PTR_ERR(tk.map);
	tk.n = arg.handoffs;
	tk.k = 0;
	tk.rng = arg.seed | 1;
	tk.stop = false;
	init_completion(&tk.done);
	for (i = 0; i < PEA_ST_TOK_NR_CTX; i++)
		atomic64_set(&tk.recv[i], 0);
	atomic64_set(&tk.written, 0);
	atomic64_set(&tk.failed, 0);
	atomic64_set(&tk.last_err, 0);

	for_each_possible_cpu(cpu) {
		struct tk_cpu *tc = per_cpu_ptr(&tk_cpus, cpu);

		memset(tc, 0, sizeof(*tc));
		INIT_CSD(&tc->recv_csd, tk_recv_irq, NULL);
		tc->pass_work = IRQ_WORK_INIT_HARD(tk_pass_irq);
	}
	err = register_nmi_handler(NMI_LOCAL, tk_nmi, 0, "pea_st_token");
	if (err)
		goto put;
	for_each_online_cpu(cpu) {
		struct tk_cpu *tc = per_cpu_ptr(&tk_cpus, cpu);
		struct task_struct *t;

		t = kthread_create_on_cpu(tk_thread_fn, tc, cpu, "pea_tok/%u");
		if (IS_ERR(t)) {
			err = PTR_ERR(t);
			goto out;
		}
		tc->thread = get_task_struct(t);
		wake_up_process(t);
	}

	/* Hand-off 0 starts here, from task context. */
	preempt_disable();
	tk_write(PEA_ST_TOK_BEFORE, 0);
	tk.next_cpu = tk_pick_cpu(smp_processor_id());
	tk.next_ctx = tk_random() % PEA_ST_TOK_NR_CTX;
	/* The state before the signal. */
	smp_wmb();
	tk_pass();
	preempt_enable();

	left = wait_for_completion_timeout(&tk.done,
					   msecs_to_jiffies(arg.timeout_ms));
	err = left ? 0 : -ETIMEDOUT;
out:
	tk_teardown();
	arg.done = READ_ONCE(tk.k);
	for (i = 0; i < PEA_ST_TOK_NR_CTX; i++)
		arg.recv[i] = atomic64_read(&tk.recv[i]);
	arg.written = atomic64_read(&tk.written);
	arg.failed = atomic64_read(&tk.failed);
	arg.last_err = atomic64_read(&tk.last_err);
	if (copy_to_user(uarg, &arg, sizeof(arg)) && !err)
		err = -EFAULT;
put:
	pea_map_put(tk.map);
	tk.map = NULL;
	return err;
}

/* ---- an NMI inside a reservation ---- */

static struct pea_map *mr_map;
static DEFINE_PER_CPU(int, mr_armed);
static DEFINE_PER_CPU(int, mr_nmi_pending);
static DEFINE_PER_CPU(u64, mr_round);
static u32 mr_nested;

static int mr_nmi(unsigned int type, struct pt_regs *regs)
{
	struct pea_st_tok_rec r = {
		.kind = PEA_ST_MID_INNER,
		.cpu = raw_smp_processor_id(),
		.ctx = PEA_ST_CTX_NMI,
	};

	if (!this_cpu_read(mr_nmi_pending))
		return NMI_DONE;
	r.k = this_cpu_read(mr_round);
	if (!pea_output(mr_map, PEA_F_CURRENT_CPU, &r, sizeof(r)))
		mr_nested++;
	/* Written: the kprobe handler may let the task writer go on. */
	smp_store_release(this_cpu_ptr(&mr_nmi_pending), 0);
	return NMI_HANDLED;
}

/* At pea_ring_clock(): inside the task writer's reservation loop. */
static int mr_pre(struct kprobe *p, struct pt_regs *regs)
{
	int i;

	if (!this_cpu_read(mr_armed))
		return 0;
	this_cpu_write(mr_armed, 0);
	this_cpu_write(mr_nmi_pending, 1);
	apic->send_IPI_self(NMI_VECTOR);
	for (i = 0; i < 100000; i++) {		/* 1 s at most */
		if (!smp_load_acquire(this_cpu_ptr(&mr_nmi_pending)))
			break;
		ndelay(10 * NSEC_PER_USEC);	/* atomic: no sleeping */
	}
	return 0;
}

static struct kprobe mr_kp = {
	.symbol_name = "pea_ring_clock",
	.pre_handler = mr_pre,
};

static long st_midres(struct pea_st_midres __user *uarg)
{
	struct pea_st_tok_rec r = { .kind = PEA_ST_MID_OUTER };
	struct pea_st_midres arg;
	long err, ret;
	u32 i;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	arg.map[sizeof(arg.map) - 1] = 0;
	mr_map = pea_map_get_by_name(arg.map);
	if (IS_ERR(mr_map))
		return PTR_ERR(mr_map);
	mr_nested = 0;
	arg.outer_ok = 0;
	arg.ret = 0;
	err = register_nmi_handler(NMI_LOCAL, mr_nmi, 0, "pea_st_midres");
	if (err)
		goto put;
	err = register_kprobe(&mr_kp);
	if (err)
		goto nmi;

	for (i = 0; i < arg.count; i++) {
		preempt_disable();
		arg.cpu = smp_processor_id();
		r.cpu = arg.cpu;
		r.k = i;
		r.ctx = PEA_ST_CTX_TASK;
		this_cpu_write(mr_round, i);
		this_cpu_write(mr_armed, 1);
		ret = pea_output(mr_map, PEA_F_CURRENT_CPU, &r, sizeof(r));
		this_cpu_write(mr_armed, 0);
		preempt_enable();
		if (!ret)
			arg.outer_ok++;
		else if (!arg.ret)
			arg.ret = ret;
		cond_resched();
	}
	unregister_kprobe(&mr_kp);
	/* Reset for the next call: a kprobe struct is registered once. */
	mr_kp.addr = NULL;
	mr_kp.flags = 0;
	arg.nested = mr_nested;
	if (copy_to_user(uarg, &arg, sizeof(arg)))
		err = -EFAULT;
nmi:
	unregister_nmi_handler(NMI_LOCAL, "pea_st_midres");
put:
	pea_map_put(mr_map);
	mr_map = NULL;
	return err;
}

/* ---- PEA_ST_IOC_CLAIMLOOP: a writer nested at every clock read ---- */

static struct pea_map *cl_map;
static u32 cl_limit, cl_nested;
static DEFINE_PER_CPU(int, cl_armed);

/* At pea_ring_clock(): nested writes the task writer's cmpxchg will see. */
static int cl_pre(struct kprobe *p, struct pt_regs *regs)
{
	u64 v = cl_nested;

	if (!this_cpu_read(cl_armed) || cl_nested >= cl_limit)
		return 0;
	if (!pea_output(cl_map, PEA_F_CURRENT_CPU, &v, sizeof(v)))
		cl_nested++;
	return 0;
}

static struct kprobe cl_kp = {
	.symbol_name = "pea_ring_clock",
	.pre_handler = cl_pre,
};

static long st_claimloop(struct pea_st_claimloop __user *uarg)
{
	struct pea_st_claimloop arg;
	u64 v = U64_MAX;
	long err;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	arg.map[sizeof(arg.map) - 1] = 0;
	cl_map = pea_map_get_by_name(arg.map);
	if (IS_ERR(cl_map))
		return PTR_ERR(cl_map);
	cl_limit = arg.limit;
	cl_nested = 0;
	err = register_kprobe(&cl_kp);
	if (err)
		goto put;
	preempt_disable();
	arg.cpu = smp_processor_id();
	this_cpu_write(cl_armed, 1);
	arg.ret = pea_output(cl_map, PEA_F_CURRENT_CPU, &v, sizeof(v));
	this_cpu_write(cl_armed, 0);
	preempt_enable();
	unregister_kprobe(&cl_kp);
	cl_kp.addr = NULL;
	cl_kp.flags = 0;
	arg.nested = cl_nested;
	if (copy_to_user(uarg, &arg, sizeof(arg)))
		err = -EFAULT;
put:
	pea_map_put(cl_map);
	cl_map = NULL;
	return err;
}

/**
 * st_order_ioctl() - the ordered-delivery ioctls of /dev/pea_selftest
 * @cmd: the ioctl
 * @uarg: its argument
 *
 * Called under st_lock.
 *
 * Return: the ioctl's result, or -ENOTTY for another command.
 */
long st_order_ioctl(unsigned int cmd, void __user *uarg)
{
	switch (cmd) {
	case PEA_ST_IOC_TOKEN:
		return st_token(uarg);
	case PEA_ST_IOC_MIDRES:
		return st_midres(uarg);
	case PEA_ST_IOC_CLAIMLOOP:
		return st_claimloop(uarg);
	default:
		return -ENOTTY;
	}
}
