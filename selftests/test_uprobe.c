// SPDX-License-Identifier: GPL-2.0
/*
 * Uprobe and uretprobe producers (PEA_MAP_IOC_ATTACH_UPROBE): exact
 * records for functions of this program and of a shared object it maps,
 * captures (string, fixed, faulting, truncated), latency, recursion,
 * the tgid filter, errnos, attach/detach while the function runs on
 * every CPU, a probed binary deleted, accounting and leaks.
 */
#include <alloca.h>
#include <dirent.h>
#include <elf.h>
#include <pthread.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include "pea_test.h"
#include "pt_counter.h"
#include "pt_perm.h"
#include "pt_maps.h"

#define NCPU_MAX	64
#define NREC_MAX	64

/* The shared object the Makefile builds (selftests/pt_uprobe_so.c). */
__asm__(".pushsection .rodata\n"
	".balign 64\n"
	".globl pt_so_start\npt_so_start:\n"
	".incbin \"" PT_UPROBE_SO "\"\n"
	".globl pt_so_end\npt_so_end:\n"
	".popsection\n");
extern const unsigned char pt_so_start[], pt_so_end[];

/* The 32-bit program the Makefile builds (selftests/m32/pt_uprobe32.c). */
__asm__(".pushsection .rodata\n"
	".balign 64\n"
	".globl pt_m32_start\npt_m32_start:\n"
	".incbin \"" PT_UPROBE32 "\"\n"
	".globl pt_m32_end\npt_m32_end:\n"
	".popsection\n");
extern const unsigned char pt_m32_start[], pt_m32_end[];

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];
static char self[256];

/* What a record held: the struct and its capture. */
struct got {
	struct pea_probe_record r;
	unsigned char cap[PEA_CAPTURE_MAX];
};

static struct got recs[NREC_MAX];

__attribute__((noipa, used)) long pt_target(long a, long b, long c, long d,
					     long e, long f)
{
	__asm__ volatile("" ::: "memory");
	return a + b + c + d + e + f;
}

__attribute__((noipa, used)) long pt_sleepy(long us)
{
	usleep(us);
	return us * 2;
}

__attribute__((noipa, used)) long pt_str(const char *s, long n)
{
	__asm__ volatile("" : : "r"(s) : "memory");
	return n;
}

__attribute__((noipa, used)) long pt_maybe_exit(long code)
{
	if (code)
		_exit((int)code);
	return 7;
}

/* Blocks until a byte arrives on @fd. */
__attribute__((noipa, used)) long pt_park(long fd)
{
	char c;

	return read((int)fd, &c, 1) == 1 ? 11 : -1;
}

/* What pt_exec_inside() runs: "exec2" (calls it again) or "away". */
static const char *exec_mode = "exec2";

/* With a path, execs it (argv exec_mode, @rfd, @wfd); else returns 5. */
__attribute__((noipa, used)) long pt_exec_inside(const char *path, long rfd,
						 long wfd)
{
	char r[16], w[16];

	if (!path)
		return 5;
	snprintf(r, sizeof(r), "%ld", rfd);
	snprintf(w, sizeof(w), "%ld", wfd);
	execl(path, path, exec_mode, r, w, (char *)NULL);
	_exit(127);
}

__attribute__((noipa, used)) long pt_rec(long n)
{
	long r;

	if (n <= 0)
		return 100;
	r = pt_rec(n - 1);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static struct pea_uprobe_attr up_attr(const char *path, const void *fn,
				      __u32 flags)
{
	struct pea_uprobe_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags | PEA_UPROBE_F_CLOEXEC;
	a.path = (uintptr_t)path;
	a.path_fd = -1;
	a.offset = pt_file_off(fn);
	return a;
}

/* Returns a link fd or -errno. */
static int attach(struct pea_uprobe_attr *a)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, a);

	return fd < 0 ? -errno : fd;
}

static int attach_errno(struct pea_uprobe_attr a)
{
	int fd = attach(&a);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -fd;
}

/* Collect this process's records from every ring, in ring order. */
static int collect(void)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_probe_record *r;
	int cpu, n = 0;

	for (cpu = 0; cpu < ncpu; cpu++)
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			r = (void *)(rec + 12);
			if (r->tgid != (__u32)getpid() || n == NREC_MAX)
				continue;
			memcpy(&recs[n].r, r, sizeof(*r));
			memcpy(recs[n].cap, r + 1, r->capture_len <=
			       PEA_CAPTURE_MAX ? r->capture_len : 0);
			n++;
		}
	return n;
}

static void drain_all(void)
{
	pt_rings_drain(rings, ncpu);
}

static struct pea_link_info link_info(int link)
{
	struct pea_link_info info;

	memset(&info, 0, sizeof(info));
	ioctl(link, PEA_LINK_IOC_INFO, &info);
	return info;
}

static void test_uprobe_args(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_target, 0);
	struct pea_link_info info;
	struct pea_probe_record *r = &recs[0].r;
	__u64 t0, t1;
	long ret;
	int link, n;

	a.id = 0x75e;
	link = attach(&a);
	PT_OK(link >= 0, "uprobe on %s+0x%llx attaches (%d)", self,
	      (unsigned long long)a.offset, link);
	if (link < 0)
		return;
	PT_EQ(fcntl(link, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC,
	      "PEA_UPROBE_F_CLOEXEC sets FD_CLOEXEC on the link");
	pt_pin(1 % ncpu);
	drain_all();
	t0 = now_ns();
	ret = pt_target(1, -2, 0x7e0000000000L, 4, 0x5555aaaa5555aaaaL, 6);
	t1 = now_ns();
	n = collect();
	PT_EQ(ret, 1 - 2 + 0x7e0000000000L + 4 + 0x5555aaaa5555aaaaL + 6,
	      "uprobe: the probed function still returns its value");
	PT_EQ(n, 1, "uprobe: one call, one record");
	if (n != 1)
		goto out;
	PT_OK(r->args[0] == 1 && r->args[1] == (__u64)-2 &&
	      r->args[2] == 0x7e0000000000UL && r->args[3] == 4 &&
	      r->args[4] == 0x5555aaaa5555aaaaUL && r->args[5] == 6,
	      "uprobe: the six arguments are exact");
	PT_EQ(r->flags, PEA_REC_F_UPROBE, "uprobe: flags are PEA_REC_F_UPROBE");
	PT_EQ(r->addr, a.offset, "uprobe: addr is the file offset");
	PT_EQ(r->id, 0x75e, "uprobe: the producer id");
	PT_EQ(r->pid, gettid(), "uprobe: pid is the thread id");
	PT_EQ(r->tgid, getpid(), "uprobe: tgid is the process id");
	PT_OK(!strcmp(r->comm, "test_uprobe"), "uprobe: comm is test_uprobe");
	PT_EQ(r->cpu, 1 % ncpu, "uprobe: cpu is the CPU of the call");
	PT_EQ(r->capture_len, 0, "uprobe: no capture");
	PT_EQ(r->ret, 0, "uprobe: ret 0 at entry");
	PT_EQ(r->latency_ns, 0, "uprobe: latency 0 at entry");
	PT_OK(r->time_ns >= t0 && r->time_ns <= t1,
	      "uprobe: time is CLOCK_MONOTONIC, within the call");
	info = link_info(link);
	PT_OK(info.addr == a.offset && info.hits == 1 && info.written == 1 &&
	      info.errors == 0 && info.missed == 0 && info.flags == a.flags,
	      "link info: addr %llx hits %llu written %llu",
	      (unsigned long long)info.addr, (unsigned long long)info.hits,
	      (unsigned long long)info.written);
	{
		char want[PEA_SYM_LEN];

		snprintf(want, sizeof(want), "test_uprobe+0x%llx",
			 (unsigned long long)a.offset);
		PT_OK(!strcmp(info.symbol, want),
		      "link info: the default name is %s (%s)", want,
		      info.symbol);
	}
out:
	close(link);
	/* After the detach: no record. */
	pt_target(1, 2, 3, 4, 5, 6);
	PT_EQ(collect(), 0, "uprobe: no record after the link is closed");
}

