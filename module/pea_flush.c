// SPDX-License-Identifier: GPL-2.0
/*
 * pea: bounded-latency flush of an output event (PEA_FLAG_FLUSH).
 *
 * A record that raised no wake-up must still wake a sleeping reader
 * within ev->flush_ns. Writers run in any context, NMI included, where
 * an hrtimer cannot be started (its base lock is not NMI-safe, and a
 * kprobe may sit inside the hrtimer code itself), so the first writer
 * after a flush queues an irq_work, and the irq_work, in hardirq context
 * on the event's CPU, starts the hrtimer. The timer wakes the reader if
 * the ring holds unread records that no writer's wake-up covered (a
 * record that woke the reader covers those before it). Idle rings cost
 * nothing: the timer is armed only when a record needs it.
 *
 * ring->flush_armed is a Dekker pair with data_head:
 *
 *	writer				timer
 *	STORE ->data_head		xchg(->flush_armed, 0)
 *	smp_mb()			(full barrier)
 *	LOAD ->flush_armed		LOAD ->data_head
 *
 * Either the timer sees the record, or the writer sees the flag clear and
 * arms the timer again: a record is never left without a deadline.
 */
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/poll.h>
#include "pea_internal.h"
#include "pea_compat.h"

/**
 * pea_event_flush_arm() - give a published record a wake-up deadline
 * @ev: an event with PEA_FLAG_FLUSH
 * @ring: the ring the record was published in
 *
 * Called by the writer that published data_head and raised no wake-up,
 * from any context. Lock-free: at most one irq_work per flush period.
 */
void pea_event_flush_arm(struct pea_event *ev, struct pea_ring *ring)
{
	smp_mb();	/* data_head before flush_armed and poll: see above */
	/* A pending EPOLLIN already makes the reader look at the ring. */
	if (atomic_read(&ring->poll) || atomic_read(&ring->flush_armed))
		return;
	if (atomic_xchg(&ring->flush_armed, 1))
		return;
	irq_work_queue(&ev->flush_work);
}

static void pea_event_flush_start(struct irq_work *work)
{
	struct pea_event *ev = container_of(work, struct pea_event,
					    flush_work);

	/*
	 * Started only here, on the event's CPU, for the writer that set
	 * flush_armed. A timer still queued (its ring was replaced by a new
	 * mapping) is due anyway and is not pushed back; one whose callback
	 * is running (a threaded irq_work on PREEMPT_RT) is queued again.
	 */
	if (!hrtimer_is_queued(&ev->flush_timer))
		hrtimer_start(&ev->flush_timer, ns_to_ktime(ev->flush_ns),
			      HRTIMER_MODE_REL_PINNED);
}

static enum hrtimer_restart pea_event_flush_timer(struct hrtimer *t)
{
	struct pea_event *ev = container_of(t, struct pea_event, flush_timer);
	struct perf_event_mmap_page *pg;
	struct pea_ring *ring;
	unsigned long head;

	rcu_read_lock();
	ring = rcu_dereference(ev->ring);
	if (!ring)
		goto out;
	atomic_xchg(&ring->flush_armed, 0);	/* a full barrier */
	pg = ring->user_page;
	head = READ_ONCE(pg->data_head);
	/*
	 * Unread records wake the reader, unless a writer's wake-up already
	 * covered every one of them: records written before a record that
	 * woke the reader got that wake-up within their deadline. The timer
	 * runs on the ring's CPU, where its writers publish data_head and
	 * woken_head, each after the other in program order.
	 */
	if (head != READ_ONCE(pg->data_tail) &&
	    head != READ_ONCE(ring->woken_head))
		pea_event_wakeup_now(ev, ring);
out:
	rcu_read_unlock();
	return HRTIMER_NORESTART;
}

/**
 * pea_event_flush_init() - set up the flush machinery of a new event
 * @ev: the event; @ev->flush_ns is 0 when PEA_FLAG_FLUSH is off
 */
void pea_event_flush_init(struct pea_event *ev)
{
	init_irq_work(&ev->flush_work, pea_event_flush_start);
	pea_hrtimer_setup(&ev->flush_timer, pea_event_flush_timer,
			  CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
}

/**
 * pea_event_flush_stop() - stop the flush machinery of a dying event
 * @ev: an event no writer can reach any more
 *
 * The irq_work may start the timer, so it is waited for first.
 */
void pea_event_flush_stop(struct pea_event *ev)
{
	irq_work_sync(&ev->flush_work);
	hrtimer_cancel(&ev->flush_timer);
}
