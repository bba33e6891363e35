/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea-bench: shared declarations of the benchmark program's files.
 *
 * pea-bench runs in the test guest (scripts/bench.sh) and compares three
 * channels doing the same work: pea_output() into a pea map, the kernel's
 * bpf_perf_event_output() into a BPF_MAP_TYPE_PERF_EVENT_ARRAY and
 * bpf_ringbuf_output() into a BPF_MAP_TYPE_RINGBUF.
 */
#ifndef _PEA_BENCH_USER_H
#define _PEA_BENCH_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "module/pea_bench.h"

#define BENCH_MAP_NAME	"pea_bench"
#define BENCH_KP_SYMBOL	"__x64_sys_getppid"
#define BENCH_KP_SIZE	64		/* end-to-end payload bytes */
/* The tracepoint end to end: the same syscall's entry event. */
#define BENCH_TP_SYS	"syscalls"
#define BENCH_TP_NAME	"sys_enter_getppid"
#define BENCH_TP_RAW	20		/* its raw entry in a perf sample */
#define BENCH_BATCH	65536		/* batched wake-up: watermark bytes */
#define BENCH_FLUSH_US	1000		/* pea's flush bound with BENCH_BATCH */
#define BENCH_POLL_MS	50		/* batch latency: the consumer's timeout */
#define BENCH_SPIN_US	200		/* pea: libpea's busy_poll_us */

/* Ring buffer wake-up modes of kp_ring, as in bench.bpf.c. */
#define RB_MODE_ADAPTIVE	0
#define RB_MODE_FORCE		1
#define RB_MODE_NONE		2
#define RB_MODE_BATCH		3

enum chan_kind {
	CH_PEA,
	CH_PERF,
	CH_RING,
	CH_NR,
};

enum wake_mode {
	WAKE_EVERY,	/* wake the reader on every record */
	WAKE_BATCH,	/* watermark (or sampled) wake-ups */
	WAKE_ADAPTIVE,	/* only when the reader had caught up */
	WAKE_NONE,	/* no wake-up: the reader busy-polls */
	WAKE_FLUSH,	/* pea: WAKE_BATCH plus PEA_FLAG_FLUSH (BENCH_FLUSH_US) */
	WAKE_SPIN,	/* pea: WAKE_ADAPTIVE, libpea busy-polls BENCH_SPIN_US */
	WAKE_NR,
};

struct bench;		/* the BPF skeleton */

/* One channel's consumer, as a user of that channel would set it up. */
struct chan {
	enum chan_kind kind;
	enum wake_mode wake;
	struct bench *skel;
	int pea_map_fd;
	struct pea_buffer *pb;
	struct perf_buffer *perf;
	struct ring_buffer *rb;
	size_t page_cnt;
	uint64_t pea_flags;		/* CH_PEA: more pea_buffer_opts.flags */
	uint64_t pea_sample_type;	/* CH_PEA: pea_buffer_opts.sample_type */

	/* Updated by the consumer's callbacks. */
	uint64_t n;		/* records received */
	uint64_t bytes;		/* payload bytes received */
	uint64_t lost;		/* drops reported by the channel */
	uint64_t sum;		/* of the first payload word: touch the data */
	int64_t *lat;		/* if set: ns from output to callback */
	size_t lat_n, lat_cap;
};

/* main.c */
extern struct bench *g_skel;
extern int g_bench_fd;		/* /dev/pea_bench */
extern int g_ncpus;
extern int g_runs;
extern bool g_quick;
extern int g_nprod_first;	/* e2e: first producer count (1 or 2) */
uint64_t now_ns(void);
void pin_cpu(int cpu);
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void module_kprobe(enum pea_bench_kp_mode mode);

/* chan.c */
const char *chan_name(enum chan_kind kind);
const char *wake_name(enum wake_mode wake);
bool chan_supports(enum chan_kind kind, enum wake_mode wake);
int chan_open(struct chan *c, enum chan_kind kind, enum wake_mode wake,
	      size_t page_cnt);
int chan_open_pea(struct chan *c, enum chan_kind kind, enum wake_mode wake,
		  size_t page_cnt, uint64_t pea_flags, uint64_t pea_sample_type);
int chan_consume(struct chan *c);
int chan_poll(struct chan *c, int timeout_ms);
void chan_close(struct chan *c);
size_t chan_mem_per_cpu(enum chan_kind kind, size_t page_cnt);

/* report.c */
void fig_add(const char *name, const char *channel, unsigned int size,
	     const double *v, int n, const char *unit);
void fig_add_one(const char *name, const char *channel, unsigned int size,
		 double v, const char *unit);
double median(const double *v, int n);
void report_print(const char *json_path, const char *title);

/* kcost.c: in-kernel output cost, and the consumer cost of the drains */
struct bpf_program;

void bench_kcost(void);
double kc_module_loop(enum pea_bench_op op, unsigned int size,
		      unsigned int count, unsigned int ring_bytes, int cpu);
double kc_bpf_loop(struct bpf_program *prog, unsigned int size,
		   unsigned int count, int cpu);

/* e2e.c: the kprobe end to end, and the loss-free rate */
void bench_e2e(void);
void bench_lossfree(void);

/* kfunc.c: BPF programs into a perf event array, a ring buffer, pea */
bool bench_kfunc(int cpu, bool e2e);

/* agg.c: in-kernel aggregation per hit, pea's tables and BPF maps */
void bench_agg(void);

/* fprobe.c: one fprobe link over N functions against N kprobes */
void bench_fprobe(void);

/* latency.c: wake-up latency */
void bench_latency(void);

/* ordered.c: ordered delivery against unordered reading (issue 10) */
void bench_ordered(void);

/*
 * icount.c: instructions per record on one vCPU under QEMU's icount
 * (issue 23); false if two passes differ by more than 1%.
 */
bool bench_icount(void);

/* sample.c: the sampler's cost per sample and per unwound frame */
bool bench_sample(void);
void icount_print(void);

#endif /* _PEA_BENCH_USER_H */
