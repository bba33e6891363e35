// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the stack store of an aggregation table (PEA_AGG_KEY_KSTACK,
 * PEA_AGG_KEY_USTACK). Each distinct stack is stored once per table
 * generation and named in the table's keys by an id, as a BPF stack map
 * names the stacks bpf_get_stackid() stores (kernel/bpf/stackmap.c).
 *
 * Layout. A generation is a header (@used: entries taken, which may pass
 * max_stacks), an index of @cap u32 words (a power of two, at least twice
 * max_stacks; 0 is free, else an entry's number + 1) probed linearly from
 * the stack's jhash, and max_stacks entries (hash, depth, kind, then
 * stack_depth addresses) handed out in order. An id is the entry's number
 * + 1 with the generation in bit 31.
 *
 * Writers. The store is shared by every CPU, so unlike the table's
 * per-CPU slots (pea_agg.c) its words are claimed with machine-wide
 * atomics. A writer looks its stack up from the hash; a free index word
 * ends the search (no word is freed while its generation is live). A new
 * stack first takes an entry (atomic_inc_return() of @used; past
 * max_stacks the hit is dropped, counted by the caller), writes the whole
 * entry, then publishes its number in the free word with cmpxchg(), which
 * is fully ordered: a reader that loads the word with acquire sees the
 * entry whole. Nothing is ever half-published and no writer waits for
 * another, so a writer interrupted anywhere (an NMI on its CPU) blocks no
 * one: no lock, no allocation, any context. A writer whose cmpxchg()
 * fails looks at what the winner published: the same stack is taken as
 * its own (its entry stays unpublished, never read: a wasted entry),
 * another stack sends it on to the next word with the entry it holds.
 * Two writers of one new stack follow the same words from the same hash
 * and so agree on one id: a stack is stored once, and the store holds
 * fewer than max_stacks stacks only when such races wasted entries.
 *
 * A BPF stack map keeps one stack per bucket: a colliding stack is
 * refused (-EEXIST) or, with BPF_F_REUSE_STACKID, replaces the one there,
 * so that an id read later may name another stack than the one counted.
 * Here a collision probes on, and an id names one stack for the life of
 * its generation.
 *
 * Read and clear follow the table's generations (pea_agg.c): writers use
 * the store of the generation they count in, a read-and-clear copies the
 * old generation's stacks when its writers are done (after the grace
 * period) and empties its index; the entries are rewritten before they
 * are published again.
 *
 * Unwinding for a key needs room for a stack: the store's own, per CPU
 * and nesting level (task, softirq, hardirq, NMI), handed out as
 * pea_scratch_get() hands out its slots (allocated with the store: a
 * module's static per-CPU space is too small for it).
 */
#include <linux/atomic.h>
#include <linux/jhash.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "pea_internal.h"
#include "pea_quota.h"
#include "pea_agg_stack.h"

#define PEA_STK_GEN_BIT	BIT(31)

struct pea_stk_entry {
	u32 hash;
	u16 nr;
	u16 kind;
	u64 ips[];
};

struct pea_stk_gen {
	atomic_t used;
	u32 pad;
	/* u32 index[cap], then the entries (8-byte aligned) */
};

/* Room to unwind into, per CPU: PEA_NEST_MAX levels of depth addresses. */
struct pea_stk_scratch {
	int level;
	u64 ips[];
};

struct pea_stk {
	u32 max;
	u32 depth;
	u32 cap;
	u32 seed;
	size_t entry_size;
	size_t index_size;	/* bytes of the index, a multiple of 8 */
	struct pea_stk_gen *gen[2];
	struct pea_stk_scratch __percpu *scratch;
};

/**
 * pea_stk_scratch_get() - room for the store's depth of addresses, this
 * CPU's for the current nesting level
 * @stk: the store
 *
 * Preemption must be off; every call, whatever it returns, is paired with
 * a pea_stk_scratch_put(). Handlers nest like a stack on a CPU (see
 * pea_scratch_get()): the level is one per-CPU read-modify-write.
 *
 * Return: the room, or NULL past PEA_NEST_MAX levels.
 */
u64 *pea_stk_scratch_get(struct pea_stk *stk)
{
	int level = this_cpu_inc_return(stk->scratch->level) - 1;

	barrier();
	if (level >= PEA_NEST_MAX)
		return NULL;
	return this_cpu_ptr(stk->scratch)->ips + level * stk->depth;
}

/**
 * pea_stk_scratch_put() - give back the room of pea_stk_scratch_get()
 * @stk: the store
 */
void pea_stk_scratch_put(struct pea_stk *stk)
{
	barrier();
	this_cpu_dec(stk->scratch->level);
}

static size_t pea_stk_scratch_size(u32 depth)
{
	return struct_size_t(struct pea_stk_scratch, ips, PEA_NEST_MAX * depth);
}

static size_t pea_stk_entry_size(u32 depth)
{
	return sizeof(struct pea_stk_entry) + depth * sizeof(u64);
}

static u32 pea_stk_cap(u32 max)
{
	return roundup_pow_of_two(2 * max);
}

/**
 * pea_stk_gen_size() - the bytes of one generation of a store
 * @max: stacks, 1..PEA_AGG_MAX_STACKS
 * @depth: addresses per stack, 1..PEA_KSTACK_MAX
 *
 * Return: the size of the one allocation a generation is (at most about
 * 65 MiB for those bounds: no overflow).
 */
size_t pea_stk_gen_size(u32 max, u32 depth)
{
	return sizeof(struct pea_stk_gen) +
	       ALIGN(pea_stk_cap(max) * sizeof(u32), 8) +
	       (size_t)max * pea_stk_entry_size(depth);
}

/**
 * pea_stk_charge() - what a store of @max stacks of @depth takes
 * @max: stacks, 1..PEA_AGG_MAX_STACKS
 * @depth: addresses per stack, 1..PEA_KSTACK_MAX
 *
 * Return: the bytes the allocators take for pea_stk_alloc(): the struct,
 * two generations (kvmalloc()'s size, pea_alloc_size()) and the room
 * to unwind in of every possible CPU.
 */
size_t pea_stk_charge(u32 max, u32 depth)
{
	return kmalloc_size_roundup(sizeof(struct pea_stk)) +
	       2 * pea_alloc_size(pea_stk_gen_size(max, depth)) +
	       num_possible_cpus() * pea_stk_scratch_size(depth);
}

static u32 *pea_stk_index(struct pea_stk_gen *g)
{
	return (u32 *)(g + 1);
}

static struct pea_stk_entry *pea_stk_entry(const struct pea_stk *stk,
					   struct pea_stk_gen *g, u32 n)
{
	return (struct pea_stk_entry *)((u8 *)pea_stk_index(g) +
					stk->index_size +
					n * stk->entry_size);
}

/**
 * pea_stk_free() - free a store
 * @stk: from pea_stk_alloc(), or NULL
 */
void pea_stk_free(struct pea_stk *stk)
{
	if (!stk)
		return;
	kvfree(stk->gen[0]);
	kvfree(stk->gen[1]);
	free_percpu(stk->scratch);
	kfree(stk);
}

/**
 * pea_stk_alloc() - an empty store of @max stacks of @depth addresses,
 * two generations
 * @max: 1..PEA_AGG_MAX_STACKS
 * @depth: 1..PEA_KSTACK_MAX
 *
 * Context: process context; the memory is the caller's memory cgroup's,
 * charged by the caller (pea_stk_charge()).
 * Return: the store or NULL.
 */
struct pea_stk *pea_stk_alloc(u32 max, u32 depth)
{
	size_t size = pea_stk_gen_size(max, depth);
	struct pea_stk *stk;

	stk = kzalloc(sizeof(*stk), GFP_KERNEL_ACCOUNT);
	if (!stk)
		return NULL;
	stk->max = max;
	stk->depth = depth;
	stk->cap = pea_stk_cap(max);
	stk->seed = get_random_u32();
	stk->entry_size = pea_stk_entry_size(depth);
	stk->index_size = ALIGN(stk->cap * sizeof(u32), 8);
	stk->gen[0] = kvzalloc(size, GFP_KERNEL_ACCOUNT);
	stk->gen[1] = kvzalloc(size, GFP_KERNEL_ACCOUNT);
	stk->scratch = __alloc_percpu_gfp(pea_stk_scratch_size(depth),
					  __alignof__(u64), GFP_KERNEL_ACCOUNT);
	if (!stk->gen[0] || !stk->gen[1] || !stk->scratch) {
		pea_stk_free(stk);
		return NULL;
	}
	return stk;
}

static bool pea_stk_same(const struct pea_stk_entry *e, u32 hash, u16 kind,
			 const u64 *ips, u32 nr)
{
	return e->hash == hash && e->nr == nr && e->kind == kind &&
	       !memcmp(e->ips, ips, nr * sizeof(u64));
}

/**
 * pea_stk_id() - the id of a stack in generation @gen, stored if new
 * @stk: the store
 * @gen: the generation the caller counts in (0 or 1)
 * @kind: PEA_AGG_STACK_KERNEL or _USER
 * @ips: the addresses
 * @nr: how many; cut to the store's depth
 *
 * Context: any (NMI included): no lock, no allocation, no waiting. See
 * the comment at the top for the ordering.
 * Return: the id (> 0), 0 for an empty stack, or -ENOSPC: the stack is
 * new and the store full.
 */
long pea_stk_id(struct pea_stk *stk, unsigned int gen, u16 kind,
		const u64 *ips, u32 nr)
{
	struct pea_stk_gen *g = stk->gen[gen];
	u32 *index = pea_stk_index(g);
	struct pea_stk_entry *e = NULL;
	u32 hash, i, n, w, probes;
	int mine = -1;

	if (!nr)
		return 0;
	nr = min(nr, stk->depth);
	hash = jhash2((const u32 *)ips, nr * 2, stk->seed ^ kind);
	i = hash & (stk->cap - 1);
	for (probes = 0; probes < stk->cap; probes++) {
		/* Acquire: the entry a word names was written before it. */
		w = smp_load_acquire(&index[i]);
		if (!w) {
			if (mine < 0) {
				/* Full: no new stack (bounded overshoot). */
				if (atomic_read(&g->used) >= stk->max)
					return -ENOSPC;
				n = atomic_inc_return(&g->used) - 1;
				if (n >= stk->max)
					return -ENOSPC;
				mine = n;
				e = pea_stk_entry(stk, g, mine);
				e->hash = hash;
				e->nr = nr;
				e->kind = kind;
				memcpy(e->ips, ips, nr * sizeof(u64));
			}
			/* Fully ordered: the entry before its number. */
			w = cmpxchg(&index[i], 0, mine + 1);
			if (!w)
				return (gen ? PEA_STK_GEN_BIT : 0) | (mine + 1);
			/*
			 * Another writer published here first: look at its
			 * entry. A failed cmpxchg() orders nothing: the read
			 * barrier puts its load before the entry's, as the
			 * acquire above does.
			 */
			smp_rmb();
		}
		if (pea_stk_same(pea_stk_entry(stk, g, w - 1), hash, kind,
				 ips, nr))
			return (gen ? PEA_STK_GEN_BIT : 0) | w;
		i = (i + 1) & (stk->cap - 1);
	}
	/* Not reached: at most max_stacks of the 2 * max_stacks words used. */
	return -ENOSPC;
}

/**
 * pea_stk_copy() - copy the stacks of generation @gen out
 * @stk: the store
 * @gen: 0 or 1
 * @o: where, and what was seen: the stacks that do not fit in @o->room
 *     are counted in @o->size and @o->nr but not copied
 *
 * Context: process context, the table's reader (its lock held); writers
 * may be adding stacks (a live read): each word is loaded with acquire.
 * Return: 0 or -EFAULT.
 */
int pea_stk_copy(const struct pea_stk *stk, unsigned int gen,
		 struct pea_stk_out *o)
{
	struct pea_stk_gen *g = stk->gen[gen];
	u32 *index = pea_stk_index(g);
	const struct pea_stk_entry *e;
	struct pea_agg_stack h;
	u32 i, w;
	u64 bytes;

	for (i = 0; i < stk->cap; i++) {
		if (!(i & 1023))
			cond_resched();
		/* Acquire: pairs with pea_stk_id()'s cmpxchg(). */
		w = smp_load_acquire(&index[i]);
		if (!w)
			continue;
		e = pea_stk_entry(stk, g, w - 1);
		bytes = sizeof(h) + e->nr * sizeof(u64);
		o->nr++;
		o->size += bytes;
		if (o->size > o->room)
			continue;
		h.id = (gen ? PEA_STK_GEN_BIT : 0) | w;
		h.nr = e->nr;
		h.kind = e->kind;
		if (copy_to_user(o->buf, &h, sizeof(h)) ||
		    copy_to_user(o->buf + sizeof(h), e->ips,
				 e->nr * sizeof(u64)))
			return -EFAULT;
		o->buf += bytes;
	}
	return 0;
}

/**
 * pea_stk_clear() - empty generation @gen, which no writer uses
 * @stk: the store
 * @gen: 0 or 1
 */
void pea_stk_clear(struct pea_stk *stk, unsigned int gen)
{
	struct pea_stk_gen *g = stk->gen[gen];

	memset(pea_stk_index(g), 0, stk->index_size);
	atomic_set(&g->used, 0);
}
