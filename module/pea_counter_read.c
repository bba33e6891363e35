// SPDX-License-Identifier: GPL-2.0
/*
 * pea: counter reads from any context, pea_read_value() and pea_read().
 *
 * They have the contracts of bpf_perf_event_read_value() and
 * bpf_perf_event_read(), whose work Linux does in perf_event_read_local().
 * That function is not exported to modules, and perf_event_read_value(),
 * which is, sleeps (it takes the context mutex and sends an IPI). So pea
 * reads the event itself, from fields of struct perf_event and struct
 * perf_event_context that <linux/perf_event.h> makes public, following
 * the rules perf_event_read_local() follows:
 *
 * 1. Interrupts are disabled for the whole read, and the event must
 *    belong to this CPU, the one perf put it on (event->cpu, which a
 *    package-wide PMU chooses and migrates), EINVAL otherwise; a
 *    PERF_EV_CAP_READ_ACTIVE_PKG event also from another CPU of its
 *    package, and on kernels with PMU scopes a PERF_EV_CAP_READ_SCOPE
 *    event from any CPU of its PMU's scope (perf's
 *    __perf_event_read_cpu()). On a CPU-wide event's
 *    own CPU, everything that changes the event's state, count and times
 *    runs with interrupts disabled on that same CPU under ctx->lock:
 *    sched in/out, multiplexing rotation (an hrtimer), and enable,
 *    disable, install and remove (IPIs to that CPU). So with interrupts
 *    off nothing can change them under us, except an NMI, or a reader
 *    elsewhere that updates an INACTIVE event's times under ctx->lock
 *    (perf_event_read() from read(2)); both leave the same window in
 *    Linux's own read, and only times can be affected, never the count.
 *
 * 2. The value. If the event is ACTIVE here (event->oncpu is this CPU),
 *    event->pmu->read() folds the hardware delta into event->count, and
 *    local64_read(&event->count) is then current. Every PMU read method
 *    must tolerate NMIs, because perf's own NMI handlers call it (x86
 *    counters and the clocks use cmpxchg/xchg on hw.prev_count; software
 *    events count in place and read nothing). If it is not ACTIVE it is
 *    not counting, and event->count already holds everything it counted:
 *    sched-out folded the last delta in.
 *
 * 3. The times. time_enabled/time_running are event->total_time_* plus,
 *    while the event is INACTIVE/ACTIVE, the context time elapsed since
 *    event->tstamp. Context time is ctx->time while the context's clock
 *    is stopped (EVENT_TIME clear in ctx->is_active), else local_clock()
 *    + ctx->timeoffset: perf maintains timeoffset = time - timestamp as
 *    one word precisely so that NMI readers can compute "now" without
 *    ctx->lock. perf_clock() is local_clock(), so the results equal what
 *    perf_event_read() would store at that instant. EVENT_TIME is a bit
 *    of perf's private enum event_type_t (0x4, unchanged from 4.x to
 *    6.1x); the fields are read through pea_compat.h because later
 *    kernels move them into struct perf_time_ctx.
 *
 * 4. Errors, in Linux's order: EINVAL (buffer size, unknown flag bits),
 *    E2BIG (index), ENOENT (empty slot), EINVAL (an output event, not a
 *    counter), EOPNOTSUPP (attr.inherit: Linux refuses inherited events
 *    since their children cannot be summed atomically; pea accepts
 *    inherit at creation, where it is meaningless for a CPU-wide event,
 *    so that this case exists exactly as in Linux), EINVAL (counter of
 *    another CPU), EBUSY (a pinned counter that is not ACTIVE here). On
 *    error pea_read_value() zeroes the buffer.
 *
 * Why not an approximation: an extrapolation from the last published
 * sample would drift by up to a refresh period whenever multiplexing
 * switches the event in or out; reading perf's own fields gives the same
 * numbers as read(2) at the same instant, which the selftests check by
 * bracketing every in-kernel read between two read(2)s.
 *
 * Reset: PERF_EVENT_IOC_RESET does not touch the perf event; it records
 * the count at that moment in c->base (with release ordering) and every
 * read reports count - base. Readers load the base (acquire) before they
 * sample the count, and counts never decrease, so the difference cannot
 * go negative.
 *
 * The control page: a read on the owning CPU also publishes what it read
 * into the counter's mmap page under the perf seqcount (lock odd while
 * writing). Only the owning CPU (c->cpu) publishes, with interrupts off,
 * and only while the event is still on it (a PMU may migrate it; then
 * the owner stops publishing until pea_counter.c moves the counter, and
 * reads elsewhere never publish: a sample taken off the event's CPU may
 * hold a count older than its time stamp). So the
 * only possible overlap is an NMI arriving during a publication; the
 * local_t c->publishing makes such an NMI read without publishing. The
 * flag is taken before sampling, so a publication never overwrites a
 * newer sample with an older one: the page never goes backwards.
 */
