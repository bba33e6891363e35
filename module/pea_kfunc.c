// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the kfuncs BPF programs call to write into pea maps.
 *
 * pea_kf_output() is bpf_perf_event_output() for a pea map: the same
 * flags (the slot index or PEA_F_CURRENT_CPU; PEA_F_CTXLEN_MASK refused
 * with EINVAL, as pea_output() refuses it), the same record and errnos.
 * The program names the map by its BPF handle (pea_map_info.bpf_handle):
 * a random 64-bit value that only maps created with PEA_F_BPF_WRITE have,
 * known only through the map's fd, so a program writes only into maps
 * its loader was given, as in Linux. It is a scalar the program carries
 * in any context: the kfunc finds the map with preemption disabled (a
 * read-side critical section of RCU), through a per-CPU cache of the last
 * map found (pea_kf_map()) or the table of handles, and maps are freed
 * after a grace period (pea_map_put()), so a map destroyed while a
 * program runs is never touched after it is freed. Errors a program may
 * ignore are counted: per map by errno, and a global count of calls
 * naming no live map (debugfs "kfunc").
 *
 * A module kfunc needs the module's BTF and resolved BTF ids, and a
 * kernel that lets the program type call module kfuncs. Kbuild builds
 * this file's kfunc part only where the build can give pea.ko BTF
 * (PEA_HAVE_KFUNCS), and registers it for the program types the kernel
 * allows (pea_compat.h). Whether the kfuncs are on, and why not, is in
 * modinfo ("kfuncs"), debugfs ("kfunc") and the kernel log.
 *
 * The output path takes no lock, allocates nothing and never sleeps:
 * callable from every context a BPF program runs in, NMI included.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/bpf.h>
#include "pea_internal.h"
#include "pea_compat.h"

#if defined(PEA_HAVE_KFUNCS) && defined(PEA_KFUNC_ZC_OFF)
MODULE_INFO(kfuncs, "pea_kf_output for " PEA_KFUNC_PROG_TYPES_NAME
	    "; zero-copy off: " PEA_KFUNC_ZC_OFF);
#elif defined(PEA_HAVE_KFUNCS)
MODULE_INFO(kfuncs, "pea_kf_output for " PEA_KFUNC_PROG_TYPES_NAME
	    "; pea_kf_reserve, pea_kf_rec_data, pea_kf_commit for "
	    PEA_KFUNC_ZC_TYPES_NAME);
#else
MODULE_INFO(kfuncs, "off: " PEA_KFUNC_OFF);
#endif

/* "on", or "off: why" */
static const char *pea_kf_state = "off: not registered";
static int pea_kf_errno;
/* Calls that named no live map, per CPU (summed when shown). */
static DEFINE_PER_CPU(u64, pea_kf_bad_handle);

#ifdef PEA_HAVE_KFUNCS
static __always_inline void pea_kf_count(struct pea_map *map, long err)
{
	int i;

	switch (err) {
	case -EINVAL:
		i = PEA_KF_EINVAL;
		break;
	case -E2BIG:
		i = PEA_KF_E2BIG;
		break;
	case -ENOENT:
		i = PEA_KF_ENOENT;
		break;
	case -EOPNOTSUPP:
		i = PEA_KF_EOPNOTSUPP;
		break;
	case -EBUSY:
		i = PEA_KF_EBUSY;
		break;
	case -EFAULT:
		i = PEA_KF_EFAULT;
		break;
	default:
		i = PEA_KF_ENOSPC;
		break;
	}
	this_cpu_inc(map->kf_errors[i]);
}

/* Context levels of a CPU: task, softirq, hardirq, NMI. */
#define PEA_KF_LEVELS	4

/*
 * This CPU's context level: 3 in NMI, 2 in a hard interrupt, 1 serving a
 * softirq, else 0 (a task with bottom halves disabled is a task: no
 * softirq runs over it).
 */
static __always_inline int pea_kf_level(void)
{
	unsigned long pc = preempt_count();

	if (pc & NMI_MASK)
		return 3;
	if (pc & HARDIRQ_MASK)
		return 2;
	if (pc & SOFTIRQ_OFFSET)
		return 1;
	return 0;
}

