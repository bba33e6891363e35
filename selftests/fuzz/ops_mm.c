// SPDX-License-Identifier: GPL-2.0
/*
 * test_fuzz: mmap of event fds with random lengths, offsets, protections
 * and flags; mremap, partial munmap, mprotect and madvise of rings;
 * readers and hostile writers of the control page (data_tail, data_head
 * and the rest) while producers write; poll and epoll; fork.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <linux/pea.h>
#include "fuzz.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif

static int op_mmap(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int s = fz_fd_lock(r, fz_chance(r, 4) ? FZ_COUNTER : FZ_OUTPUT);
	int m, prot, flags, err = 0;
	unsigned long pages;
	size_t len;
	off_t off = 0;
	bool counter, valid;
	void *p;

	if (s < 0)
		return -ENOENT;
	counter = fz_fds[s].kind == FZ_COUNTER;
	if (counter)
		pages = 0;
	else if (fz_fds[s].pages && fz_chance(r, 2))
		pages = (unsigned long)fz_fds[s].pages;	/* the same ring again */
	else
		pages = 1UL << fz_below(r, 7);		/* up to FZ_MAX_PAGES */
	len = (pages + 1) * fz_page;
	prot = PROT_READ | (fz_chance(r, 4) ? 0 : PROT_WRITE);
	flags = MAP_SHARED;
	valid = true;
	switch (fz_below(r, 10)) {
	case 0: {
		/* Lengths a ring refuses (the kernel rounds up to pages). */
		static const unsigned long bad[] = {
			0, 1, 4, 6, 7, 8, 10, 13, 2 + PEA_MAX_RING_PAGES,
			1 + 2 * PEA_MAX_RING_PAGES, 1 + 3 * PEA_MAX_RING_PAGES,
		};

		len = (size_t)(counter ? 2 + fz_below(r, 16) :
			       bad[fz_below(r, ARRAY_SIZE(bad))]) *
			fz_page;
		if (fz_chance(r, 2) && len)
			len -= fz_below(r, fz_page);
		valid = false;
		break;
	}
	case 9:
		/* A valid size that is not a multiple of the page. */
		len -= fz_below(r, fz_page);
		break;
	case 1:
		off = (off_t)(fz_chance(r, 2) ? fz_page * (1 + fz_below(r, 64)) :
			      (fz_u64(r) & ~(fz_page - 1)));
		valid = off == 0;
		break;
	case 2:
		flags = MAP_PRIVATE;
		valid = false;
		break;
	case 3:
		prot = (int)fz_below(r, 8);
		break;		/* PROT_NONE and write-only too, as perf */
	case 4: {
		static const int extra[] = {
			MAP_POPULATE, MAP_NORESERVE, MAP_LOCKED, MAP_32BIT,
			MAP_HUGETLB, MAP_SHARED_VALIDATE, MAP_GROWSDOWN,
			MAP_FIXED_NOREPLACE, MAP_STACK, MAP_SYNC,
		};

		flags |= extra[fz_below(r, ARRAY_SIZE(extra))];
		valid = true;
		break;
	}
	}
	p = mmap(flags & MAP_FIXED_NOREPLACE ?
		 (void *)(0x7e0000000000UL + fz_below(r, 1 << 20) * fz_page) : NULL,
		 len, prot, flags, fz_fds[s].fd, off);
	err = p == MAP_FAILED ? errno : 0;
	if (!valid) {
		/* A huge offset overflows the page index first: EOVERFLOW. */
		if (!(off && err == EOVERFLOW))
			fz_expect("mmap", "bad length, offset or MAP_PRIVATE",
				  err, EINVAL);
		if (!err)
			munmap(p, len);
		fz_fd_unlock(s);
		return err;
	}
	if (err) {
		fz_fd_unlock(s);
		return err;
	}
	len = (len + fz_page - 1) & ~(size_t)(fz_page - 1);
	if (!counter && !fz_fds[s].pages)
		fz_fds[s].pages = (int)(len / fz_page - 1);
	m = fz_map_lock(r, false);
	if (m < 0) {
		munmap(p, len);
	} else {
		fz_maps[m].addr = p;
		fz_maps[m].len = len;
		fz_maps[m].prot = prot;
		fz_maps[m].fd_slot = s;
		fz_maps[m].pages = counter ? 0 : (int)(len / fz_page - 1);
		fz_map_unlock(m);
	}
	fz_fd_unlock(s);
	return 0;
}

