// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench: the three channels' consumers behind one interface.
 *
 * Each channel is set up the way its library's users do: libpea's
 * pea_buffer for pea, libbpf's perf_buffer for the perf event array and
 * libbpf's ring_buffer for the BPF ring buffer. The callbacks count the
 * records, read the first payload word (a timestamp for the kprobes) and,
 * when asked, record the latency from the output call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "libpea.h"
#include "bench.h"
#include "bench.skel.h"

static const char *const chan_names[CH_NR] = {
	[CH_PEA] = "pea", [CH_PERF] = "perf", [CH_RING] = "ring",
};

static const char *const wake_names[WAKE_NR] = {
	[WAKE_EVERY] = "every", [WAKE_BATCH] = "batch64k",
	[WAKE_ADAPTIVE] = "adaptive", [WAKE_NONE] = "nowake",
	[WAKE_FLUSH] = "batch64k+flush",
	[WAKE_SPIN] = "adaptive+spin",
};

const char *chan_name(enum chan_kind kind)
{
	return chan_names[kind];
}

const char *wake_name(enum wake_mode wake)
{
	return wake_names[wake];
}

bool chan_supports(enum chan_kind kind, enum wake_mode wake)
{
	if (wake == WAKE_FLUSH || wake == WAKE_SPIN)
		return kind == CH_PEA;
	if (wake != WAKE_ADAPTIVE)
		return true;
	return kind == CH_RING || kind == CH_PEA;
}

static void chan_sample(struct chan *c, const void *data, size_t size)
{
	uint64_t first = 0;

	if (size >= sizeof(first))
		memcpy(&first, data, sizeof(first));
	c->n++;
	c->bytes += size;
	c->sum += first;
	if (c->lat && c->lat_n < c->lat_cap)
		c->lat[c->lat_n++] = (int64_t)(now_ns() - first);
}

static void pea_sample_cb(void *ctx, int cpu, void *data, __u32 size)
{
	chan_sample(ctx, data, size);
}

static void pea_lost_cb(void *ctx, int cpu, __u64 cnt)
{
	((struct chan *)ctx)->lost += cnt;
}

static void perf_sample_cb(void *ctx, int cpu, void *data, __u32 size)
{
	chan_sample(ctx, data, size);
}

static void perf_lost_cb(void *ctx, int cpu, __u64 cnt)
{
	((struct chan *)ctx)->lost += cnt;
}

/* perf_buffer__new_raw()'s callback: what perf_buffer__new() does. */
static enum bpf_perf_event_ret perf_raw_cb(void *ctx, int cpu,
					   struct perf_event_header *hdr)
{
	struct chan *c = ctx;

	if (hdr->type == PERF_RECORD_SAMPLE) {
		__u32 *raw = (__u32 *)(hdr + 1);

		chan_sample(c, raw + 1, raw[0]);
	} else if (hdr->type == PERF_RECORD_LOST) {
		__u64 *body = (__u64 *)(hdr + 1);

		c->lost += body[1];
	}
	return LIBBPF_PERF_EVENT_CONT;
}

static int ring_sample_cb(void *ctx, void *data, size_t size)
{
	chan_sample(ctx, data, size);
	return 0;
}

static int open_pea(struct chan *c)
{
	LIBPEA_OPTS(pea_buffer_opts, opts);
	size_t data = c->page_cnt * (size_t)getpagesize();

	c->pea_map_fd = pea_map_create(BENCH_MAP_NAME, g_ncpus, PEA_F_BPF_WRITE);
	if (c->pea_map_fd < 0)
		return c->pea_map_fd;
	switch (c->wake) {
	case WAKE_EVERY:
		opts.wakeup_events = 1;
		break;
	case WAKE_BATCH:
		opts.wakeup_watermark = BENCH_BATCH;
		break;
	case WAKE_FLUSH:
		opts.wakeup_watermark = BENCH_BATCH;
		opts.flush_us = BENCH_FLUSH_US;
		break;
	case WAKE_NONE:
		opts.wakeup_watermark = data;
		break;
	case WAKE_SPIN:
		opts.busy_poll_us = BENCH_SPIN_US;
		/* fall through */
	case WAKE_ADAPTIVE:
		opts.flags = PEA_BUFFER_ADAPTIVE_WAKEUP;
		break;
	default:
		return -EINVAL;
	}
	opts.flags |= c->pea_flags;
	opts.sample_type = c->pea_sample_type;
	c->pb = pea_buffer__new(c->pea_map_fd, c->page_cnt, pea_sample_cb,
				pea_lost_cb, c, &opts);
	return c->pb ? 0 : -errno;
}

static int open_perf(struct chan *c)
{
	int fd = bpf_map__fd(c->skel->maps.perf_map);
	size_t data = c->page_cnt * (size_t)getpagesize();
	struct perf_event_attr attr;

	if (c->wake == WAKE_EVERY) {
		/* libbpf's default: sample_period 1, wakeup_events 1. */
		c->perf = perf_buffer__new(fd, c->page_cnt, perf_sample_cb,
					   perf_lost_cb, c, NULL);
		return c->perf ? 0 : -errno;
	}
	if (c->wake != WAKE_BATCH && c->wake != WAKE_NONE)
		return -EOPNOTSUPP;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	attr.sample_type = PERF_SAMPLE_RAW;
	attr.sample_period = 1;
	attr.watermark = 1;
	attr.wakeup_watermark = c->wake == WAKE_BATCH ? BENCH_BATCH : data;
	c->perf = perf_buffer__new_raw(fd, c->page_cnt, &attr, perf_raw_cb, c,
				       NULL);
	return c->perf ? 0 : -errno;
}