static void test_path_fd(void)
{
	struct pea_uprobe_attr a = up_attr(NULL, pt_target, 0);
	int fd = open(self, O_RDONLY | O_CLOEXEC), link, n;

	a.path_fd = fd;
	strcpy(a.name, "by_fd");
	link = attach(&a);
	PT_OK(link >= 0, "uprobe by path_fd attaches (%d)", link);
	close(fd);
	drain_all();
	pt_target(10, 20, 30, 40, 50, 60);
	pt_target(11, 21, 31, 41, 51, 61);
	n = collect();
	PT_OK(n == 2 && recs[0].r.args[0] == 10 && recs[1].r.args[5] == 61,
	      "uprobe by path_fd: two calls, two exact records (%d)", n);
	PT_OK(!strcmp(link_info(link).symbol, "by_fd"),
	      "link info: the name given");
	close(link);
}

static void test_uretprobe(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_sleepy,
					   PEA_UPROBE_F_RETPROBE);
	struct pea_probe_record *r = &recs[0].r;
	__u64 t0, t1;
	int link, n;

	link = attach(&a);
	PT_OK(link >= 0, "uretprobe attaches (%d)", link);
	if (link < 0)
		return;
	pt_pin(0);
	drain_all();
	t0 = now_ns();
	PT_EQ(pt_sleepy(20000), 40000, "uretprobe: the function's value");
	t1 = now_ns();
	n = collect();
	PT_EQ(n, 1, "uretprobe: one call, one record");
	if (n == 1) {
		PT_EQ(r->flags, PEA_REC_F_UPROBE | PEA_REC_F_RETPROBE,
		      "uretprobe: flags UPROBE | RETPROBE");
		PT_EQ(r->args[0], 20000, "uretprobe: the entry argument");
		PT_EQ(r->ret, 40000, "uretprobe: the return value");
		PT_OK(r->latency_ns >= 20000000 && r->latency_ns <= t1 - t0,
		      "uretprobe: latency %llu ns, between the sleep and the call",
		      (unsigned long long)r->latency_ns);
		PT_OK(r->time_ns >= t0 + r->latency_ns && r->time_ns <= t1,
		      "uretprobe: time is at the return");
		PT_EQ(r->addr, a.offset, "uretprobe: addr is the file offset");
	}
	close(link);
}

static void test_recursion(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_rec,
					   PEA_UPROBE_F_RETPROBE);
	struct pea_link_info info;
	int link, n, i, ok = 1;

	link = attach(&a);
	drain_all();
	PT_EQ(pt_rec(3), 103, "recursion: pt_rec(3) is 103");
	n = collect();
	PT_EQ(n, 4, "recursion: 4 calls, 4 return records");
	for (i = 0; i < n && n == 4; i++)
		if (recs[i].r.args[0] != (__u64)i ||
		    recs[i].r.ret != 100 + i ||
		    (i && recs[i].r.latency_ns < recs[i - 1].r.latency_ns))
			ok = 0;
	PT_OK(n == 4 && ok,
	      "recursion: innermost first, each with its own argument, return value and a latency not below its callee's");
	/* Deeper than the 4 frames a task keeps: the outermost are missed. */
	drain_all();
	PT_EQ(pt_rec(5), 105, "recursion: pt_rec(5) is 105");
	n = collect();
	info = link_info(link);
	PT_OK(n == 4 && recs[0].r.args[0] == 0 && recs[3].r.args[0] == 3 &&
	      recs[3].r.ret == 103,
	      "recursion 6 deep: the 4 innermost returns are written (%d)", n);
	PT_EQ(info.missed, 2, "recursion 6 deep: the 2 outermost count as missed");
	PT_EQ(info.hits, 8, "recursion: hits count written returns");
	close(link);
}

/*
 * Tasks that exit inside a uretprobed function leave their frames behind:
 * more of them than the table has slots must not starve later callers.
 */
static void test_exit_inside(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_maybe_exit,
					   PEA_UPROBE_F_RETPROBE);
	struct pea_link_info info;
	int link, i, status, exited = 0, n;

	link = attach(&a);
	PT_OK(link >= 0, "uretprobe on pt_maybe_exit attaches (%d)", link);
	for (i = 0; i < 80; i++) {
		pid_t child = fork();

		if (child == 0)
			pt_maybe_exit(3);
		waitpid(child, &status, 0);
		exited += WIFEXITED(status) && WEXITSTATUS(status) == 3;
	}
	PT_EQ(exited, 80, "80 children exited inside pt_maybe_exit");
	drain_all();
	PT_EQ(pt_maybe_exit(0), 7, "pt_maybe_exit(0) returns 7");
	n = collect();
	info = link_info(link);
	PT_OK(n == 1 && recs[0].r.ret == 7 && info.written == 1 &&
	      info.missed == 0,
	      "after 80 exits inside the function a call still pairs (%d records, %llu missed)",
	      n, (unsigned long long)info.missed);
	close(link);
}

static void test_captures(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_str, 0);
	static const char msg[] = "hello from user space";
	struct pea_probe_record *r = &recs[0].r;
	int link, n;

	a.capture_mode = PEA_CAPTURE_STR;
	a.capture_len = 64;
	link = attach(&a);
	PT_OK(link >= 0, "uprobe with a string capture attaches (%d)", link);
	drain_all();
	pt_str(msg, 1);
	n = collect();
	PT_OK(n == 1 && r->capture_len == strlen(msg) &&
	      !memcmp(recs[0].cap, msg, strlen(msg)) &&
	      r->flags == (PEA_REC_F_UPROBE | PEA_REC_F_CAPTURE),
	      "string capture: exact bytes and flags");
	pt_str((const char *)8, 2);
	n = collect();
	PT_OK(n == 1 && r->capture_len == 0 && r->args[0] == 8 &&
	      r->flags == (PEA_REC_F_UPROBE | PEA_REC_F_CAPTURE |
			   PEA_REC_F_FAULT),
	      "string capture: a faulting pointer gives an empty capture and PEA_REC_F_FAULT");
	close(link);

	a.capture_len = 5;
	link = attach(&a);
	drain_all();
	pt_str(msg, 3);
	n = collect();
	PT_OK(n == 1 && r->capture_len == 5 && !memcmp(recs[0].cap, "hello", 5) &&
	      r->flags == (PEA_REC_F_UPROBE | PEA_REC_F_CAPTURE |
			   PEA_REC_F_TRUNCATED),
	      "string capture: a longer string is cut and flagged TRUNCATED");
	close(link);

	a.capture_mode = PEA_CAPTURE_FIXED;
	a.capture_len = 8;
	a.flags |= PEA_UPROBE_F_RETPROBE;
	link = attach(&a);
	PT_OK(link >= 0, "uretprobe with a fixed capture attaches (%d)", link);
	drain_all();
	PT_EQ(pt_str("abc\0defgh", 9), 9, "the function returns 9");
	pt_str((const char *)16, 10);
	n = collect();
	PT_EQ(n, 2, "uretprobe captures: two calls, two records");
	if (n == 2) {
		PT_OK(r->capture_len == 8 &&
		      !memcmp(recs[0].cap, "abc\0defg", 8) && r->ret == 9 &&
		      r->flags == (PEA_REC_F_UPROBE | PEA_REC_F_RETPROBE |
				   PEA_REC_F_CAPTURE),
		      "fixed capture at uretprobe entry: 8 exact bytes, NUL included");
		PT_OK(recs[1].r.capture_len == 0 && recs[1].r.ret == 10 &&
		      recs[1].r.flags == (PEA_REC_F_UPROBE |
					  PEA_REC_F_RETPROBE |
					  PEA_REC_F_CAPTURE | PEA_REC_F_FAULT),
		      "fixed capture: a faulting pointer gives FAULT and no bytes");
	}
	close(link);
}

