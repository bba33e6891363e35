/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: objects shared by the module's files. Nothing here is ABI.
 */
#ifndef _PEA_INTERNAL_H
#define _PEA_INTERNAL_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/refcount.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/irq_work.h>
#include <linux/poll.h>
#include <linux/hrtimer.h>
#include <linux/workqueue.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable-types.h>
#include <linux/list.h>
#include <linux/smp.h>
#include <asm/local.h>
#include <asm/local64.h>
#include <linux/pea.h>
#include "pea_limits.h"

#define PEA_MAX_RECORD		65528U	/* largest 8-aligned u16 record size */
/* What a wake-up shows poll(), as perf_output_wakeup() sets rb->poll. */
#define PEA_POLL_WAKE		(EPOLLIN | EPOLLRDNORM)
#define PEA_LOST_RECORD_SIZE	24U	/* header + id + lost, no sample_id */

/* The clock of PERF_SAMPLE_TIME (attr.use_clockid, attr.clockid). */
enum pea_clock {
	PEA_CLOCK_LOCAL = 0,	/* local_clock(), perf's default */
	PEA_CLOCK_MONO,		/* CLOCK_MONOTONIC: ktime_get_mono_fast_ns() */
	PEA_CLOCK_MONO_RAW,	/* CLOCK_MONOTONIC_RAW: ktime_get_raw_fast_ns() */
};

/*
 * struct pea_ring - one event's ring, alive while user space maps it
 *
 * Only the CPU the event is bound to writes into it (pea_output() refuses
 * any other CPU), so the write position and the nest count are local_t:
 * writers on that CPU nest (task, softirq, hardirq, NMI) but never run in
 * parallel. The data pages are vmapped twice in a row, so a record that
 * crosses the end of the ring is contiguous in the kernel's view.
 */
struct pea_ring {
	local_t head;		/* bytes ever reserved (decreasing if backward) */
	local_t nest;		/* writers inside reserve..commit */
	local_t events;		/* records since the last wakeup_events wake */
	local_t wakeup;		/* wake-up position, as perf's rb->wakeup */
	unsigned long watermark;
	unsigned long size;	/* data bytes, a power of two */
	unsigned long mask;
	bool overwrite;
	bool backward;
	/*
	 * Forward, not overwritten, wakeup_events 1, without PEA_FLAG_ORDERED,
	 * _ADAPTIVE_WAKEUP or _FLUSH: the writers' copy without those
	 * branches (pea_ring.c). Fixed for the ring's life.
	 */
	bool plain;
	bool fast;	/* plain, and no PERF_SAMPLE_TIME */
	/*
	 * The largest record a writer may reserve: size, 0 while paused
	 * (PERF_EVENT_IOC_PAUSE_OUTPUT).
	 */
	unsigned long limit;
	atomic_t poll;		/* PEA_POLL_WAKE pending, as perf's rb->poll */
	atomic_t flush_armed;	/* PEA_FLAG_FLUSH: the flush timer is due */
	/* PEA_FLAG_FLUSH: data_head at the last wake-up a writer raised */
	unsigned long woken_head;

	struct perf_event_mmap_page *user_page;
	void *data;		/* data pages, mapped twice in a row */
	unsigned int nr_pages;	/* data pages */
	atomic_t mmap_count;
	struct page **pages;	/* [0] the control page, then the data pages */
	struct pea_charge charge;	/* memory charged to the mapping user */
	struct rcu_work free_work;
};

enum pea_event_kind {
	PEA_EVENT_OUTPUT = 1,
	PEA_EVENT_COUNTER = 2,		/* a perf counter, see pea_counter.h */
};

/*
 * struct pea_event - an output event bound to one CPU
 *
 * References: its file, each map slot holding it. The counters written by
 * the output path are local64_t: only the owning CPU writes them.
 */
