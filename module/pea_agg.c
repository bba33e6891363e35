// SPDX-License-Identifier: GPL-2.0
/*
 * pea: in-kernel aggregation tables (PEA_LINK_IOC_AGG_CREATE, _READ).
 *
 * A link's table counts every hit its producer hands it, in the kernel,
 * so that no hit depends on room in a ring: per key (cpu, pid, tid,
 * comm, probe, or several), a count and, of a value (a return's latency
 * or value, an argument, a tracepoint field, the time since a start
 * link's paired hit: pea_lat.c), a sum, a minimum, a maximum and a log2
 * or linear histogram.
 *
 * Layout. Each possible CPU has its own memory, two generations of one
 * table each; writers use the generation @gen names. A generation is a
 * header (hits, dropped, errors, keys claimed) and an open-addressing
 * table of @cap slots (a power of two, at least twice max_keys, probed
 * linearly from the key's jhash), each slot a state word, the count,
 * sum, min, max, the key (PEA_AGG_KEY_WORDS words, or
 * PEA_AGG_WIDE_KEY_WORDS with PEA_AGG_F_WIDE_KEY: what its entries
 * carry) and the buckets.
 *
 * Writers. A hit runs on one CPU with preemption off (kprobe, kretprobe
 * and perf overflow handlers; uprobe handlers disable it around the
 * write) and touches only that CPU's table, so the only writers that can
 * race with it are the ones that interrupt it there (softirq, hardirq,
 * NMI) and run to completion before it resumes. Hence the local_t /
 * local64_t operations: single instructions (or atomics) no interrupt
 * splits, no lock. A new key claims a free slot with cmpxchg_local()
 * (FREE -> CLAIMING), writes the key and sets READY with a release, so
 * that a reader on another CPU that sees READY (acquire) sees the key. A
 * writer that meets a CLAIMING slot (one it interrupted) passes over it:
 * the same key may then take two slots of a CPU, which the reader adds
 * up like the entries of two CPUs. A slot is never freed while its
 * generation is live, so a lookup that reaches a free slot knows the key
 * is not there. Before claiming, a writer takes one of max_keys tickets
 * (@used); none left: it gives the ticket back, the hit counts in
 * @dropped, exactly, and no other key's entry changes. A writer that
 * loses the slot to an interrupting writer of the same key gives its
 * ticket back too, so @used is the tickets held plus the slots claimed.
 * At the boundary, an interrupting writer may find the last ticket held
 * by the writer it interrupted and be dropped though its key is the one
 * that writer is inserting (nesting exactly there: rare, and counted).
 *
 * Read and clear. Readers serialise on @lock. A read copies every READY
 * slot of both generations out, fields read one by one while writers
 * may be adding. A read-and-clear flips @gen (a release: the writers that
 * see the new value see the generation cleared before), then waits with
 * synchronize_rcu(): every writer that read the old value did so with
 * preemption off, an RCU read-side section which the grace period waits
 * for (NMI handlers included), and RCU orders all its stores before the
 * return. The old generation is then quiescent: it is copied out whole
 * and zeroed, and will be the one writers use after the next flip. Every
 * hit is counted in exactly one generation, which exactly one successful
 * read-and-clear returns. A read-and-clear that fails (ENOSPC, EFAULT)
 * leaves the old generation as it is and marks it @pending: the next
 * read-and-clear returns it without flipping (no writer uses it).
 *
 * Memory: both generations of every possible CPU, allocated at creation
 * (kvzalloc: GFP_KERNEL_ACCOUNT, the caller's memory cgroup) and charged,
 * at the size the allocator takes (kmalloc rounds up to a power of two
 * pages up to KMALLOC_MAX_SIZE), to the link's user with the caller's own
 * exemption (pea_quota_charge_obj(): max_user_probe_kb, max_probe_kb).
 *
 * Shared tables (PEA_LINK_IOC_AGG_SHARE, pea_agg_share()): other links
 * of the same kinds of hits may count in a link's table, each with a
 * reference (@ref); the table is freed when the last of them is freed
 * or retired (a kretprobe's: its calls in flight never reach the table
 * again), whichever link created it. Its charge is held by the table,
 * not by a link: its creator's user pays once, for as long as it lives.
 * Writers of different links are writers of the same CPU tables as
 * above (each runs to completion on its CPU with preemption off), so
 * nothing else changes: a read-and-clear's grace period waits for all.
 *
 * Readers sleep interruptibly on @lock and reschedule while they walk a
 * large table.
 *
 * Stack keys (PEA_AGG_KEY_KSTACK, _USTACK): the key word is the id of the
 * stack in the table's stack store (pea_agg_stack.c), shared by every
 * CPU, one per generation: a writer stores the stack in the generation it
 * counts in, and a read copies the stacks of the generations it reads. A
 * kernel stack is unwound from the registers the kind hands over (into
 * the store's per-CPU, per-level room) unless the kind unwound it
 * already (samplers). A stack that does not fit is counted in @dropped
 * and @stack_dropped; one that finds no room to unwind in (nested deeper
 * than PEA_NEST_MAX) in @errors.
 */
#include <linux/cpumask.h>
#include <linux/jhash.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/pid_namespace.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sizes.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/local.h>
#include <asm/local64.h>
#include "pea_internal.h"
#include "pea_link.h"
#include "pea_provider.h"
#include "pea_quota.h"
#include "pea_agg.h"
#include "pea_agg_stack.h"
#include "pea_fetch.h"
#include "pea_intval.h"
#include "pea_kstack.h"
#include "pea_lat.h"

enum pea_agg_state {
	PEA_AGG_FREE = 0,	/* zeroed: what clearing leaves */
	PEA_AGG_CLAIMING,	/* a writer of this CPU fills the key in */
	PEA_AGG_READY,		/* the key is there (release / acquire) */
};

struct pea_agg_slot {
	unsigned long state;
	local64_t count;
	local64_t sum;
	local64_t min;
	local64_t max;
	u64 key[];		/* slot_key_words, then nr_buckets local64_t */
};

/* What follows an entry's key, as struct pea_agg_entry{,_wide} have it. */
struct pea_agg_entry_tail {
	u32 cpu;
	u32 reserved;
	u64 count;
	s64 sum;
	s64 min;
	s64 max;
	u64 buckets[];
};

static_assert(sizeof(struct pea_agg_entry) ==
	      PEA_AGG_KEY_WORDS * 8 + sizeof(struct pea_agg_entry_tail));
static_assert(offsetof(struct pea_agg_entry, buckets) ==
	      PEA_AGG_KEY_WORDS * 8 +
	      offsetof(struct pea_agg_entry_tail, buckets));
static_assert(sizeof(struct pea_agg_entry_wide) ==
	      PEA_AGG_WIDE_KEY_WORDS * 8 + sizeof(struct pea_agg_entry_tail));
static_assert(offsetof(struct pea_agg_entry_wide, buckets) ==
	      PEA_AGG_WIDE_KEY_WORDS * 8 +
	      offsetof(struct pea_agg_entry_tail, buckets));

/* One CPU's table of one generation; @cap slots follow. */
struct pea_agg_gen {
	local64_t hits;
	local64_t dropped;
	local64_t errors;
	local64_t stack_dropped;	/* also in dropped */
	local64_t unpaired;	/* PEA_AGG_VAL_PAIRED: no start kept */
	local_t used;		/* tickets taken; may pass max_keys */
};

