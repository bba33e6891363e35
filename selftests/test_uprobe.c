// SPDX-License-Identifier: GPL-2.0
/*
 * Uprobe and uretprobe producers (PEA_MAP_IOC_ATTACH_UPROBE): exact
 * records for functions of this program and of a shared object it maps,
 * captures (string, fixed, faulting, truncated), latency, recursion,
 * the tgid filter, errnos, attach/detach while the function runs on
 * every CPU, a probed binary deleted, accounting and leaks.
 */
#include <elf.h>
#include <pthread.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_counter.h"
#include "pt_perm.h"

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

/* The file offset of the code at @p, from /proc/self/maps. */
static __u64 file_off(const void *p)
{
	unsigned long a = (unsigned long)p, s, e, off;
	__u64 ret = ~0ULL;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx", &s, &e, &off) == 3 &&
		    a >= s && a < e)
			ret = a - s + off;
	if (f)
		fclose(f);
	return ret;
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
	a.offset = file_off(fn);
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
	a = good; a.reserved = 1;
	PT_EQ(attach_errno(a), EINVAL, "attach: reserved != 0 gives EINVAL");
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
	int i;

	for (i = 0; i < n; i++) {
		int fd = attach(a);

		if (fd < 0) {
			(*bad)++;
			continue;
		}
		usleep(us);
		info = link_info(fd);
		*written += info.written;
		*hits += info.hits;
		close(fd);
		drain_all();
	}
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
	usleep(300000);
	i1 = link_info(link);
	PT_EQ(unlink(copy), 0, "the probed binary is deleted");
	usleep(300000);
	i2 = link_info(link);
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
	      info.errors == lost && info.written == received,
	      "accounting: received %llu + lost %llu == hits %llu",
	      (unsigned long long)received, (unsigned long long)lost,
	      (unsigned long long)info.hits);
	close(link);
}

static void test_leaks(void)
{
	struct pea_uprobe_attr up = up_attr(self, pt_target, 0);
	struct pea_uprobe_attr rp = up_attr(self, pt_sleepy,
					    PEA_UPROBE_F_RETPROBE);
	int v0[4], v1[4], i, bad = 0, found = 0;
	char line[512], sym[PEA_SYM_LEN];
	unsigned long long id, mid, h, w, fl, e, mi;
	unsigned int flags;
	FILE *f;

	rp.capture_mode = PEA_CAPTURE_STR;
	rp.capture_len = 32;
	PT_EQ(pt_read_objects_settled(v0), 0, "debugfs objects readable");
	for (i = 0; i < 200; i++) {
		int fd = attach(i % 2 ? &rp : &up);

		if (fd < 0) {
			bad++;
			continue;
		}
		if (i % 20 == 0) {
			pt_target(1, 2, 3, 4, 5, 6);
			pt_sleepy(1);
		}
		close(fd);
	}
	PT_EQ(bad, 0, "200 attach/detach cycles all attached");
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

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "loop")) {
		for (long i = 0;; i++)
			pt_target(i, 0, 0, 0, 0, 0);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	pt_pin(0);
	ncpu = pt_cpu_map("uprobe", 16, &map_fd, ev_fd, rings);
	test_uprobe_args();
	test_path_fd();
	test_uretprobe();
	test_recursion();
	test_exit_inside();
	test_captures();
	test_shared_object();
	test_filter();
	test_errnos();
	test_perms();
	test_detach_under_load();
	test_deleted_binary();
	test_accounting();
	test_leaks();
	return pt_done();
}