struct pea_event {
	refcount_t refcnt;
	enum pea_event_kind kind;
	int cpu;
	int oncpu;		/* cpu while enabled, -1 while disabled */
	u64 id;
	u64 sample_type;
	u64 read_format;
	u32 wakeup_events;
	u32 fixed_size;		/* header and TID/TIME/CPU fields */
	u32 max_payload;
	bool watermark;
	bool backward;
	bool adaptive;		/* PEA_FLAG_ADAPTIVE_WAKEUP */
	bool ordered;		/* PEA_FLAG_ORDERED: publish writers in flight */
	u8 clock;		/* enum pea_clock */
	u32 lost_size;		/* PERF_RECORD_LOST, with sample_id if asked */
	u64 flush_ns;		/* PEA_FLAG_FLUSH: latency bound, 0 if off */
	u32 wakeup_watermark;
	struct pid_namespace *pid_ns;

	struct pea_ring __rcu *ring;
	struct mutex mmap_mutex;	/* serialises ring attach/detach */

	atomic_long_t lost_pending;	/* dropped, not yet reported */
	local64_t records;
	local64_t bytes;
	local64_t lost;
	local64_t wakeups;
	atomic64_t count_base;		/* records at the last RESET */

	wait_queue_head_t waitq;
	struct irq_work wakeup_work;
	struct irq_work flush_work;	/* arms flush_timer on the event's CPU */
	struct hrtimer flush_timer;
	struct work_struct free_work;

	struct pea_counter *counter;	/* PEA_EVENT_COUNTER only */
};

struct pea_map_entry {
	struct pea_event *event;
	struct rcu_head rcu;
};

/*
 * Errors of pea's kfuncs on a map, counted per map: a BPF program may
 * ignore what the kfunc returns (pea_kfunc.c).
 */
enum pea_kf_err {
	PEA_KF_EINVAL,		/* flag bits, or not an output event */
	PEA_KF_E2BIG,		/* index past max_entries, or payload too big */
	PEA_KF_ENOENT,		/* empty slot */
	PEA_KF_EOPNOTSUPP,	/* event disabled or bound to another CPU */
	PEA_KF_EBUSY,		/* nested deeper than PEA_NEST_MAX */
	PEA_KF_ENOSPC,		/* dropped (and counted lost by the event) */
	PEA_KF_EFAULT,		/* NULL data with a size (unchecked by 6.1) */
	PEA_KF_MAY_SLEEP,	/* a reserve where the context may sleep */
	PEA_KF_NR_ERR
};

struct pea_map {
	refcount_t refcnt;
	atomic_t usercnt;		/* open map fds */
	u32 max_entries;
	u32 map_flags;
	int numa_node;
	u64 id;
	char name[PEA_OBJ_NAME_LEN];
	struct list_head node;		/* pea_maps, under pea_maps_lock */
	struct mutex update_lock;	/* serialises slot updates */
	struct pea_map_entry __rcu **slots;
	/*
	 * PEA_F_BPF_WRITE: by bpf_handle (random, never 0) for the kfuncs,
	 * added and removed under pea_maps_lock; readers under RCU, so the
	 * map and its slots are freed after a grace period.
	 */
	u64 bpf_handle;
	struct rhash_head handle_node;
	struct rcu_head rcu;
	/*
	 * PEA_F_BPF_WRITE: PEA_KF_NR_ERR counters per CPU (this_cpu_inc():
	 * no shared cacheline on error storms, NMI-safe on x86), summed by
	 * pea_maps_kf_show(); NULL for other maps.
	 */
	u64 __percpu *kf_errors;
	/*
	 * PEA_MAP_IOC_EXCLUDE_TGID: the excluded process (a reference),
	 * set once by cmpxchg() and put when the map goes; links compare
	 * it with the hitting task's and never dereference it.
	 */
	struct pid *exclude_tgid;
};

/* pea_objects.c: the queue deferred frees run on (allocated at load) */
extern struct workqueue_struct *pea_wq;

/* Live objects, for the debugfs "objects" file (leak checks). */
struct pea_objects {
	atomic_t maps;
	atomic_t events;
	atomic_t rings;
	atomic_t links;
};

extern struct pea_objects pea_objects;

/* pea_objects.c */
u64 pea_next_id(void);

struct seq_file;
struct file;
struct pea_attach;

/* pea_map.c */
long pea_map_create(const struct pea_map_attr __user *uattr);
void pea_map_get(struct pea_map *map);
struct pea_map *pea_map_fget(int fd);
int pea_maps_show(struct seq_file *m, void *v);
void pea_map_attach_init(const struct pea_attach *table, unsigned int nr);