/* Read records as a consumer: sizes must stay inside what was published. */
static int fz_consume(struct fz_thread *t, struct fz_map *m)
{
	struct perf_event_mmap_page *pg = m->addr;
	size_t size = (size_t)m->pages * fz_page;
	unsigned char *data = (unsigned char *)m->addr + fz_page;
	__u64 head, tail;
	int n = 0;

	/* The control page may hold anything: the fuzzer scribbles on it. */
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;
	while (tail != head && head - tail <= size && n < 4096) {
		struct perf_event_header h;
		size_t off = tail & (size - 1);

		if (off + sizeof(h) > size)
			break;		/* headers are 8-byte aligned */
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break;		/* garbage after a hostile tail */
		tail += h.size;
		n++;
	}
	(void)t;
	if (m->prot & PROT_WRITE)
		__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

static void fz_ring_touch(struct fz_thread *t, struct fz_map *m, int what)
{
	struct perf_event_mmap_page *pg = m->addr;
	struct fz_rng *r = &t->rng;

	switch (what) {
	case 0:
	case 1:
		fz_consume(t, m);
		break;
	case 2:
		/* Hostile data_tail: anything, while producers write. */
		if (m->prot & PROT_WRITE) {
			__u64 head = pg->data_head;
			__u64 v[] = { fz_u64(r), head + 1, head - 1,
				head + (__u64)m->pages * fz_page,
				head - (__u64)m->pages * fz_page - 8, 0,
				head + 0x8000000000000000ULL };

			pg->data_tail = v[fz_below(r, 7)];
		}
		break;
	case 3:
		/* Scribble over the whole control page. */
		if (m->prot & PROT_WRITE) {
			size_t off = fz_below(r, fz_page / 8) * 8;

			*(__u64 *)((char *)pg + off) = fz_u64(r);
		}
		break;
	case 4:
		/* Scribble over the data area. */
		if (m->prot & PROT_WRITE) {
			unsigned char *d = (unsigned char *)pg + fz_page;

			d[fz_below(r, (__u64)m->pages * fz_page)] =
				(unsigned char)fz_next(r);
		}
		break;
	default: {
		/* Read every byte of the mapping. */
		unsigned char *d = m->addr;
		unsigned long i, sum = 0;

		for (i = 0; i < m->len; i += 64)
			sum += __atomic_load_n(&d[i], __ATOMIC_RELAXED);
		__atomic_store_n(&t->sink, sum, __ATOMIC_RELAXED);
		break;
	}
	}
}

static int op_ring(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int s = fz_map_lock(r, true), what = (int)fz_below(r, 6);
	int sig;
	struct fz_map *m;

	if (s < 0)
		return -ENOENT;
	m = &fz_maps[s];
	if (!m->pages || !(m->prot & PROT_READ)) {
		fz_map_unlock(s);
		return -EINVAL;
	}
	/* A fault (SIGBUS, SIGSEGV) comes back here through fz_fault(). */
	sig = sigsetjmp(t->jb, 1);
	if (!sig) {
		__atomic_store_n(&t->guarded, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		fz_ring_touch(t, m, what);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&t->guarded, 0, __ATOMIC_RELAXED);
	fz_map_unlock(s);
	return sig ? EFAULT : 0;
}

static void fz_guarded_consume(struct fz_thread *t, struct fz_map *m)
{
	if (!sigsetjmp(t->jb, 1)) {
		__atomic_store_n(&t->guarded, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		fz_consume(t, m);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&t->guarded, 0, __ATOMIC_RELAXED);
}

/* Drain every ring nobody is using: on-demand output then finds room. */
void fz_drain_all(struct fz_thread *t)
{
	int s;

	for (s = 0; s < FZ_NR_MAPS; s++) {
		struct fz_map *m = &fz_maps[s];

		if (!m->addr || pthread_mutex_trylock(&m->lock))
			continue;
		if (m->addr && m->pages && (m->prot & PROT_READ) &&
		    (m->prot & PROT_WRITE))
			fz_guarded_consume(t, m);
		pthread_mutex_unlock(&m->lock);
	}
}

static int op_remap(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int s = fz_map_lock(r, true), err = 0;
	struct fz_map *m;
	size_t part;
	void *p;

	if (s < 0)
		return -ENOENT;
	m = &fz_maps[s];
	part = m->len > (size_t)fz_page ?
		fz_page * (1 + fz_below(r, m->len / fz_page - 1)) : 0;
	switch (fz_below(r, 6)) {
	case 0:
		fz_map_drop(s);
		break;
	case 1:
		if (!part)
			break;
		/* Part of a ring: refused, a ring goes whole or not at all. */
		err = munmap((char *)m->addr + (fz_chance(r, 2) ? 0 : part),
			     fz_chance(r, 2) ? part : m->len - part) ? errno : 0;
		fz_expect("munmap", "part of a ring", err, EINVAL);
		if (!err)
			m->addr = NULL;	/* leave the rest mapped, untracked */
		break;
	case 2:
		p = mremap(m->addr, m->len, fz_chance(r, 2) ? m->len + fz_page :
			   m->len * 2, fz_chance(r, 2) ? MREMAP_MAYMOVE : 0);
		err = p == MAP_FAILED ? errno : 0;
		fz_expect_fail("mremap", "growing a ring", err);
		if (!err) {
			m->addr = p;
			m->len = fz_chance(r, 2) ? m->len + fz_page : m->len * 2;
		}
		break;
	case 3:
		/* Moving it whole is allowed. */
		p = mremap(m->addr, m->len, m->len, MREMAP_MAYMOVE |
			   (fz_chance(r, 2) ? MREMAP_FIXED : 0),
			   (void *)(0x7d0000000000UL +
				    fz_below(r, 1 << 20) * fz_page));
		err = p == MAP_FAILED ? errno : 0;
		if (!err)
			m->addr = p;
		break;
	case 4: {
		int prot = (int)fz_below(r, 8);

		if (part && fz_chance(r, 2)) {
			/* Same protection: nothing to split, a no-op. */
			err = mprotect((char *)m->addr + part, m->len - part,
				       prot) ? errno : 0;
			if (prot != m->prot)
				fz_expect("mprotect", "part of a ring", err,
					  EINVAL);
			if (!err && prot != m->prot)
				m->prot = 0;	/* layout unknown: no touching */
		} else {
			err = mprotect(m->addr, m->len, prot) ? errno : 0;
			if (!err)
				m->prot = prot;
		}
		break;
	}
	default: {
		static const int advice[] = {
			MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL,
			MADV_WILLNEED, MADV_DONTFORK, MADV_DOFORK,
			MADV_DONTDUMP, MADV_DODUMP, MADV_HUGEPAGE,
			MADV_NOHUGEPAGE, MADV_MERGEABLE, MADV_COLD,
			MADV_PAGEOUT, MADV_WIPEONFORK, MADV_KEEPONFORK,
			MADV_DONTNEED, MADV_FREE, MADV_REMOVE,
		};
		int n = ARRAY_SIZE(advice);
		int a = advice[fz_below(r, fz_opts.avoid_known ? n - 3 : n)];

		err = madvise(m->addr, fz_chance(r, 2) ? m->len : part ? part :
			      m->len, a) ? errno : 0;
		break;
	}
	}
	fz_map_unlock(s);
	return err;
}

static int op_poll(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int s = fz_fd_lock(r, FZ_OUTPUT), err = 0, ep;
	struct epoll_event e = { .events = EPOLLIN | EPOLLRDNORM }, got[2];

	if (s < 0)
		return -ENOENT;
	if (fz_chance(r, 2)) {
		struct pollfd p = { .fd = fz_fds[s].fd, .events = POLLIN };

		if (poll(&p, 1, (int)fz_below(r, 3)) < 0)
			err = errno;
		else if (p.revents & POLLNVAL)
			fz_violation("poll", "POLLNVAL on a live event fd");
	} else {
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0) {
			fz_fd_unlock(s);
			return errno;
		}
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fz_fds[s].fd, &e) ||
		    epoll_wait(ep, got, 2, (int)fz_below(r, 3)) < 0)
			err = errno;
		close(ep);
	}
	fz_fd_unlock(s);
	return err;
}

