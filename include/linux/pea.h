/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: the in-kernel producer API, for modules that write into pea maps.
 *
 * A producer finds a map by the name user space gave it, writes records
 * with pea_output() (the contract of bpf_perf_event_output()) or with the
 * zero-copy pea_output_reserve()/pea_output_commit() pair, and drops its
 * reference with pea_map_put(). pea_output_ctx() and pea_skb_output()
 * append a context's bytes (a socket buffer's, or any through a copy
 * callback) after the caller's data in the same record, the length in
 * PEA_F_CTXLEN_MASK of the flags, as bpf_event_output() and
 * bpf_skb_event_output() do.
 *
 * A map's slots may also hold counters (perf counters created through
 * /dev/pea): pea_read_value() and pea_read() read the one bound to the
 * calling CPU, with the contracts of bpf_perf_event_read_value() and
 * bpf_perf_event_read(), from any context: task, softirq, hardirq, kprobe
 * and kretprobe handlers, NMI.
 */
#ifndef _LINUX_PEA_H
#define _LINUX_PEA_H

#include <linux/types.h>
#include <uapi/linux/pea.h>

struct pea_map;
struct pea_ring;
struct pea_event;
struct sk_buff;

/**
 * typedef pea_ctx_copy_t - copies a context's bytes into a record
 * @dst: where in the record the bytes go
 * @src: the context pea_output_ctx() was given
 * @off: offset in the context of the first byte (pea passes 0)
 * @len: bytes to copy
 *
 * The shape of Linux's bpf_ctx_copy_t. Called in the writer's context
 * (possibly NMI) with preemption disabled: must not sleep or fault.
 *
 * Return: the bytes that were not copied, at the end of @dst (0: all).
 */
typedef unsigned long (*pea_ctx_copy_t)(void *dst, const void *src,
					unsigned long off, unsigned long len);

/* Nesting depth of writers on one CPU: task, softirq, hardirq, NMI. */
#define PEA_NEST_MAX	4

/**
 * struct pea_output_handle - a record reserved by pea_output_reserve()
 * @data: where the caller writes the payload (contiguous, @size bytes)
 * @size: payload bytes reserved
 *
 * The remaining fields are private to pea.
 */
struct pea_output_handle {
	void *data;
	u32 size;
	/* private */
	struct pea_event *event;
	struct pea_ring *ring;
	unsigned long wakeup;
	u32 rec_size;
};

struct pea_map *pea_map_get_by_name(const char *name);
void pea_map_put(struct pea_map *map);

long pea_output(struct pea_map *map, u64 flags, const void *data, u64 size);
long pea_output_reserve(struct pea_map *map, u64 flags, u64 size,
			struct pea_output_handle *handle);
void pea_output_commit(struct pea_output_handle *handle);
long pea_output_ctx(struct pea_map *map, u64 flags, const void *data,
		    u64 size, const void *ctx, pea_ctx_copy_t copy);
#ifdef CONFIG_NET
long pea_skb_output(struct pea_map *map, u64 flags, const struct sk_buff *skb,
		    const void *meta, u64 meta_size);
#endif

/* Counter reads: bpf_perf_event_read_value() and bpf_perf_event_read(). */
long pea_read_value(struct pea_map *map, u64 flags,
		    struct pea_event_value *buf, u32 size);
u64 pea_read(struct pea_map *map, u64 flags);

#endif /* _LINUX_PEA_H */
