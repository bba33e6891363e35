// SPDX-License-Identifier: GPL-2.0
/*
 * test_fuzz: the kfunc family. BPF programs (selftests/kfunc/
 * fuzz_kfunc.bpf.c) call pea_kf_output() and the zero-copy kfuncs with
 * random arguments, run with BPF_PROG_TEST_RUN: the handles of the maps
 * in the fd table (those created with PEA_F_BPF_WRITE have one; the
 * storm and the other workers write into them meanwhile), stale and
 * random handles, random flags and sizes; reservations of every size
 * pea takes and one past it, payloads asked up to and past what was
 * reserved, two records held at once and committed in either order.
 *
 * Most calls name fz0, the storm's map (created with PEA_F_BPF_WRITE,
 * one mapped ring per CPU), so they reach the rings.
 *
 * What is checked: pea_kf_output() answers only its errnos (never EFAULT:
 * the data is never NULL here); a payload past 65516 bytes is never
 * reserved; pea_kf_rec_data() gives memory exactly when the payload
 * asked fits in what was reserved; a second reservation while the
 * program holds one is never granted (one record per context level). The programs load once; where pea's
 * kfuncs are off (a kernel without BTF) or the zero-copy ones are not
 * registered (PREEMPT_RT), the family counts the refusal (ENOSYS is
 * never counted: EOPNOTSUPP).
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/pea.h>
#include "fuzz.h"
#include "fuzz_kfunc.h"
#include "fuzz_kfunc.skel.h"

static pthread_once_t fzk_once = PTHREAD_ONCE_INIT;
static struct fuzz_kfunc *fzk;
static int fzk_out_fd = -1, fzk_zc_fd = -1;
static __u64 fzk_fz0;	/* fz0's handle: the storm's map, rings mapped */

static const __u32 fzk_rsizes[] = {
	FZK_R0, FZK_R1, FZK_R2, FZK_R3, FZK_R4, FZK_R5,
};
static const __u32 fzk_dsizes[] = {
	FZK_D0, FZK_D1, FZK_D2, FZK_D3, FZK_D4,
};

static int fzk_quiet(enum libbpf_print_level level, const char *fmt,
		     va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* Load what this kernel takes: both programs, or the output one alone. */
static void fzk_load(void)
{
	struct pea_map_info info;

	memset(&info, 0, sizeof(info));
	if (fz_prod_fz0() >= 0 &&
	    !fz_ioctl(fz_prod_fz0(), PEA_MAP_IOC_INFO, &info))
		fzk_fz0 = info.bpf_handle;
	libbpf_set_print(fzk_quiet);
	fzk = fuzz_kfunc__open_and_load();
	if (!fzk) {
		fzk = fuzz_kfunc__open();
		if (!fzk)
			return;
		bpf_program__set_autoload(fzk->progs.fzk_zc, false);
		if (fuzz_kfunc__load(fzk)) {
			fuzz_kfunc__destroy(fzk);
			fzk = NULL;
			return;
		}
	} else {
		fzk_zc_fd = bpf_program__fd(fzk->progs.fzk_zc);
	}
	fzk_out_fd = bpf_program__fd(fzk->progs.fzk_out);
}

/* A handle: a table map's (0 without PEA_F_BPF_WRITE), or random. */
static __u64 fzk_handle(struct fz_rng *r)
{
	static __u64 stale;
	struct pea_map_info info;
	int slot;
	__u64 h;

	switch (fz_below(r, 8)) {
	case 0:
		return fz_u64(r);
	case 1:
		return stale;
	case 2:
		return fz_below(r, 1000);	/* map ids name nothing */
	case 3:
	case 4:
	case 5:
		return fzk_fz0;
	default:
		break;
	}
	slot = fz_fd_lock(r, FZ_MAP);
	if (slot < 0)
		return fz_u64(r);
	memset(&info, 0, sizeof(info));
	h = fz_ioctl(fz_fds[slot].fd, PEA_MAP_IOC_INFO, &info) ? 0 :
	    info.bpf_handle;
	fz_fd_unlock(slot);
	if (h)
		__atomic_store_n(&stale, h, __ATOMIC_RELAXED);
	return h;
}

static __u64 fzk_flags(struct fz_rng *r)
{
	__u64 f;

	switch (fz_below(r, 4)) {
	case 0:
		f = fz_u64(r);
		break;
	case 1:
		f = fz_below(r, fz_ncpu + 2);
		break;
	default:
		f = PEA_F_CURRENT_CPU;
		break;
	}
	if (fz_chance(r, 8))
		f |= fz_below(r, 1 << 20) << 32;	/* CTXLEN: EINVAL */
	return f;
}

static int fzk_output(struct fz_rng *r)
{
	struct fzk_args a;
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &a,
		    .ctx_size_in = sizeof(a));
	int err;

	memset(&a, 0, sizeof(a));
	a.handle = fzk_handle(r);
	a.flags = fzk_flags(r);
	a.size = fz_chance(r, 8) ? fz_u32(r) : (__u32)fz_below(r, 512);
	if (fz_chance(r, 2))
		fz_drain_all(fz_self);
	err = bpf_prog_test_run_opts(fzk_out_fd, &o);
	if (err)
		return -err;
	switch (a.ret) {
	case 0:
	case -EBADF:
	case -EINVAL:
	case -E2BIG:
	case -ENOENT:
	case -EOPNOTSUPP:
	case -EBUSY:
	case -ENOSPC:
		return (int)-a.ret;
	default:
		fz_violation("kfunc", "pea_kf_output() returned %lld",
			     (long long)a.ret);
		return EINVAL;
	}
}