#include <linux/module.h>
#include <linux/irqflags.h>
#include <linux/perf_event.h>
#include <linux/sched/clock.h>
#include <linux/timekeeping.h>
#include <linux/topology.h>
#include "pea_internal.h"
#include "pea_compat.h"
#include "pea_counter.h"

/* EVENT_TIME of perf's enum event_type_t (kernel/events/core.c). */
#define PEA_CTX_EVENT_TIME	0x4

#ifdef PEA_HAVE_PERF_EV_CAP_READ_SCOPE
/* The CPUs of @scope around @cpu: perf's perf_scope_cpu_topology_cpumask(). */
static const struct cpumask *pea_scope_cpumask(unsigned int scope, int cpu)
{
	switch (scope) {
	case PERF_PMU_SCOPE_CORE:
		return topology_sibling_cpumask(cpu);
	case PERF_PMU_SCOPE_DIE:
		return topology_die_cpumask(cpu);
	case PERF_PMU_SCOPE_CLUSTER:
		return topology_cluster_cpumask(cpu);
	case PERF_PMU_SCOPE_PKG:
		return topology_core_cpumask(cpu);
	case PERF_PMU_SCOPE_SYS_WIDE:
		return cpu_online_mask;
	}
	return NULL;
}
#endif

/*
 * The CPU an event counts on as seen from this CPU: perf's
 * __perf_event_read_cpu(). Package-wide events (uncore, RAPL) can be read
 * from any CPU of their package, scoped ones from any CPU of their scope.
 */
static int pea_read_cpu(const struct perf_event *pe, int event_cpu)
{
	int cpu = smp_processor_id();

	if ((unsigned int)event_cpu >= nr_cpu_ids)
		return event_cpu;
#ifdef PEA_HAVE_PERF_EV_CAP_READ_SCOPE
	if (pe->group_caps & PERF_EV_CAP_READ_SCOPE) {
		const struct cpumask *m = pea_scope_cpumask(pe->pmu->scope,
							    event_cpu);

		if (m && cpumask_test_cpu(cpu, m))
			return cpu;
	}
#endif
	if ((pe->group_caps & PERF_EV_CAP_READ_ACTIVE_PKG) &&
	    topology_physical_package_id(event_cpu) ==
	    topology_physical_package_id(cpu))
		return cpu;
	return event_cpu;
}

/* The context's time now: perf's perf_event_time_now() for CPU events. */
static u64 pea_ctx_time_now(const struct perf_event_context *ctx, u64 now)
{
	/*
	 * Pairs with the barrier perf puts before each ->is_active store in
	 * ctx_sched_in()/ctx_sched_out(): a reader that sees the time bit
	 * also sees the ->time and ->timeoffset written before it changed.
	 */
	if (!(smp_load_acquire(&ctx->is_active) & PEA_CTX_EVENT_TIME))
		return pea_ctx_time(ctx);
	return now + pea_ctx_timeoffset(ctx);
}

/**
 * pea_counter_sample() - read a counter's value and times, lock-free
 * @c: the counter
 * @v: receives the count (minus the reset base) and the times
 *
 * Context: interrupts disabled, on the counter's CPU (or, for a
 * package-wide or scoped event, a CPU of its package or scope); any
 * context including NMI.
 */
void pea_counter_sample(struct pea_counter *c, struct pea_event_value *v)
{
	struct perf_event *pe = c->pe;
	int cpu = smp_processor_id();
	enum perf_event_state state;
	u64 base, count, now, tstamp;
	s64 delta;

	/* Before the count: see "Reset" above. */
	base = atomic64_read_acquire(&c->base);
	if (pea_read_cpu(pe, READ_ONCE(pe->oncpu)) == cpu)
		pe->pmu->read(pe);
	count = local64_read(&pe->count);
	v->counter = count >= base ? count - base : 0;

	now = pea_ctx_time_now(pe->ctx, local_clock());
	state = READ_ONCE(pe->state);
	tstamp = READ_ONCE(pe->tstamp);
	v->enabled = READ_ONCE(pe->total_time_enabled);
	v->running = READ_ONCE(pe->total_time_running);
	/*
	 * Only an INACTIVE event whose times another CPU updated can have a
	 * stamp ahead of this CPU's clock; its delta is 0, not negative.
	 */
	delta = (s64)(now - tstamp);
	if (delta < 0)
		delta = 0;
	if (state >= PERF_EVENT_STATE_INACTIVE)
		v->enabled += delta;
	if (state >= PERF_EVENT_STATE_ACTIVE)
		v->running += delta;
}

static void pea_counter_publish(struct pea_counter *c,
				const struct pea_event_value *v)
{
	struct perf_event_mmap_page *pg = c->page;

	/* The page is user-writable: the sequence lives in the kernel. */
	WRITE_ONCE(pg->lock, ++c->seq);
	/* Odd lock before the fields: pairs with the reader's fence. */
	smp_wmb();
	WRITE_ONCE(pg->index, 0);
	WRITE_ONCE(pg->offset, (s64)v->counter);
	WRITE_ONCE(pg->time_enabled, v->enabled);
	WRITE_ONCE(pg->time_running, v->running);
	WRITE_ONCE(PEA_PAGE_COUNTER_TIME(pg), ktime_get_mono_fast_ns());
	/* Fields before the even lock: pairs with the reader's acquire. */
	smp_wmb();
	WRITE_ONCE(pg->lock, ++c->seq);
}