/* Map the shared object's text from a file and call pt_so_fn there. */
static void test_shared_object(void)
{
	const char *path = "/tmp/pt_uprobe_so.so";
	const Elf64_Ehdr *eh = (const void *)pt_so_start;
	const Elf64_Phdr *ph = (const void *)(pt_so_start + eh->e_phoff);
	struct pea_uprobe_attr a;
	__u64 off = ~0ULL, moff = 0;
	long (*fn)(long, long);
	int fd, link, rlink, i, n;
	size_t len = 0;
	char *base;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	PT_OK(fd >= 0 && write(fd, pt_so_start, pt_so_end - pt_so_start) ==
	      pt_so_end - pt_so_start, "shared object written to %s", path);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
		    eh->e_entry >= ph[i].p_vaddr &&
		    eh->e_entry < ph[i].p_vaddr + ph[i].p_filesz) {
			off = eh->e_entry - ph[i].p_vaddr + ph[i].p_offset;
			moff = ph[i].p_offset & ~(__u64)4095;
			len = ph[i].p_offset + ph[i].p_filesz - moff;
		}
	PT_OK(off != ~0ULL, "pt_so_fn at file offset 0x%llx",
	      (unsigned long long)off);
	base = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, moff);
	close(fd);
	if (off == ~0ULL || base == MAP_FAILED)
		return;
	fn = (long (*)(long, long))(base + (off - moff));

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.path = (uintptr_t)path;
	a.path_fd = -1;
	a.offset = off;
	link = attach(&a);
	a.flags = PEA_UPROBE_F_RETPROBE;
	rlink = attach(&a);
	PT_OK(link >= 0 && rlink >= 0,
	      "uprobe and uretprobe on the mapped shared object (%d, %d)",
	      link, rlink);
	drain_all();
	PT_EQ(fn(7, 5), 26, "pt_so_fn(7, 5) is 26");
	n = collect();
	PT_EQ(n, 2, "shared object: an entry and a return record");
	if (n == 2) {
		PT_OK(recs[0].r.flags == PEA_REC_F_UPROBE &&
		      recs[0].r.args[0] == 7 && recs[0].r.args[1] == 5 &&
		      recs[0].r.addr == off,
		      "shared object: the entry record's arguments and offset");
		PT_OK(recs[1].r.flags == (PEA_REC_F_UPROBE |
					  PEA_REC_F_RETPROBE) &&
		      recs[1].r.ret == 26 && recs[1].r.args[0] == 7 &&
		      recs[1].r.latency_ns > 0,
		      "shared object: the return record's value and latency");
	}
	close(link);
	close(rlink);
	munmap(base, len);
	unlink(path);
}

static void test_filter(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_target, 0);
	struct pea_link_info info;
	int link, rlink, status, i, n, child_recs = 0;
	struct perf_event_header *h = (void *)rec;
	pid_t child;

	child = fork();
	if (child == 0) {
		usleep(100000);
		for (i = 0; i < 3; i++)
			pt_target(i, 0, 0, 0, 0, 0);
		pt_sleepy(1);
		_exit(0);
	}
	a.filter_tgid = child;
	link = attach(&a);
	a = up_attr(self, pt_sleepy, PEA_UPROBE_F_RETPROBE);
	a.filter_tgid = getpid();
	rlink = attach(&a);
	drain_all();
	pt_target(9, 9, 9, 9, 9, 9);
	waitpid(child, &status, 0);
	for (i = 0; i < ncpu; i++)
		while (pt_ring_next(&rings[i], rec))
			if (h->type == PERF_RECORD_SAMPLE &&
			    ((struct pea_probe_record *)(rec + 12))->tgid ==
			    (__u32)child)
				child_recs++;
	info = link_info(link);
	PT_EQ(child_recs, 3, "tgid filter: the child's 3 calls are recorded");
	PT_OK(info.hits == 4 && info.written == 3 && info.filtered == 1,
	      "tgid filter: our call counted as filtered (hits %llu written %llu filtered %llu)",
	      (unsigned long long)info.hits, (unsigned long long)info.written,
	      (unsigned long long)info.filtered);
	info = link_info(rlink);
	PT_OK(info.hits == 1 && info.filtered == 1 && info.written == 0 &&
	      info.missed == 0,
	      "uretprobe tgid filter: the child's call filtered once, nothing missed");
	close(link);
	close(rlink);
	n = collect();
	PT_EQ(n, 0, "tgid filter: nothing of ours");
}

static void test_errnos(void)
{
	struct pea_uprobe_attr good = up_attr(self, pt_target, 0), a;
	struct stat st;
	int fd;

	stat(self, &st);
	PT_EQ(attach_errno(good), 0, "attach: a good attr succeeds");
	a = good; a.path = (uintptr_t)"/tmp/pea/no/such/file";
	PT_EQ(attach_errno(a), ENOENT, "attach: a missing path gives ENOENT");
	a = good; a.path = (uintptr_t)"/tmp";
	PT_EQ(attach_errno(a), EINVAL, "attach: a directory gives EINVAL");
	a = good; a.path = (uintptr_t)"/dev/null";
	PT_EQ(attach_errno(a), EINVAL, "attach: a device gives EINVAL");
	a = good; a.offset = st.st_size + 1;
	PT_EQ(attach_errno(a), EINVAL,
	      "attach: an offset past the file's end gives EINVAL");
	a = good; a.offset = ~0ULL;
	PT_EQ(attach_errno(a), EINVAL, "attach: offset 2^64-1 gives EINVAL");
	a = good; a.path = 8;
	PT_EQ(attach_errno(a), EFAULT, "attach: a bad path pointer gives EFAULT");
	a = good; a.path_fd = 3;
	PT_EQ(attach_errno(a), EINVAL,
	      "attach: both a path and a path_fd give EINVAL");
	a = good; a.path = 0; a.path_fd = -1;
	PT_EQ(attach_errno(a), EBADF, "attach: neither gives EBADF");
	a = good; a.path = 0; a.path_fd = 999;
	PT_EQ(attach_errno(a), EBADF, "attach: a closed path_fd gives EBADF");
	fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	a = good; a.path = 0; a.path_fd = fd;
	PT_EQ(attach_errno(a), EINVAL,
	      "attach: a path_fd on a directory gives EINVAL");
	close(fd);
	a = good; a.flags |= 1U << 5;
	PT_EQ(attach_errno(a), EINVAL, "attach: unknown flags give EINVAL");
	a = good; a.maxactive = 1;
	PT_EQ(attach_errno(a), EINVAL, "attach: maxactive on a uprobe gives EINVAL");
	a = good; a.flags |= PEA_UPROBE_F_RETPROBE;
	a.maxactive = PEA_MAXACTIVE_MAX + 1;
	PT_EQ(attach_errno(a), EINVAL,
	      "attach: a uretprobe's maxactive past PEA_MAXACTIVE_MAX gives EINVAL");
	a.maxactive = PEA_MAXACTIVE_MAX;
	PT_EQ(attach_errno(a), 0,
	      "attach: a uretprobe's maxactive of PEA_MAXACTIVE_MAX is taken");
	a = good; a.size = 8;
	PT_EQ(attach_errno(a), EINVAL, "attach: a short attr.size gives EINVAL");
	a = good; memset(a.name, 'a', sizeof(a.name));
	PT_EQ(attach_errno(a), EINVAL, "attach: an unterminated name gives EINVAL");
	a = good; a.filter_tgid = -1;
	PT_EQ(attach_errno(a), EINVAL, "attach: filter_tgid -1 gives EINVAL");
	a = good; a.capture_mode = PEA_CAPTURE_STR; a.capture_len = 8;
	a.capture_arg = 6;
	PT_EQ(attach_errno(a), EINVAL, "attach: capture_arg 6 gives EINVAL");
	a.capture_arg = 0; a.capture_len = 0;
	PT_EQ(attach_errno(a), EINVAL, "attach: capture_len 0 gives EINVAL");
	a.capture_len = PEA_CAPTURE_MAX + 1;
	PT_EQ(attach_errno(a), EINVAL,
	      "attach: capture_len past PEA_CAPTURE_MAX gives EINVAL");
	a.capture_len = 8; a.capture_mode = 3;
	PT_EQ(attach_errno(a), EINVAL, "attach: capture_mode 3 gives EINVAL");
	a = good; a.capture_len = 8;
	PT_EQ(attach_errno(a), EINVAL,
	      "attach: capture fields without a mode give EINVAL");
	{
		struct {
			struct pea_uprobe_attr a;
			__u64 tail;
		} big = { good, 1 };

		big.a.size = sizeof(big);
		PT_EQ(pt_ioctl_errno(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &big),
		      E2BIG, "attach: a non-zero tail gives E2BIG");
	}
	PT_EQ(pt_ioctl_errno(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, (void *)8),
	      EFAULT, "attach: a bad attr pointer gives EFAULT");
}