struct pea_agg {
	refcount_t ref;		/* each link that counts in it */
	struct mutex lock;	/* readers */
	unsigned int gen;	/* the generation writers use, 0 or 1 */
	bool pending;		/* the other one holds a failed clear's hits */
	u32 flags;
	u32 max_keys;
	u32 cap;		/* slots per generation, a power of two */
	u32 seed;
	u32 key_words;		/* words the key parts take (the rest: 0) */
	u32 value;
	u32 val_arg;
	u32 val_offset;
	u32 val_size;
	u32 hist;
	u32 nr_lin;		/* linear: buckets between the bounds */
	u32 nr_buckets;
	u32 key_offset;		/* PEA_AGG_KEY_FIELD */
	u32 key_size;
	u32 slot_key_words;	/* PEA_AGG_KEY_WORDS, or _WIDE_KEY_WORDS */
	/* The PEA_AGG_KEY_FETCH parts in keys[] order: fetch, bytes kept */
	u32 key_fetch[PEA_AGG_KEY_PARTS];
	u32 key_fetch_size[PEA_AGG_KEY_PARTS];	/* an integer's: 8 */
	u32 val_fetch;		/* PEA_AGG_VAL_FETCH: the fetch */
	bool sgn;		/* values are signed (else __u64) */
	size_t charged;		/* bytes charged to @quota for it */
	struct pea_quota *quota;	/* its creator's user (charged once) */
	struct pid_namespace *pid_ns;	/* its creator's: its pid keys' */
	u8 key_fetch_type[PEA_AGG_KEY_PARTS];	/* their fetches' types */
	u8 val_fetch_type;	/* PEA_AGG_VAL_FETCH: the fetch's type */
	struct pea_agg_attr attr;	/* what it was created with */
	/*
	 * With a PEA_AGG_KEY_PROBE part: the record ids of the links that
	 * count in it, each once (pea_agg_share(): review F2), under
	 * pea_agg_create_lock; else NULL.
	 */
	u64 *ids;
	u32 nr_ids;
	struct pea_stk *stk;	/* with a stack key, else NULL */
	u32 stack_depth;
	s64 lin_min;
	u64 lin_step;
	struct pea_lat *pair;	/* PEA_AGG_VAL_PAIRED: the start's table */
	struct pea_lat_key pair_key;	/* and this link's key */
	size_t slot_size;
	size_t gen_size;	/* header and slots */
	u8 keys[PEA_AGG_KEY_PARTS];
	void *cpu[];		/* nr_cpu_ids: 2 * gen_size bytes each */
};

static DEFINE_MUTEX(pea_agg_create_lock);

static struct pea_agg_gen *pea_agg_gen(const struct pea_agg *agg, int cpu,
				       unsigned int gen)
{
	return (struct pea_agg_gen *)((u8 *)agg->cpu[cpu] +
				      gen * agg->gen_size);
}

static struct pea_agg_slot *pea_agg_slot(const struct pea_agg *agg,
					 struct pea_agg_gen *g, u32 i)
{
	return (struct pea_agg_slot *)((u8 *)(g + 1) + i * agg->slot_size);
}

static local64_t *pea_agg_buckets(const struct pea_agg *agg,
				  struct pea_agg_slot *s)
{
	return (local64_t *)&s->key[agg->slot_key_words];
}

/*
 * Fetch @i of the hit's block @b: its bytes, their length and its status
 * (PEA_FETCH_*, and the failing read). The block was built by
 * pea_fetch_eval() for this link's fetch set, which pea_agg_check() made
 * sure has a fetch @i; its offsets and lengths are its own, within the
 * block buffer.
 */
static const u8 *pea_agg_fetch_val(const struct pea_fetch_block *b, u32 i,
				   u32 *len, u8 *status, u8 *step)
{
	const struct pea_fetch_value *fv = &b->values[i];

	*len = fv->len;
	*status = fv->status;
	*step = fv->step;
	return (const u8 *)b + fv->offset;
}

/* An integer fetch's value, signed as its type; false if it failed. */
static __always_inline bool
pea_agg_fetch_int(const struct pea_agg *agg, const struct pea_fetch_block *b,
		  s64 *v)
{
	u8 status, step;
	const u8 *p;
	u32 len;

	if (!b || agg->val_fetch >= b->nr)
		return false;
	p = pea_agg_fetch_val(b, agg->val_fetch, &len, &status, &step);
	if (status != PEA_FETCH_OK || !len)
		return false;
	*v = pea_int_load(p, len, agg->sgn);
	return true;
}

/*
 * Fetch part @n of a key at @key: the status word, then key_fetch_size[n]
 * bytes (rounded up to words), zero-padded. A failed fetch keeps no
 * bytes; a longer string or array than the room is cut and marked
 * truncated.
 * Return: the words written, or -EINVAL (no block: not a fetch's hit).
 */
static int pea_agg_fetch_key(const struct pea_agg *agg,
			     const struct pea_fetch_block *b, u32 n,
			     u64 *key)
{
	u32 size = agg->key_fetch_size[n], f = agg->key_fetch[n];
	u32 words = DIV_ROUND_UP(size, 8), len, w;
	u8 status, step;
	const u8 *p;

	if (!b || f >= b->nr)
		return -EINVAL;
	p = pea_agg_fetch_val(b, f, &len, &status, &step);
	for (w = 1; w <= words; w++)
		key[w] = 0;
	if (status == PEA_FETCH_FAULT)
		len = 0;
	if (len > size) {
		len = size;
		status = PEA_FETCH_TRUNCATED;
	}
	memcpy(&key[1], p, len);
	key[0] = status | (u64)step << 8 | (u64)len << 16;
	return words + 1;
}

/* The hit's value; false if it cannot be read (counted in errors). */
static __always_inline bool pea_agg_value(const struct pea_agg *agg,
					  const struct pea_agg_sample *s,
					  s64 *v)
{
	switch (agg->value) {
	case PEA_AGG_VAL_LATENCY:
		*v = s->latency;
		return true;
	case PEA_AGG_VAL_RET:
		*v = s->ret;
		return true;
	case PEA_AGG_VAL_ARG:
		if (!s->args)
			return false;
		*v = s->args[agg->val_arg];
		return true;
	case PEA_AGG_VAL_FIELD:
		if (!s->raw || agg->val_offset > s->raw_len ||
		    agg->val_size > s->raw_len - agg->val_offset)
			return false;
		*v = pea_int_load(s->raw + agg->val_offset, agg->val_size,
				  agg->flags & PEA_AGG_F_SIGNED);
		return true;
	case PEA_AGG_VAL_FETCH:
		return pea_agg_fetch_int(agg, s->fetch, v);
	default:
		*v = 0;
		return true;
	}
}

static __always_inline u32 pea_agg_bucket(const struct pea_agg *agg, s64 v)
{
	u64 i;

	if (agg->hist == PEA_AGG_HIST_LOG2) {
		if (agg->sgn && v < 0)
			return 0;
		/* Unsigned: [2^63, 2^64) is bucket 65. */
		return v ? ilog2((u64)v) + 2 : 1;
	}
	if (!agg->sgn && v < 0)
		return agg->nr_lin + 1;	/* an unsigned value past 2^63 */
	if (v < agg->lin_min)
		return 0;
	i = div64_u64((u64)v - (u64)agg->lin_min, agg->lin_step);
	return i >= agg->nr_lin ? agg->nr_lin + 1 : (u32)i + 1;
}