/*
 * The map info ioctl's number before bpf_handle (the struct's size is
 * part of it): binaries built before the kfunc send it.
 */
#define PEA_MAP_IOC_INFO_VER0 \
	_IOC(_IOC_READ, PEA_IOC_MAGIC, 0x13, PEA_MAP_INFO_SIZE_VER0)

/*
 * The link info ioctl's number before dropped (the struct's size is part
 * of it): binaries built before it send it.
 */
#define PEA_LINK_IOC_INFO_VER0 \
	_IOC(_IOC_READ, PEA_IOC_MAGIC, 0x30, PEA_LINK_INFO_SIZE_VER0)
/* ... and before deep. */
#define PEA_LINK_IOC_INFO_VER1 \
	_IOC(_IOC_READ, PEA_IOC_MAGIC, 0x30, PEA_LINK_INFO_SIZE_VER1)

/* pea_link.c */
int pea_links_show(struct seq_file *m, void *v);
void pea_links_exit(void);

/* pea_debugfs.c */
void pea_debugfs_init(void);
void pea_debugfs_exit(void);

/* pea_counter.c */
int pea_event_cpu(const struct pea_event *ev);
#ifdef CONFIG_COMPAT
long pea_perf_compat_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg);
#else
#define pea_perf_compat_ioctl NULL
#endif

/* pea_event.c */
long pea_event_open(const struct pea_event_open __user *uarg);
struct pea_event *pea_event_fget(int fd);

/**
 * pea_event_put() - drop a reference to an event
 * @ev: the event
 *
 * The last reference frees the event from a workqueue, so this may be
 * called from RCU callbacks.
 */
static inline void pea_event_put(struct pea_event *ev)
{
	if (refcount_dec_and_test(&ev->refcnt))
		queue_work(pea_wq, &ev->free_work);
}

/* pea_flush.c */
void pea_event_flush_arm(struct pea_event *ev, struct pea_ring *ring);
void pea_event_flush_init(struct pea_event *ev);
void pea_event_flush_stop(struct pea_event *ev);
void pea_event_show(struct seq_file *m, struct pea_event *ev);

/* pea_ring.c */
struct pea_ring *pea_ring_alloc(struct pea_event *ev, unsigned int nr_pages,
				bool overwrite, int node);
void pea_ring_free_deferred(struct pea_ring *ring);
long pea_ring_reserve(struct pea_event *ev, u32 size,
		      struct pea_output_handle *h);
long pea_ring_output_map(struct pea_map *map, u64 flags, const void *data,
			 u64 size);
u64 pea_ring_clock(u8 clock);
void pea_ring_commit(struct pea_output_handle *h);
void pea_ring_set_user(struct pea_output_handle *h);

/* pea_output.c: with a nesting slot held, for pea_kfunc.c */
long __pea_output_reserve(struct pea_map *map, u64 flags, u64 size,
			  struct pea_output_handle *handle);

/* pea_map.c: the maps by BPF handle, for pea_kfunc.c */
int pea_map_init(void);
void pea_map_exit(void);
struct pea_map *pea_map_find_rcu(u64 handle);
extern unsigned long pea_map_handles_gen;
void pea_maps_kf_show(struct seq_file *m);

/* pea_kfunc.c */
long pea_kf_output(u64 handle, u64 flags, const void *data, u32 data__sz);
struct pea_kf_rec;
struct pea_kf_rec *pea_kf_reserve(u64 handle, u64 flags, u32 rdwr_buf_size);
u8 *pea_kf_rec_data(struct pea_kf_rec *rec, u32 rdwr_buf_size);
void pea_kf_commit(struct pea_kf_rec *rec);
void pea_kfunc_init(void);
int pea_kfunc_show(struct seq_file *m, void *v);

/*
 * The event in the slot that @flags names, with bpf_perf_event_output()'s
 * rules and errno order: EINVAL (bits other than the index), E2BIG (index
 * at or past max_entries; PEA_F_CURRENT_CPU is @cpu, this CPU), ENOENT
 * (empty). Called with preemption disabled; the caller checks the event's
 * kind.
 */