/**
 * struct pea_kf_cache - the map a handle named last, on a CPU
 * @handle: the handle (0: empty; no map has handle 0)
 * @map: its map
 * @gen: pea_map_handles_gen when @map was found by @handle
 *
 * Lookups by handle cost a hash and a table walk (pea_map_find_rcu());
 * a program writes into the same map call after call, so each CPU keeps
 * the last map found. The entry is chosen by the nesting slot the kfunc
 * took (pea_nest_level, every writer's of the CPU): a kfunc that nests in
 * another on the CPU (an interrupt, an NMI, an NMI inside an int3 or #DB
 * handler, which count as NMIs too, a kprobe inside the kfunc) holds the
 * next slot and takes the next entry, as Linux's bpf_perf_event_output()
 * chooses its sample data (bpf_trace_nest_level), not by the kind of
 * context, so no lookup ever sees an entry another one is writing; past
 * PEA_NEST_MAX slots, no entry. Valid while pea_map_handles_gen has not
 * moved: every map leaving the table moves it before its grace period,
 * so a valid entry's map is live, and the caller's preemption-disabled
 * region (a read-side critical section of RCU, which call_rcu() waits
 * for) keeps it until the caller is done. A hit takes no
 * rcu_read_lock(): the entry holds a plain pointer, nothing is read
 * through RCU.
 */
struct pea_kf_cache {
	u64 handle;
	struct pea_map *map;
	unsigned long gen;
	unsigned long pad;	/* 32 bytes: a shift indexes the array */
};

static DEFINE_PER_CPU_ALIGNED(struct pea_kf_cache,
			      pea_kf_caches[PEA_NEST_MAX]);

/*
 * Take this CPU's next nesting slot, preemption disabled: the index of
 * the slot taken (PEA_NEST_MAX or more: none, the writer must not write
 * but must still give it back with pea_kf_nest_leave()). One instruction
 * each way (NMI-safe).
 */
static __always_inline unsigned int pea_kf_nest_enter(void)
{
	/*
	 * Unsigned: a count driven below 0 by a caller's unbalanced commit
	 * is past PEA_NEST_MAX too, never an index before the entries.
	 */
	unsigned int n = this_cpu_inc_return(pea_nest_level) - 1;

	barrier();	/* the slot's cache entry is used after it is taken */
	return n;
}

static __always_inline void pea_kf_nest_leave(void)
{
	barrier();	/* and given back after it is used */
	this_cpu_dec(pea_nest_level);
}

/*
 * pea_kf_map()'s miss: the table of handles, and the entry @c (NULL past
 * the slots) refilled. Out of line, as the other cold paths of the
 * kfuncs: the hit path then keeps little in registers across calls.
 */
static noinline notrace struct pea_map *
pea_kf_map_find(u64 handle, struct pea_kf_cache *c, unsigned long gen)
{
	struct pea_map *map;

	/*
	 * The generation before the lookup (pairs with pea_map_put()'s
	 * smp_wmb()): a map removed since is not found, or is found and
	 * cached with a generation that is already stale.
	 */
	smp_rmb();
	rcu_read_lock();
	map = pea_map_find_rcu(handle);
	rcu_read_unlock();
	if (map && c) {
		c->handle = handle;
		c->map = map;
		c->gen = gen;
	}
	return map;
}

/*
 * Whether this CPU's cache entry of nesting slot @n holds @handle and is
 * still valid: then *@mapp is its map, never NULL (an entry is filled
 * only with a map found, and one never filled has generation 0, which
 * pea_map_handles_gen never is). Else a miss, for pea_kf_map_find():
 * *@gen is the generation the entry was checked against, *@cp the entry
 * (NULL past the slots).
 *
 * Context: any, NMI included; preemption disabled (the map stays valid
 * until it is enabled again), nesting slot @n held.
 */
static __always_inline bool pea_kf_map_hit(u64 handle, unsigned int n,
					   unsigned long *gen,
					   struct pea_kf_cache **cp,
					   struct pea_map **mapp)
{
	struct pea_kf_cache *c = NULL;

	*gen = READ_ONCE(pea_map_handles_gen);
	if (likely(n < PEA_NEST_MAX)) {
		c = this_cpu_ptr(&pea_kf_caches[n]);
		if (likely(c->handle == handle && c->gen == *gen)) {
			*mapp = c->map;
			return true;
		}
	}
	*cp = c;
	return false;
}

/* The live map with @handle, or NULL: pea_kf_map_hit(), then the table. */
static __always_inline struct pea_map *pea_kf_map(u64 handle,
						  unsigned int n)
{
	struct pea_kf_cache *c;
	struct pea_map *map;
	unsigned long gen;

	if (likely(pea_kf_map_hit(handle, n, &gen, &c, &map)))
		return map;
	return pea_kf_map_find(handle, c, gen);
}