/*
 * The id of the hit's stack of @kind in generation @gen's store: 0 for
 * none, -ENOSPC (the store is full), -EBUSY (no room to unwind in).
 */
static long pea_agg_stack(struct pea_agg *agg, unsigned int gen,
			  const struct pea_agg_sample *s, u16 kind)
{
	u64 *buf;
	long id;
	u32 nr;

	if (kind == PEA_AGG_STACK_USER)
		return pea_stk_id(agg->stk, gen, kind, s->uips, s->unr);
	if (s->kips)
		return pea_stk_id(agg->stk, gen, kind, s->kips, s->knr);
	buf = pea_stk_scratch_get(agg->stk);
	if (buf) {
		nr = pea_kstack_save(s->regs, s->ip0, buf, agg->stack_depth);
		id = pea_stk_id(agg->stk, gen, kind, buf, nr);
	} else {
		id = -EBUSY;
	}
	pea_stk_scratch_put(agg->stk);
	return id;
}

/*
 * The hit's key (@pair: the pairing key of a PEA_AGG_VAL_PAIRED hit); 0,
 * a stack's -ENOSPC or -EBUSY (pea_agg_stack()), or -EINVAL (a field
 * past the entry, a fetch key without the hit's fetches).
 */
static int pea_agg_key(struct pea_agg *agg, struct pea_link *l,
		       unsigned int gen, const struct pea_agg_sample *s,
		       u64 pair, u64 *key)
{
	struct task_struct *task = current;
	/* Written whole before it is read: not zeroed at every hit. */
	char comm[16] __uninitialized;
	unsigned int i, w = 0, nf = 0;
	long id;

	/* Each part writes its words; those past key_words are never read. */
	for (i = 0; i < PEA_AGG_KEY_PARTS; i++) {
		switch (agg->keys[i]) {
		case PEA_AGG_KEY_CPU:
			key[w++] = smp_processor_id();
			break;
		case PEA_AGG_KEY_PID:
			key[w++] = task_tgid_nr_ns(task, l->pid_ns);
			break;
		case PEA_AGG_KEY_TID:
			key[w++] = task_pid_nr_ns(task, l->pid_ns);
			break;
		case PEA_AGG_KEY_COMM:
			strscpy_pad(comm, task->comm, sizeof(comm));
			memcpy(&key[w], comm, sizeof(comm));
			w += 2;
			break;
		case PEA_AGG_KEY_PROBE:
			key[w++] = s->rec_id ? s->rec_id : l->rec_id;
			break;
		case PEA_AGG_KEY_KSTACK:
		case PEA_AGG_KEY_USTACK:
			id = pea_agg_stack(agg, gen, s,
					   agg->keys[i] == PEA_AGG_KEY_KSTACK ?
					   PEA_AGG_STACK_KERNEL :
					   PEA_AGG_STACK_USER);
			if (id < 0)
				return id;
			key[w++] = id;
			break;
		case PEA_AGG_KEY_PAIR:
			/* A thread in the link's pid namespace, as TID is. */
			key[w++] = agg->pair_key.kind == PEA_LAT_KEY_TID ?
				   task_pid_nr_ns(task, l->pid_ns) : pair;
			break;
		case PEA_AGG_KEY_FIELD:
			if (!s->raw || agg->key_offset > s->raw_len ||
			    agg->key_size > s->raw_len - agg->key_offset)
				return -EINVAL;
			/* The words' bytes past the field are zero. */
			key[w] = 0;
			if (agg->key_size > 8)
				key[w + 1] = 0;
			memcpy(&key[w], s->raw + agg->key_offset,
			       agg->key_size);
			w += agg->key_size > 8 ? 2 : 1;
			break;
		case PEA_AGG_KEY_FETCH:
			id = pea_agg_fetch_key(agg, s->fetch, nf++, &key[w]);
			if (id < 0)
				return id;
			w += id;
			break;
		default:	/* PEA_AGG_KEY_NONE ends the list */
			return 0;
		}
	}
	return 0;
}

/* Whether two keys are equal: the words the parts take. */
static bool pea_agg_key_eq(const struct pea_agg *agg, const u64 *a,
			   const u64 *b)
{
	u32 w;

	for (w = 0; w < agg->key_words; w++)
		if (a[w] != b[w])
			return false;
	return true;
}

/* The key of a table keyed by nothing: none of its words is read. */
static const u64 pea_agg_no_key[1];

/*
 * The slot of @key in this CPU's generation @g, claimed if new; NULL if
 * no ticket is left (the hit is dropped). See the comment at the top. A
 * table keyed by nothing (@key pea_agg_no_key) has its one key in the
 * first slot.
 */
static __always_inline struct pea_agg_slot *
pea_agg_find(struct pea_agg *agg, struct pea_agg_gen *g, const u64 *key)
{
	u32 i = agg->key_words ?
		jhash2((const u32 *)key, agg->key_words * 2, agg->seed) : 0;
	struct pea_agg_slot *s;
	bool ticket = false;
	unsigned long st;
	u32 n = 0;

	i &= agg->cap - 1;
	s = pea_agg_slot(agg, g, i);
	/* Acquire: a READY slot's key was written before (the release). */
	st = smp_load_acquire(&s->state);
	while (n < agg->cap) {
		if (st == PEA_AGG_FREE) {
			if (!ticket) {
				if (local_inc_return(&g->used) >
				    agg->max_keys) {
					local_dec(&g->used);
					return NULL;
				}
				ticket = true;
			}
			/* Only writers nesting on this CPU compete. */
			st = cmpxchg_local(&s->state, PEA_AGG_FREE,
					   PEA_AGG_CLAIMING);
			if (st == PEA_AGG_FREE) {
				/* The other words stay 0 (a cleared slot). */
				memcpy(s->key, key,
				       agg->key_words * sizeof(u64));
				local64_set(&s->min, agg->sgn ? S64_MAX : -1);
				local64_set(&s->max, agg->sgn ? S64_MIN : 0);
				/* The key before READY (pea_agg_copy_gen()). */
				smp_store_release(&s->state, PEA_AGG_READY);
				return s;
			}
			/* An interrupting writer took it: look at it again. */
			continue;
		}
		if (st == PEA_AGG_READY &&
		    pea_agg_key_eq(agg, s->key, key)) {
			if (ticket)
				local_dec(&g->used);
			return s;
		}
		/* Another key, or one an interrupted writer is claiming. */
		i = (i + 1) & (agg->cap - 1);
		s = pea_agg_slot(agg, g, i);
		st = smp_load_acquire(&s->state);	/* as above */
		n++;
	}
	/* Not reached: at most max_keys of the 2 * max_keys slots are used. */
	if (ticket)
		local_dec(&g->used);
	return NULL;
}

/* Whether @x < @y, signed or as __u64. */
static bool pea_agg_lt(bool sgn, s64 x, s64 y)
{
	return sgn ? x < y : (u64)x < (u64)y;
}

static void pea_agg_min(local64_t *m, s64 v, bool sgn)
{
	s64 old = local64_read(m), prev;

	while (pea_agg_lt(sgn, v, old)) {
		prev = local64_cmpxchg(m, old, v);
		if (prev == old)
			return;
		old = prev;
	}
}

static void pea_agg_max(local64_t *m, s64 v, bool sgn)
{
	s64 old = local64_read(m), prev;

	while (pea_agg_lt(sgn, old, v)) {
		prev = local64_cmpxchg(m, old, v);
		if (prev == old)
			return;
		old = prev;
	}
}

