// SPDX-License-Identifier: GPL-2.0
/*
 * pea: latency between two probes (PEA_LINK_IOC_LAT_CREATE, _INFO).
 *
 * A start link's pairing table keeps, per pairing key (a thread id, a
 * probe's argument, a tracepoint's field), the time of the key's last
 * start. An end link's aggregation table (pea_agg.c, PEA_AGG_VAL_PAIRED)
 * computes its own key at each hit, takes the start kept under it out
 * and counts the ns between the two. It is what bcc's runqlat and
 * biolatency keep in a BPF hash map (kernel/bpf/hashtab.c) between their
 * two programs, done without a program and without a lock.
 *
 * Layout. @cap slots (a power of two, twice max_pending or more), each a
 * state word, the key and the start's time. A key's slots are the
 * PEA_LAT_WINDOW slots from its jhash (the whole table when it is
 * smaller): a start takes any free one of them, an end looks at all of
 * them, so that a slot freed anywhere is reused and no tombstone is
 * needed.
 *
 * Writers. Starts and ends run on any CPU, in any context (NMI
 * included), and meet on the same slots, so a slot changes hands only by
 * cmpxchg() on its state (a full barrier where it succeeds):
 *   FREE -> BUSY (a start claims it), key and time written, then
 *   BUSY -> READY with a release: a CPU that sees READY with an acquire
 *   (or takes it with cmpxchg()) sees the key and the time;
 *   READY -> BUSY (an end takes it, or a start of the same key replaces
 *   the time), then back to FREE or READY with a release.
 * The key of a READY slot is read before the slot is taken, so it may
 * change under the reader (another CPU took the slot and gave it another
 * key): whoever takes a slot compares the key again and, if it is not
 * its own, puts the slot back as it was. Between the two an end of that
 * key on a third CPU may miss it (unpaired); no hit is ever paired with
 * another key's start. A start takes one of max_pending tickets (@used)
 * before it claims a slot and an end gives one back after it frees one:
 * no ticket, or no free slot in the window, is an overflow, counted, and
 * the start is kept nowhere. Two starts of one key on two CPUs at once
 * may both be kept; ends then take them one after the other.
 *
 * Lifetime. The struct pea_lat is referenced by its start link and by
 * every end link's table; the slots belong to the start link alone and
 * go with it: it clears @slots, waits for a grace period (an end's
 * handler runs with preemption off, an RCU-sched reader, NMI handlers
 * included) and frees them; ends find no slots then and count their
 * hits as unpaired. The slots are charged to the start link's user as a
 * table is (pea_link_charge_caller()); each end link is charged the
 * struct it keeps alive.
 */
#include <linux/jhash.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include "pea_internal.h"
#include "pea_link.h"
#include "pea_provider.h"
#include "pea_quota.h"
#include "pea_agg.h"
#include "pea_intval.h"
#include "pea_lat.h"

enum pea_lat_state {
	PEA_LAT_FREE = 0,	/* zeroed */
	PEA_LAT_BUSY,		/* a start or an end holds it */
	PEA_LAT_READY,		/* a start is kept (release / acquire) */
};

struct pea_lat_slot {
	unsigned long state;
	u64 key;
	u64 ts;
};

struct pea_lat {
	refcount_t ref;			/* the start link and each end link */
	struct pea_lat_slot __rcu *slots;	/* NULL once the start closed */
	u32 flags;
	u32 max_pending;
	u32 cap;			/* slots, a power of two */
	u32 window;			/* min(cap, PEA_LAT_WINDOW) */
	u32 seed;
	struct pea_lat_key key;		/* the start's */
	size_t charged;			/* the start link's charge for it */
	atomic_t used;			/* tickets: starts kept, and takers */
	atomic64_t started;
	atomic64_t replaced;
	atomic64_t overflow;
	atomic64_t errors;
	atomic64_t paired;
};

static DEFINE_MUTEX(pea_lat_create_lock);

/**
 * pea_lat_check_key() - whether @l's hits give the pairing key @k
 * @l: a link
 * @k: a key from user space
 *
 * Return: 0, -EINVAL (the key, or a kind whose hits do not give it),
 * -EOPNOTSUPP (a kind without tables).
 */
