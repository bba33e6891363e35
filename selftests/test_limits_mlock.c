// SPDX-License-Identifier: GPL-2.0
/*
 * Ring memory is charged as perf_mmap() charges a perf ring, to the same
 * budget: each user may pin perf_event_mlock_kb per online CPU (pages
 * counted in user_struct->perf_mlock, shared with perf), the rest goes to
 * the process's pinned_vm (VmPin) against RLIMIT_MEMLOCK, and CAP_IPC_LOCK
 * or perf_event_paranoid -1 lifts the limit; otherwise mmap gives EPERM.
 * The last munmap returns the charge. /dev/pea is opened to other users
 * (mode 0666) and the process works as nobody, with root as saved uid to
 * check debugfs in between. The budget is set to a known size through
 * perf_event_mlock_kb and restored at the end, as are the device mode and
 * perf_event_paranoid.
 */
#include "pea_test.h"
#include "pt_perm.h"

#define MLOCK_FILE	"/sys/kernel/debug/pea/mlock"
#define KB_PER_CPU	36		/* 9 pages of 4 KiB per online CPU */

static int dev = -1;
static long page, limit;		/* limit: the user's budget in pages */

/* An output event on CPU 0 mapped with 1 + @data pages: fd, or -errno. */
static int ring(int data, void **addr)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);
	struct pea_event_open o = {
		.attr = (uintptr_t)&attr, .cpu = 0,
		.flags = PEA_FLAG_FD_CLOEXEC,
	};
	int fd = ioctl(dev, PEA_IOC_EVENT_OPEN, &o), err;
	void *p;

	if (fd < 0)
		return -errno;
	p = mmap(NULL, (data + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED) {
		err = errno;
		close(fd);
		return -err;
	}
	*addr = p;
	return fd;
}

static void unring(int fd, void *addr, int data)
{
	munmap(addr, (data + 1) * page);
	close(fd);
}

/* The mmap errno of a 1 + @data page ring (0: it mapped; unmapped again). */
static int ring_errno(int data)
{
	void *p;
	int fd = ring(data, &p);

	if (fd < 0)
		return -fd;
	unring(fd, p, data);
	return 0;
}

/* debugfs "mlock": the total line, and the pages charged to @uid. */
static int charged(long *user, long *pinned, long *uid_pages, unsigned int uid)
{
	char line[256];
	unsigned long long id;
	unsigned int u;
	long a, b;
	FILE *f;
	int ok = -1;

	if (pt_back_to_root())
		return -1;
	f = fopen(MLOCK_FILE, "r");
	*uid_pages = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "total - %ld %ld", user, pinned) == 2)
			ok = 0;
		else if (sscanf(line, "%llu %u %ld %ld", &id, &u, &a, &b) == 4 &&
			 u == uid)
			*uid_pages += a + b;
	}
	if (f)
		fclose(f);
	if (pt_as_nobody())
		return -1;
	return ok;
}

static long vm_pin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "VmPin: %ld", &kb);
	if (f)
		fclose(f);
	return kb;
}

static void set_memlock(rlim_t soft_pages)
{
	struct rlimit r = { soft_pages * page, RLIM_INFINITY };

	if (setrlimit(RLIMIT_MEMLOCK, &r))
		pt_fatal("setrlimit");
}

/* As nobody with CAP_IPC_LOCK only: the errno of a ring of *@arg pages. */
static int cap_ipc_lock_child(void *arg)
{
	if (pt_back_to_root() || pt_drop_to_nobody(CAP_IPC_LOCK))
		return 100;
	return ring_errno(*(int *)arg);
}

