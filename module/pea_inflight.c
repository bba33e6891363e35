// SPDX-License-Identifier: GPL-2.0
/*
 * pea: calls in flight, each held by the task that made it.
 *
 * A kretprobe's instances belong to the kprobes layer, which gives no way
 * to see which are in flight. pea keeps its own table beside them: the
 * entry handler takes a slot for the call, the return handler gives it
 * back. A closed kretprobe link stays registered (disabled) while any
 * slot is held, so that the instance pool stays charged to its attacher
 * until the calls in flight have returned (pea_probe.c). (An fprobe
 * return link needs no table: it holds its return nodes' pool, whose
 * count says what the kernel still holds, pea_fprobe.c.)
 *
 * A task that exits inside the function never returns: the kernel
 * recycles its instance at the task's last put (rethook_flush_task(),
 * after the task has been reaped) without calling a handler. A slot
 * remembers its owner (thread id, task and its stack canary, start time;
 * its thread group and
 * the group leader's start time) so that a scan can tell such a slot from
 * a live one: the owner is gone when neither its thread id nor its thread
 * group id names that same task any more. A zombie not yet reaped still
 * holds its instance, so it counts as alive; a thread that exec'd from
 * another than the group leader has taken the leader's id and start time
 * (de_thread()), so it is found by its thread group id. The idle tasks
 * (thread id 0) never exit.
 *
 * A slot's owner word: thread id + 1 in the low 23 bits (PID_MAX_LIMIT is
 * 2^22; 0: free), a PENDING bit while the claimer publishes who it is,
 * and a generation in the other 40 bits that every claim and every
 * release advances: a cmpxchg() from a word read earlier fails once the
 * slot has changed hands in between. Claims and releases run in the
 * kprobe handlers, with preemption off, so the window between a read and
 * its cmpxchg() is a few instructions; 2^40 changes of one slot take
 * days at a million calls a second.
 */
#include <linux/bitops.h>
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include "pea_inflight.h"

#define PEA_IF_TID_BITS		23
#define PEA_IF_TID_MASK		(BIT_ULL(PEA_IF_TID_BITS) - 1)
#define PEA_IF_PENDING		BIT_ULL(PEA_IF_TID_BITS)
#define PEA_IF_GEN_SHIFT	(PEA_IF_TID_BITS + 1)
#define PEA_IF_SCAN		64	/* slots a stale scan looks at, at most */

/*
 * Who holds a slot: the claimer writes it while the owner word has
 * PENDING; @task is compared, never dereferenced.
 */
struct pea_inflight_who {
	unsigned long task;
	unsigned long cookie;	/* pea_inflight_cookie() */
	u64 start;		/* the task's start_time */
	u64 leader_start;	/* its group leader's */
	pid_t tgid;
};

/* The owner word that follows @old, for @who (thread id + 1; 0: free). */
static u64 pea_inflight_next(u64 old, u64 who)
{
	return ((old >> PEA_IF_GEN_SHIFT) + 1) << PEA_IF_GEN_SHIFT |
	       (who & PEA_IF_TID_MASK);
}

static bool pea_inflight_held(u64 o)
{
	return o & (PEA_IF_TID_MASK | PEA_IF_PENDING);
}

/**
 * pea_inflight_size() - the memory pea_inflight_init() allocates
 * @nr: slots
 *
 * Return: bytes, as the allocator rounds them.
 */
size_t pea_inflight_size(u32 nr)
{
	return kmalloc_size_roundup(array_size(nr, sizeof(atomic64_t))) +
	       kmalloc_size_roundup(array_size(nr,
					       sizeof(struct pea_inflight_who)));
}

/**
 * pea_inflight_init() - an empty table of @nr slots
 * @f: the table, zeroed
 * @nr: slots, the most calls in flight at once
 *
 * Charged to the caller's memory cgroup.
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int pea_inflight_init(struct pea_inflight *f, u32 nr)
{
	f->owner = kvcalloc(nr, sizeof(*f->owner), GFP_KERNEL_ACCOUNT);
	f->who = kvcalloc(nr, sizeof(*f->who), GFP_KERNEL_ACCOUNT);
	if (!f->owner || !f->who) {
		pea_inflight_free(f);
		return -ENOMEM;
	}
	f->nr = nr;
	atomic64_set(&f->next_reclaim, get_jiffies_64());
	return 0;
}

/**
 * pea_inflight_free() - free a table (zeroed or initialised)
 * @f: the table; no handler uses it any more
 */
void pea_inflight_free(struct pea_inflight *f)
{
	kvfree(f->owner);
	kvfree(f->who);
	f->owner = NULL;
	f->who = NULL;
	f->nr = 0;
}

/*
 * A value fixed at fork for the life of a task, exec included, that a
 * later task reusing the same task_struct does not inherit: the stack
 * canary, random per task. Without CONFIG_STACKPROTECTOR, none.
 */
static unsigned long pea_inflight_cookie(const struct task_struct *t)
{
#ifdef CONFIG_STACKPROTECTOR
	return t->stack_canary;
#else
	return 0;
#endif
}

/*
 * Whether slot @i's owner, as its word @o names it, can never return: see
 * the file's comment. @o was read with acquire and without PENDING, so
 * what is read of @who here is the owner's.
 */