#define PT_ROOT_CAPS	(~0ULL)
#define PT_CAP(c)	(1ULL << (c))

/*
 * Attach a uprobe (uretprobe with PEA_UPROBE_F_RETPROBE in @flags) on
 * pt_target as nobody keeping only @caps (PT_ROOT_CAPS: stay root) at
 * perf_event_paranoid @paranoid, through pea and through
 * perf_event_open() of the uprobe PMU on the same file and offset (CPU 0,
 * every task: what a pea link probes). Returns pea's errno (0: attached;
 * 200 + errno: the set-up failed) and stores perf's in @perf.
 */
static int perm_try(__u64 caps, int paranoid, __u32 flags, int *perf)
{
	struct pea_uprobe_attr a = up_attr(self, pt_target, flags);
	struct perf_event_attr pa = pt_uprobe_pmu_attr(pt_pmu_type("uprobe"),
						       self, a.offset,
						       flags & PEA_UPROBE_F_RETPROBE);
	int status, p[2], err;
	pid_t pid;

	*perf = -1;
	if (pt_perm_write_int(PT_PARANOID, paranoid) || pipe(p))
		return 200 + EIO;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (caps != PT_ROOT_CAPS && pt_drop_to_nobody_caps(caps))
			_exit(200 + errno);
		err = pt_perf_open_errno(&pa, -1, 0);
		if (write(p[1], &err, sizeof(err)) != sizeof(err))
			_exit(200 + EIO);
		_exit(attach_errno(a));
	}
	close(p[1]);
	if (read(p[0], perf, sizeof(*perf)) != sizeof(*perf))
		*perf = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

#define PERM_CASE(want, desc, ...) do {					\
	const char *__d = (desc);					\
	int __perf, __pea = perm_try(__VA_ARGS__, &__perf);		\
	PT_EQ(__pea, want, "perm: %s", __d);				\
	PT_EQ(__perf, __pea, "perm: %s: as the uprobe PMU", __d);	\
} while (0)

/*
 * Who may attach: as the uprobe PMU since "perf: Revert to requiring
 * CAP_SYS_ADMIN for uprobes" (both Debian kernels): CAP_SYS_ADMIN, else
 * EACCES, at every perf_event_paranoid level; CAP_PERFMON is not enough.
 */
static void test_perms(void)
{
	const __u32 rp = PEA_UPROBE_F_RETPROBE;
	long orig = pt_perm_read_int(PT_PARANOID);

	PT_OK(pt_pmu_type("uprobe") > 0, "perm: the uprobe PMU has type %d",
	      pt_pmu_type("uprobe"));
	PERM_CASE(EACCES, "nobody, paranoid 2: EACCES", 0, 2, 0);
	PERM_CASE(EACCES, "nobody, paranoid 3: EACCES", 0, 3, 0);
	PERM_CASE(EACCES, "nobody with CAP_PERFMON, paranoid 2: EACCES",
		  PT_CAP(CAP_PERFMON), 2, 0);
	PERM_CASE(EACCES, "nobody with CAP_PERFMON, uretprobe: EACCES",
		  PT_CAP(CAP_PERFMON), 2, rp);
	PERM_CASE(EACCES, "nobody with CAP_PERFMON, paranoid -1: EACCES",
		  PT_CAP(CAP_PERFMON), -1, 0);
	PERM_CASE(EACCES, "nobody with CAP_PERFMON and CAP_BPF: EACCES",
		  PT_CAP(CAP_PERFMON) | PT_CAP(CAP_BPF), 2, 0);
	PERM_CASE(0, "nobody with CAP_SYS_ADMIN, paranoid 2: allowed",
		  PT_CAP(CAP_SYS_ADMIN), 2, 0);
	PERM_CASE(0, "nobody with CAP_SYS_ADMIN, paranoid 3, uretprobe: allowed",
		  PT_CAP(CAP_SYS_ADMIN), 3, rp);
	PERM_CASE(0, "root, paranoid 3: allowed", PT_ROOT_CAPS, 3, 0);
	PT_EQ(pt_perm_write_int(PT_PARANOID, orig), 0,
	      "perm: perf_event_paranoid restored");
}

static volatile int spin_stop;

static void *spinner(void *arg)
{
	long i = 0;

	pt_pin((int)(long)arg);
	while (!spin_stop)
		pt_target(i++, 0, 0, 0, 0, 0);
	return NULL;
}

static void *sleeper(void *arg)
{
	pt_pin((int)(long)arg);
	while (!spin_stop)
		pt_sleepy(3000);
	return NULL;
}

static void run_load(void *(*fn)(void *), int start)
{
	static pthread_t th[NCPU_MAX];

	spin_stop = !start;
	pt_cpu_threads(th, ncpu, fn, start);
}

