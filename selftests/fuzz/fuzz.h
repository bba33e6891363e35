/* SPDX-License-Identifier: GPL-2.0 */
/*
 * test_fuzz: the in-guest fuzzer of pea (and its soak mode). Shared state:
 * options, the PRNG, the tables of open fds and mappings, the operation
 * table and its statistics. See docs/fuzzing.md.
 */
#ifndef _PEA_FUZZ_H
#define _PEA_FUZZ_H

#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define fallthrough	__attribute__((__fallthrough__))
/* User space has no __printf(); checkpatch asks for it here regardless. */
#define FZ_PRINTF(a, b)	__attribute__((format(printf, a, b)))

/* Bounds: the guest has 1 GiB and the fd limit is 1024. */
#define FZ_MAX_THREADS	8
#define FZ_NR_FDS	48	/* fd table slots */
#define FZ_NR_MAPS	24	/* mapping table slots */
#define FZ_MAX_PAGES	64	/* largest ring a valid mmap asks for */
#define FZ_NR_NAMES	4	/* map names the test module can write to */
#define FZ_MAX_ERRNO	160

enum fz_kind {
	FZ_NONE = 0,
	FZ_MAP,
	FZ_OUTPUT,	/* output event fd */
	FZ_COUNTER,	/* counter event fd */
	FZ_LINK,
	FZ_NR_KINDS,
};

struct fz_fd {
	pthread_mutex_t lock;	/* held for every operation on the fd */
	int fd;			/* -1: empty */
	enum fz_kind kind;
	int cpu;		/* events: the CPU */
	__u32 map_flags;	/* maps: PEA_F_* */
	int name;		/* maps: index into fz_names, or -1 */
	int pages;		/* output events: data pages mapped, or 0 */
};

struct fz_map {
	pthread_mutex_t lock;
	void *addr;		/* NULL: empty */
	size_t len;
	int prot;
	int fd_slot;		/* the slot it was mapped from (fd may be gone) */
	int pages;		/* data pages (0: a counter's page) */
};

struct fz_rng {
	__u64 s;
};

struct fz_thread {
	int id;
	struct fz_rng rng;
	pthread_t tid;
	sigjmp_buf jb;		/* for touching rings that may fault */
	int guarded;		/* read by the signal handler */
	unsigned long sink;	/* what reads of rings add up to */
};

/* One operation family. */
struct fz_op {
	const char *name;
	/* Returns 0 or an errno (positive, or negated: counted the same). */
	int (*fn)(struct fz_thread *t);
	int weight;
	bool known_bug;		/* left out with --avoid-known */
};

struct fz_opts {
	unsigned int seconds;
	__u64 seed;
	int threads;
	bool avoid_known;
	bool soak;
	bool verbose;
};

extern struct fz_opts fz_opts;
extern struct fz_fd fz_fds[FZ_NR_FDS];
extern struct fz_map fz_maps[FZ_NR_MAPS];
extern const char *const fz_names[FZ_NR_NAMES];
extern int fz_dev, fz_st, fz_ncpu, fz_pmu_type;
extern long fz_page;
extern pthread_rwlock_t fz_world;	/* write-held by ops that need quiet */

/* ---- PRNG: splitmix64 seeds, xorshift64* runs ---- */

static inline __u64 fz_splitmix(__u64 *x)
{
	__u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline __u64 fz_next(struct fz_rng *r)
{
	__u64 x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n). */
static inline __u64 fz_below(struct fz_rng *r, __u64 n)
{
	return n ? fz_next(r) % n : 0;
}

static inline bool fz_chance(struct fz_rng *r, unsigned int one_in)
{
	return fz_below(r, one_in) == 0;
}

/* A flag bit from @lo up that @known does not have: unknown, EINVAL. */
static inline __u32 fz_unknown_flag(struct fz_rng *r, unsigned int lo,
				    __u32 known)
{
	__u32 bit;

	do
		bit = 1U << (lo + fz_below(r, 32 - lo));
	while (bit & known);
	return bit;
}

__u64 fz_u64(struct fz_rng *r);		/* random, often a boundary value */
__u32 fz_u32(struct fz_rng *r);
void *fz_bad_ptr(struct fz_rng *r);	/* never a valid user pointer */
void fz_fill(struct fz_rng *r, void *buf, size_t len);

/* ---- tables (objs.c) ---- */

int fz_fd_lock(struct fz_rng *r, enum fz_kind kind);	/* slot or -1 */
int fz_fd_lock_free(struct fz_rng *r);			/* empty slot or -1 */
void fz_fd_unlock(int slot);
void fz_fd_close(int slot);			/* with the slot locked */
int fz_fd_peek(struct fz_rng *r, enum fz_kind kind);	/* an fd, unlocked */
int fz_map_lock(struct fz_rng *r, bool want_used);
void fz_map_unlock(int slot);
void fz_map_drop(int slot);			/* munmap, slot locked */
void fz_close_all(void);
int fz_count_kind(enum fz_kind kind);

/* Touch ring memory that may fault (SIGSEGV/SIGBUS): 0 or the signal. */
void fz_guard_init(void);
extern __thread struct fz_thread *fz_self;

/* ---- results (main.c) ---- */

void fz_tap(bool ok, const char *fmt, ...) FZ_PRINTF(2, 3);

void fz_violation(const char *op, const char *fmt, ...)
	FZ_PRINTF(2, 3);
/* Require @err to be @want; a violation otherwise. Returns @err. */
int fz_expect(const char *op, const char *what, int err, int want);
/* Require failure (any errno); a violation on success. Returns @err. */
int fz_expect_fail(const char *op, const char *what, int err);
extern __u64 fz_soak_records;	/* __atomic */

/* ---- operation families ---- */

extern const struct fz_op fz_ops_obj[];	/* ops_obj.c: create, ioctl, close */
extern const struct fz_op fz_ops_mm[];	/* ops_mm.c: mmap family, rings, fork */
/* ops_prod.c: probes, counters, storm, output, debugfs */
extern const struct fz_op fz_ops_prod[];
int fz_prod_start(void);		/* the storm the run starts with */
/* ops_attach.c: tracepoint, uprobe, netfilter and fprobe links */
extern const struct fz_op fz_ops_attach[];
extern const struct fz_op fz_ops_users[];
/* ops_kfunc.c: BPF programs calling pea's kfuncs */
extern const struct fz_op fz_ops_kfunc[];
/* ops_users.c: the child of the uprobe_users family */
int fz_uprobe_user(int argc, char **argv);
void fz_prod_stop(void);
int fz_prod_fz0(void);			/* fz0's fd for the whole run */

int fz_soak(void);			/* soak.c */

/* Helpers shared by the op files. */
int fz_ioctl(int fd, unsigned long cmd, void *arg);	/* 0 or errno */
unsigned long fz_unknown_cmd(struct fz_rng *r, const unsigned long *known,
			     int n);
int fz_new_map(struct fz_rng *r, int name, __u32 max_entries, int *fd,
	       __u32 *map_flags);
int fz_new_output(struct fz_rng *r, int cpu, int *fd);
int fz_debugfs_objects(long v[4]);
int fz_have_netfilter(void);	/* PEA_MAP_IOC_ATTACH_NF can work */
int fz_have_fprobe(void);	/* PEA_MAP_IOC_ATTACH_FPROBE can work */
void fz_drain_all(struct fz_thread *t);	/* consume every idle ring */
/* Wait until debugfs objects equal @base; false after @secs seconds. */
bool fz_objects_wait(const long base[4], long now[4], int secs);

#endif /* _PEA_FUZZ_H */