/**
 * pea_counter_refresh() - sample a counter and publish it in its page
 * @c: the counter
 * @v: receives the sample
 *
 * Publishes only on the owning CPU while the event is on it; elsewhere,
 * or while the counter moves, it only samples. An NMI that interrupts a
 * refresh on the same CPU samples without publishing (the interrupted
 * refresh completes).
 *
 * Context: interrupts disabled; any context including NMI.
 */
void pea_counter_refresh(struct pea_counter *c, struct pea_event_value *v)
{
	int cpu = smp_processor_id();

	if (READ_ONCE(c->cpu) != cpu || READ_ONCE(c->pe->cpu) != cpu ||
	    local_cmpxchg(&c->publishing, 0, 1)) {
		pea_counter_sample(c, v);
		return;
	}
	pea_counter_sample(c, v);
	pea_counter_publish(c, v);
	local_set(&c->publishing, 0);
}

/* Caller: interrupts disabled. */
static long pea_read_map(struct pea_map *map, u64 flags,
			 struct pea_event_value *v)
{
	int cpu = smp_processor_id();
	struct pea_counter *c;
	struct perf_event *pe;
	struct pea_event *ev;
	long err;

	err = pea_map_slot_event(map, flags, &ev);
	if (err)
		return err;
	if (unlikely(ev->kind != PEA_EVENT_COUNTER))
		return -EINVAL;
	c = ev->counter;
	pe = c->pe;
	if (unlikely(pe->attr.inherit))
		return -EOPNOTSUPP;
	if (unlikely(pea_read_cpu(pe, READ_ONCE(pe->cpu)) != cpu))
		return -EINVAL;
	if (pe->attr.pinned &&
	    pea_read_cpu(pe, READ_ONCE(pe->oncpu)) != cpu)
		return -EBUSY;
	pea_counter_refresh(c, v);
	return 0;
}

/**
 * pea_read_value() - read a counter in a map slot, with its times
 * @map: the map, held by the caller (pea_map_get_by_name())
 * @flags: slot index in the low 32 bits, or PEA_F_CURRENT_CPU
 * @buf: receives the count, time enabled and time running
 * @size: sizeof(struct pea_event_value); @buf must have @size bytes
 *
 * The contract of bpf_perf_event_read_value(): the counter must be bound
 * to the calling CPU, the one perf put its event on (a package-wide PMU
 * may choose another CPU than the one asked for, see pea_event_cpu()),
 * or, as perf allows, share its package (PERF_EV_CAP_READ_ACTIVE_PKG) or
 * PMU scope (PERF_EV_CAP_READ_SCOPE). Scale a multiplexed count as counter * enabled /
 * running. On the counter's CPU the read also refreshes its mmap page.
 *
 * Context: any, including NMI, kprobe and hardirq handlers; takes no
 * lock, never sleeps, disables interrupts for the read.
 * Return: 0; or, with @size bytes of @buf zeroed, -EINVAL (@size, unknown
 * flag bits, an output event in the slot, a counter of another CPU),
 * -E2BIG (index past max_entries), -ENOENT (empty slot), -EOPNOTSUPP
 * (counter created with attr.inherit), -EBUSY (pinned counter not
 * currently counting, e.g. disabled or unschedulable).
 */
long pea_read_value(struct pea_map *map, u64 flags,
		    struct pea_event_value *buf, u32 size)
{
	struct pea_event_value v;
	unsigned long irqflags;
	long err = -EINVAL;

	if (unlikely(size != sizeof(*buf)))
		goto clear;
	local_irq_save(irqflags);
	err = pea_read_map(map, flags, &v);
	local_irq_restore(irqflags);
	if (unlikely(err))
		goto clear;
	*buf = v;
	return 0;
clear:
	memset(buf, 0, size);
	return err;
}
EXPORT_SYMBOL_GPL(pea_read_value);

/**
 * pea_read() - read the count of a counter in a map slot
 * @map: the map, held by the caller
 * @flags: slot index in the low 32 bits, or PEA_F_CURRENT_CPU
 *
 * The contract of bpf_perf_event_read(): errors share the value range, so
 * a count equal to (u64)-EINVAL, -E2BIG, -ENOENT, -EOPNOTSUPP or -EBUSY
 * reads as an error; prefer pea_read_value().
 *
 * Context: any, including NMI.
 * Return: the count, or a negative errno as pea_read_value() cast to u64.
 */
u64 pea_read(struct pea_map *map, u64 flags)
{
	struct pea_event_value v;
	unsigned long irqflags;
	long err;

	local_irq_save(irqflags);
	err = pea_read_map(map, flags, &v);
	local_irq_restore(irqflags);
	return err ? (u64)err : v.counter;
}
EXPORT_SYMBOL_GPL(pea_read);
