// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the ring buffer of an output event.
 *
 * The layout and protocol are perf's (include/uapi/linux/perf_event.h):
 * page 0 is a struct perf_event_mmap_page, pages 1..2^n hold records.
 * data_head only grows (only shrinks when writing backward); readers mask
 * it with data_size - 1.
 *
 * Writer ordering, as perf's:
 *
 *	writer				reader
 *	if (LOAD ->data_tail) {		LOAD ->data_head
 *			(A)		smp_rmb()	(C)
 *		STORE $data		LOAD $data
 *		smp_wmb()	(B)	smp_mb()	(D)
 *		STORE ->data_head	STORE ->data_tail
 *	}
 *
 * (A) is the control dependency between the space check on data_tail and
 * the stores of the record; (B) pairs with (C) and (A) with (D).
 *
 * Nesting: only the CPU the event is bound to writes, but a task-context
 * writer can be interrupted by softirq, hardirq and NMI writers. Space is
 * reserved with a local_cmpxchg on the head, every writer bumps the nest
 * count, and only the outermost writer publishes data_head, re-checking
 * that no interrupting writer moved the head meanwhile.
 *
 * Time order (PERF_SAMPLE_TIME): the time is read inside the reservation
 * loop, after the head is loaded and before the local_cmpxchg that moves
 * it. A writer that interrupts another between those two points moves
 * the head, so the interrupted writer's cmpxchg fails and it reads the
 * clock again; one that interrupts it after the cmpxchg reads the clock
 * later and writes after it. Either way the records of a ring are in the
 * order of their times, on any clock that is monotonic on one CPU. The
 * loop is bounded: a record whose cmpxchg failed PEA_RING_CLAIM_TRIES
 * times is dropped and counted lost.
 *
 * PEA_FLAG_ORDERED adds a proof for readers that a ring has nothing older
 * to come: PEA_PAGE_WRITERS() in the control page is non-zero from before
 * a writer reads the clock until after the outermost writer published
 * data_head. With the clock CLOCK_MONOTONIC (or _RAW) through the fast
 * NMI-safe accessors:
 *
 *	writer (the event's CPU)		reader (any CPU)
 *	smp_store_mb(->writers, 1)		LOAD ->data_head of rings Y, and
 *				(E)		    their records  (C as above)
 *	t = clock				LOAD ->writers of ring X  (F)
 *	cmpxchg head, record (time t)		smp_rmb()	      (G)
 *	smp_wmb()		(B)		LOAD ->data_head of ring X
 *	STORE ->data_head
 *	smp_store_release(->writers = 0) (H)
 *
 * If the reader finds writers == 0 and data_head of X equal to what it
 * consumed, every record X ever publishes afterwards took its time after
 * that check: its writer's STORE writers = 1 was not visible to (F), (E)
 * orders that store before its clock read, and (F) comes after the
 * reader's loads of every record it already holds, whose times were read
 * before their data_head was published (B). The clock read is not a
 * memory access; what orders it is the accessor itself: both fast
 * accessors read the clocksource with rdtsc_ordered() (an LFENCE or
 * RDTSCP, so the counter is read after every earlier instruction, the
 * barrier of (E) included, and before the later stores retire) or, for
 * HPET and ACPI PM, with an uncached MMIO or port read that is ordered
 * by (E) and (B) like any load. (H) orders data_head before the writers
 * store, so a reader that sees writers == 0 by a writer's (H) sees its
 * data_head through (G). The reader therefore needs no clock of its own:
 * times compare within the kernel's clock, CLOCK_MONOTONIC, which is
 * also what clock_gettime() returns in user space.
 *
 * CLOCK_MONOTONIC's fast accessor is exact except across a timekeeping
 * update that lowers the NTP slope: a reader still on the old slope may
 * read a few ns ahead of one on the new (see ktime_get_mono_fast_ns()).
 * CLOCK_MONOTONIC_RAW has no slope changes and no such window.
 *
 * Writers run with preemption disabled (pea_output() holds a nest slot,
 * kprobe and kretprobe handlers run with preemption off), so writers !=
 * 0 lasts one record's reservation, copy and commit, plus whatever
 * interrupts and NMIs do meanwhile; pea_output_reserve() callers hold it
 * until they commit. A paused, unmapped or disabled ring and an offline
 * CPU have no writer in flight.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/sched/clock.h>
#include <linux/timekeeping.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include "pea_internal.h"

static void pea_ring_free_work(struct work_struct *work)
{
	struct pea_ring *ring = container_of(to_rcu_work(work),
					     struct pea_ring, free_work);
	unsigned int i;

	vunmap(ring->data);
	for (i = 0; i <= ring->nr_pages; i++) {
		ring->pages[i]->mapping = NULL;	/* set by pea_vm_fault() */
		__free_page(ring->pages[i]);
	}
	kfree(ring->pages);
	kfree(ring);
	atomic_dec(&pea_objects.rings);
}

/**
 * pea_ring_alloc() - allocate a zeroed ring of @nr_pages data pages
 * @ev: the event the ring belongs to
 * @nr_pages: data pages, a power of two
 * @overwrite: ignore data_tail (read-only mapping or write_backward)
 * @node: NUMA node for the pages
 *
 * Return: the ring with one mapping counted, or NULL.
 */
struct pea_ring *pea_ring_alloc(struct pea_event *ev, unsigned int nr_pages,
				bool overwrite, int node)
{
	struct perf_event_mmap_page *pg;
	struct page **vpages;
	struct pea_ring *ring;
	unsigned int i;
	unsigned long wm;

	/* Charged to the mapping task's memory cgroup, as the pages are. */
	ring = kzalloc_node(sizeof(*ring), GFP_KERNEL_ACCOUNT, node);
	if (!ring)
		return NULL;
	ring->pages = kcalloc_node(nr_pages + 1, sizeof(*ring->pages),
				   GFP_KERNEL_ACCOUNT, node);
	if (!ring->pages)
		goto free_ring;
	for (i = 0; i <= nr_pages; i++) {
		ring->pages[i] = alloc_pages_node(node, GFP_KERNEL_ACCOUNT |
						  __GFP_ZERO, 0);
		if (!ring->pages[i])
			goto free_pages;
	}

	/* Map the data pages twice in a row: records never split. */
	vpages = kvmalloc_array(2 * nr_pages, sizeof(*vpages), GFP_KERNEL);
	if (!vpages)
		goto free_pages;
	for (i = 0; i < 2 * nr_pages; i++)
		vpages[i] = ring->pages[1 + (i % nr_pages)];
	ring->data = vmap(vpages, 2 * nr_pages, VM_MAP, PAGE_KERNEL);
	kvfree(vpages);
	if (!ring->data)
		goto free_pages;

	ring->nr_pages = nr_pages;
	ring->size = (unsigned long)nr_pages << PAGE_SHIFT;
	ring->limit = ring->size;
	ring->mask = ring->size - 1;
	ring->overwrite = overwrite;
	ring->backward = ev->backward;
	ring->plain = !overwrite && !ev->backward && ev->wakeup_events == 1 &&
		      !ev->ordered && !ev->adaptive && !ev->flush_ns;
	ring->fast = ring->plain && !(ev->sample_type & PERF_SAMPLE_TIME);
	wm = ev->watermark ? ev->wakeup_watermark : 0;
	ring->watermark = wm ? min(ring->size, wm) : ring->size / 2;
	atomic_set(&ring->mmap_count, 1);
	INIT_RCU_WORK(&ring->free_work, pea_ring_free_work);

	pg = page_address(ring->pages[0]);
	pg->cap_bit0_is_deprecated = 1;
	pg->size = offsetof(struct perf_event_mmap_page, __reserved);
	pg->data_offset = PAGE_SIZE;
	pg->data_size = ring->size;
	ring->user_page = pg;	/* the lost hint: pea_event_mmap() */
	atomic_inc(&pea_objects.rings);
	return ring;

free_pages:
	for (i = 0; i <= nr_pages && ring->pages[i]; i++)
		__free_page(ring->pages[i]);
	kfree(ring->pages);
free_ring:
	kfree(ring);
	return NULL;
}

/**
 * pea_ring_free_deferred() - free a detached ring after a grace period
 * @ring: a ring no longer reachable from its event
 *
 * Writers dereference the ring with preemption disabled, so once an RCU
 * grace period has passed none can still be using it.
 */
void pea_ring_free_deferred(struct pea_ring *ring)
{
	queue_rcu_work(pea_wq, &ring->free_work);
}

/*
 * Count one dropped record; reported by the next PERF_RECORD_LOST. With
 * no @ring the event is looked at again after the count: a first mmap
 * may have published its ring since (pea_event_mmap() reads the count
 * after publishing, so one of the two sets the hint). The caller is in
 * an RCU-sched read section (preemption off), as for @ring.
 */
static void pea_ring_count_lost(struct pea_event *ev, struct pea_ring *ring)
{
	local64_inc(&ev->lost);
	atomic_long_inc(&ev->lost_pending);
	/*
	 * The count is visible before the hint that asks for it, and before
	 * the second look at ev->ring: pairs with pea_event_mmap()'s smp_mb().
	 */
	smp_mb__after_atomic();
	if (!ring)
		ring = rcu_dereference_sched(ev->ring);
	if (ring)
		WRITE_ONCE(PEA_PAGE_LOST_HINT(ring->user_page), 1);
}

/*
 * PEA_FLAG_ADAPTIVE_WAKEUP: having published @head over @prev, wake the
 * reader only if it had read everything up to @prev. The full barrier
 * orders the data_head store before the data_tail load; the reader orders
 * its data_tail store before its last data_head load the same way, so
 * either the reader sees the new head or this sees data_tail == @prev.
 */
static bool pea_ring_wakeup_adaptive(struct pea_event *ev,
				     struct pea_ring *ring, unsigned long prev,
				     unsigned long head)
{
	if (head == prev)
		return false;
	smp_mb();	/* data_head store before data_tail load: see above */
	if (READ_ONCE(ring->user_page->data_tail) != prev)
		return false;
	pea_event_wakeup(ev, ring);
	return true;
}

/*
 * Publish data_head if this is the outermost writer; raise wake-ups.
 * @plain: @ring->plain, a constant in each inlined copy (pea_ring_alloc()).
 * A plain ring wakes its reader whenever data_head moves, what
 * wakeup_events 1 decides through the wake-up position (every record
 * moves it, and the outermost writer sees it moved by its own record or
 * by those of the writers nested in it), without the position: always
 * after a record of its own (@committed), else if a nested writer's
 * moved it.
 */
static __always_inline void pea_ring_put_handle(struct pea_event *ev,
						struct pea_ring *ring,
						unsigned long wakeup,
						bool plain, bool committed)
{
	struct perf_event_mmap_page *pg = ring->user_page;
	unsigned long head, prev;
	bool woke;

	if (local_read(&ring->nest) > 1) {
		local_dec(&ring->nest);
		return;
	}
	/* Only writers on this CPU store data_head: the last one published. */
	prev = plain && committed ? 0 : READ_ONCE(pg->data_head);
again:
	head = local_read(&ring->head);
	smp_wmb();	/* (B): the record before data_head */
	WRITE_ONCE(pg->data_head, head);
	/*
	 * Publish the head before dropping the nest count: an interrupting
	 * writer that sees nest == 0 publishes its own, newer head, and one
	 * that ran before the store below is caught by the re-check.
	 */
	barrier();
	local_set(&ring->nest, 0);
	barrier();
	if (unlikely(head != local_read(&ring->head))) {
		local_inc(&ring->nest);
		goto again;
	}
	if (plain) {
		if (committed || head != prev)
			pea_event_wakeup(ev, ring);
		return;
	}
	if (ev->ordered) {
		/* (H): data_head before the end of the writers in flight. */
		smp_store_release(&PEA_PAGE_WRITERS(pg), 0);
	}
	if (ev->adaptive) {
		woke = pea_ring_wakeup_adaptive(ev, ring, prev, head);
	} else {
		woke = wakeup != local_read(&ring->wakeup);
		if (woke)
			pea_event_wakeup(ev, ring);
	}
	/*
	 * PEA_FLAG_FLUSH: what did not wake the reader gets a deadline; a
	 * wake-up covers every record up to @head, earlier ones whose
	 * deadline is still running included (pea_event_flush_timer()).
	 */
	if (unlikely(ev->flush_ns)) {
		if (woke)
			WRITE_ONCE(ring->woken_head, head);
		else if (head != prev)
			pea_event_flush_arm(ev, ring);
	}
}

static void *pea_put_fields(void *p, struct pea_event *ev, u64 time);

/*
 * PERF_RECORD_LOST {id, lost}, followed with attr.sample_id_all by the
 * sample_id fields perf appends (TID, TIME, CPU as selected), so that a
 * reader can place the loss in time.
 */
static void *pea_put_lost(void *p, struct pea_event *ev, long lost, u64 time)
{
	struct perf_event_header *hdr = p;
	u64 *body = p + sizeof(*hdr);

	hdr->type = PERF_RECORD_LOST;
	hdr->misc = 0;
	hdr->size = ev->lost_size;
	body[0] = ev->id;
	body[1] = lost;
	if (ev->lost_size != PEA_LOST_RECORD_SIZE)
		pea_put_fields(p + PEA_LOST_RECORD_SIZE, ev, time);
	return p + ev->lost_size;
}

/*
 * A sample's pid or tid, as perf_event_pid_type(): -1 for a task whose
 * pids are already detached (late in do_exit()), not 0.
 */
static __always_inline u32 pea_sample_pid(struct task_struct *task,
					  enum pid_type type,
					  struct pid_namespace *ns)
{
	u32 nr = __task_pid_nr_ns(task, type, ns);

	if (!nr && !pid_alive(task))
		nr = -1;
	return nr;
}

/* The TID, TIME and CPU fields @ev selects, in perf's order. */
static __always_inline void *__pea_put_fields(void *p, struct pea_event *ev,
					      u64 time)
{
	/* Loaded once: the stores below may alias @ev as far as C knows. */
	u64 st = ev->sample_type;
	u32 *w;

	if (st & PERF_SAMPLE_TID) {
		w = p;
		w[0] = pea_sample_pid(current, PIDTYPE_TGID, ev->pid_ns);
		w[1] = pea_sample_pid(current, PIDTYPE_PID, ev->pid_ns);
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		*(u64 *)p = time;
		p += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		w = p;
		w[0] = smp_processor_id();
		w[1] = 0;
		p += 8;
	}
	return p;
}

static void *pea_put_fields(void *p, struct pea_event *ev, u64 time)
{
	return __pea_put_fields(p, ev, time);
}

/* Write the sample header and fields; return where the payload goes. */
static __always_inline void *pea_put_sample(void *p, struct pea_event *ev,
					    u32 rec, u64 time)
{
	struct perf_event_header *hdr = p;
	/* Loaded once: the stores below may alias @ev as far as C knows. */
	u32 fixed = ev->fixed_size;
	u32 raw_size = rec - fixed - 4;

	/*
	 * Padding is zeroed: no stale ring bytes reach user space. It is
	 * under 8 bytes at the 8-aligned end of the record, so one store
	 * there, before the fields and the payload overwrite what is not
	 * padding, replaces a memset() call.
	 */
	*(u64 *)(p + rec - 8) = 0;
	hdr->type = PERF_RECORD_SAMPLE;
	hdr->misc = PERF_RECORD_MISC_KERNEL;
	hdr->size = rec;
	/* The fields end at fixed_size: one test when there are none. */
	if (fixed != sizeof(*hdr))
		__pea_put_fields(p + sizeof(*hdr), ev, time);
	p += fixed;
	*(u32 *)p = raw_size;
	return p + 4;
}

/**
 * pea_ring_clock() - the time of CLOCK_MONOTONIC or CLOCK_MONOTONIC_RAW
 * @clock: PEA_CLOCK_MONO or PEA_CLOCK_MONO_RAW
 *
 * The fast accessors, NMI-safe. Out of line (two tail calls) so that the
 * selftests' module can put a raw kprobe between a writer's head load and
 * its cmpxchg. notrace, as the accessors: it runs inside the claim loop,
 * where no kprobe link, kprobe event, BPF kprobe or fentry program may
 * attach (each would be a writer nested at every try; trace_kprobe's
 * notrace rule, pea_notrace.c, refuses a function without an ftrace
 * location).
 *
 * Return: the time in ns.
 */
noinline notrace u64 pea_ring_clock(u8 clock)
{
	if (clock == PEA_CLOCK_MONO_RAW)
		return ktime_get_raw_fast_ns();
	return ktime_get_mono_fast_ns();
}

/* The time of a record of @ev, which has PERF_SAMPLE_TIME. */
static __always_inline u64 pea_ring_time(const struct pea_event *ev)
{
	if (ev->clock == PEA_CLOCK_LOCAL)
		return local_clock();
	return pea_ring_clock(ev->clock);
}

/*
 * Tries of the claim loop before the record is dropped (and counted
 * lost, as when the ring is full). A try fails when a writer nested
 * between the head load and the cmpxchg (an interrupt, an NMI) moved the
 * head; each context nests once per try at most, so a few tries are what
 * real nesting needs. Anything that wrote there at every try (a probe on
 * the loop's clock read) would keep the loop going for ever, preemption
 * and maybe interrupts off: the bound ends it.
 */
#define PEA_RING_CLAIM_TRIES	16

/*
 * Move the head of @ring by @len bytes; *@offset receives the head before
 * the move, *@head the new head and, if @timed, *@time the record's time.
 * Return: false when the record does not fit or PEA_RING_CLAIM_TRIES
 * tries failed.
 */
static __always_inline bool
pea_ring_claim(struct pea_event *ev, struct pea_ring *ring,
	       struct perf_event_mmap_page *pg, unsigned long len,
	       unsigned long *offsetp, unsigned long *head, u64 *time,
	       bool timed, bool plain)
{
	unsigned long offset, tail;
	unsigned int tries = 0;

	*time = 0;
	for (;;) {
		tail = READ_ONCE(pg->data_tail);
		offset = local_read(&ring->head);
		/*
		 * data_tail is user-controlled: any value only changes
		 * whether the record fits, never where it is written, since
		 * every offset is masked into the ring.
		 */
		if ((plain || !ring->overwrite) &&
		    unlikely(offset - tail > ring->size - len))
			return false;
		*head = !plain && ring->backward ? offset - len : offset + len;
		/* Between the head load and the cmpxchg: see "Time order". */
		barrier();
		if (timed)
			*time = pea_ring_time(ev);
		barrier();
		if (local_cmpxchg(&ring->head, offset, *head) == offset) {
			*offsetp = offset;
			return true;
		}
		if (unlikely(++tries == PEA_RING_CLAIM_TRIES))
			return false;
	}
}

/*
 * Reserve a sample of @rec bytes in @ring, @ev's ring as the caller
 * loaded it, and write its header, fields and padding (and a
 * PERF_RECORD_LOST before it when drops are pending). *@wakeup receives
 * the wake-up position to hand to __pea_ring_commit(). @plain:
 * @ring->plain, a constant in each inlined copy; @untimed: a constant,
 * true in a copy only called for events without PERF_SAMPLE_TIME.
 *
 * The reservation is described by scalars, not by a handle on the
 * stack: with CONFIG_INIT_STACK_ALL_ZERO (Debian's kernels) a handle
 * local to pea_ring_output() was zeroed on every call.
 *
 * Return: the payload pointer, or NULL when the record was dropped and
 * counted lost.
 */
static __always_inline void *__pea_ring_reserve(struct pea_event *ev,
						struct pea_ring *ring, u32 rec,
						unsigned long *wakeup,
						bool plain, bool untimed)
{
	struct perf_event_mmap_page *pg;
	unsigned long head, offset, len, fwd;
	bool claimed;
	long lost = 0;
	u64 time;
	void *p;

	/*
	 * A plain ring was there: its callers' test (pea_ring_write()). A
	 * paused ring's limit is 0.
	 */
	if (unlikely((!plain && !ring) || rec > READ_ONCE(ring->limit))) {
		pea_ring_count_lost(ev, ring);
		return NULL;
	}
	pg = ring->user_page;

	local_inc(&ring->nest);
	if (!plain && ev->ordered) {
		/*
		 * (E): writers = 1 is visible before the clock read. The
		 * store and the full barrier in one (an xchg on x86).
		 */
		smp_store_mb(PEA_PAGE_WRITERS(pg), 1);
	}
	/* A plain ring has no wake-up position: pea_ring_put_handle(). */
	*wakeup = plain ? 0 : local_read(&ring->wakeup);

	len = rec;
	if (unlikely(atomic_long_read(&ev->lost_pending)) &&
	    rec + ev->lost_size <= ring->size) {
		/* Clear the hint first: a drop after this sets it again. */
		WRITE_ONCE(PEA_PAGE_LOST_HINT(pg), 0);
		lost = atomic_long_xchg(&ev->lost_pending, 0);
		if (lost)
			len += ev->lost_size;
	}

	/*
	 * Two copies of the loop: without TIME it makes no call, so what
	 * it keeps in registers need not be saved around one.
	 */
	if (!untimed && (ev->sample_type & PERF_SAMPLE_TIME))
		claimed = pea_ring_claim(ev, ring, pg, len, &offset, &head,
					 &time, true, plain);
	else
		claimed = pea_ring_claim(ev, ring, pg, len, &offset, &head,
					 &time, false, plain);
	if (unlikely(!claimed))
		goto fail;

	if (!plain) {
		if (ring->backward) {
			offset = head;
			fwd = -head;
		} else {
			fwd = head;
		}
		if (unlikely(fwd - local_read(&ring->wakeup) >
			     ring->watermark))
			local_add(ring->watermark, &ring->wakeup);
	}

	p = ring->data + (offset & ring->mask);
	if (lost)
		p = pea_put_lost(p, ev, lost, time);
	return pea_put_sample(p, ev, rec, time);

fail:
	if (lost) {
		atomic_long_add(lost, &ev->lost_pending);
		WRITE_ONCE(PEA_PAGE_LOST_HINT(pg), 1);
	}
	pea_ring_count_lost(ev, ring);
	pea_ring_put_handle(ev, ring, *wakeup, plain, false);
	return NULL;
}

/* Count the record of @rec bytes, account wake-ups, publish data_head. */
static __always_inline void __pea_ring_commit(struct pea_event *ev,
					      struct pea_ring *ring, u32 rec,
					      unsigned long wakeup, bool plain)
{
	u32 every = ev->wakeup_events;	/* 0 with attr.watermark */

	local64_inc(&ev->records);
	local64_add(rec, &ev->bytes);
	if (plain) {
		/* wakeup_events 1, without the position */
	} else if (every == 1) {
		/* Linux's default: every record wakes, nothing to count. */
		local_inc(&ring->wakeup);
	} else if (every) {
		long events = local_inc_return(&ring->events);

		if (events >= every) {
			local_sub(every, &ring->events);
			local_inc(&ring->wakeup);
		}
	}
	pea_ring_put_handle(ev, ring, wakeup, plain, true);
}

/**
 * pea_ring_reserve() - reserve a sample record of @size payload bytes
 * @ev: an enabled output event bound to this CPU
 * @size: payload bytes, at most @ev->max_payload
 * @h: filled with the payload pointer on success
 *
 * Called with preemption disabled on @ev->cpu. Writes the record's
 * header, fields and padding (and a PERF_RECORD_LOST before it when drops
 * are pending); the caller fills h->data and calls pea_ring_commit().
 *
 * Return: 0, or -ENOSPC when the record was dropped and counted lost.
 */
long pea_ring_reserve(struct pea_event *ev, u32 size,
		      struct pea_output_handle *h)
{
	struct pea_ring *ring = rcu_dereference_sched(ev->ring);
	u32 rec = pea_record_size(ev, size);

	if (likely(ring && ring->plain))
		h->data = __pea_ring_reserve(ev, ring, rec, &h->wakeup, true,
					     false);
	else
		h->data = __pea_ring_reserve(ev, ring, rec, &h->wakeup, false,
					     false);
	if (unlikely(!h->data))
		return -ENOSPC;
	h->size = size;
	h->rec_size = rec;
	h->event = ev;
	h->ring = ring;
	return 0;
}

/**
 * pea_ring_set_user() - mark a reserved sample as taken in user mode
 * @h: the handle pea_ring_reserve() filled
 *
 * header.misc is PERF_RECORD_MISC_KERNEL when reserved, what
 * perf_misc_flags() gives for kernel registers and what pea_output() and
 * the kfuncs, which have no registers, always write. A producer that has
 * the registers of its hit calls this when they are user mode, as
 * perf_prepare_sample() (6.1) / perf_prepare_header() (6.12) would set
 * PERF_RECORD_MISC_USER for bpf_perf_event_output() from a uprobe or a
 * syscall tracepoint. The header sits fixed_size + 4 bytes before the
 * payload, in the same contiguous record; nobody reads it before
 * pea_ring_commit() publishes it.
 */
void pea_ring_set_user(struct pea_output_handle *h)
{
	struct perf_event_header *hdr;

	hdr = h->data - h->event->fixed_size - sizeof(u32);
	hdr->misc = PERF_RECORD_MISC_USER;
}

/**
 * pea_ring_commit() - publish a record reserved by pea_ring_reserve()
 * @h: the handle pea_ring_reserve() filled
 */
void pea_ring_commit(struct pea_output_handle *h)
{
	if (likely(h->ring->plain))
		__pea_ring_commit(h->event, h->ring, h->rec_size, h->wakeup,
				  true);
	else
		__pea_ring_commit(h->event, h->ring, h->rec_size, h->wakeup,
				  false);
}

/*
 * Reserve, copy, commit: pea_ring_output_map()'s end, in three copies:
 * plain rings without TIME (no call but the copy), other plain rings,
 * the others. Every writer of a ring takes the same kind of copy (plain
 * or not: @ring->plain), as the wake-up decisions of nested writers
 * depend on it. Out of line and reached by a tail call: the checks
 * before need no registers saved, and each copy saves only what it keeps
 * across its calls.
 */
static __always_inline long __pea_ring_write(struct pea_event *ev,
					     struct pea_ring *ring,
					     const void *data, u32 size,
					     bool plain, bool untimed)
{
	u32 rec = pea_record_size(ev, size);
	unsigned long wakeup;
	void *p;

	p = __pea_ring_reserve(ev, ring, rec, &wakeup, plain, untimed);
	if (unlikely(!p))
		return -ENOSPC;
	memcpy(p, data, size);
	__pea_ring_commit(ev, ring, rec, wakeup, plain);
	return 0;
}

static noinline notrace long pea_ring_write_fast(struct pea_event *ev,
						 struct pea_ring *ring,
						 const void *data, u32 size)
{
	return __pea_ring_write(ev, ring, data, size, true, true);
}

static noinline notrace long pea_ring_write_plain(struct pea_event *ev,
						  struct pea_ring *ring,
						  const void *data, u32 size)
{
	return __pea_ring_write(ev, ring, data, size, true, false);
}

static noinline notrace long pea_ring_write(struct pea_event *ev,
					    struct pea_ring *ring,
					    const void *data, u32 size)
{
	return __pea_ring_write(ev, ring, data, size, false, false);
}

/**
 * pea_ring_output_map() - write one sample record into the event @flags names
 * @map: the map
 * @flags: slot index in the low 32 bits, or PEA_F_CURRENT_CPU
 * @data: the payload
 * @size: payload bytes
 *
 * pea_output() after its nesting slot: the slot and event checks
 * (pea_output_event()), pea_ring_reserve(), the copy and
 * pea_ring_commit() in one function, so that pea_output() and
 * pea_kf_output() make one call here and one to memcpy(): every return
 * of the hot path costs (a return thunk on mitigated CPUs). notrace: a
 * traced program here would be a writer nested inside this one's slot.
 *
 * Context: preemption disabled, a nesting slot held (pea_nest_level).
 * Return: 0, pea_output_event()'s errors, or -ENOSPC when the record was
 * dropped and counted lost.
 */
notrace long pea_ring_output_map(struct pea_map *map, u64 flags,
				 const void *data, u64 size)
{
	struct pea_event *ev;
	struct pea_ring *ring;
	long err;

	err = pea_output_event(map, flags, size, &ev);
	if (unlikely(err))
		return err;
	ring = rcu_dereference_sched(ev->ring);
	if (likely(ring && ring->fast))
		return pea_ring_write_fast(ev, ring, data, size);
	if (ring && ring->plain)
		return pea_ring_write_plain(ev, ring, data, size);
	return pea_ring_write(ev, ring, data, size);
}