/* Count value @v (unused without a value) in @slot. */
static __always_inline void pea_agg_count(struct pea_agg *agg,
					  struct pea_agg_slot *slot, s64 v)
{
	local64_inc(&slot->count);
	if (agg->value != PEA_AGG_VAL_NONE) {
		local64_add(v, &slot->sum);
		pea_agg_min(&slot->min, v, agg->sgn);
		pea_agg_max(&slot->max, v, agg->sgn);
		if (agg->hist != PEA_AGG_HIST_NONE)
			local64_inc(&pea_agg_buckets(agg, slot)
				    [pea_agg_bucket(agg, v)]);
	}
}

/*
 * A hit of a table keyed by something, or of a paired value: its value
 * (or pairing key), its key, a paired hit's start taken (only once its
 * key is made: a hit its key fails keeps its start), its slot found or
 * claimed. Inlined: out of line, its call and second frame cost a keyed
 * hit about 20 instructions more than the stack protector's check (which
 * its key buffer brings to pea_agg_update()) costs one keyed by nothing.
 */
static __always_inline void
pea_agg_update_keyed(struct pea_agg *agg, struct pea_link *l, unsigned int gen,
		     struct pea_agg_gen *g, const struct pea_agg_sample *s)
{
	/*
	 * Its key_words words are written before any is read, the others
	 * never read: not zeroed at every hit (CONFIG_INIT_STACK_ALL_ZERO
	 * kernels would spend 16 stores on it).
	 */
	u64 key[PEA_AGG_WIDE_KEY_WORDS] __uninitialized;
	struct pea_agg_slot *slot;
	u64 pair = 0, ns;
	s64 v = 0;
	int err;

	if (agg->value == PEA_AGG_VAL_PAIRED) {
		if (!pea_lat_key(&agg->pair_key, s, &pair)) {
			local64_inc(&g->errors);
			return;
		}
	} else if (!pea_agg_value(agg, s, &v)) {
		local64_inc(&g->errors);
		return;
	}
	err = agg->key_words ? pea_agg_key(agg, l, gen, s, pair, key) : 0;
	if (err == -ENOSPC) {
		local64_inc(&g->stack_dropped);
		local64_inc(&g->dropped);
		return;
	}
	if (err) {
		local64_inc(&g->errors);
		return;
	}
	if (agg->value == PEA_AGG_VAL_PAIRED) {
		if (pea_lat_take(agg->pair, pair, &ns)) {
			local64_inc(&g->unpaired);
			return;
		}
		v = ns;
	}
	slot = pea_agg_find(agg, g, agg->key_words ? key : pea_agg_no_key);
	if (!slot) {
		local64_inc(&g->dropped);
		return;
	}
	pea_agg_count(agg, slot, v);
}

/**
 * pea_agg_update() - count one hit in this CPU's table
 * @agg: the link's table
 * @l: the link
 * @s: what the hit offers for the value
 *
 * Context: any (NMI included), preemption off: no lock, no allocation.
 * Return: true if the link writes no record for the hit.
 */
bool pea_agg_update(struct pea_agg *agg, struct pea_link *l,
		    const struct pea_agg_sample *s)
{
	/* Acquire: pairs with pea_agg_read()'s flip (see the top). */
	unsigned int gen = smp_load_acquire(&agg->gen);
	struct pea_agg_gen *g = pea_agg_gen(agg, smp_processor_id(), gen);
	struct pea_agg_slot *slot;
	s64 v = 0;

	local64_inc(&g->hits);
	if (agg->key_words || agg->value == PEA_AGG_VAL_PAIRED) {
		pea_agg_update_keyed(agg, l, gen, g, s);
		goto out;
	}
	/* Keyed by nothing: one key, in the first slot, claimed once. */
	if (!pea_agg_value(agg, s, &v)) {
		local64_inc(&g->errors);
		goto out;
	}
	slot = pea_agg_slot(agg, g, 0);
	/* Acquire: as pea_agg_find()'s. */
	if (unlikely(smp_load_acquire(&slot->state) != PEA_AGG_READY)) {
		slot = pea_agg_find(agg, g, pea_agg_no_key);
		if (!slot) {
			local64_inc(&g->dropped);
			goto out;
		}
	}
	pea_agg_count(agg, slot, v);
out:
	return agg->flags & PEA_AGG_F_NO_RECORDS;
}

/* The fetch of @a's fetch part @n (in keys[] order), and its size. */
static u32 pea_agg_attr_fetch(const struct pea_agg_attr *a, u32 n)
{
	return n ? a->key_fetch_more[n - 1] : a->key_fetch;
}

static u32 pea_agg_attr_fetch_size(const struct pea_agg_attr *a, u32 n)
{
	return n ? a->key_fetch_size_more[n - 1] : a->key_fetch_size;
}

/* How many PEA_AGG_KEY_FETCH parts @a's key has. */
static u32 pea_agg_attr_nr_fetch(const struct pea_agg_attr *a)
{
	u32 i, n = 0;

	for (i = 0; i < PEA_AGG_KEY_PARTS && a->keys[i] != PEA_AGG_KEY_NONE;
	     i++)
		n += a->keys[i] == PEA_AGG_KEY_FETCH;
	return n;
}

/* The words a key of @a may take: 4, or 16 with PEA_AGG_F_WIDE_KEY. */
static u32 pea_agg_attr_max_words(const struct pea_agg_attr *a)
{
	return a->flags & PEA_AGG_F_WIDE_KEY ? PEA_AGG_WIDE_KEY_WORDS :
	       PEA_AGG_KEY_WORDS;
}

/*
 * The words part @part of @a's key takes (@n: a fetch part's number
 * among the fetch parts): comm and a field past 8 bytes 2; a fetch its
 * status word and its bytes' (an integer's: one). The caller bounded
 * the fetch's size.
 */
static u32 pea_agg_part_words(const struct pea_agg_attr *a, u8 part, u32 n)
{
	u32 size;

	if (part == PEA_AGG_KEY_FETCH) {
		size = pea_agg_attr_fetch_size(a, n);
		return 1 + (size ? DIV_ROUND_UP(size, 8) : 1);
	}
	return part == PEA_AGG_KEY_COMM ||
	       (part == PEA_AGG_KEY_FIELD && a->key_size > 8) ? 2 : 1;
}

/* The words of @a's key (checked by pea_agg_keys_ok()). */
static u32 pea_agg_key_words(const struct pea_agg_attr *a)
{
	u32 i, words = 0, n = 0;

	for (i = 0; i < PEA_AGG_KEY_PARTS && a->keys[i] != PEA_AGG_KEY_NONE;
	     i++) {
		words += pea_agg_part_words(a, a->keys[i], n);
		n += a->keys[i] == PEA_AGG_KEY_FETCH;
	}
	return words;
}

/*
 * Whether @a's key parts are well formed: 0 or -EINVAL. A key of the
 * other parts past the key's words is -EINVAL, as it was before fetch
 * keys (binaries of then rely on it); one with a fetch part is sized by
 * pea_agg_check_words() once its fetch is known to be what it says.
 * Every part comes once, but fetch parts, one per fetch of key_fetch
 * and key_fetch_more[] (the unused ones zero).
 */
