// SPDX-License-Identifier: GPL-2.0
/*
 * What PREEMPT_RT changes for producers, and that pea_output() works the
 * same there. The test module writes one record from each execution
 * context a producer may use, all on CPU 0: the task itself, a pinned
 * timer, a pinned hrtimer (soft and _HARD) and an irq_work (soft and
 * IRQ_WORK_INIT_HARD), and reports what each context was. On PREEMPT_RT
 * timers and soft hrtimers expire in a softirq thread and soft irq_work
 * runs in the irq_work thread, all preemptible (so a task writer can be
 * preempted by them between records, never inside one: pea_output()
 * disables preemption from reserve to commit); only the _HARD ones stay
 * in hard interrupt context. Elsewhere every one of them but the task
 * runs with preemption off (softirq or hardirq). Every record arrives,
 * exactly once, whatever the kernel.
 */
#include <sys/utsname.h>
#include "pea_test.h"

#define MAP "rt"

static const char *const exec_name[PEA_ST_EXEC_NR] = {
	[PEA_ST_EXEC_TASK] = "task",
	[PEA_ST_EXEC_TIMER] = "timer",
	[PEA_ST_EXEC_HRTIMER] = "hrtimer",
	[PEA_ST_EXEC_HRTIMER_HARD] = "hrtimer_hard",
	[PEA_ST_EXEC_IRQ_WORK] = "irq_work",
	[PEA_ST_EXEC_IRQ_WORK_HARD] = "irq_work_hard",
};

static const char *ctx_name(__u32 ctx)
{
	switch (ctx) {
	case PEA_ST_CTX_TASK:		return "task";
	case PEA_ST_CTX_SOFTIRQ:	return "softirq";
	case PEA_ST_CTX_HARDIRQ:	return "hardirq";
	case PEA_ST_CTX_NMI:		return "nmi";
	}
	return "?";
}

/* The context each one must be in, and whether it may be preempted. */
static void expected(int rt, int which, __u32 *ctx, __u32 *preemptible)
{
	switch (which) {
	case PEA_ST_EXEC_TASK:
		*ctx = PEA_ST_CTX_TASK;
		*preemptible = 1;
		return;
	case PEA_ST_EXEC_TIMER:
		*ctx = PEA_ST_CTX_SOFTIRQ;
		*preemptible = rt;
		return;
	case PEA_ST_EXEC_HRTIMER:
		*ctx = rt ? PEA_ST_CTX_SOFTIRQ : PEA_ST_CTX_HARDIRQ;
		*preemptible = rt;
		return;
	case PEA_ST_EXEC_IRQ_WORK:
		*ctx = rt ? PEA_ST_CTX_TASK : PEA_ST_CTX_HARDIRQ;
		*preemptible = rt;
		return;
	default:	/* the _HARD ones */
		*ctx = PEA_ST_CTX_HARDIRQ;
		*preemptible = 0;
	}
}

int main(void)
{
	struct pea_st_contexts c = { 0 };
	int seen[PEA_ST_EXEC_NR] = { 0 };
	unsigned char rec[65536];
	int i, rt, others = 0;
	struct utsname u;
	struct pt_ring r = { 0 };
	int ncpu, map, fd;
	size_t got;

	pt_pin(0);
	ncpu = pt_setup(1 << 16);
	map = pt_map_create(MAP, ncpu, 0);
	fd = pt_event_open(0, PERF_SAMPLE_RAW);
	pt_map_update(map, 0, fd);
	if (pt_ring_map(&r, fd, 2, PROT_READ | PROT_WRITE))
		pt_fatal("mmap");

	uname(&u);
	rt = strstr(u.version, "PREEMPT_RT") != NULL;
	pt_diag("kernel %s %s: PREEMPT_RT %s", u.release, u.version,
		rt ? "yes" : "no");
	strcpy(c.map, MAP);
	PT_EQ(pt_ioctl_errno(pt_st(), PEA_ST_IOC_CONTEXTS, &c), 0,
	      "PEA_ST_IOC_CONTEXTS ran in every context");
	PT_EQ(c.preempt_rt, rt,
	      "the test module's PREEMPT_RT probe (autoconf.h) agrees with uname -v");
	PT_EQ(c.cpu, 0, "the contexts were started on CPU 0");

	for (i = 0; i < PEA_ST_EXEC_NR; i++) {
		const struct pea_st_exec_info *e = &c.e[i];
		__u32 ctx, pre;

		expected(rt, i, &ctx, &pre);
		pt_diag("%-13s ran in %-7s preemptible %u kthread %u (%.16s) on CPU %d: pea_output %lld",
			exec_name[i], ctx_name(e->ctx), e->preemptible,
			e->kthread, e->comm, e->cpu, (long long)e->ret);
		PT_EQ(e->ret, 0, "%s: pea_output() succeeds", exec_name[i]);
		PT_EQ(e->cpu, 0, "%s: ran on CPU 0", exec_name[i]);
		PT_EQ(e->ctx, ctx, "%s: runs in %s context%s", exec_name[i],
		      ctx_name(ctx), rt ? " on PREEMPT_RT" : "");
		PT_EQ(e->preemptible, pre, "%s: %spreemptible%s", exec_name[i],
		      pre ? "" : "not ", rt ? " on PREEMPT_RT" : "");
		/* Elsewhere a timer may run on irq exit or in ksoftirqd. */
		if (rt && i != PEA_ST_EXEC_TASK && pre)
			PT_EQ(e->kthread, 1, "%s: runs in a kernel thread on PREEMPT_RT",
			      exec_name[i]);
	}

	/* One 4-byte payload (the context's number) per context. */
	while ((got = pt_ring_next(&r, rec)) != 0) {
		struct perf_event_header *h = (void *)rec;
		__u32 size, v;

		memcpy(&size, rec + 8, 4);
		memcpy(&v, rec + 12, 4);
		if (h->type == PERF_RECORD_SAMPLE && got == 16 && size == 4 &&
		    v < PEA_ST_EXEC_NR)
			seen[v]++;
		else
			others++;
	}
	for (i = 0; i < PEA_ST_EXEC_NR; i++)
		PT_EQ(seen[i], 1, "%s: its record is in the ring once", exec_name[i]);
	PT_EQ(others, 0, "no other record in the ring");

	pt_ring_unmap(&r);
	close(fd);
	close(map);
	return pt_done();
}