/*
 * pea_kf_output() past a cache hit or with NULL @data: the lookup, then
 * the errors in pea_kf_output()'s order, and the output.
 */
static noinline notrace long pea_kf_output_slow(u64 handle, u64 flags,
						const void *data, u32 size,
						unsigned int n)
{
	struct pea_map *map;
	long err;

	map = pea_kf_map(handle, n);
	if (unlikely(!map)) {
		this_cpu_inc(pea_kf_bad_handle);
		return -EBADF;
	}
	if (unlikely(!data && size))
		err = -EFAULT;
	else if (unlikely(n >= PEA_NEST_MAX))
		err = -EBUSY;
	else
		err = pea_ring_output_map(map, flags, data, size);
	if (unlikely(err))
		pea_kf_count(map, err);
	return err;
}

/**
 * pea_kf_output() - write one PERF_RECORD_SAMPLE into a pea map, from BPF
 * @handle: the map's BPF handle (pea_map_info.bpf_handle)
 * @flags: slot index in the low 32 bits, or PEA_F_CURRENT_CPU
 * @data: payload
 * @data__sz: payload bytes (the verifier checks @data holds as many)
 *
 * bpf_perf_event_output()'s contract on a pea map: the record is byte
 * for byte what that helper writes for the same payload. pea_output()
 * with the nesting slot taken before the lookup, whose cache entry it
 * chooses: one slot, one call to the ring (pea_ring_output_map()).
 *
 * Context: any a BPF program runs in, NMI included; takes no locks,
 * allocates nothing, never sleeps.
 * Return: 0; -EBADF when no live map has @handle (maps created without
 * PEA_F_BPF_WRITE have none); -EFAULT when @data is NULL and
 * @data__sz is not 0 (a map value the program did not check: 6.12's
 * verifier refuses it, 6.1's does not); else pea_output()'s errors:
 * -EBUSY, -EINVAL (flag bits other than the index, CTXLEN included; not
 * an output event), -E2BIG, -ENOENT, -EOPNOTSUPP, -ENOSPC (dropped and
 * counted lost). Every error is counted (debugfs "kfunc").
 */
__bpf_kfunc long pea_kf_output(u64 handle, u64 flags, const void *data,
			       u32 data__sz)
{
	struct pea_kf_cache *c;
	struct pea_map *map;
	unsigned long gen;
	unsigned int n;
	long err;

	/*
	 * Preemption off: the slot and its cache entry are the CPU's, and
	 * the map found stays valid until it is on again (pea_kf_map()).
	 */
	preempt_disable_notrace();
	n = pea_kf_nest_enter();
	if (likely(pea_kf_map_hit(handle, n, &gen, &c, &map) &&
		   (data || !data__sz))) {
		err = pea_ring_output_map(map, flags, data, data__sz);
		if (unlikely(err))
			pea_kf_count(map, err);
	} else {
		err = pea_kf_output_slow(handle, flags, data, data__sz, n);
	}
	pea_kf_nest_leave();
	preempt_enable_notrace();
	return err;
}

/**
 * struct pea_kf_rec - a record a BPF program reserved (pea_kf_reserve())
 * @h: the reservation, as pea_output_reserve() filled it
 *
 * Opaque to programs: the verifier hands them a pointer they may only
 * pass to pea_kf_rec_data() and pea_kf_commit(). One per CPU and nesting
 * level (pea_kf_recs), held from the reserve to the commit.
 */
struct pea_kf_rec {
	struct pea_output_handle h;
};

/*
 * The records reserved by programs on this CPU, one per context level,
 * and which are held (bit i: pea_kf_recs[i]). One per level: a program
 * holds at most one record, so records are committed in the reverse
 * order of their reservations, as every writer of a ring nests (the
 * outermost one publishes data_head and decides the wake-up from its own
 * snapshot: two records of one program committed in the order reserved
 * would lose a watermark's wake-up), and a program takes at most one of
 * the nesting slots every producer of the CPU shares. Set and cleared
 * with this CPU's atomics (NMI-safe on x86), preemption disabled. A
 * context of the same level may nest all the same (an NMI in an int3 or
 * #DB handler, both NMI level): it finds the bit set and gets NULL, or
 * runs to its end between the test and the set of the one it
 * interrupted, and gives the bit back before that one takes it.
 */