static int pea_agg_keys_ok(const struct pea_agg_attr *a)
{
	const u8 *keys = a->keys;
	unsigned int i, words = 0, seen = 0, nf;

	for (i = 0; i < PEA_AGG_KEY_PARTS; i++) {
		if (keys[i] == PEA_AGG_KEY_NONE)
			break;
		if (keys[i] > PEA_AGG_KEY_FETCH ||
		    (keys[i] != PEA_AGG_KEY_FETCH && (seen & (1U << keys[i]))))
			return -EINVAL;
		seen |= 1U << keys[i];
	}
	/* Nothing after the end of the list. */
	for (; i < PEA_AGG_KEY_PARTS; i++)
		if (keys[i] != PEA_AGG_KEY_NONE)
			return -EINVAL;
	/* The pairing key is a paired table's; a field needs its place. */
	if ((seen & (1U << PEA_AGG_KEY_PAIR)) &&
	    a->value != PEA_AGG_VAL_PAIRED)
		return -EINVAL;
	if (seen & (1U << PEA_AGG_KEY_FIELD) ?
	    !a->key_size || a->key_size > 16 || a->key_offset > PAGE_SIZE :
	    a->key_size || a->key_offset)
		return -EINVAL;
	nf = pea_agg_attr_nr_fetch(a);
	/* A fetch part's fetch; those of no part zero. */
	for (i = 0; i < PEA_AGG_KEY_PARTS; i++) {
		if (i < nf ? pea_agg_attr_fetch(a, i) >= PEA_FETCH_MAX :
		    pea_agg_attr_fetch(a, i) || pea_agg_attr_fetch_size(a, i))
			return -EINVAL;
	}
	if (nf)
		return 0;
	for (i = 0; i < PEA_AGG_KEY_PARTS && keys[i] != PEA_AGG_KEY_NONE; i++)
		words += pea_agg_part_words(a, keys[i], 0);
	return words > pea_agg_attr_max_words(a) ? -EINVAL : 0;
}

/*
 * The size of a key with a fetch part, checked last, after everything
 * that makes the attr malformed (-EINVAL: pea_agg_check_fetch() among
 * them), as a BPF map's key_size past its bound is: -E2BIG for a fetch
 * of more than PEA_AGG_FETCH_KEY_MAX bytes (PEA_AGG_WIDE_FETCH_KEY_MAX
 * with PEA_AGG_F_WIDE_KEY) or a key of more than its words.
 */
static int pea_agg_check_words(const struct pea_agg_attr *a)
{
	u32 n, nf = pea_agg_attr_nr_fetch(a);
	u32 max = a->flags & PEA_AGG_F_WIDE_KEY ? PEA_AGG_WIDE_FETCH_KEY_MAX :
		  PEA_AGG_FETCH_KEY_MAX;

	if (!nf)
		return 0;
	/* Bounded before pea_agg_part_words() rounds them up. */
	for (n = 0; n < nf; n++)
		if (pea_agg_attr_fetch_size(a, n) > max)
			return -E2BIG;
	return pea_agg_key_words(a) > pea_agg_attr_max_words(a) ? -E2BIG : 0;
}

/**
 * pea_agg_attr_has_key() - whether a table's key has a part
 * @a: the attr
 * @part: PEA_AGG_KEY_*
 *
 * Return: true if @a->keys[] names @part.
 */
bool pea_agg_attr_has_key(const struct pea_agg_attr *a, u8 part)
{
	return memchr(a->keys, part, sizeof(a->keys));
}

static bool pea_agg_attr_stacks(const struct pea_agg_attr *a)
{
	return pea_agg_attr_has_key(a, PEA_AGG_KEY_KSTACK) ||
	       pea_agg_attr_has_key(a, PEA_AGG_KEY_USTACK);
}

/* What every table takes; the kind says which values it gives. */
static int pea_agg_check_attr(const struct pea_agg_attr *a, u32 *nr_lin)
{
	u64 span, rem;
	int err;

	if (a->flags & ~PEA_AGG_FLAGS || a->reserved)
		return -EINVAL;
	if (!a->max_keys || a->max_keys > PEA_AGG_MAX_KEYS)
		return -EINVAL;
	err = pea_agg_keys_ok(a);
	if (err)
		return err;
	if (pea_agg_attr_stacks(a)) {
		if (!a->max_stacks || a->max_stacks > PEA_AGG_MAX_STACKS ||
		    !a->stack_depth)
			return -EINVAL;
		/* As a record's kstack_depth: EINVAL, EOPNOTSUPP, EOVERFLOW. */
		err = pea_kstack_check(a->stack_depth, 0);
		if (err)
			return err;
	} else if (a->max_stacks || a->stack_depth) {
		return -EINVAL;
	}
	if (a->value > PEA_AGG_VAL_FETCH)
		return -EINVAL;
	if (a->reserved3 || (a->value == PEA_AGG_VAL_FETCH ?
			     a->val_fetch >= PEA_FETCH_MAX : a->val_fetch))
		return -EINVAL;
	if (a->value != PEA_AGG_VAL_PAIRED &&
	    (a->pair_fd || a->pair_key.kind || a->pair_key.arg ||
	     a->pair_key.offset || a->pair_key.size))
		return -EINVAL;
	if (a->reserved2)
		return -EINVAL;
	if (a->value == PEA_AGG_VAL_ARG ? a->val_arg > 5 : a->val_arg)
		return -EINVAL;
	if (a->value == PEA_AGG_VAL_FIELD) {
		if (a->val_size != 1 && a->val_size != 2 && a->val_size != 4 &&
		    a->val_size != 8)
			return -EINVAL;
		if (a->val_offset > PAGE_SIZE)
			return -EINVAL;
	} else if (a->val_offset || a->val_size) {
		return -EINVAL;
	}
	if ((a->flags & PEA_AGG_F_SIGNED) && a->value != PEA_AGG_VAL_FIELD &&
	    a->value != PEA_AGG_VAL_ARG)
		return -EINVAL;
	if (a->hist > PEA_AGG_HIST_LINEAR ||
	    (a->hist != PEA_AGG_HIST_NONE && a->value == PEA_AGG_VAL_NONE))
		return -EINVAL;
	*nr_lin = 0;
	if (a->hist != PEA_AGG_HIST_LINEAR)
		return a->lin_min || a->lin_max || a->lin_step ? -EINVAL : 0;
	if (a->lin_max <= a->lin_min || !a->lin_step)
		return -EINVAL;
	span = div64_u64_rem((u64)a->lin_max - (u64)a->lin_min, a->lin_step,
			     &rem);
	if (rem)
		span++;
	if (span > PEA_AGG_LINEAR_MAX)
		return -EINVAL;
	*nr_lin = span;
	return 0;
}

static void pea_agg_destroy(struct pea_agg *agg)
{
	unsigned int cpu;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		kvfree(agg->cpu[cpu]);
	pea_stk_free(agg->stk);
	pea_lat_put(agg->pair);
	if (agg->pid_ns)
		put_pid_ns(agg->pid_ns);
	kfree(agg->ids);
	kfree(agg);
}

/*
 * Drop a link's reference: the last one frees the table and returns its
 * charge to its creator's user. No handler of the link whose reference
 * this was reaches the table any more, nor, if it is the last, of any.
 */
static void pea_agg_put(struct pea_agg *agg)
{
	struct pea_quota *q = agg->quota;
	size_t bytes = agg->charged;

	if (!refcount_dec_and_test(&agg->ref))
		return;
	pea_agg_destroy(agg);
	pea_quota_uncharge_obj(q, bytes);
}

