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
 * It takes no lock, allocates nothing and never sleeps: callable from
 * task, softirq, hardirq and NMI context.
 */
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/string.h>
#include "pea_internal.h"

/* Writers inside reserve..commit on this CPU; one slot per context. */
static DEFINE_PER_CPU(int, pea_nest_level);

/*
 * Take a nesting slot (preemption disabled) and find the event to write
 * to, with pea_output()'s checks in its error order. On error the slot
 * is still held: pea_output_leave() releases it in every case.
 */
static __always_inline long pea_output_enter(struct pea_map *map, u64 flags,
					     u64 size, struct pea_event **evp)
{
	struct pea_event *ev;
	long err;

	preempt_disable();
	if (unlikely(this_cpu_inc_return(pea_nest_level) > PEA_NEST_MAX))
		return -EBUSY;
	err = pea_map_slot_event(map, flags, &ev);
	if (err)
		return err;
	if (unlikely(ev->kind != PEA_EVENT_OUTPUT))
		return -EINVAL;
	if (unlikely(READ_ONCE(ev->oncpu) != (int)smp_processor_id()))
		return -EOPNOTSUPP;
	if (unlikely(size > ev->max_payload))
		return -E2BIG;
	*evp = ev;
	return 0;
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
 * the same payload, with zeroed padding.
 *
 * Context: any, including NMI; takes no locks and never sleeps.
 * Return: 0 on success; -EBUSY, -EINVAL, -E2BIG, -ENOENT, -EOPNOTSUPP,
 * or -ENOSPC when the record was dropped (and counted lost).
 */
long pea_output(struct pea_map *map, u64 flags, const void *data, u64 size)
{
	struct pea_event *ev;
	long err;

	err = pea_output_enter(map, flags, size, &ev);
	if (!err)
		err = pea_ring_output(ev, data, size);
	pea_output_leave();
	return err;
}
EXPORT_SYMBOL_GPL(pea_output);