static int perf_ring_errno(int data)
{
	struct perf_event_attr a;
	int fd, err = 0;
	void *p;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.exclude_kernel = 1;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 1000 + errno;
	p = mmap(NULL, (data + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED)
		err = errno;
	else
		munmap(p, (data + 1) * page);
	close(fd);
	return err;
}

int main(void)
{
	long orig_kb, orig_par, user, pinned, mine;
	int fd9[64], fd5, fd3, fd2a, fd2b, fdp, i, n9, ncpu;
	void *p9[64], *p5, *p3, *p2a, *p2b, *pp;
	struct stat st;

	page = pt_page_size();
	ncpu = pt_nr_cpus();
	limit = (KB_PER_CPU * 1024 / page) * ncpu;
	n9 = limit / 9 - 1;
	if (n9 < 1 || n9 > 64 || limit % 9)
		pt_fatal("unexpected page size or CPU count");
	orig_kb = pt_perm_read_int(PT_MLOCK_KB);
	orig_par = pt_perm_read_int(PT_PARANOID);
	if (stat(PEA_DEVICE_PATH, &st))
		pt_fatal("stat " PEA_DEVICE_PATH);
	pt_diag("perf_event_mlock_kb was %ld, paranoid %ld; budget %ld pages",
		orig_kb, orig_par, limit);
	PT_EQ(pt_perm_write_int(PT_MLOCK_KB, KB_PER_CPU), 0,
	      "perf_event_mlock_kb set to %d", KB_PER_CPU);
	PT_EQ(pt_perm_write_int(PT_PARANOID, 2), 0, "perf_event_paranoid 2");
	PT_EQ(chmod(PEA_DEVICE_PATH, 0666), 0, "/dev/pea opened to others");
	set_memlock(0);

	PT_EQ(pt_as_nobody(), 0, "now nobody (saved uid root)");
	dev = open(PEA_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	PT_OK(dev >= 0, "nobody opens /dev/pea");

	/* Up to the budget, RLIMIT_MEMLOCK 0. */
	for (i = 0; i < n9; i++)
		fd9[i] = ring(8, &p9[i]);
	for (i = 0; i < n9 && fd9[i] >= 0; i++)
		;
	PT_EQ(i, n9, "%d rings of 9 pages map (%ld of %ld pages)", n9,
	      9L * n9, limit);
	fd5 = ring(4, &p5);
	fd3 = ring(2, &p3);
	PT_OK(fd5 >= 0 && fd3 >= 0, "5 and 3 more pages map: %ld of %ld",
	      limit - 1, limit);
	PT_EQ(ring_errno(1), EPERM, "a 2-page ring, one page over: EPERM");
	PT_EQ(charged(&user, &pinned, &mine, PT_NOBODY), 0, "debugfs mlock read");
	PT_EQ(mine, limit - 1, "debugfs: nobody is charged %ld pages", limit - 1);
	PT_EQ(user, limit - 1, "debugfs: total user pages %ld", limit - 1);
	PT_EQ(pinned, 0, "debugfs: nothing charged to pinned_vm");
	PT_EQ(vm_pin_kb(), 0, "VmPin 0 kB");

	unring(fd3, p3, 2);
	fd2a = ring(1, &p2a);
	fd2b = ring(1, &p2b);
	PT_OK(fd2a >= 0 && fd2b >= 0,
	      "munmap returned 3 pages: two 2-page rings map, exactly the budget");
	PT_EQ(charged(&user, &pinned, &mine, PT_NOBODY), 0, "debugfs mlock read");
	PT_EQ(mine, limit, "debugfs: nobody is charged the whole budget, %ld",
	      limit);
	PT_EQ(ring_errno(1), EPERM, "at the budget: EPERM");
	PT_EQ(perf_ring_errno(1), EPERM,
	      "perf's own ring, same user, same budget: EPERM as well");

	/* RLIMIT_MEMLOCK takes the excess, in pinned_vm. */
	set_memlock(3);
	fdp = ring(1, &pp);
	PT_OK(fdp >= 0, "RLIMIT_MEMLOCK 3 pages: a 2-page ring maps");
	PT_EQ(vm_pin_kb(), 2 * page / 1024, "VmPin is its 2 pages");
	PT_EQ(ring_errno(1), EPERM, "2 more pages pinned would exceed 3: EPERM");
	PT_EQ(perf_ring_errno(1), EPERM, "perf says the same");
	PT_EQ(charged(&user, &pinned, &mine, PT_NOBODY), 0, "debugfs mlock read");
	PT_EQ(pinned, 2, "debugfs: 2 pages charged to pinned_vm");
	PT_EQ(mine, limit + 2, "debugfs: nobody's rings %ld pages", limit + 2);
	if (fdp >= 0)
		unring(fdp, pp, 1);
	PT_EQ(vm_pin_kb(), 0, "munmap: VmPin 0 again");
	set_memlock(0);

	/* Who is not limited. */
	PT_EQ(pt_in_child(cap_ipc_lock_child, &(int){ 1 }), 0,
	      "nobody with CAP_IPC_LOCK maps past the budget");
	PT_EQ(pt_back_to_root(), 0, "root again");
	PT_EQ(pt_perm_write_int(PT_PARANOID, -1), 0, "perf_event_paranoid -1");
	PT_EQ(pt_as_nobody(), 0, "nobody again");
	PT_EQ(ring_errno(1), 0, "paranoid -1: nobody maps past the budget");
	PT_EQ(pt_back_to_root(), 0, "root again");
	PT_EQ(pt_perm_write_int(PT_PARANOID, 2), 0, "perf_event_paranoid 2");
	{
		int rfd[64], k, ok = 0;
		void *rp[64];

		/* Root's own budget is the same size; CAP_IPC_LOCK lifts it. */
		for (k = 0; k <= n9 + 1; k++) {
			rfd[k] = ring(8, &rp[k]);
			ok += rfd[k] >= 0;
		}
		PT_EQ(ok, n9 + 2, "root maps %d pages, past its %ld-page budget",
		      9 * (n9 + 2), limit);
		PT_OK(vm_pin_kb() > 0, "root's excess is in VmPin (%ld kB)",
		      vm_pin_kb());
		for (k = 0; k <= n9 + 1; k++)
			if (rfd[k] >= 0)
				unring(rfd[k], rp[k], 8);
		PT_EQ(vm_pin_kb(), 0, "root's VmPin back to 0");
	}
	PT_EQ(pt_as_nobody(), 0, "nobody again");

	for (i = 0; i < n9; i++)
		if (fd9[i] >= 0)
			unring(fd9[i], p9[i], 8);
	if (fd5 >= 0)
		unring(fd5, p5, 4);
	if (fd2a >= 0)
		unring(fd2a, p2a, 1);
	if (fd2b >= 0)
		unring(fd2b, p2b, 1);
	PT_EQ(charged(&user, &pinned, &mine, PT_NOBODY), 0, "debugfs mlock read");
	PT_OK(user == 0 && pinned == 0 && mine == 0,
	      "every munmap uncharged: total %ld + %ld pages", user, pinned);
	PT_EQ(perf_ring_errno(8), 0, "perf maps 9 pages in the freed budget");

	PT_EQ(pt_back_to_root(), 0, "root again");
	PT_EQ(chmod(PEA_DEVICE_PATH, st.st_mode & 07777), 0, "device mode restored");
	PT_EQ(pt_perm_write_int(PT_MLOCK_KB, orig_kb), 0, "mlock_kb restored");
	PT_EQ(pt_perm_write_int(PT_PARANOID, orig_par), 0, "paranoid restored");
	return pt_done();
}