static void detach_cycles(struct pea_uprobe_attr *a, int n, int us,
			  int *bad, __u64 *written, __u64 *hits)
{
	struct pea_link_info info;
	struct timespec t0, t1;
	double t_att = 0, t_close = 0;
	int i;

	for (i = 0; i < n; i++) {
		int fd;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		fd = attach(a);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		t_att += (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (fd < 0) {
			(*bad)++;
			continue;
		}
		usleep(us);
		info = link_info(fd);
		*written += info.written;
		*hits += info.hits;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		close(fd);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		t_close += (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		drain_all();
	}
	pt_diag("%d cycles: %.1f s attaching, %.1f s closing", n, t_att,
		t_close);
}

static void test_detach_under_load(void)
{
	struct pea_uprobe_attr up = up_attr(self, pt_target, 0);
	struct pea_uprobe_attr rp = up_attr(self, pt_sleepy,
					    PEA_UPROBE_F_RETPROBE);
	__u64 written = 0, hits = 0;
	int bad = 0;

	run_load(spinner, 1);
	detach_cycles(&up, 50, 5000, &bad, &written, &hits);
	run_load(spinner, 0);
	PT_EQ(bad, 0, "50 uprobe attach/detach cycles while it runs on every CPU");
	PT_OK(written > 0 && hits >= written,
	      "uprobes under load: %llu hits, %llu written",
	      (unsigned long long)hits, (unsigned long long)written);

	written = hits = 0;
	run_load(sleeper, 1);
	detach_cycles(&rp, 20, 10000, &bad, &written, &hits);
	run_load(sleeper, 0);
	PT_EQ(bad, 0, "20 uretprobe detaches with calls in flight on every CPU");
	PT_OK(written > 0 && hits >= written,
	      "uretprobes in flight: %llu hits, %llu written",
	      (unsigned long long)hits, (unsigned long long)written);
	drain_all();
}

/* A copy of this program runs a loop; its file is deleted while probed. */
static void test_deleted_binary(void)
{
	const char *copy = "/tmp/pt_uprobe_victim";
	struct pea_uprobe_attr a = up_attr(copy, pt_target, 0);
	struct pea_link_info i1, i2;
	int in, out, link, status;
	char buf[65536];
	ssize_t n;
	pid_t child;

	in = open(self, O_RDONLY | O_CLOEXEC);
	out = open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	close(in);
	close(out);
	child = fork();
	if (child == 0) {
		execl(copy, copy, "loop", (char *)NULL);
		_exit(127);
	}
	a.filter_tgid = child;
	link = attach(&a);
	PT_OK(link >= 0, "uprobe on the copy attaches (%d)", link);
	/*
	 * The copy hits once it has exec'd and reached its loop, which a
	 * loaded or debug kernel can take longer than any fixed sleep: wait
	 * for its hits (10 s at most), before the unlink and after.
	 */
	for (int i = 0; i < 100 * pt_time_scale(); i++) {
		usleep(100000);
		i1 = link_info(link);
		if (i1.hits)
			break;
	}
	PT_EQ(unlink(copy), 0, "the probed binary is deleted");
	for (int i = 0; i < 100 * pt_time_scale(); i++) {
		usleep(100000);
		i2 = link_info(link);
		if (i2.hits > i1.hits)
			break;
	}
	PT_OK(i1.hits > 0 && i2.hits > i1.hits,
	      "the deleted binary still hits (%llu, then %llu)",
	      (unsigned long long)i1.hits, (unsigned long long)i2.hits);
	close(link);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	PT_OK(WIFSIGNALED(status), "the looping copy ran until killed");
	drain_all();
}

/* received + lost == hits, with a ring too small for the burst. */
static void test_accounting(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_target, 0);
	struct pea_event_stats s0, s1;
	struct perf_event_header *h = (void *)rec;
	struct pea_link_info info;
	__u64 received = 0, lost, t0, t1, t2;
	int link, i;

	pt_pin(0);
	drain_all();
	ioctl(ev_fd[0], PEA_EVENT_IOC_STATS, &s0);
	a.filter_tgid = getpid();
	t0 = now_ns();
	for (i = 0; i < 3000; i++)
		pt_target(i, 0, 0, 0, 0, 0);
	t0 = now_ns() - t0;
	link = attach(&a);
	t1 = now_ns();
	for (i = 0; i < 3000; i++)
		pt_target(i, 0, 0, 0, 0, 0);
	t2 = now_ns();
	pt_diag("3000 calls: %llu ns each unprobed, %llu ns each probed",
		(unsigned long long)t0 / 3000,
		(unsigned long long)(t2 - t1) / 3000);
	while (pt_ring_next(&rings[0], rec))
		if (h->type == PERF_RECORD_SAMPLE)
			received++;
	ioctl(ev_fd[0], PEA_EVENT_IOC_STATS, &s1);
	info = link_info(link);
	lost = s1.lost - s0.lost;
	PT_EQ(info.hits, 3000, "accounting: 3000 calls, 3000 hits");
	PT_OK(lost > 0 && received + lost == info.hits &&
	      info.dropped == lost && info.errors == 0 &&
	      info.written == received,
	      "accounting: received %llu + lost %llu == hits %llu",
	      (unsigned long long)received, (unsigned long long)lost,
	      (unsigned long long)info.hits);
	close(link);
}

#define LEAK_THREADS	16

static struct pea_uprobe_attr leak_up, leak_rp;
static int leak_next, leak_bad;

/*
 * Cycle i of the 200: attach (a uretprobe when i is odd, else a uprobe),
 * a call of each probed function every 20th, close. A detach waits for
 * grace periods (on 6.12 RCU tasks trace's too: a second or more on
 * PREEMPT_RT): LEAK_THREADS threads share the cycles, so that their
 * waits overlap.
 */
static void *leak_cycles(void *arg)
{
	int i;

	(void)arg;
	while ((i = __atomic_fetch_add(&leak_next, 1, __ATOMIC_RELAXED)) < 200) {
		int fd = attach(i % 2 ? &leak_rp : &leak_up);

		if (fd < 0) {
			__atomic_fetch_add(&leak_bad, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (i % 20 == 0) {
			pt_target(1, 2, 3, 4, 5, 6);
			pt_sleepy(1);
		}
		close(fd);
	}
	return NULL;
}

static void test_leaks(void)
{
	struct pea_uprobe_attr up = up_attr(self, pt_target, 0);
	struct pea_uprobe_attr rp = up_attr(self, pt_sleepy,
					    PEA_UPROBE_F_RETPROBE);
	int v0[4], v1[4], i, found = 0;
	char line[512], sym[PEA_SYM_LEN];
	unsigned long long id, mid, h, w, fl, e, mi;
	pthread_t th[LEAK_THREADS];
	unsigned int flags;
	FILE *f;

	rp.capture_mode = PEA_CAPTURE_STR;
	rp.capture_len = 32;
	PT_EQ(pt_read_objects_settled(v0), 0, "debugfs objects readable");
	leak_up = up;
	leak_rp = rp;
	for (i = 0; i < LEAK_THREADS; i++)
		if (pthread_create(&th[i], NULL, leak_cycles, NULL))
			pt_fatal("pthread_create");
	for (i = 0; i < LEAK_THREADS; i++)
		pthread_join(th[i], NULL);
	PT_EQ(leak_bad, 0, "200 attach/detach cycles all attached");
	/* The records of the cycles' calls, before the link below counts. */
	drain_all();
	pt_read_objects_settled(v1);
	PT_OK(!memcmp(v0, v1, sizeof(v0)),
	      "objects back to baseline: maps %d events %d rings %d links %d -> %d %d %d %d",
	      v0[0], v0[1], v0[2], v0[3], v1[0], v1[1], v1[2], v1[3]);

	strcpy(up.name, "pt_target_link");
	up.filter_tgid = getpid();
	i = attach(&up);
	pt_target(1, 2, 3, 4, 5, 6);
	f = fopen("/sys/kernel/debug/pea/links", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llu %llu %127s 0x%x %llu %llu %llu %llu %llu",
			   &id, &mid, sym, &flags, &h, &w, &fl, &e, &mi) == 9 &&
		    !strcmp(sym, "pt_target_link") && w == 1 && h == 1)
			found++;
	if (f)
		fclose(f);
	PT_EQ(found, 1, "debugfs links: the uprobe link with 1 record written");
	close(i);
	drain_all();
}


/* How many threads of @pid are blocked in read(2). */
static int parked(pid_t pid)
{
	char path[320], buf[64];
	struct dirent *d;
	int n = 0;
	DIR *dir;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/syscall", pid,
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* "0 0x..." in read(2); "running" when not in a syscall. */
		if (fgets(buf, sizeof(buf), f) && !strncmp(buf, "0 ", 2))
			n++;
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return n;
}

static void *park_thread(void *arg)
{
	pt_park((long)arg);
	return NULL;
}

/*
 * Another user's threads parked inside a uretprobed function hold one
 * pairing slot each: up to the link's maxactive they hide no other
 * task's return; at it, the next caller's return is missed and counted.
 */
static void test_parked(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_park,
					   PEA_UPROBE_F_RETPROBE);
	struct pea_link_info i64, i96;
	int p[2], q[2], ready[2], l64, l96, n, k, w64 = 0, w96 = 0, status;
	pthread_t th[64];
	pid_t child;
	char c = 0;

	a.id = 64;
	a.maxactive = 64;
	l64 = attach(&a);
	a.id = 96;
	a.maxactive = 96;
	l96 = attach(&a);
	PT_OK(l64 >= 0 && l96 >= 0,
	      "parked: uretprobes with maxactive 64 and 96 attach (%d, %d)",
	      l64, l96);
	if (l64 < 0 || l96 < 0)
		goto out;
	if (pipe(p) || pipe(q) || pipe(ready))
		pt_fatal("pipe");
	child = fork();
	if (child == 0) {
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		for (k = 0; k < 64; k++)
			if (pthread_create(&th[k], NULL, park_thread,
					   (void *)(long)p[0]))
				_exit(101);
		if (write(ready[1], &c, 1) != 1)
			_exit(102);
		for (k = 0; k < 64; k++)
			pthread_join(th[k], NULL);
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1)
		pt_fatal("parked: the child died");
	for (k = 0; k < 3000 && parked(child) < 64; k++)
		usleep(10000);
	PT_EQ(parked(child), 64,
	      "parked: 64 threads of uid 65534 blocked inside pt_park()");
	drain_all();
	/* Root's own call reads another pipe: the parked threads read p. */
	if (write(q[1], "x", 1) != 1)
		pt_fatal("write");
	PT_EQ(pt_park(q[0]), 11, "parked: root's own call returns");
	n = collect();
	for (k = 0; k < n; k++) {
		w64 += recs[k].r.id == 64;
		w96 += recs[k].r.id == 96;
	}
	i64 = link_info(l64);
	i96 = link_info(l96);
	PT_OK(w96 == 1 && i96.written == 1 && i96.missed == 0,
	      "parked: with maxactive 96, root's return is written (%d records, %llu missed)",
	      w96, (unsigned long long)i96.missed);
	PT_OK(w64 == 0 && i64.written == 0 && i64.missed == 1,
	      "parked: with maxactive 64, at the limit, it is missed and counted (%d records, %llu missed)",
	      w64, (unsigned long long)i64.missed);
	for (k = 0; k < 64; k++)
		if (write(p[1], "x", 1) != 1)
			pt_fatal("write");
	waitpid(child, &status, 0);
	PT_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "parked: the 64 threads returned (status 0x%x)", status);
	i64 = link_info(l64);
	i96 = link_info(l96);
	PT_OK(i64.written == 64 && i96.written == 65,
	      "parked: their 64 returns are written on both links (%llu, %llu)",
	      (unsigned long long)i64.written,
	      (unsigned long long)i96.written);
	drain_all();
	if (write(q[1], "x", 1) != 1)
		pt_fatal("write");
	pt_park(q[0]);
	i64 = link_info(l64);
	PT_OK(i64.written == 65 && i64.missed == 1,
	      "parked: once they returned, the maxactive-64 link pairs again (%llu written, %llu missed)",
	      (unsigned long long)i64.written,
	      (unsigned long long)i64.missed);
	drain_all();
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(ready[0]);
	close(ready[1]);
out:
	if (l64 >= 0)
		close(l64);
	if (l96 >= 0)
		close(l96);
}