int pea_lat_check_key(struct pea_link *l, const struct pea_lat_key *k)
{
	struct pea_agg_attr a = {};

	if (!l->provider->agg_check)
		return -EOPNOTSUPP;
	switch (k->kind) {
	case PEA_LAT_KEY_TID:
		return k->arg || k->offset || k->size ? -EINVAL : 0;
	case PEA_LAT_KEY_ARG:
		/* size: the parameter's width (0 is 8), review F3 */
		if (k->arg > 5 || k->offset ||
		    (k->size && k->size != 1 && k->size != 2 && k->size != 4 &&
		     k->size != 8))
			return -EINVAL;
		a.value = PEA_AGG_VAL_ARG;
		break;
	case PEA_LAT_KEY_FIELD:
		if (k->arg || k->offset > PAGE_SIZE ||
		    (k->size != 1 && k->size != 2 && k->size != 4 &&
		     k->size != 8))
			return -EINVAL;
		a.value = PEA_AGG_VAL_FIELD;
		break;
	default:
		return -EINVAL;
	}
	/* The kind's word on whether its hits give that value. */
	return l->provider->agg_check(l, &a);
}

/**
 * pea_lat_key() - the pairing key of a hit
 * @k: the link's pairing key
 * @s: the hit
 * @key: out: its value
 *
 * Context: any (NMI included).
 * Return: false if it cannot be read (a field past the entry).
 */
bool pea_lat_key(const struct pea_lat_key *k, const struct pea_agg_sample *s,
		 u64 *key)
{
	switch (k->kind) {
	case PEA_LAT_KEY_ARG:
		if (!s->args)
			return false;
		*key = s->args[k->arg];
		/* The bits above a narrower parameter are the caller's. */
		if (k->size && k->size < 8)
			*key &= (1ULL << (k->size * 8)) - 1;
		return true;
	case PEA_LAT_KEY_FIELD:
		if (!s->raw || k->offset > s->raw_len ||
		    k->size > s->raw_len - k->offset)
			return false;
		*key = pea_int_load(s->raw + k->offset, k->size, false);
		return true;
	default:
		/* The initial namespace's, as tracepoint fields carry it. */
		*key = task_pid_nr(current);
		return true;
	}
}

static u32 pea_lat_hash(const struct pea_lat *lat, u64 key)
{
	return jhash_2words((u32)key, (u32)(key >> 32), lat->seed) &
	       (lat->cap - 1);
}

/**
 * pea_lat_start() - keep the time of a start hit under its key
 * @lat: the start link's pairing table
 * @s: the hit
 *
 * Context: any (NMI included), preemption off: no lock, no allocation.
 * Return: true if the link writes no record for the hit
 * (PEA_LAT_F_NO_RECORDS).
 */
bool pea_lat_start(struct pea_lat *lat, const struct pea_agg_sample *s)
{
	u64 now = ktime_get_mono_fast_ns(), key;
	struct pea_lat_slot *slots, *sl;
	bool mine;
	u32 h, n;

	/* The start link is alive: its slots are there. */
	slots = rcu_dereference_sched(lat->slots);
	if (!slots)
		goto out;
	if (!pea_lat_key(&lat->key, s, &key)) {
		atomic64_inc(&lat->errors);
		goto out;
	}
	h = pea_lat_hash(lat, key);
	/* A start of a kept key replaces its time. */
	for (n = 0; n < lat->window; n++) {
		sl = &slots[(h + n) & (lat->cap - 1)];
		/* Acquire: a READY slot's key was written before. */
		if (smp_load_acquire(&sl->state) != PEA_LAT_READY ||
		    READ_ONCE(sl->key) != key)
			continue;
		if (cmpxchg(&sl->state, PEA_LAT_READY, PEA_LAT_BUSY) !=
		    PEA_LAT_READY)
			continue;
		/* Taken: the key cannot change under us now. */
		mine = sl->key == key;
		if (mine)
			sl->ts = now;
		/* Release: the time before READY (an end's acquire). */
		smp_store_release(&sl->state, PEA_LAT_READY);
		if (mine) {
			atomic64_inc(&lat->replaced);
			atomic64_inc(&lat->started);
			goto out;
		}
	}
	if (atomic_inc_return(&lat->used) > lat->max_pending)
		goto overflow;
	for (n = 0; n < lat->window; n++) {
		sl = &slots[(h + n) & (lat->cap - 1)];
		if (READ_ONCE(sl->state) != PEA_LAT_FREE ||
		    cmpxchg(&sl->state, PEA_LAT_FREE, PEA_LAT_BUSY) !=
		    PEA_LAT_FREE)
			continue;
		sl->key = key;
		sl->ts = now;
		/* Release: the key and time before READY. */
		smp_store_release(&sl->state, PEA_LAT_READY);
		atomic64_inc(&lat->started);
		goto out;
	}
overflow:
	atomic_dec(&lat->used);
	atomic64_inc(&lat->overflow);
out:
	return lat->flags & PEA_LAT_F_NO_RECORDS;
}

