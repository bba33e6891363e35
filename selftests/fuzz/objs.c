// SPDX-License-Identifier: GPL-2.0
/*
 * test_fuzz: random values, the fd and mapping tables, and the guard that
 * lets a thread touch ring memory which may fault.
 *
 * Every operation on a table entry holds the entry's mutex, so a slot's
 * fd number cannot be closed and reused under an operation that asserts
 * on its result. Races with the kernel's own users of the same objects
 * (producers, maps holding events, probes, mappings of the same ring)
 * are not serialised: that is what is being fuzzed.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <linux/pea.h>
#include "fuzz.h"

struct fz_fd fz_fds[FZ_NR_FDS];
struct fz_map fz_maps[FZ_NR_MAPS];
__thread struct fz_thread *fz_self;

static const __u64 fz_edges[] = {
	0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 4095,
	4096, 4097, 65535, 65536, 65537, 0x7fffffff, 0x80000000, 0xffffffff,
	0x100000000ULL, 0x100000001ULL, 0x7fffffffffffffffULL,
	0x8000000000000000ULL, 0xfffffffffffffffeULL, 0xffffffffffffffffULL,
	16384, 16385, 1024, 1025, 4096 * 2, 4096 * 3, 4096 * 5, 4096 * 17,
};

__u64 fz_u64(struct fz_rng *r)
{
	switch (fz_below(r, 4)) {
	case 0:
		return fz_edges[fz_below(r, ARRAY_SIZE(fz_edges))];
	case 1:
		return fz_below(r, 64);
	case 2:
		return 1ULL << fz_below(r, 64);
	default:
		return fz_next(r);
	}
}

__u32 fz_u32(struct fz_rng *r)
{
	return (__u32)fz_u64(r);
}

void *fz_bad_ptr(struct fz_rng *r)
{
	static const uintptr_t bad[] = {
		0, 8, 4095, 0xffff888000000000UL, 0xffffffff81000000UL,
		0xffffffffff600000UL, 0x00007ffffffff000UL,
		0x0000800000000000UL, 0xdead000000000000UL,
	};

	return (void *)bad[fz_below(r, ARRAY_SIZE(bad))];
}

void fz_fill(struct fz_rng *r, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)fz_next(r);
}

/*
 * A command no pea fd takes. The VFS answers some commands itself for
 * every file (FIBMAP, FIGETBSZ, FIONBIO, FIOCLEX, FS_IOC_*, FICLONE...):
 * their types are left out, so that ENOTTY is the only right answer.
 */
unsigned long fz_unknown_cmd(struct fz_rng *r, const unsigned long *known,
			     int n)
{
	for (;;) {
		unsigned long cmd = fz_chance(r, 2) ?
			_IOC(fz_below(r, 4), PEA_IOC_MAGIC, fz_below(r, 256),
			     fz_below(r, 1 << 14)) : (unsigned long)fz_u32(r);
		unsigned int type = _IOC_TYPE(cmd);
		int i;

		if (type == 0 || type == 'T' || type == 'f' || type == 'X' ||
		    type == 0x94 || type == 0x15)
			continue;
		for (i = 0; i < n && known[i] != cmd; i++)
			;
		if (i == n)
			return cmd;
	}
}

int fz_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

/* Lock a random slot holding @kind (FZ_NONE: any used slot). */
int fz_fd_lock(struct fz_rng *r, enum fz_kind kind)
{
	int start = (int)fz_below(r, FZ_NR_FDS), i;

	for (i = 0; i < FZ_NR_FDS; i++) {
		int s = (start + i) % FZ_NR_FDS;
		struct fz_fd *f = &fz_fds[s];

		if (f->fd < 0 || (kind != FZ_NONE && f->kind != kind))
			continue;
		if (pthread_mutex_trylock(&f->lock))
			continue;
		if (f->fd >= 0 && (kind == FZ_NONE || f->kind == kind))
			return s;
		pthread_mutex_unlock(&f->lock);
	}
	return -1;
}

int fz_fd_lock_free(struct fz_rng *r)
{
	int start = (int)fz_below(r, FZ_NR_FDS), i;

	for (i = 0; i < FZ_NR_FDS; i++) {
		int s = (start + i) % FZ_NR_FDS;
		struct fz_fd *f = &fz_fds[s];

		if (f->fd >= 0 || pthread_mutex_trylock(&f->lock))
			continue;
		if (f->fd < 0)
			return s;
		pthread_mutex_unlock(&f->lock);
	}
	return -1;
}

void fz_fd_unlock(int slot)
{
	pthread_mutex_unlock(&fz_fds[slot].lock);
}

void fz_fd_close(int slot)
{
	struct fz_fd *f = &fz_fds[slot];

	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	f->kind = FZ_NONE;
	f->pages = 0;
}

/* An fd of @kind without locking its slot: it may be closed meanwhile. */
int fz_fd_peek(struct fz_rng *r, enum fz_kind kind)
{
	int start = (int)fz_below(r, FZ_NR_FDS), i;

	for (i = 0; i < FZ_NR_FDS; i++) {
		struct fz_fd *f = &fz_fds[(start + i) % FZ_NR_FDS];
		int fd = f->fd;

		if (fd >= 0 && (kind == FZ_NONE || f->kind == kind))
			return fd;
	}
	return -1;
}

int fz_count_kind(enum fz_kind kind)
{
	int i, n = 0;

	for (i = 0; i < FZ_NR_FDS; i++)
		n += fz_fds[i].fd >= 0 && fz_fds[i].kind == kind;
	return n;
}

int fz_map_lock(struct fz_rng *r, bool want_used)
{
	int start = (int)fz_below(r, FZ_NR_MAPS), i;

	for (i = 0; i < FZ_NR_MAPS; i++) {
		int s = (start + i) % FZ_NR_MAPS;
		struct fz_map *m = &fz_maps[s];

		if (!m->addr != !want_used)
			continue;
		if (pthread_mutex_trylock(&m->lock))
			continue;
		if (!m->addr == !want_used)
			return s;
		pthread_mutex_unlock(&m->lock);
	}
	return -1;
}

void fz_map_unlock(int slot)
{
	pthread_mutex_unlock(&fz_maps[slot].lock);
}

void fz_map_drop(int slot)
{
	struct fz_map *m = &fz_maps[slot];

	if (m->addr)
		munmap(m->addr, m->len);
	m->addr = NULL;
	m->len = 0;
}

void fz_close_all(void)
{
	int i;

	for (i = 0; i < FZ_NR_MAPS; i++) {
		pthread_mutex_lock(&fz_maps[i].lock);
		fz_map_drop(i);
		pthread_mutex_unlock(&fz_maps[i].lock);
	}
	for (i = 0; i < FZ_NR_FDS; i++) {
		pthread_mutex_lock(&fz_fds[i].lock);
		fz_fd_close(i);
		pthread_mutex_unlock(&fz_fds[i].lock);
	}
}

static void fz_fault(int sig)
{
	struct fz_thread *t = fz_self;

	if (t && __atomic_load_n(&t->guarded, __ATOMIC_RELAXED)) {
		__atomic_store_n(&t->guarded, 0, __ATOMIC_RELAXED);
		siglongjmp(t->jb, sig);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void fz_guard_init(void)
{
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fz_fault;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < FZ_NR_FDS; i++) {
		pthread_mutex_init(&fz_fds[i].lock, NULL);
		fz_fds[i].fd = -1;
	}
	for (i = 0; i < FZ_NR_MAPS; i++)
		pthread_mutex_init(&fz_maps[i].lock, NULL);
}