static DEFINE_PER_CPU(struct pea_kf_rec, pea_kf_recs[PEA_KF_LEVELS]);
static DEFINE_PER_CPU(unsigned long, pea_kf_recs_held);

/* Take this level's record: its index, or -EBUSY if it is held. */
static __always_inline int pea_kf_rec_take(void)
{
	int i = pea_kf_level();

	if (unlikely(this_cpu_read(pea_kf_recs_held) & BIT(i)))
		return -EBUSY;
	this_cpu_or(pea_kf_recs_held, BIT(i));
	return i;
}

/*
 * The index of @rec if it is a record this CPU holds, else -1 (the
 * verifier passes only what pea_kf_reserve() returned on this CPU, with
 * preemption disabled since: this is a check that costs two compares).
 */
static __always_inline int pea_kf_rec_index(const struct pea_kf_rec *rec)
{
	unsigned long off = (unsigned long)rec -
			    (unsigned long)this_cpu_ptr(&pea_kf_recs[0]);
	unsigned long i = off / sizeof(*rec);

	if (unlikely(off % sizeof(*rec) || i >= PEA_KF_LEVELS ||
		     !(this_cpu_read(pea_kf_recs_held) & BIT(i))))
		return -1;
	return i;
}

/**
 * pea_kf_reserve() - reserve a record in a pea map, zero-copy, from BPF
 * @handle: the map's BPF handle (pea_map_info.bpf_handle)
 * @flags: slot index in the low 32 bits, or PEA_F_CURRENT_CPU
 * @rdwr_buf_size: payload bytes; the name makes the verifier require a
 *                 constant ("R3 is not a const")
 *
 * pea_output_reserve() for a BPF program: the record is the one
 * pea_kf_output() writes (PERF_RECORD_SAMPLE, header, fields and padding
 * written here), its payload at pea_kf_rec_data(), published by
 * pea_kf_commit(). KF_ACQUIRE: the verifier refuses a program that can
 * exit still holding it. Preemption stays disabled and a nesting slot
 * held until the commit, so the program's code in between runs as an
 * output path does; the set is registered only where the verifier keeps
 * sleeping programs out (pea_compat.h), and a context that may sleep
 * all the same (a bpf_wq callback of such a program, on 6.12) is refused
 * here: preemptible outside any RCU read-side section. One record per
 * context level of the CPU (pea_kf_recs): a second reserve while one is
 * held at the same level gets NULL. The payload is zeroed: bytes the
 * program does not write are never what the ring held there.
 *
 * notrace, as pea_kf_rec_data() and pea_kf_commit(): a tracing program
 * there would see a record it did not reserve.
 *
 * Context: any a BPF program that cannot sleep runs in, NMI included.
 * Return: the record, or NULL: no live map has @handle (counted in
 * "bad_handle"), else, counted per map: a context that may sleep
 * (may_sleep), this level's record held (EBUSY), pea_output_reserve()'s
 * errors as pea_kf_output()'s; a drop is counted lost too.
 */
__bpf_kfunc notrace struct pea_kf_rec *
pea_kf_reserve(u64 handle, u64 flags, u32 rdwr_buf_size)
{
	struct pea_kf_rec *rec = NULL;
	struct pea_map *map;
	unsigned int n;
	long err;
	int i;

	/* Before preempt_disable(): whether the caller's context may sleep. */
	bool may_sleep = preemptible() && !rcu_preempt_depth();

	/*
	 * The map stays valid until preemption is on again (pea_kf_map()).
	 * On success preemption stays disabled and the nesting slot held
	 * until pea_kf_commit() (pea_output_commit()): a read-side critical
	 * section of RCU that keeps the map and its ring (both freed after a
	 * grace period) from the reserve to the commit.
	 */
	preempt_disable();
	n = pea_kf_nest_enter();
	map = pea_kf_map(handle, n);
	if (unlikely(!map)) {
		this_cpu_inc(pea_kf_bad_handle);
		goto out;
	}
	if (unlikely(may_sleep)) {
		this_cpu_inc(map->kf_errors[PEA_KF_MAY_SLEEP]);
		goto out;
	}
	i = pea_kf_rec_take();
	if (unlikely(i < 0)) {
		pea_kf_count(map, i);
		goto out;
	}
	rec = this_cpu_ptr(&pea_kf_recs[i]);
	err = -EBUSY;
	if (likely(n < PEA_NEST_MAX))
		err = __pea_output_reserve(map, flags, rdwr_buf_size, &rec->h);
	if (unlikely(err)) {
		this_cpu_and(pea_kf_recs_held, ~BIT(i));
		pea_kf_count(map, err);
		rec = NULL;
		goto out;
	}
	memset(rec->h.data, 0, rdwr_buf_size);
	return rec;
out:
	pea_kf_nest_leave();
	preempt_enable();
	return rec;
}

