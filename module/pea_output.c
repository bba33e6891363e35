// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the output helper other kernel code calls.
 *
 * pea_output() has bpf_perf_event_output()'s contract and error order:
 * EBUSY (nested deeper than the slots), EINVAL (unknown flag bits),
 * E2BIG (index at or past max_entries), ENOENT (empty slot), EINVAL (not
 * an output event), EOPNOTSUPP (event disabled or bound to another CPU),
 * then E2BIG for a payload too large for one record (pea only: Linux
 * writes a broken record) and ENOSPC for a dropped, counted record.
 *
 * pea_output_ctx() and pea_skb_output() take the payload append of
 * bpf_event_output() and bpf_skb_event_output(): PEA_F_CTXLEN_MASK in
 * the flags names bytes of a context that follow the caller's data in the
 * same record. Their errors come first as those helpers': EINVAL (flag
 * bits other than the index and the context length), EFAULT (no socket
 * buffer, or a context length past it), then pea_output()'s, the
 * payload limit applying to the data and the context bytes together.
 * pea_skb_output() exists on kernels with networking (CONFIG_NET).
 *
 * It takes no lock, allocates nothing and never sleeps: callable from
 * task, softirq, hardirq and NMI context.
 */
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include "pea_internal.h"

/* Writers inside reserve..commit on this CPU; one slot per context. */
DEFINE_PER_CPU(int, pea_nest_level);

/*
 * Take a nesting slot (preemption disabled) and find the event to write
 * to, with pea_output()'s checks in its error order. On error the slot
 * is still held: pea_output_leave() releases it in every case.
 */
static __always_inline long pea_output_enter(struct pea_map *map, u64 flags,
					     u64 size, struct pea_event **evp)
{
	preempt_disable();
	if (unlikely(this_cpu_inc_return(pea_nest_level) > PEA_NEST_MAX))
		return -EBUSY;
	return pea_output_event(map, flags, size, evp);
}

static __always_inline void pea_output_leave(void)
{
	this_cpu_dec(pea_nest_level);
	preempt_enable();
}

/**
 * pea_output_reserve() - reserve a record in a map's event, zero-copy
 * @map: the map
 * @flags: slot index in the low 32 bits, or PEA_F_CURRENT_CPU
 * @size: payload bytes
 * @handle: receives the payload pointer (@handle->data, @size bytes)
 *
 * On success preemption stays disabled and a nesting slot stays held
 * until pea_output_commit(): write the payload and commit promptly,
 * without sleeping. A reserved record is always committed.
 *
 * Context: any, including NMI.
 * Return: 0 or a negative errno as pea_output().
 */
long pea_output_reserve(struct pea_map *map, u64 flags, u64 size,
			struct pea_output_handle *handle)
{
	struct pea_event *ev;
	long err;

	err = pea_output_enter(map, flags, size, &ev);
	if (!err)
		err = pea_ring_reserve(ev, size, handle);
	if (err)
		pea_output_leave();
	return err;
}
EXPORT_SYMBOL_GPL(pea_output_reserve);

/*
 * pea_output_reserve() for a caller that holds a nesting slot and has
 * preemption disabled (pea_kf_reserve()): the checks after the slot and
 * the reservation. Both stay held whatever the answer;
 * pea_output_commit() releases them after a success.
 */
long __pea_output_reserve(struct pea_map *map, u64 flags, u64 size,
			  struct pea_output_handle *handle)
{
	struct pea_event *ev;
	long err;

	err = pea_output_event(map, flags, size, &ev);
	if (!err)
		err = pea_ring_reserve(ev, size, handle);
	return err;
}

/**
 * pea_output_commit() - publish a record reserved by pea_output_reserve()
 * @handle: the handle pea_output_reserve() filled
 *
 * Context: the context that reserved the record.
 */
void pea_output_commit(struct pea_output_handle *handle)
{
	pea_ring_commit(handle);
	pea_output_leave();
}
EXPORT_SYMBOL_GPL(pea_output_commit);

/**
 * pea_output() - write one PERF_RECORD_SAMPLE into a map's event
 * @map: the map, held by the caller (pea_map_get_by_name())
 * @flags: slot index in the low 32 bits, or PEA_F_CURRENT_CPU
 * @data: payload
 * @size: payload bytes (0 is valid)
 *
 * The record is byte for byte what bpf_perf_event_output() writes for
 * the same payload from kernel registers, with zeroed padding: header.misc
 * is PERF_RECORD_MISC_KERNEL, as no registers come with the call.
 *
 * notrace: the nesting guard is taken inside, so a traced program here
 * calling a producer (pea's kfunc) would nest without its bound.
 *
 * Context: any, including NMI; takes no locks and never sleeps.
 * Return: 0 on success; -EBUSY, -EINVAL, -E2BIG, -ENOENT, -EOPNOTSUPP,
 * or -ENOSPC when the record was dropped (and counted lost).
 */
notrace long pea_output(struct pea_map *map, u64 flags, const void *data,
			u64 size)
{
	long err = -EBUSY;

	preempt_disable();
	if (likely(this_cpu_inc_return(pea_nest_level) <= PEA_NEST_MAX))
		err = pea_ring_output_map(map, flags, data, size);
	pea_output_leave();
	return err;
}
EXPORT_SYMBOL_GPL(pea_output);