static int open_ring(struct chan *c)
{
	int fd = bpf_map__fd(c->skel->maps.ring_map);

	switch (c->wake) {
	case WAKE_EVERY:
		c->skel->bss->bench_rb_mode = RB_MODE_FORCE;
		c->skel->bss->kc_rb_flags = BPF_RB_FORCE_WAKEUP;
		break;
	case WAKE_BATCH:
		c->skel->bss->bench_rb_mode = RB_MODE_BATCH;
		c->skel->bss->bench_rb_batch = BENCH_BATCH;
		c->skel->bss->kc_rb_flags = 0;
		break;
	case WAKE_ADAPTIVE:
		c->skel->bss->bench_rb_mode = RB_MODE_ADAPTIVE;
		c->skel->bss->kc_rb_flags = 0;
		break;
	case WAKE_NONE:
		c->skel->bss->bench_rb_mode = RB_MODE_NONE;
		c->skel->bss->kc_rb_flags = BPF_RB_NO_WAKEUP;
		break;
	default:
		return -EINVAL;
	}
	c->rb = ring_buffer__new(fd, ring_sample_cb, c, NULL);
	return c->rb ? 0 : -errno;
}

/**
 * chan_open() - set up a channel's consumer
 * @c:        zeroed by this function, then filled
 * @kind:     the channel
 * @wake:     its wake-up mode
 * @page_cnt: data pages per CPU ring (the BPF ring buffer, one ring for
 *            all CPUs, gets page_cnt pages per CPU: the same memory)
 *
 * Return: 0 or a negative errno.
 */
int chan_open(struct chan *c, enum chan_kind kind, enum wake_mode wake,
	      size_t page_cnt)
{
	return chan_open_pea(c, kind, wake, page_cnt, 0, 0);
}

/**
 * chan_open_pea() - chan_open() with more of libpea's options for pea
 * @c, @kind, @wake, @page_cnt: as chan_open()
 * @pea_flags:       CH_PEA: more pea_buffer_opts.flags (e.g.
 *                   PEA_BUFFER_FLAG_ORDERED)
 * @pea_sample_type: CH_PEA: pea_buffer_opts.sample_type
 *
 * Return: 0 or a negative errno.
 */
int chan_open_pea(struct chan *c, enum chan_kind kind, enum wake_mode wake,
		  size_t page_cnt, uint64_t pea_flags, uint64_t pea_sample_type)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->pea_flags = pea_flags;
	c->pea_sample_type = pea_sample_type;
	c->kind = kind;
	c->wake = wake;
	c->skel = g_skel;
	c->pea_map_fd = -1;
	c->page_cnt = page_cnt;
	switch (kind) {
	case CH_PEA:
		err = open_pea(c);
		break;
	case CH_PERF:
		err = open_perf(c);
		break;
	case CH_RING:
		err = open_ring(c);
		break;
	default:
		err = -EINVAL;
	}
	if (err)
		chan_close(c);
	return err;
}

int chan_consume(struct chan *c)
{
	switch (c->kind) {
	case CH_PEA:
		return pea_buffer__consume(c->pb);
	case CH_PERF:
		return perf_buffer__consume(c->perf);
	case CH_RING:
		return ring_buffer__consume(c->rb);
	default:
		return -EINVAL;
	}
}

int chan_poll(struct chan *c, int timeout_ms)
{
	switch (c->kind) {
	case CH_PEA:
		return pea_buffer__poll(c->pb, timeout_ms);
	case CH_PERF:
		return perf_buffer__poll(c->perf, timeout_ms);
	case CH_RING:
		return ring_buffer__poll(c->rb, timeout_ms);
	default:
		return -EINVAL;
	}
}

void chan_close(struct chan *c)
{
	pea_buffer__free(c->pb);
	c->pb = NULL;
	if (c->pea_map_fd >= 0)
		close(c->pea_map_fd);
	c->pea_map_fd = -1;
	perf_buffer__free(c->perf);
	c->perf = NULL;
	ring_buffer__free(c->rb);
	c->rb = NULL;
	free(c->lat);
	c->lat = NULL;
}

/*
 * Memory each channel takes per CPU at @page_cnt data pages per CPU, from
 * how the kernel allocates it: perf and pea map 1 + page_cnt pages per CPU
 * (pea maps the data pages twice in the kernel's address space, which
 * costs page tables, not pages); the BPF ring buffer is one ring of
 * page_cnt * CPUs data pages plus 3 pages of header and positions.
 */
size_t chan_mem_per_cpu(enum chan_kind kind, size_t page_cnt)
{
	size_t page = (size_t)getpagesize();

	switch (kind) {
	case CH_PEA:
	case CH_PERF:
		return (1 + page_cnt) * page;
	case CH_RING:
		return (page_cnt * g_ncpus + 3) * page / g_ncpus;
	default:
		return 0;
	}
}