/*
 * A fetch key or value: @l's fetch set (fixed at attach) has the fetch,
 * of a type that fits: an integer for a value; for a key, an integer
 * with key_fetch_size 0, a string or an array with one. Links without
 * fetches (tracepoints, samplers, probes attached without) have none.
 */
static int pea_agg_check_fetch(struct pea_link *l,
			       const struct pea_agg_attr *a)
{
	const struct pea_fetch_set *fs = l->fetch;
	u32 w, n, f, nf = pea_agg_attr_nr_fetch(a);

	for (n = 0; n < nf; n++) {
		f = pea_agg_attr_fetch(a, n);
		if (!fs || f >= fs->nr)
			return -EINVAL;
		w = pea_fetch_width(fs->f[f].type);
		if (w ? pea_agg_attr_fetch_size(a, n) :
		    !pea_agg_attr_fetch_size(a, n))
			return -EINVAL;
	}
	if (a->value == PEA_AGG_VAL_FETCH &&
	    (!fs || a->val_fetch >= fs->nr ||
	     !pea_fetch_width(fs->f[a->val_fetch].type)))
		return -EINVAL;
	return 0;
}

/* Whether fetch @i of @l's set is of a signed integer type. */
static bool pea_agg_fetch_signed(struct pea_link *l, u32 i)
{
	switch (l->fetch->f[i].type) {
	case PEA_FETCH_S8:
	case PEA_FETCH_S16:
	case PEA_FETCH_S32:
	case PEA_FETCH_S64:
		return true;
	default:
		return false;
	}
}

/**
 * pea_agg_create() - PEA_LINK_IOC_AGG_CREATE: give @l its table
 * @l: a live link
 * @a: the attr, copied from user space (pea_link_copy_attr())
 * @pair: PEA_AGG_VAL_PAIRED: the pairing table of @a->pair_fd's link, a
 *        reference the table takes over if this returns 0; else NULL
 *
 * Context: process context, the ioctl.
 * Return: 0, -EINVAL (the attr; a value the link's kind does not give),
 * -EOPNOTSUPP (a kind without tables), -E2BIG (one CPU's table past
 * INT_MAX bytes), -EEXIST (the link has one), -ENOMEM (no memory;
 * max_user_probe_kb or max_probe_kb reached).
 */
/**
 * pea_agg_check() - whether @l may have the table @a asks for
 * @l: a live link
 * @a: the attr, copied from user space
 * @nr_lin: out: the linear buckets between the bounds
 *
 * The checks of pea_agg_create() that need no fd of @a's: the link core
 * makes them before it looks pair_fd up, so that a bad attr gets its own
 * errno, as Linux checks an attr before the fds it names.
 *
 * Return: 0, -EINVAL, -EOPNOTSUPP, -EEXIST (see pea_agg_create()), a
 * stack depth's -EOVERFLOW, or -E2BIG (a fetch key past the key's words,
 * checked after everything that is -EINVAL).
 */
long pea_agg_check(struct pea_link *l, const struct pea_agg_attr *a,
		   u32 *nr_lin)
{
	long err;

	err = pea_agg_check_attr(a, nr_lin);
	if (err)
		return err;
	if (!l->provider->agg_check)
		return -EOPNOTSUPP;
	if (a->value == PEA_AGG_VAL_PAIRED) {
		/*
		 * The keys (and a stack's depth) are the kind's to check, as
		 * for any table; the value is the pairing key's (review F1).
		 */
		struct pea_agg_attr k = *a;

		k.value = PEA_AGG_VAL_NONE;
		k.hist = PEA_AGG_HIST_NONE;
		err = l->provider->agg_check(l, &k);
		if (!err)
			err = pea_lat_check_key(l, &a->pair_key);
	} else {
		err = l->provider->agg_check(l, a);
	}
	if (!err && memchr(a->keys, PEA_AGG_KEY_FIELD, sizeof(a->keys))) {
		/* A field key: the kind's hits must give fields. */
		struct pea_agg_attr f = { .value = PEA_AGG_VAL_FIELD };

		err = l->provider->agg_check(l, &f);
	}
	if (!err)
		err = pea_agg_check_fetch(l, a);
	if (!err)
		err = pea_agg_check_words(a);
	if (err)
		return err;
	/* Checked again under the lock: a hint, not the decision. */
	return READ_ONCE(l->agg) ? -EEXIST : 0;
}

long pea_agg_create(struct pea_link *l, const struct pea_agg_attr *a,
		    struct pea_lat *pair)
{
	size_t slot_size, gen_size, stk_size = 0, bytes;
	struct pea_quota *quota;
	struct pea_agg *agg;
	unsigned int cpu;
	u32 nr_lin, nb, kw, n, f;
	long err;

	err = pea_agg_check(l, a, &nr_lin);
	if (err)
		return err;
	nb = a->hist == PEA_AGG_HIST_LOG2 ? PEA_AGG_LOG2_BUCKETS :
	     a->hist == PEA_AGG_HIST_LINEAR ? nr_lin + 2 : 0;
	kw = pea_agg_attr_max_words(a);
	slot_size = sizeof(struct pea_agg_slot) + kw * sizeof(u64) +
		    nb * sizeof(local64_t);
	/* max_keys <= 65536: 2^17 slots of at most 8.3 KiB, no overflow. */
	gen_size = sizeof(struct pea_agg_gen) +
		   (size_t)roundup_pow_of_two(2 * a->max_keys) * slot_size;
	/* One CPU's memory is one kvmalloc(), which takes at most INT_MAX. */
	if (2 * gen_size > INT_MAX)
		return -E2BIG;
	/* What the allocators take: kmalloc's rounding, else whole pages. */
	bytes = kmalloc_size_roundup(struct_size(agg, cpu, nr_cpu_ids));
	if (check_add_overflow(bytes, (size_t)num_possible_cpus() *
			       pea_alloc_size(2 * gen_size), &bytes))
		return -ENOMEM;
	if (a->value == PEA_AGG_VAL_PAIRED) {
		if (!pair)
			return -EINVAL;
		/* The start's struct it keeps alive (pea_lat.c). */
		bytes += pea_lat_ref_size();
	}
	/* The stack store: its struct and one allocation per generation. */
	if (pea_agg_attr_stacks(a)) {
		stk_size = pea_stk_gen_size(a->max_stacks, a->stack_depth);
		bytes += pea_stk_charge(a->max_stacks, a->stack_depth);
	}