static int fzk_zero_copy(struct fz_rng *r)
{
	struct fzk_args a;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &a,
		    .data_size_in = sizeof(a), .data_out = &a,
		    .data_size_out = sizeof(a));
	__u32 rsize, dsize;
	int err;

	memset(&a, 0, sizeof(a));
	a.handle = fzk_handle(r);
	a.handle2 = fz_chance(r, 2) ? a.handle : fzk_handle(r);
	a.flags = fzk_flags(r);
	a.rsel = (__u32)fz_below(r, ARRAY_SIZE(fzk_rsizes));
	a.dsel = (__u32)fz_below(r, ARRAY_SIZE(fzk_dsizes));
	a.hold2 = (__u32)fz_below(r, 3);
	rsize = fzk_rsizes[a.rsel];
	dsize = fzk_dsizes[a.dsel];
	if (fz_chance(r, 2))
		fz_drain_all(fz_self);
	err = bpf_prog_test_run_opts(fzk_zc_fd, &o);
	if (err)
		return -err;
	if (o.retval != XDP_PASS)
		fz_violation("kfunc", "the zero-copy program returned %u",
			     o.retval);
	if (a.got_rec && rsize > 65516)
		fz_violation("kfunc", "a %u-byte payload was reserved", rsize);
	if (a.got_rec2)
		fz_violation("kfunc",
			     "a second record reserved while one was held");
	if (a.got_rec && a.got_data != (dsize <= rsize))
		fz_violation("kfunc",
			     "pea_kf_rec_data(%u) on %u reserved bytes: %s",
			     dsize, rsize, a.got_data ? "memory" : "NULL");
	return a.got_rec ? 0 : ENOSPC;
}

static int op_kfunc(struct fz_thread *t)
{
	pthread_once(&fzk_once, fzk_load);
	if (fzk_out_fd < 0)
		return EOPNOTSUPP;	/* no kfuncs here */
	if (fzk_zc_fd >= 0 && fz_chance(&t->rng, 2))
		return fzk_zero_copy(&t->rng);
	return fzk_output(&t->rng);
}

const struct fz_op fz_ops_kfunc[] = {
	{ "kfunc", op_kfunc, 2, false },
	{ NULL, NULL, 0, false },
};