static __always_inline long __pea_map_slot_event(struct pea_map *map,
						 u64 flags, int cpu,
						 struct pea_event **evp)
{
	struct pea_map_entry *entry;
	u64 index = cpu;

	/* PEA_F_CURRENT_CPU, the common case, is one test. */
	if (unlikely(flags != PEA_F_CURRENT_CPU)) {
		if (unlikely(flags & ~PEA_F_INDEX_MASK))
			return -EINVAL;
		index = flags;
	}
	if (unlikely(index >= map->max_entries))
		return -E2BIG;
	entry = rcu_dereference_sched(map->slots[index]);
	if (!entry)
		return -ENOENT;
	*evp = entry->event;
	return 0;
}

static __always_inline long pea_map_slot_event(struct pea_map *map, u64 flags,
					       struct pea_event **evp)
{
	return __pea_map_slot_event(map, flags, smp_processor_id(), evp);
}

/*
 * pea_output.c: writers inside reserve..commit on this CPU, one slot per
 * nesting context (PEA_NEST_MAX). pea's kfuncs take a slot first and
 * choose their map cache entry by it (pea_kfunc.c).
 */
DECLARE_PER_CPU(int, pea_nest_level);

/*
 * The output event @flags names in @map, with pea_output()'s checks after
 * the nesting slot, in its error order: pea_map_slot_event()'s, EINVAL
 * (not an output event), EOPNOTSUPP (disabled or bound to another CPU),
 * E2BIG (payload too large for one record). Called with preemption
 * disabled and a nesting slot held.
 */
static __always_inline long pea_output_event(struct pea_map *map, u64 flags,
					     u64 size, struct pea_event **evp)
{
	int cpu = smp_processor_id();	/* read once */
	struct pea_event *ev;
	long err;

	err = __pea_map_slot_event(map, flags, cpu, &ev);
	if (err)
		return err;
	/* A counter's oncpu is -1: one test for both, then which. */
	if (unlikely(READ_ONCE(ev->oncpu) != cpu))
		return ev->kind != PEA_EVENT_OUTPUT ? -EINVAL : -EOPNOTSUPP;
	if (unlikely(size > ev->max_payload))
		return -E2BIG;
	*evp = ev;
	return 0;
}

/**
 * pea_event_wakeup() - wake the event's pollers, from any context
 * @ev: the event
 * @ring: its ring, where EPOLLIN | EPOLLRDNORM is left for the next poll
 *
 * The wake-up itself runs from irq_work, so this is NMI-safe. Inline: the
 * writers call it for every record with Linux's default wakeup_events 1.
 */
static inline void pea_event_wakeup(struct pea_event *ev, struct pea_ring *ring)
{
	local64_inc(&ev->wakeups);
	/*
	 * Coalesce: while the flag of an earlier wake-up is still set (no
	 * poll has taken it), that wake-up's irq_work has run or will run,
	 * and no poller can have gone to sleep since (poll would have taken
	 * the flag and returned), so raising another one only costs an
	 * interrupt. Pollers see exactly what Linux shows them: EPOLLIN |
	 * EPOLLRDNORM once per taken flag. The xchg is a full barrier: a
	 * poller that takes the flag after it sees the data_head published
	 * before it.
	 */
	if (atomic_xchg(&ring->poll, (__force int)PEA_POLL_WAKE))
		return;
	irq_work_queue(&ev->wakeup_work);
}

/**
 * pea_event_wakeup_now() - wake the event's pollers from a timer or irq_work
 * @ev: the event
 * @ring: its ring
 *
 * As pea_event_wakeup(), for callers that may take the wait queue's lock
 * themselves (not NMI, not a producer that may sit inside the scheduler).
 */
static inline void pea_event_wakeup_now(struct pea_event *ev,
					struct pea_ring *ring)
{
	if (atomic_xchg(&ring->poll, (__force int)PEA_POLL_WAKE))
		return;
	local64_inc(&ev->wakeups);
	wake_up_all(&ev->waitq);
}

/* Record size of a payload of @size bytes for @ev. */
static inline u32 pea_record_size(const struct pea_event *ev, u32 size)
{
	return ev->fixed_size + ALIGN(size + 4, 8);
}

#endif /* _PEA_INTERNAL_H */
