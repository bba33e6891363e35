/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea trace: aggregations of the events a session delivers, kept in the
 * tool: --hist KEY (log2 histograms) and --count-by KEY (counts per
 * distinct key, a sorted top-N), per probe, printed every --interval and
 * at the end. docs/aggregations.md describes the output.
 */
#ifndef _PEA_AGGREGATE_H
#define _PEA_AGGREGATE_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct trace_event;
struct trace_fmt;

#define AGG_MAX_SPECS		8	/* --hist and --count-by options, each */
#define AGG_DEFAULT_TOP		10
#define AGG_DEFAULT_MAX_KEYS	10240
#define AGG_MAX_KEYS_LIMIT	1048576
#define AGG_STR_KEY_MAX		256	/* string keys: bytes kept */

/**
 * struct agg_opts - what the command line asked for
 * @hist:     the --hist KEY texts, @nhist of them
 * @hist_probe: the probe each is for (-1: every probe)
 * @count:    the --count-by KEY texts, @ncount of them
 * @count_probe: the probe each is for (-1: every probe)
 * @top:      rows printed per count table (the rest is one line)
 * @max_keys: distinct keys kept per count table; events of further keys
 *            are counted as "other"
 * @lin:      --lhist MIN,MAX,STEP: the histograms have linear buckets,
 *            @lin_n of them from @lin_min by @lin_step (the last one
 *            reaching @lin_max or past it), one below and one above,
 *            as the kernel's PEA_AGG_HIST_LINEAR
 * @json:     print JSON objects
 * @folded:   --folded FILE: the --count-by kstack tables' stacks, summed
 *            over the session, written there as folded stacks
 * @latency:  --latency: probe 0 starts, probe 1 ends; hist[0] is the
 *            histogram of the ns between them, on probe 1 (in the kernel)
 * @lat_key:  --key: the pairing key of both probes, or "START,END" (NULL:
 *            the thread)
 * @max_pending: --max-pending: starts the kernel keeps at once
 */
struct agg_opts {
	const char *hist[AGG_MAX_SPECS];
	int hist_probe[AGG_MAX_SPECS];
	int nhist;
	const char *count[AGG_MAX_SPECS];
	int count_probe[AGG_MAX_SPECS];
	int ncount;
	unsigned int top;
	unsigned int max_keys;
	bool lin;
	__s64 lin_min, lin_max;
	__u64 lin_step;
	unsigned int lin_n;
	bool json;
	const char *folded;
	bool latency;
	const char *lat_key;
	unsigned int max_pending;
};

#define AGG_DEFAULT_MAX_PENDING	10240

struct agg;

/*
 * Parse the keys against the session's @nprobes probes (@probes[i] the
 * format of probe i; a key must fit each probe it is for). Returns 0 with *@out set, or
 * PEA_EXIT_USAGE after printing what is allowed, or PEA_EXIT_ERR (out of
 * memory). *@out is NULL when no aggregation was asked for.
 */
int agg_new(struct agg **out, const struct agg_opts *o,
	    const struct trace_fmt *const *probes, int nprobes);

/* Count one delivered event (of probe @ev->probe). */
void agg_add(struct agg *a, const struct trace_event *ev);

/*
 * Let the kernel count probe @p's tables it can compute exactly (a
 * histogram of a latency, a raw argument or an integer field, or counts
 * by comm, pid, tid, cpu, kstack)
 * in a table of link @link_fd (PEA_LINK_IOC_AGG_CREATE): every hit, not
 * only the records that arrive. With @no_records, and when the kernel
 * takes every table of @p, the link writes no records. 0, or -errno when
 * the kernel cannot (its tables then come from the records). With
 * --latency, probe 0's link gets the pairing table (PEA_LINK_IOC_LAT_*)
 * and probe 1's the histogram of the time since it: -errno there is an
 * error (no records give it); probe 0 is to be set up first.
 */
int agg_kernel(struct agg *a, int p, int link_fd, bool no_records);
/*
 * --latency: whether END pairs by a key that is not the running task's
 * thread id (a field such as sched_switch's next_pid, an argument) and
 * has no table but the latency's, so that it writes no records unless
 * they are printed or written.
 */
bool agg_latency_end_apart(const struct agg *a);
/*
 * Whether probe @p's agg_kernel() failing is the session's failure: the
 * --latency pair, and a probe that was to count in the table its probes
 * share (--count-by probe), whose table would otherwise miss its hits.
 */
bool agg_kernel_needed(const struct agg *a, int p);

/* Before probe @p's link is closed: read what its kernel table holds. */
void agg_kernel_detach(struct agg *a, int p);

/*
 * Print every table to @f, then empty them. @interval is the interval's
 * number from 1 with --interval, 0 for the one print at the end; @lost
 * the records lost since the last print (shown on tables from records).
 */
void agg_print(struct agg *a, FILE *f, unsigned int interval, __u64 lost);

/*
 * With --folded: write the kstack tables' stacks of the whole session
 * (after the last agg_print()). 0, or PEA_EXIT_ERR after saying why.
 */
int agg_write_folded(struct agg *a);

void agg_free(struct agg *a);

#endif /* _PEA_AGGREGATE_H */