/**
 * pea_kf_rec_data() - the payload of a reserved record
 * @rec: what pea_kf_reserve() returned
 * @rdwr_buf_size: bytes the program will write: a constant, at most what
 *                 it reserved
 *
 * The verifier makes the result memory of @rdwr_buf_size bytes, tied to
 * @rec: unusable after pea_kf_commit().
 *
 * Context: the one that reserved @rec.
 * Return: the payload, or NULL when @rdwr_buf_size is more than was
 * reserved.
 */
__bpf_kfunc notrace u8 *pea_kf_rec_data(struct pea_kf_rec *rec,
					u32 rdwr_buf_size)
{
	if (unlikely(pea_kf_rec_index(rec) < 0 ||
		     rdwr_buf_size > rec->h.size))
		return NULL;
	return rec->h.data;
}

/**
 * pea_kf_commit() - publish a record reserved by pea_kf_reserve()
 * @rec: what pea_kf_reserve() returned
 *
 * KF_RELEASE: the verifier invalidates @rec and its payload pointer.
 * Payload bytes the program did not write are zeroes.
 *
 * Context: the one that reserved @rec.
 */
__bpf_kfunc notrace void pea_kf_commit(struct pea_kf_rec *rec)
{
	int i;

	preempt_disable();
	i = pea_kf_rec_index(rec);
	if (likely(i >= 0)) {
		pea_output_commit(&rec->h);
		this_cpu_and(pea_kf_recs_held, ~BIT(i));
	}
	preempt_enable();
}

/*
 * KF_TRUSTED_ARGS: 6.12's verifier then refuses a pointer that may be
 * NULL as @data ("Possibly NULL pointer passed to trusted arg2"); it
 * changes nothing else for a memory argument. 6.1's checks no memory
 * argument for NULL, hence the kfunc's own -EFAULT.
 */
PEA_KFUNCS_START(pea_kf_ids)
BTF_ID_FLAGS(func, pea_kf_output, KF_TRUSTED_ARGS)
PEA_KFUNCS_END(pea_kf_ids)

static const struct btf_kfunc_id_set pea_kf_set = {
	.owner = THIS_MODULE,
	.set = &pea_kf_ids,
};

/*
 * The set of the hooks whose programs cannot sleep: the output and the
 * zero-copy kfuncs. KF_ACQUIRE | KF_RET_NULL: the program must test the
 * record for NULL, and commit it on every path. KF_TRUSTED_ARGS on the
 * data kfunc: only a record the program holds (6.1: "must be
 * referenced"). KF_RELEASE: the commit ends the reference.
 */
PEA_KFUNCS_START(pea_kf_zc_ids)
BTF_ID_FLAGS(func, pea_kf_output, KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, pea_kf_reserve, KF_ACQUIRE | KF_RET_NULL)
BTF_ID_FLAGS(func, pea_kf_rec_data, KF_TRUSTED_ARGS | KF_RET_NULL)
BTF_ID_FLAGS(func, pea_kf_commit, KF_RELEASE)
PEA_KFUNCS_END(pea_kf_zc_ids)

#ifdef PEA_HAVE_KFUNC_COMMON_HOOK
BTF_ID_LIST(pea_kf_zc_list)
BTF_ID(func, pea_kf_reserve)
BTF_ID(func, pea_kf_rec_data)
BTF_ID(func, pea_kf_commit)
BTF_ID(func, bpf_throw)
#define PEA_KF_ZC_N		3	/* the first entries: pea's */
#define PEA_KF_BPF_THROW	3	/* vmlinux's bpf_throw() (6.7) */

/*
 * Whether @prog calls bpf_throw() (bpf_assert() too): a throw from a
 * global subprogram unwinds past the caller's commit, and the verifier
 * checks held references only in the frame that throws, so a reservation
 * would outlive the program (with preemption disabled). Scanned before
 * the program is rewritten: a kfunc call of vmlinux (off 0) names the
 * function by its BTF id.
 */
