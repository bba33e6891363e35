// SPDX-License-Identifier: GPL-2.0
/*
 * pea_selftest: kernel stacks recorded in NMI.
 *
 * PEA_ST_IOC_KSTACK_NMI calls pea_st_kstack_target() from an NMI handler
 * in an NMI sent to the calling CPU, so that test_kstack can probe it and
 * check the stack a kprobe records there: the target, its caller
 * pea_st_kstack_nmi(), and through the NMI entry the task stack of the
 * ioctl. With @hardirq the calls are made in a hard irq_work (a self-IPI,
 * hardirq context on PREEMPT_RT too), pea_st_kstack_irq_work().
 */
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/uaccess.h>
#include <linux/sched/clock.h>
#include <asm/apic.h>
#include <asm/nmi.h>
#include "pea_selftest.h"
#include "pea_st_kstack.h"

static DEFINE_PER_CPU(int, ks_nmi_armed);

static struct {
	u32 count;
	u32 calls;
	int cpu;
	int in_nmi;
	int in_hardirq;
	int done;
} ks;

/**
 * pea_st_kstack_target() - the function test_kstack probes in NMI
 * @i: the call's index
 *
 * Return: @i, so the call is not optimised away.
 */
noinline u32 pea_st_kstack_target(u32 i)
{
	barrier();
	return i;
}

/* Inlined: the stack shows the handler that called the target. */
static __always_inline void ks_calls(void)
{
	u32 i;

	for (i = 0; i < ks.count; i++)
		if (pea_st_kstack_target(i) == i)
			ks.calls++;
	ks.cpu = raw_smp_processor_id();
	ks.in_nmi = !!in_nmi();
	ks.in_hardirq = in_hardirq() && !in_nmi();
	WRITE_ONCE(ks.done, 1);
}

/* Global (and not inlined) so that the stack shows it by name. */
noinline int pea_st_kstack_nmi(unsigned int type, struct pt_regs *regs)
{
	if (!this_cpu_read(ks_nmi_armed))
		return NMI_DONE;
	this_cpu_write(ks_nmi_armed, 0);
	ks_calls();
	return NMI_HANDLED;
}

/* The same, from a hard irq_work. */
noinline void pea_st_kstack_irq_work(struct irq_work *work)
{
	ks_calls();
}

static struct irq_work ks_work = IRQ_WORK_INIT_HARD(pea_st_kstack_irq_work);

/* Make the calls in a hard irq_work on this CPU; waits at most a second. */
static long st_kstack_calls_in_hardirq(void)
{
	u64 start;

	preempt_disable();
	irq_work_queue(&ks_work);
	start = local_clock();
	while (!READ_ONCE(ks.done) && local_clock() - start < NSEC_PER_SEC)
		cpu_relax();
	preempt_enable();
	irq_work_sync(&ks_work);
	return READ_ONCE(ks.done) ? 0 : -ETIMEDOUT;
}

/**
 * st_kstack_nmi() - PEA_ST_IOC_KSTACK_NMI
 * @uarg: a struct pea_st_kstack_nmi
 *
 * Return: 0 with the results in @uarg, -ETIMEDOUT if no NMI came within
 * a second, or another negative errno.
 */
long st_kstack_nmi(void __user *uarg)
{
	struct pea_st_kstack_nmi a;
	long err;
	u64 start;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.count > 100000)
		return -EINVAL;
	memset(&ks, 0, sizeof(ks));
	ks.count = a.count;
	if (a.task) {
		ks_calls();
		goto out;
	}
	if (a.hardirq) {
		err = st_kstack_calls_in_hardirq();
		if (err)
			return err;
		goto out;
	}
	err = register_nmi_handler(NMI_LOCAL, pea_st_kstack_nmi, 0,
				   "pea_st_kstack");
	if (err)
		return err;
	preempt_disable();
	this_cpu_write(ks_nmi_armed, 1);
	apic->send_IPI_self(NMI_VECTOR);
	start = local_clock();
	while (!READ_ONCE(ks.done) && local_clock() - start < NSEC_PER_SEC)
		cpu_relax();
	this_cpu_write(ks_nmi_armed, 0);
	preempt_enable();
	unregister_nmi_handler(NMI_LOCAL, "pea_st_kstack");
	if (!READ_ONCE(ks.done))
		return -ETIMEDOUT;
out:
	a.calls = ks.calls;
	a.cpu = ks.cpu;
	a.in_nmi = ks.in_nmi;
	a.in_hardirq = ks.in_hardirq;
	return copy_to_user(uarg, &a, sizeof(a)) ? -EFAULT : 0;
}