/*
 * The images of test_exec_inside(): "exec1" calls the function, which
 * execs "exec2"; that one calls it again from far deeper in its stack,
 * then waits. Both run without address randomisation (inherited through
 * the exec), so their stacks start at the same address.
 */
static int exec1_main(const char *path, int rfd, int wfd)
{
	pt_exec_inside(path, rfd, wfd);
	return 127;
}

/* The "away" image: says it runs, waits, exits; never calls the function. */
static int away_main(int rfd, int wfd)
{
	char c = 1;

	if (write(wfd, &c, 1) != 1 || read(rfd, &c, 1) != 1)
		return 4;
	return 0;
}

static int exec2_main(int rfd, int wfd)
{
	volatile char *deep = alloca(65536);

	deep[0] = 0;
	if (pt_exec_inside(NULL, 0, 0) != 5)
		return 3;
	return away_main(rfd, wfd);
}

/*
 * A task that execs inside a uretprobed function never returns from that
 * call: its frame must not outlive the exec and keep the task's slot
 * (here, with the stale frame above the new call's, the new call's
 * return does not drop it).
 */
static void test_exec_inside(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_exec_inside,
					   PEA_UPROBE_F_RETPROBE);
	struct pea_link_info info;
	int go[2], ready[2], link, status, n;
	char r[16], w[16], c;
	pid_t child;

	a.maxactive = 1;
	link = attach(&a);
	PT_OK(link >= 0, "exec inside: a uretprobe with maxactive 1 attaches (%d)",
	      link);
	if (link < 0)
		return;
	if (pipe(go) || pipe(ready))
		pt_fatal("pipe");
	child = fork();
	if (child == 0) {
		personality(ADDR_NO_RANDOMIZE);
		snprintf(r, sizeof(r), "%d", go[0]);
		snprintf(w, sizeof(w), "%d", ready[1]);
		execl(self, self, "exec1", r, w, (char *)NULL);
		_exit(127);
	}
	PT_EQ(read(ready[0], &c, 1), 1,
	      "exec inside: the new image called the function and returned");
	info = link_info(link);
	PT_OK(info.written == 1 && info.missed == 0,
	      "exec inside: its call after the exec is written (%llu written, %llu missed)",
	      (unsigned long long)info.written,
	      (unsigned long long)info.missed);
	drain_all();
	PT_EQ(pt_exec_inside(NULL, 0, 0), 5,
	      "exec inside: another task's call returns");
	n = collect();
	info = link_info(link);
	PT_OK(n == 1 && recs[0].r.ret == 5 && info.written == 2 &&
	      info.missed == 0,
	      "exec inside: the exec'd task holds no slot, another task's return pairs (%d records, %llu missed)",
	      n, (unsigned long long)info.missed);
	if (write(go[1], "x", 1) != 1)
		pt_fatal("write");
	waitpid(child, &status, 0);
	PT_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "exec inside: the exec'd child exited 0 (status 0x%x)", status);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	close(link);
	drain_all();
}

/*
 * A task that execs inside the function into a program that never calls
 * it again holds its slot only until someone needs it: it is alive but
 * its frames are from before the exec.
 */
static void test_exec_away(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_exec_inside,
					   PEA_UPROBE_F_RETPROBE);
	struct pea_link_info info;
	int go[2], ready[2], link, status;
	pid_t child;
	char c;

	a.maxactive = 1;
	link = attach(&a);
	if (link < 0 || pipe(go) || pipe(ready))
		pt_fatal("exec away: set-up");
	child = fork();
	if (child == 0) {
		exec_mode = "away";
		pt_exec_inside(self, go[0], ready[1]);
	}
	PT_EQ(read(ready[0], &c, 1), 1,
	      "exec away: the child exec'd inside the function and waits");
	drain_all();
	PT_EQ(pt_exec_inside(NULL, 0, 0), 5, "exec away: another call returns");
	info = link_info(link);
	PT_OK(info.written == 1 && info.missed == 0,
	      "exec away: the exec'd task's slot is taken over, the call pairs (%llu written, %llu missed)",
	      (unsigned long long)info.written,
	      (unsigned long long)info.missed);
	if (write(go[1], "x", 1) != 1)
		pt_fatal("write");
	waitpid(child, &status, 0);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	close(link);
	drain_all();
}

/*
 * A task that exited inside the function left its slot; its tid now
 * belongs to an unrelated task that never calls the function. The slot
 * is stale all the same (another start time) and is taken over.
 */