static bool pea_kf_prog_throws(const struct bpf_prog *prog)
{
	u32 id = pea_kf_zc_list[PEA_KF_BPF_THROW], i;
	const struct bpf_insn *insn;

	for (i = 0; id && i < prog->len; i++) {
		insn = &prog->insnsi[i];
		if (insn->code == (BPF_JMP | BPF_CALL) &&
		    insn->src_reg == BPF_PSEUDO_KFUNC_CALL && !insn->off &&
		    insn->imm == id)
			return true;
	}
	return false;
}

/*
 * The common hook serves every program type: the zero-copy kfuncs are
 * refused (the verifier's "calling kernel function ... is not allowed")
 * to programs that may sleep, and to programs that may throw.
 */
static int pea_kf_zc_filter(const struct bpf_prog *prog, u32 kfunc_id)
{
	int i;

	for (i = 0; i < PEA_KF_ZC_N; i++) {
		if (kfunc_id != pea_kf_zc_list[i])
			continue;
		if (pea_bpf_prog_sleepable(prog) ||
		    prog->type == BPF_PROG_TYPE_SYSCALL ||
		    prog->type == BPF_PROG_TYPE_EXT ||
		    pea_kf_prog_throws(prog))
			return -EACCES;
	}
	return 0;
}
#endif

static const struct btf_kfunc_id_set pea_kf_zc_set = {
	.owner = THIS_MODULE,
	.set = &pea_kf_zc_ids,
#ifdef PEA_HAVE_KFUNC_COMMON_HOOK
	.filter = pea_kf_zc_filter,
#endif
};

/**
 * pea_kfunc_init() - register the kfuncs for the program types allowed
 *
 * From the module's init only. A module without BTF or with unresolved
 * BTF ids registers nothing and the kernel still answers 0, so both are
 * checked first. A failed registration frees every set of the module: the
 * types are the kernel's (pea_compat.h), never tried one by one.
 */
void pea_kfunc_init(void)
{
	const enum bpf_prog_type *types;
	unsigned int i, n = pea_kfunc_prog_types(&types);
	int err;

	if (!THIS_MODULE->btf_data_size) {
		pea_kf_state = "off: pea.ko has no BTF section";
		goto out;
	}
	if (!pea_kf_ids.cnt) {
		pea_kf_state =
			"off: pea.ko's BTF ids are not resolved (resolve_btfids did not run)";
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct btf_kfunc_id_set *set = &pea_kf_set;

		if (pea_kfunc_zc_hook(types[i]))
			set = &pea_kf_zc_set;
		err = register_btf_kfunc_id_set(types[i], set);
		if (err) {
			pea_kf_errno = err;
			pea_kf_state = "off: register_btf_kfunc_id_set() failed";
			goto out;
		}
	}
	pea_kf_state = "on";
out:
	pr_info("pea: kfuncs %s\n", pea_kf_state);
}
#else
void pea_kfunc_init(void)
{
	pea_kf_state = "off: " PEA_KFUNC_OFF;
	pr_info("pea: kfuncs %s\n", pea_kf_state);
}
#endif /* PEA_HAVE_KFUNCS */

/**
 * pea_kfunc_show() - the debugfs "kfunc" file
 * @m: the seq_file
 * @v: unused
 *
 * The state ("on" or "off: why"), the program types, the calls that
 * named no live map, then per map the errors of the kfuncs on it.
 *
 * Return: 0.
 */
int pea_kfunc_show(struct seq_file *m, void *v)
{
	u64 bad = 0;
	int cpu;

	seq_printf(m, "state %s\n", pea_kf_state);
	if (pea_kf_errno)
		seq_printf(m, "errno %d\n", pea_kf_errno);
#ifdef PEA_HAVE_KFUNCS
	seq_printf(m, "program_types %s\n", PEA_KFUNC_PROG_TYPES_NAME);
#ifdef PEA_KFUNC_ZC_OFF
	seq_puts(m, "zero_copy off: " PEA_KFUNC_ZC_OFF "\n");
#else
	seq_puts(m, "zero_copy " PEA_KFUNC_ZC_TYPES_NAME "\n");
#endif
#endif
	for_each_possible_cpu(cpu)
		bad += per_cpu(pea_kf_bad_handle, cpu);
	seq_printf(m, "bad_handle %llu\n", bad);
	pea_maps_kf_show(m);
	return 0;
}