	mutex_lock(&pea_agg_create_lock);
	if (l->agg) {
		err = -EEXIST;
		goto unlock;
	}
	/* Held by the table, which may outlive @l (pea_agg_share()). */
	quota = pea_quota_charge_obj(l, bytes);
	if (IS_ERR(quota)) {
		err = PTR_ERR(quota);
		goto unlock;
	}
	agg = kzalloc(struct_size(agg, cpu, nr_cpu_ids), GFP_KERNEL_ACCOUNT);
	if (!agg)
		goto uncharge;
	for_each_possible_cpu(cpu) {
		agg->cpu[cpu] = kvzalloc_node(2 * gen_size, GFP_KERNEL_ACCOUNT,
					      cpu_to_node(cpu));
		if (!agg->cpu[cpu]) {
			pea_agg_destroy(agg);
			goto uncharge;
		}
	}
	if (stk_size) {
		agg->stk = pea_stk_alloc(a->max_stacks, a->stack_depth);
		if (!agg->stk) {
			pea_agg_destroy(agg);
			goto uncharge;
		}
		agg->stack_depth = a->stack_depth;
	}
	if (pea_agg_attr_has_key(a, PEA_AGG_KEY_PROBE)) {
		agg->ids = kmalloc(sizeof(*agg->ids), GFP_KERNEL_ACCOUNT);
		if (!agg->ids) {
			pea_agg_destroy(agg);
			goto uncharge;
		}
		agg->ids[0] = l->rec_id;
		agg->nr_ids = 1;
	}
	refcount_set(&agg->ref, 1);
	mutex_init(&agg->lock);
	agg->quota = quota;
	agg->pid_ns = get_pid_ns(l->pid_ns);
	agg->attr = *a;
	agg->slot_key_words = kw;
	for (n = 0; n < pea_agg_attr_nr_fetch(a); n++) {
		f = pea_agg_attr_fetch(a, n);
		agg->key_fetch[n] = f;
		agg->key_fetch_type[n] = l->fetch->f[f].type;
		/* An integer's word; a string's or an array's bytes. */
		agg->key_fetch_size[n] = pea_agg_attr_fetch_size(a, n) ? : 8;
	}
	if (a->value == PEA_AGG_VAL_FETCH)
		agg->val_fetch_type = l->fetch->f[a->val_fetch].type;
	agg->flags = a->flags;
	agg->max_keys = a->max_keys;
	agg->cap = roundup_pow_of_two(2 * a->max_keys);
	agg->seed = get_random_u32();
	agg->key_words = pea_agg_key_words(a);
	agg->value = a->value;
	agg->val_arg = a->val_arg;
	agg->val_offset = a->val_offset;
	agg->val_size = a->val_size;
	agg->hist = a->hist;
	agg->nr_lin = nr_lin;
	agg->nr_buckets = nb;
	agg->lin_min = a->lin_min;
	agg->lin_step = a->lin_step;
	agg->pair = pair;	/* pea_agg_destroy() drops it */
	agg->pair_key = a->pair_key;
	agg->key_offset = a->key_offset;
	agg->key_size = a->key_size;
	agg->val_fetch = a->val_fetch;
	agg->slot_size = slot_size;
	agg->gen_size = gen_size;
	agg->sgn = a->value == PEA_AGG_VAL_RET ||
		   (a->flags & PEA_AGG_F_SIGNED) ||
		   (a->value == PEA_AGG_VAL_FETCH &&
		    pea_agg_fetch_signed(l, a->val_fetch));
	agg->charged = bytes;
	memcpy(agg->keys, a->keys, sizeof(agg->keys));
	/* Filled before handlers see it (pea_agg_hit()'s acquire). */
	smp_store_release(&l->agg, agg);
	err = 0;
	goto unlock;
uncharge:
	pea_quota_uncharge_obj(quota, bytes);
	err = -ENOMEM;
unlock:
	mutex_unlock(&pea_agg_create_lock);
	return err;
}

/**
 * pea_agg_share() - PEA_LINK_IOC_AGG_SHARE: @l counts its hits in the
 * table of @owner
 * @l: a live link without a table
 * @owner: a live link (its file held by the caller) with one
 *
 * @l takes a reference: the table lives while any link that counts in
 * it does, and stays charged to its creator's user alone. @l must be
 * able to create the same table itself (its kind gives the table's
 * keys and value, the same checks as pea_agg_create()'s, the same types
 * of the fetches a key or value takes) and see pids in the same pid
 * namespace as the table's creator (its pid and tid keys).
 *
 * Context: process context, the ioctl.
 * Return: 0, -EINVAL (@l is @owner; a key or value @l does not give, a
 * fetch of another type, another pid namespace; a table keyed by probe
 * that counts a link of @l's record id already), -EOPNOTSUPP (a kind
 * without tables), -ENOENT (@owner has no table), -EEXIST (@l has one),
 * a stack depth's -EOVERFLOW, -ENOMEM.
 */
long pea_agg_share(struct pea_link *l, struct pea_link *owner)
{
	const struct pea_agg_attr *a;
	struct pea_agg *agg;
	u32 nr_lin, n;
	long err;

	if (l == owner)
		return -EINVAL;
	mutex_lock(&pea_agg_create_lock);
	/* Set under the lock; cleared only when @owner's file is released. */
	agg = owner->agg;
	if (!agg) {
		err = -ENOENT;
		goto unlock;
	}
	if (l->agg) {
		err = -EEXIST;
		goto unlock;
	}
	a = &agg->attr;
	err = pea_agg_check(l, a, &nr_lin);
	if (err)
		goto unlock;
	err = -EINVAL;
	if (l->pid_ns != agg->pid_ns)
		goto unlock;
	/* pea_agg_check() found each fetch in @l's set. */
	for (n = 0; n < pea_agg_attr_nr_fetch(a); n++)
		if (l->fetch->f[agg->key_fetch[n]].type !=
		    agg->key_fetch_type[n])
			goto unlock;
	if (a->value == PEA_AGG_VAL_FETCH &&
	    l->fetch->f[a->val_fetch].type != agg->val_fetch_type)
		goto unlock;
	/* Keyed by probe: its rows would merge with another link's. */
	if (agg->ids) {
		u64 *ids;

		for (n = 0; n < agg->nr_ids; n++)
			if (agg->ids[n] == l->rec_id)
				goto unlock;
		ids = krealloc_array(agg->ids, agg->nr_ids + 1, sizeof(*ids),
				     GFP_KERNEL_ACCOUNT);
		if (!ids) {
			err = -ENOMEM;
			goto unlock;
		}
		ids[agg->nr_ids++] = l->rec_id;
		agg->ids = ids;
	}
	err = 0;
	refcount_inc(&agg->ref);
	/* Filled long ago; the release as pea_agg_create()'s. */
	smp_store_release(&l->agg, agg);
unlock:
	mutex_unlock(&pea_agg_create_lock);
	return err;
}

/* Where a read puts its entries, and what it has seen. */
struct pea_agg_copy {
	u8 __user *buf;
	u64 room;		/* entries that fit */
	u64 seen;		/* entries there are */
	u8 *e;			/* a bounce buffer, entry_size bytes */
	size_t entry_size;
	u64 hits;
	u64 dropped;
	u64 errors;
	u64 stack_dropped;
	struct pea_stk_out stacks;
	u64 unpaired;
};

/*
 * Copy the READY slots of one CPU's generation out. Without writers (a
 * cleared generation after the grace period) the copy is exact; with
 * writers each field is a value it had.
 */
static int pea_agg_copy_gen(const struct pea_agg *agg, unsigned int cpu,
			    struct pea_agg_gen *g, struct pea_agg_copy *c)
{
	size_t key_bytes = agg->slot_key_words * sizeof(u64);
	struct pea_agg_entry_tail *e = (void *)(c->e + key_bytes);
	struct pea_agg_slot *s;
	local64_t *sb;
	u32 i, b;