static void test_tid_reused(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_maybe_exit,
					   PEA_UPROBE_F_RETPROBE);
	struct pea_link_info info;
	int link, status, go[2], wrote;
	pid_t child, again;
	struct utsname u;
	char last[32], c;

	a.maxactive = 1;
	link = attach(&a);
	if (link < 0 || pipe(go))
		pt_fatal("tid reused: set-up");
	child = fork();
	if (child == 0)
		pt_maybe_exit(3);
	waitpid(child, &status, 0);
	snprintf(last, sizeof(last), "%d", child - 1);
	wrote = pt_write_file("/proc/sys/kernel/ns_last_pid", last);
	uname(&u);
	if (wrote && strstr(u.release, "-pea-")) {
		/* x86_64_defconfig: no CONFIG_CHECKPOINT_RESTORE. */
		PT_OK(access("/proc/sys/kernel/ns_last_pid", F_OK) &&
		      errno == ENOENT,
		      "tid reused: pea's debug kernels have no ns_last_pid");
		goto out;
	}
	again = fork();
	if (again == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	PT_OK(wrote == 0 && again == child,
	      "tid reused: a new task has the dead owner's tid %d (%d)", child,
	      again);
	drain_all();
	PT_EQ(pt_maybe_exit(0), 7, "tid reused: another call returns");
	info = link_info(link);
	PT_OK(info.written == 1 && info.missed == 0,
	      "tid reused: the dead owner's slot is taken over, the call pairs (%llu written, %llu missed)",
	      (unsigned long long)info.written,
	      (unsigned long long)info.missed);
	if (write(go[1], "x", 1) != 1)
		pt_fatal("write");
	waitpid(again, &status, 0);
out:
	close(go[0]);
	close(go[1]);
	close(link);
	drain_all();
}

/*
 * Recursion past the kernel's uretprobe depth (64): the innermost 6 calls
 * get no return, pea keeps frames for the 4 innermost entries only. No
 * return may be paired with another call's entry.
 */
static void test_deep_recursion(void)
{
	struct pea_uprobe_attr a = up_attr(self, pt_rec,
					   PEA_UPROBE_F_RETPROBE);
	struct pea_link_info info;
	int link, n, i, bad = 0;

	link = attach(&a);
	if (link < 0)
		pt_fatal("deep recursion: attach");
	drain_all();
	PT_EQ(pt_rec(69), 169, "deep recursion: pt_rec(69) is 169");
	n = collect();
	for (i = 0; i < n; i++)
		bad += recs[i].r.ret != (__s64)(100 + recs[i].r.args[0]);
	info = link_info(link);
	PT_EQ(bad, 0,
	      "deep recursion: no return paired with another call's entry (%d records)",
	      n);
	PT_OK(info.written == 0 && info.missed == 64,
	      "deep recursion: the 64 returns the kernel reports have no frame of their own: missed (%llu written, %llu missed)",
	      (unsigned long long)info.written,
	      (unsigned long long)info.missed);
	close(link);
	drain_all();
}

/*
 * A compat (32-bit) task returns with its stack pointer 4 above the
 * entry's, and a function returning a struct pops the hidden pointer as
 * well (ret $4): each of its returns pairs with its own call.
 */
static void test_compat_task(void)
{
	const char *path = "/tmp/pt_uprobe32";
	struct pea_uprobe_attr a;
	struct pea_link_info i1, i2;
	int go[2], offs[2], l1 = -1, l2 = -1, fd, status, n, k, ok1 = 0,
	    ok2 = 0;
	unsigned long long off[2];
	char r[16], w[16];
	pid_t child;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0 || write(fd, pt_m32_start, pt_m32_end - pt_m32_start) !=
	    pt_m32_end - pt_m32_start || close(fd) || pipe(go) || pipe(offs))
		pt_fatal("compat: set-up");
	child = fork();
	if (child == 0) {
		snprintf(r, sizeof(r), "%d", go[0]);
		snprintf(w, sizeof(w), "%d", offs[1]);
		execl(path, path, r, w, (char *)NULL);
		_exit(127);
	}
	PT_EQ(read(offs[0], off, sizeof(off)), (ssize_t)sizeof(off),
	      "compat: the 32-bit program told its functions' offsets");
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_UPROBE_F_RETPROBE | PEA_UPROBE_F_CLOEXEC;
	a.path = (uintptr_t)path;
	a.path_fd = -1;
	a.filter_tgid = child;
	a.offset = off[0];
	a.id = 32;
	l1 = attach(&a);
	a.offset = off[1];
	a.id = 33;
	l2 = attach(&a);
	PT_OK(l1 >= 0 && l2 >= 0, "compat: uretprobes on both attach (%d, %d)",
	      l1, l2);
	drain_all();
	if (write(go[1], "x", 1) != 1)
		pt_fatal("write");
	waitpid(child, &status, 0);
	PT_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "compat: the 32-bit program's calls returned right (0x%x)",
	      status);
	n = 0;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_header *h = (void *)rec;
		struct pea_probe_record *pr;

		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			pr = (void *)(rec + 12);
			if (pr->tgid != (__u32)child || n == NREC_MAX)
				continue;
			recs[n++].r = *pr;
		}
	}
	for (k = 0; k < n; k++) {
		/* 32-bit registers: the argument is on the stack, ret in eax. */
		if (recs[k].r.id == 32 && (int)recs[k].r.ret >= 100 &&
		    (int)recs[k].r.ret <= 102)
			ok1++;
		if (recs[k].r.id == 33)
			ok2++;
	}
	i1 = link_info(l1);
	i2 = link_info(l2);
	PT_OK(ok1 == 3 && i1.written == 3 && i1.missed == 0,
	      "compat: pt32_fn's 3 returns pair (%d records, %llu written, %llu missed)",
	      ok1, (unsigned long long)i1.written,
	      (unsigned long long)i1.missed);
	PT_OK(ok2 == 2 && i2.written == 2 && i2.missed == 0,
	      "compat: pt32_struct's 2 returns (ret $4) pair (%d records, %llu written, %llu missed)",
	      ok2, (unsigned long long)i2.written,
	      (unsigned long long)i2.missed);
	close(l1);
	close(l2);
	close(go[0]);
	close(go[1]);
	close(offs[0]);
	close(offs[1]);
	unlink(path);
	drain_all();
}