/* Flag bits the context-appending outputs accept. */
#define PEA_CTX_FLAGS	(PEA_F_INDEX_MASK | PEA_F_CTXLEN_MASK)

static __always_inline u64 pea_ctx_len(u64 flags)
{
	return (flags & PEA_F_CTXLEN_MASK) >> 32;
}

/*
 * One record: @size bytes of @data, then @ctx_len bytes of @ctx through
 * @copy (a plain copy when NULL), in one reservation: the record is
 * contiguous in the kernel's view of the ring, so @copy runs once.
 */
static __always_inline long pea_output_frags(struct pea_map *map, u64 flags,
					     const void *data, u64 size,
					     const void *ctx, u64 ctx_len,
					     pea_ctx_copy_t copy)
{
	struct pea_output_handle h;
	u64 total = size + ctx_len;
	struct pea_event *ev;
	unsigned long left;
	long err;

	/* A size near U64_MAX must not wrap to a small total. */
	if (unlikely(total < size))
		total = U64_MAX;
	err = pea_output_enter(map, flags & ~PEA_F_CTXLEN_MASK, total, &ev);
	if (!err)
		err = pea_ring_reserve(ev, total, &h);
	if (!err) {
		memcpy(h.data, data, size);
		if (ctx_len && !copy) {
			memcpy(h.data + size, ctx, ctx_len);
		} else if (ctx_len) {
			left = copy(h.data + size, ctx, 0, ctx_len);
			/* Bytes a failing copy left: zeroes, never stale ring. */
			if (unlikely(left)) {
				left = min_t(unsigned long, left, ctx_len);
				memset(h.data + total - left, 0, left);
			}
		}
		pea_ring_commit(&h);
	}
	pea_output_leave();
	return err;
}

/**
 * pea_output_ctx() - write a record of data followed by context bytes
 * @map: the map, held by the caller (pea_map_get_by_name())
 * @flags: slot index in the low 32 bits, or PEA_F_CURRENT_CPU; in
 *         PEA_F_CTXLEN_MASK (bits 32..51), the context bytes to append
 * @data: payload written first
 * @size: payload bytes (0 is valid)
 * @ctx: the context, handed to @copy (non-NULL when bytes are appended)
 * @copy: copies the context's bytes into the record, or NULL when @ctx is
 *        plain memory to copy from
 *
 * The record's raw data is @size bytes of @data followed by the context
 * length bytes of @ctx, what bpf_event_output() writes from its fragment
 * list, with zeroed padding. One reservation, one record: @copy runs once,
 * with offset 0, on the reserved space. Bytes @copy reports not copied
 * are zeroed; the record is still written, as Linux does.
 *
 * Context: any, including NMI; takes no locks and never sleeps.
 * Return: 0 on success; -EINVAL for flag bits outside the index and the
 * context length, -EFAULT for a NULL @ctx with a context length, then
 * pea_output()'s errors, -E2BIG when data and context together exceed
 * the record limit.
 */
long pea_output_ctx(struct pea_map *map, u64 flags, const void *data,
		    u64 size, const void *ctx, pea_ctx_copy_t copy)
{
	u64 ctx_len = pea_ctx_len(flags);

	if (unlikely(flags & ~PEA_CTX_FLAGS))
		return -EINVAL;
	if (unlikely(!ctx && ctx_len))
		return -EFAULT;
	return pea_output_frags(map, flags, data, size, ctx, ctx_len, copy);
}
EXPORT_SYMBOL_GPL(pea_output_ctx);

#ifdef CONFIG_NET
/* pea_ctx_copy_t of a socket buffer, linear or paged. */
static unsigned long pea_skb_copy(void *dst, const void *src,
				  unsigned long off, unsigned long len)
{
	return skb_copy_bits(src, off, dst, len) ? len : 0;
}

/**
 * pea_skb_output() - write a record of metadata followed by packet bytes
 * @map: the map, held by the caller (pea_map_get_by_name())
 * @flags: slot index in the low 32 bits, or PEA_F_CURRENT_CPU; in
 *         PEA_F_CTXLEN_MASK (bits 32..51), the packet bytes to append
 * @skb: the socket buffer, linear or with paged fragments
 * @meta: metadata written first
 * @meta_size: metadata bytes (0 is valid)
 *
 * bpf_skb_event_output()'s contract: the record's raw data is @meta
 * followed by the first context length bytes of the packet at skb->data,
 * copied with skb_copy_bits() from the linear part and the fragments.
 *
 * Context: any, including NMI; takes no locks and never sleeps.
 * Return: 0 on success; -EINVAL for flag bits outside the index and the
 * context length, -EFAULT for a NULL @skb or a context length past
 * skb->len, then pea_output()'s errors, -E2BIG when metadata and packet
 * bytes together exceed the record limit.
 */
long pea_skb_output(struct pea_map *map, u64 flags, const struct sk_buff *skb,
		    const void *meta, u64 meta_size)
{
	u64 ctx_len = pea_ctx_len(flags);

	if (unlikely(flags & ~PEA_CTX_FLAGS))
		return -EINVAL;
	if (unlikely(!skb || ctx_len > skb->len))
		return -EFAULT;
	return pea_output_frags(map, flags, meta, meta_size, skb, ctx_len,
				pea_skb_copy);
}
EXPORT_SYMBOL_GPL(pea_skb_output);
#endif /* CONFIG_NET */