	c->hits += local64_read(&g->hits);
	c->dropped += local64_read(&g->dropped);
	c->errors += local64_read(&g->errors);
	c->stack_dropped += local64_read(&g->stack_dropped);
	c->unpaired += local64_read(&g->unpaired);
	for (i = 0; i < agg->cap; i++) {
		if (!(i & 1023))
			cond_resched();
		s = pea_agg_slot(agg, g, i);
		/* Acquire: pairs with pea_agg_find()'s release of READY. */
		if (smp_load_acquire(&s->state) != PEA_AGG_READY)
			continue;
		if (c->seen++ >= c->room)
			continue;
		memset(c->e, 0, c->entry_size);
		/* The key, then the fields: struct pea_agg_entry{,_wide} */
		memcpy(c->e, s->key, key_bytes);
		e->cpu = cpu;
		e->count = local64_read(&s->count);
		if (agg->value != PEA_AGG_VAL_NONE) {
			e->sum = local64_read(&s->sum);
			e->min = local64_read(&s->min);
			e->max = local64_read(&s->max);
		}
		sb = pea_agg_buckets(agg, s);
		for (b = 0; b < agg->nr_buckets; b++)
			e->buckets[b] = local64_read(&sb[b]);
		if (copy_to_user(c->buf, c->e, c->entry_size))
			return -EFAULT;
		c->buf += c->entry_size;
	}
	return 0;
}

/* Zero one CPU's generation, a megabyte at a time. */
static void pea_agg_clear_gen(const struct pea_agg *agg, struct pea_agg_gen *g)
{
	size_t off, n;

	for (off = 0; off < agg->gen_size; off += n) {
		n = min_t(size_t, agg->gen_size - off, SZ_1M);
		memset((u8 *)g + off, 0, n);
		cond_resched();
	}
}

/**
 * pea_agg_read() - PEA_LINK_IOC_AGG_READ: copy @l's table out
 * @l: a live link
 * @r: the request, copied from user space
 * @ua: where it came from: its out fields go back there (also with
 *      -ENOSPC) before anything is cleared
 * @usize: the bytes of it to write back
 *
 * Context: process context, the ioctl; with PEA_AGG_READ_F_CLEAR it
 * waits for an RCU grace period.
 * Return: 0, -EINVAL (flags, reserved; a table with a stack key and a
 * request shorter than PEA_AGG_READ_SIZE_VER1), -ENOENT (no table), -EINTR (a
 * signal while waiting for another reader: nothing done), -ENOSPC (more
 * entries than @buf_len holds, or stacks than @stacks_len: nothing
 * cleared, @nr_entries and @stacks_size say how many), -EFAULT (the
 * entries, the stacks or the request not writable: nothing cleared),
 * -ENOMEM.
 */
long pea_agg_read(struct pea_link *l, struct pea_agg_read *r,
		  void __user *ua, u32 usize)
{
	/* Acquire: pairs with pea_agg_create()'s release. */
	struct pea_agg *agg = smp_load_acquire(&l->agg);
	struct pea_agg_copy c = {};
	unsigned int cpu, old;
	int err = 0;

	if (r->flags & ~PEA_AGG_READ_F_CLEAR || r->reserved || r->reserved2)
		return -EINVAL;
	if (!agg)
		return -ENOENT;
	/* A request with no room for the stacks could never be answered. */
	if (agg->stk && usize < PEA_AGG_READ_SIZE_VER1)
		return -EINVAL;
	c.entry_size = agg->slot_key_words * sizeof(u64) +
		       struct_size_t(struct pea_agg_entry_tail, buckets,
				     agg->nr_buckets);
	c.buf = u64_to_user_ptr(r->buf);
	c.room = div64_u64(r->buf_len, c.entry_size);
	c.stacks.buf = u64_to_user_ptr(r->stacks);
	c.stacks.room = r->stacks_len;
	c.e = kmalloc(c.entry_size, GFP_KERNEL);
	if (!c.e)
		return -ENOMEM;
	if (mutex_lock_interruptible(&agg->lock)) {
		kfree(c.e);
		return -EINTR;
	}
	if (r->flags & PEA_AGG_READ_F_CLEAR) {
		old = agg->gen;
		if (agg->pending) {
			/* A failed clear's generation: quiescent already. */
			old = !old;
		} else {
			/*
			 * Release: writers that see the new generation see
			 * it as the last clear left it. Then every writer
			 * that may still use the old one (preemption off:
			 * an RCU reader) finishes.
			 */
			smp_store_release(&agg->gen, !old);
			synchronize_rcu();
		}
		for_each_possible_cpu(cpu) {
			err = pea_agg_copy_gen(agg, cpu,
					       pea_agg_gen(agg, cpu, old), &c);
			if (err)
				break;
		}
		/* After the entries: every id they hold is there. */
		if (!err && agg->stk)
			err = pea_stk_copy(agg->stk, old, &c.stacks);
	} else {
		for_each_possible_cpu(cpu) {
			err = pea_agg_copy_gen(agg, cpu,
					       pea_agg_gen(agg, cpu, 0), &c);
			if (!err)
				err = pea_agg_copy_gen(agg, cpu,
						       pea_agg_gen(agg, cpu, 1),
						       &c);
			if (err)
				break;
		}
		/* Stores only grow under the lock: every id read is there. */
		if (!err && agg->stk)
			err = pea_stk_copy(agg->stk, 0, &c.stacks);
		if (!err && agg->stk)
			err = pea_stk_copy(agg->stk, 1, &c.stacks);
	}
	if (!err) {
		r->nr_entries = min_t(u64, c.seen, U32_MAX);
		r->entry_size = c.entry_size;
		r->nr_buckets = agg->nr_buckets;
		r->hits = c.hits;
		r->dropped = c.dropped;
		r->errors = c.errors;
		r->stacks_size = c.stacks.size;
		r->nr_stacks = min_t(u64, c.stacks.nr, U32_MAX);
		r->stack_dropped = c.stack_dropped;
		r->unpaired = c.unpaired;
		/* The answer first: what cannot be told is not cleared. */
		if (copy_to_user(ua, r, usize))
			err = -EFAULT;
		else if (c.seen > c.room || c.stacks.size > c.stacks.room)
			err = -ENOSPC;
	}
	if (r->flags & PEA_AGG_READ_F_CLEAR) {
		/* Not returned whole: the next clear returns it first. */
		agg->pending = !!err;
		if (!err) {
			for_each_possible_cpu(cpu)
				pea_agg_clear_gen(agg,
						  pea_agg_gen(agg, cpu, old));
			if (agg->stk)
				pea_stk_clear(agg->stk, old);
		}
	}
	mutex_unlock(&agg->lock);
	kfree(c.e);
	return err;
}

/**
 * pea_agg_retire() - a retired link lets go of its table
 * @l: a kretprobe link just retired: no handler reaches the table again
 *
 * The table, and its charge, go with the last link that counts in it.
 */
void pea_agg_retire(struct pea_link *l)
{
	pea_agg_free(l);
}

/**
 * pea_agg_free() - @l lets go of its table, when no handler of @l runs
 * any more; the last link frees it and returns its charge
 * @l: the link, being freed or retired
 */
void pea_agg_free(struct pea_link *l)
{
	struct pea_agg *agg = l->agg;
	u32 n;

	if (!agg)
		return;
	l->agg = NULL;
	/* Its id is free again for another link of the table. */
	if (agg->ids) {
		mutex_lock(&pea_agg_create_lock);
		for (n = 0; n < agg->nr_ids; n++) {
			if (agg->ids[n] == l->rec_id) {
				agg->ids[n] = agg->ids[--agg->nr_ids];
				break;
			}
		}
		mutex_unlock(&pea_agg_create_lock);
	}
	pea_agg_put(agg);
}