/* A perf uprobe PMU counter on (@path, @off) in task @pid. */
static int perf_uprobe(const char *path, __u64 off, pid_t pid)
{
	struct perf_event_attr pa;
	int type = pt_pmu_type("uprobe");

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = type;
	pa.config1 = (uintptr_t)path;
	pa.config2 = off;
	return (int)syscall(__NR_perf_event_open, &pa, pid, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

/*
 * Run @path "calls" @n in a child; with @off, a perf uprobe counter on
 * (@path, @off) in that child counts its hits into *@count.
 */
static int run_calls(const char *path, int n, __u64 off, __u64 *count)
{
	int go[2], status, pfd = -1;
	char arg[16], c;
	pid_t child;

	if (pipe(go))
		return -1;
	snprintf(arg, sizeof(arg), "%d", n);
	child = fork();
	if (child == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execl(path, path, "calls", arg, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	if (off) {
		pfd = perf_uprobe(path, off, child);
		if (pfd < 0)
			pt_diag("perf uprobe: %s", strerror(errno));
	}
	if (write(go[1], "x", 1) != 1)
		pt_fatal("write");
	close(go[1]);
	waitpid(child, &status, 0);
	if (pfd >= 0 && read(pfd, count, sizeof(*count)) != sizeof(*count))
		*count = ~0ULL;
	if (pfd >= 0)
		close(pfd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, ok = 1;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (in < 0 || out < 0)
		ok = 0;
	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			ok = 0;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok ? 0 : -1;
}

/*
 * Detach after the probed file was copied up to the upper layer (a chmod
 * is enough): the link must unregister from the inode it registered on,
 * not the one the path names now, and leave the code of a process still
 * running the lower file's as it was.
 */
static void overlay_copy_up(const char *merged_bin, __u64 off)
{
	struct pea_uprobe_attr a = up_attr(merged_bin, pt_target, 0);
	char taint0[32] = "", taint1[32] = "", mem[64];
	struct pea_link_info info;
	unsigned char byte = 0;
	int link, fd, status, i;
	unsigned long addr;
	ssize_t n;
	pid_t child;

	child = fork();
	if (child == 0) {
		execl(merged_bin, merged_bin, "loop", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 1000 * pt_time_scale() &&
	     !pt_addr_of(child, merged_bin, off); i++)
		usleep(10000);
	a.filter_tgid = child;
	link = attach(&a);
	PT_OK(link >= 0, "overlay copy-up: a uprobe on the running copy attaches");
	for (i = 0; i < 1000 * pt_time_scale() && link >= 0 &&
	     !link_info(link).hits; i++)
		usleep(10000);
	info = link_info(link);
	PT_OK(info.hits > 0, "overlay copy-up: it hits (%llu)",
	      (unsigned long long)info.hits);
	PT_EQ(chmod(merged_bin, 0700), 0, "overlay copy-up: chmod copies the file up");
	PT_EQ(access("/tmp/pt_ovl/upper/victim", F_OK), 0,
	      "overlay copy-up: the upper layer has it now");
	pt_read_file("/proc/sys/kernel/tainted", taint0, sizeof(taint0));
	if (link >= 0)
		close(link);
	pt_read_file("/proc/sys/kernel/tainted", taint1, sizeof(taint1));
	taint0[strcspn(taint0, "\n")] = 0;
	taint1[strcspn(taint1, "\n")] = 0;
	PT_OK(!strcmp(taint0, taint1),
	      "overlay copy-up: detaching warned nothing (tainted %s, then %s)",
	      taint0, taint1);
	addr = pt_addr_of(child, merged_bin, off);
	snprintf(mem, sizeof(mem), "/proc/%d/mem", child);
	fd = open(mem, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? pread(fd, &byte, 1, addr) : -1;
	PT_OK(addr && n == 1 && byte != 0xcc,
	      "overlay copy-up: the running process's code has no breakpoint left (0x%02x at 0x%lx: %s)",
	      byte, addr, n == 1 ? "read" : strerror(errno));
	if (fd >= 0)
		close(fd);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	drain_all();
}

/*
 * A binary on overlayfs (a container image's layer): pea probes the real
 * inode, as the kernel's uprobe PMU does, and counts what perf counts.
 */
static void test_overlay(void)
{
	const char *merged_bin = "/tmp/pt_ovl/merged/victim";
	struct pea_uprobe_attr a;
	struct pea_link_info info;
	struct utsname u;
	__u64 count = 0;
	int rc, link;

	uname(&u);
	mkdir("/tmp/pt_ovl", 0755);
	if (mount("tmpfs", "/tmp/pt_ovl", "tmpfs", 0, NULL))
		pt_fatal("overlay: tmpfs");
	mkdir("/tmp/pt_ovl/lower", 0755);
	mkdir("/tmp/pt_ovl/upper", 0755);
	mkdir("/tmp/pt_ovl/work", 0755);
	mkdir("/tmp/pt_ovl/merged", 0755);
	PT_EQ(copy_file(self, "/tmp/pt_ovl/lower/victim"), 0,
	      "overlay: the test binary copied into the lower layer");
	/* The guest loads no modules of its own: the initramfs has it. */
	if (access("/lib/modules/pea/overlay.ko", F_OK) == 0 &&
	    system("grep -qw overlay /proc/filesystems || insmod /lib/modules/pea/overlay.ko"))
		pt_diag("overlay: insmod overlay.ko failed");
	rc = mount("overlay", "/tmp/pt_ovl/merged", "overlay", 0,
		   "lowerdir=/tmp/pt_ovl/lower,upperdir=/tmp/pt_ovl/upper,workdir=/tmp/pt_ovl/work");
	if (strstr(u.release, "-pea-")) {
		/* pea's debug kernels (debug, kcsan): x86_64_defconfig, no overlayfs. */
		PT_OK(rc && errno == ENODEV,
		      "overlay: pea's debug kernels have no overlayfs (ENODEV)");
		goto out;
	}
	PT_EQ(rc, 0, "overlay: mounted (%s)", rc ? strerror(errno) : "ok");
	if (rc)
		goto out;
	a = up_attr(merged_bin, pt_target, 0);
	link = attach(&a);
	PT_OK(link >= 0, "overlay: a uprobe on a file in the merged tree attaches (%s)",
	      link < 0 ? strerror(-link) : "ok");
	PT_EQ(run_calls(merged_bin, 37, a.offset, &count), 0,
	      "overlay: the merged tree's copy ran pt_target() 37 times");
	if (link >= 0) {
		info = link_info(link);
		PT_EQ(info.hits, 37, "overlay: pea counted 37 hits");
		close(link);
	}
	PT_OK(count == 37,
	      "overlay: perf's uprobe PMU on the same path counted 37 too (%llu)",
	      (unsigned long long)count);
	overlay_copy_up(merged_bin, a.offset);
	drain_all();
	umount("/tmp/pt_ovl/merged");
out:
	umount("/tmp/pt_ovl");
}

/* How long each part took, for the suite's time (make check). */
static void timed(void (*fn)(void), const char *name)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fn();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pt_diag("%s: %.1f s", name, (t1.tv_sec - t0.tv_sec) +
		(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "loop")) {
		for (long i = 0;; i++)
			pt_target(i, 0, 0, 0, 0, 0);
	}
	if (argc > 2 && !strcmp(argv[1], "calls")) {
		for (long i = 0; i < atol(argv[2]); i++)
			pt_target(i, 0, 0, 0, 0, 0);
		return 0;
	}
	if (argc > 3 && !strcmp(argv[1], "exec1"))
		return exec1_main(argv[0], atoi(argv[2]), atoi(argv[3]));
	if (argc > 3 && !strcmp(argv[1], "exec2"))
		return exec2_main(atoi(argv[2]), atoi(argv[3]));
	if (argc > 3 && !strcmp(argv[1], "away"))
		return away_main(atoi(argv[2]), atoi(argv[3]));
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	pt_pin(0);
	ncpu = pt_cpu_map("uprobe", 16, &map_fd, ev_fd, rings);
	timed(test_uprobe_args, "test_uprobe_args");
	timed(test_path_fd, "test_path_fd");
	timed(test_uretprobe, "test_uretprobe");
	timed(test_recursion, "test_recursion");
	timed(test_exit_inside, "test_exit_inside");
	timed(test_parked, "test_parked");
	timed(test_exec_inside, "test_exec_inside");
	timed(test_exec_away, "test_exec_away");
	timed(test_tid_reused, "test_tid_reused");
	timed(test_deep_recursion, "test_deep_recursion");
	timed(test_compat_task, "test_compat_task");
	timed(test_captures, "test_captures");
	timed(test_shared_object, "test_shared_object");
	timed(test_filter, "test_filter");
	timed(test_errnos, "test_errnos");
	timed(test_perms, "test_perms");
	timed(test_detach_under_load, "test_detach_under_load");
	timed(test_deleted_binary, "test_deleted_binary");
	timed(test_overlay, "test_overlay");
	timed(test_accounting, "test_accounting");
	timed(test_leaks, "test_leaks");
	return pt_done();
}
