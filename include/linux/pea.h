/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: the in-kernel producer API, for modules that write into pea maps.
 *
 * A producer finds a map by the name user space gave it, writes records
 * with pea_output() (the contract of bpf_perf_event_output()) or with the
 * zero-copy pea_output_reserve()/pea_output_commit() pair, and drops its
 * reference with pea_map_put().
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

/* Counter reads: bpf_perf_event_read_value() and bpf_perf_event_read(). */
long pea_read_value(struct pea_map *map, u64 flags,
		    struct pea_event_value *buf, u32 size);
u64 pea_read(struct pea_map *map, u64 flags);

#endif /* _LINUX_PEA_H */