/*
 * fork: the child inherits every fd (not the rings: perf mappings are
 * not copied) and, with only async-signal-safe calls, maps, reads,
 * closes and exits while the parent goes on.
 */
static int op_fork(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	__u64 seed = fz_next(r);
	int fds[8], n = 0, i, status;
	pid_t pid;

	for (i = 0; i < 8; i++) {
		int fd = fz_fd_peek(r, fz_chance(r, 2) ? FZ_OUTPUT : FZ_NONE);

		if (fd >= 0)
			fds[n++] = fd;
	}
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		struct fz_rng cr = { seed | 1 };
		struct pea_event_stats st;

		for (i = 0; i < n * 3; i++) {
			int fd = fds[fz_below(&cr, n)];
			size_t len = (1 + (1UL << fz_below(&cr, 3))) * fz_page;
			void *p;

			switch (fz_below(&cr, 4)) {
			case 0:
				p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					 MAP_SHARED, fd, 0);
				if (p != MAP_FAILED) {
					((struct perf_event_mmap_page *)p)->data_tail =
						fz_next(&cr);
					munmap(p, len);
				}
				break;
			case 1:
				ioctl(fd, PEA_EVENT_IOC_STATS, &st);
				break;
			case 2:
				ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT,
				      fz_below(&cr, 2));
				ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
				break;
			default:
				close(fd);
				break;
			}
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fz_violation("fork", "child ended with status %#x", status);
	return 0;
}

const struct fz_op fz_ops_mm[] = {
	{ "mmap", op_mmap, 10, false },
	{ "ring", op_ring, 14, false },
	{ "remap", op_remap, 6, false },
	{ "poll", op_poll, 4, false },
	{ "fork", op_fork, 1, false },
	{ NULL, NULL, 0, false },
};