static bool pea_inflight_stale(struct pea_inflight *f, u32 i, u64 o)
{
	const struct pea_inflight_who *w = &f->who[i];
	pid_t tid = (pid_t)(o & PEA_IF_TID_MASK) - 1;
	unsigned long task = READ_ONCE(w->task);
	unsigned long cookie = READ_ONCE(w->cookie);
	struct task_struct *t;
	bool live;

	if (!tid)
		return false;
	rcu_read_lock();
	t = pid_task(find_pid_ns(tid, &init_pid_ns), PIDTYPE_PID);
	live = t && (unsigned long)t == task &&
	       pea_inflight_cookie(t) == cookie &&
	       t->start_time == READ_ONCE(w->start);
	if (!live) {
		t = pid_task(find_pid_ns(READ_ONCE(w->tgid), &init_pid_ns),
			     PIDTYPE_PID);
		live = t && (unsigned long)t == task &&
		       pea_inflight_cookie(t) == cookie &&
		       t->start_time == READ_ONCE(w->leader_start);
	}
	rcu_read_unlock();
	return !live;
}

/*
 * Take slot @i from its owner word @old for the current task. The
 * owner's identity is published (release) before the word loses PENDING,
 * for pea_inflight_stale() on other CPUs.
 */
static bool pea_inflight_take(struct pea_inflight *f, u32 i, u64 old,
			      u64 *owner)
{
	u64 mine = pea_inflight_next(old, (u64)current->pid + 1);

	if (atomic64_cmpxchg_acquire(&f->owner[i], old,
				     mine | PEA_IF_PENDING) != old)
		return false;
	WRITE_ONCE(f->who[i].task, (unsigned long)current);
	WRITE_ONCE(f->who[i].cookie, pea_inflight_cookie(current));
	WRITE_ONCE(f->who[i].start, current->start_time);
	WRITE_ONCE(f->who[i].leader_start, current->group_leader->start_time);
	WRITE_ONCE(f->who[i].tgid, current->tgid);
	atomic64_set_release(&f->owner[i], mine);
	*owner = mine;
	return true;
}

/*
 * A slot whose owner can never return, taken for the current task, or
 * -1. A scan looks at PEA_IF_SCAN slots at most, from where the last one
 * stopped (a pid lookup each, in a probe handler); one that finds none
 * stops the others for the rest of the jiffy, so that a table full of
 * live calls is not scanned on every call.
 */
static int pea_inflight_reclaim(struct pea_inflight *f, u64 *owner)
{
	u32 n = f->nr, i, k;
	u64 o, now = get_jiffies_64();

	if (time_before64(now, (u64)atomic64_read(&f->next_reclaim)))
		return -1;
	i = (u32)atomic_add_return(PEA_IF_SCAN, &f->cursor) % n;
	for (k = 0; k < min_t(u32, n, PEA_IF_SCAN);
	     k++, i = i + 1 == n ? 0 : i + 1) {
		o = atomic64_read_acquire(&f->owner[i]);
		if ((o & PEA_IF_TID_MASK) && !(o & PEA_IF_PENDING) &&
		    pea_inflight_stale(f, i, o) &&
		    pea_inflight_take(f, i, o, owner))
			return i;
	}
	atomic64_set(&f->next_reclaim, now + 1);
	return -1;
}

/**
 * pea_inflight_claim() - a slot for a call of the current task
 * @f: the table
 * @owner: set to the slot's owner word, for pea_inflight_release()
 *
 * A free slot, else one whose owner can never return.
 *
 * Context: any, NMI included; no locks, no allocation.
 * Return: the slot, or -1 if every slot is held by a live call.
 */
int pea_inflight_claim(struct pea_inflight *f, u64 *owner)
{
	u32 n = f->nr, h, i, k;
	u64 o;

	if (!n)
		return -1;
	h = reciprocal_scale(hash_32(current->pid, 32), n);
	for (k = 0, i = h; k < n; k++, i = i + 1 == n ? 0 : i + 1) {
		o = atomic64_read(&f->owner[i]);
		if (!pea_inflight_held(o) && pea_inflight_take(f, i, o, owner))
			return i;
	}
	return pea_inflight_reclaim(f, owner);
}

/**
 * pea_inflight_release() - give back what pea_inflight_claim() took
 * @f: the table
 * @slot: the slot
 * @owner: the owner word the claim gave
 *
 * A slot a scan took away meanwhile (its owner looked gone) stays with
 * its new owner: the cmpxchg() fails on the generation.
 *
 * Context: any, NMI included.
 */
void pea_inflight_release(struct pea_inflight *f, u32 slot, u64 owner)
{
	if (slot < f->nr)
		atomic64_cmpxchg_release(&f->owner[slot], owner,
					 pea_inflight_next(owner, 0));
}

/**
 * pea_inflight_busy() - whether a call is in flight
 * @f: the table, taking no new claims (its probe is disabled and no
 *     handler that started before runs any more)
 *
 * Frees the slots whose owners can never return on the way.
 *
 * Context: process context.
 * Return: true while any slot is held by a live call.
 */
bool pea_inflight_busy(struct pea_inflight *f)
{
	u32 i;
	u64 o;

	for (i = 0; i < f->nr; i++) {
		o = atomic64_read_acquire(&f->owner[i]);
		if (!pea_inflight_held(o))
			continue;
		if ((o & PEA_IF_PENDING) || !pea_inflight_stale(f, i, o))
			return true;
		/* Fails only if the owner returned meanwhile: free too. */
		atomic64_cmpxchg(&f->owner[i], o, pea_inflight_next(o, 0));
	}
	return false;
}