/**
 * pea_lat_take() - take the start kept under an end hit's key out
 * @lat: the start link's pairing table (an end link's reference)
 * @key: the end's pairing key (pea_lat_key())
 * @ns: out: the ns since the start (0 if the clock went back)
 *
 * Context: any (NMI included), preemption off: no lock, no allocation.
 * Return: 0, or -ENOENT (no start kept under the key, or the start link
 * closed).
 */
int pea_lat_take(struct pea_lat *lat, u64 key, u64 *ns)
{
	u64 now = ktime_get_mono_fast_ns(), ts;
	struct pea_lat_slot *slots, *sl;
	u32 h, n;

	/* RCU-sched: the start link frees them after a grace period. */
	slots = rcu_dereference_sched(lat->slots);
	if (!slots)
		return -ENOENT;
	h = pea_lat_hash(lat, key);
	for (n = 0; n < lat->window; n++) {
		sl = &slots[(h + n) & (lat->cap - 1)];
		/* Acquire: as in pea_lat_start(). */
		if (smp_load_acquire(&sl->state) != PEA_LAT_READY ||
		    READ_ONCE(sl->key) != key)
			continue;
		if (cmpxchg(&sl->state, PEA_LAT_READY, PEA_LAT_BUSY) !=
		    PEA_LAT_READY)
			continue;
		if (sl->key != key) {
			/* Another key since we looked: as it was. */
			smp_store_release(&sl->state, PEA_LAT_READY);
			continue;
		}
		ts = sl->ts;
		/* Release: our reads of it before another start's writes. */
		smp_store_release(&sl->state, PEA_LAT_FREE);
		atomic_dec(&lat->used);
		atomic64_inc(&lat->paired);
		*ns = now > ts ? now - ts : 0;
		return 0;
	}
	return -ENOENT;
}

/**
 * pea_lat_create() - PEA_LINK_IOC_LAT_CREATE: make @l a start link
 * @l: a live link
 * @a: the attr, copied from user space (pea_link_copy_attr())
 *
 * Context: process context, the ioctl.
 * Return: 0, -EINVAL, -EOPNOTSUPP, -EEXIST, -ENOMEM (see pea.h).
 */
long pea_lat_create(struct pea_link *l, const struct pea_lat_attr *a)
{
	struct pea_lat_slot *slots;
	struct pea_lat *lat;
	size_t bytes;
	long err;
	u32 cap;

	if (a->flags & ~PEA_LAT_FLAGS || a->reserved)
		return -EINVAL;
	if (!a->max_pending || a->max_pending > PEA_LAT_MAX_PENDING)
		return -EINVAL;
	err = pea_lat_check_key(l, &a->key);
	if (err)
		return err;
	cap = roundup_pow_of_two(2 * a->max_pending);
	/* What the allocators take. */
	bytes = kmalloc_size_roundup(sizeof(*lat)) +
		pea_alloc_size(array_size(cap, sizeof(*slots)));

	mutex_lock(&pea_lat_create_lock);
	if (l->lat) {
		err = -EEXIST;
		goto unlock;
	}
	err = pea_link_charge_caller(l, bytes);
	if (err)
		goto unlock;
	err = -ENOMEM;
	lat = kzalloc(sizeof(*lat), GFP_KERNEL_ACCOUNT);
	if (!lat)
		goto uncharge;
	slots = kvcalloc(cap, sizeof(*slots), GFP_KERNEL_ACCOUNT);
	if (!slots) {
		kfree(lat);
		goto uncharge;
	}
	refcount_set(&lat->ref, 1);
	RCU_INIT_POINTER(lat->slots, slots);
	lat->flags = a->flags;
	lat->max_pending = a->max_pending;
	lat->cap = cap;
	lat->window = min_t(u32, cap, PEA_LAT_WINDOW);
	lat->seed = get_random_u32();
	lat->key = a->key;
	lat->charged = bytes;
	/* Filled before handlers see it (pea_agg_hit()'s acquire). */
	smp_store_release(&l->lat, lat);
	err = 0;
	goto unlock;
uncharge:
	pea_link_uncharge(l, bytes);
unlock:
	mutex_unlock(&pea_lat_create_lock);
	return err;
}

/**
 * pea_lat_get_info() - PEA_LINK_IOC_LAT_INFO: a start link's counts
 * @l: a live link
 * @info: out
 *
 * Return: 0, or -ENOENT (no pairing table).
 */
long pea_lat_get_info(struct pea_link *l, struct pea_lat_info *info)
{
	/* Acquire: pairs with pea_lat_create()'s release. */
	struct pea_lat *lat = smp_load_acquire(&l->lat);
	int used;

	if (!lat)
		return -ENOENT;
	memset(info, 0, sizeof(*info));
	info->started = atomic64_read(&lat->started);
	info->replaced = atomic64_read(&lat->replaced);
	info->overflow = atomic64_read(&lat->overflow);
	info->errors = atomic64_read(&lat->errors);
	info->paired = atomic64_read(&lat->paired);
	/* Tickets of starts in flight count too: at most max_pending. */
	used = atomic_read(&lat->used);
	info->pending = clamp_t(int, used, 0, lat->max_pending);
	info->max_pending = lat->max_pending;
	return 0;
}

/**
 * pea_lat_get() - a start link's pairing table, with a reference for an
 * end link
 * @l: a live link (its file held by the caller)
 *
 * Return: the table, or NULL (@l has none).
 */
struct pea_lat *pea_lat_get(struct pea_link *l)
{
	/* Acquire: pairs with pea_lat_create()'s release. */
	struct pea_lat *lat = smp_load_acquire(&l->lat);

	if (lat)
		refcount_inc(&lat->ref);
	return lat;
}

/**
 * pea_lat_ref_size() - what an end link is charged for its reference
 *
 * Return: the bytes the allocator takes for a struct pea_lat.
 */
size_t pea_lat_ref_size(void)
{
	return kmalloc_size_roundup(sizeof(struct pea_lat));
}

/**
 * pea_lat_put() - drop a reference of pea_lat_fget() or the start's
 * @lat: the table (its slots gone already when this is the last one)
 */
void pea_lat_put(struct pea_lat *lat)
{
	if (lat && refcount_dec_and_test(&lat->ref))
		kfree(lat);
}

/* The start link gives its slots up: ends see NULL after a grace period. */
static void pea_lat_release(struct pea_link *l)
{
	struct pea_lat *lat = l->lat;
	struct pea_lat_slot *slots;

	l->lat = NULL;
	slots = rcu_dereference_protected(lat->slots, true);
	RCU_INIT_POINTER(lat->slots, NULL);
	/* Other references are end links whose handlers may be in it. */
	if (refcount_read(&lat->ref) > 1)
		synchronize_rcu();
	kvfree(slots);
	pea_lat_put(lat);
}

/**
 * pea_lat_retire() - free a retired start link's table and its charge
 * @l: a kretprobe link just retired: no handler of it runs again
 */
void pea_lat_retire(struct pea_link *l)
{
	struct pea_lat *lat = l->lat;

	if (!lat)
		return;
	pea_link_uncharge(l, lat->charged);
	pea_lat_release(l);
}

/**
 * pea_lat_free() - free @l's pairing table, when no handler of @l runs
 * @l: the link, being freed (its charge goes with the link's)
 *
 * Context: process context: it may wait for a grace period.
 */
void pea_lat_free(struct pea_link *l)
{
	if (l->lat)
		pea_lat_release(l);
}
