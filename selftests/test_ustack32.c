// SPDX-License-Identifier: GPL-2.0
/*
 * User stacks of a 32-bit (compat) task: pea's frame walk in 4-byte
 * words against the return addresses the task's own chain recorded
 * (selftests/m32/pt_ustack32.c: main -> pt32_a -> pt32_b -> pt32_leaf)
 * and against Linux's perf (the uprobe PMU's PERF_SAMPLE_CALLCHAIN) on
 * the same hit: a uprobe at pt32_leaf's entry (push %ebp: the caller is
 * read at the stack pointer), a raw_syscalls tracepoint hit in its
 * int $0x80, and the entry with a uretprobe on pt32_a pending (its
 * 4-byte slot holds the trampoline, which 6.12's perf replaces by the
 * real return and 6.1's keeps: pea as Linux in both).
 */
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_tp.h"
#include "pt_perm.h"
#include "pt_counter.h"
#include "pt_ustack.h"

#define NCPU_MAX	64
#define DEPTH		8

/* The 32-bit program the Makefile builds (selftests/m32/pt_ustack32.c). */
__asm__(".pushsection .rodata\n"
	".balign 64\n"
	".globl pt_u32_start\npt_u32_start:\n"
	".incbin \"" PT_USTACK32 "\"\n"
	".globl pt_u32_end\npt_u32_end:\n"
	".popsection\n");
extern const unsigned char pt_u32_start[], pt_u32_end[];

static const char path[] = "/tmp/pt_ustack32";
static int ncpu, map_fd, go[2], out[2];
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];
static unsigned long long off[2];	/* pt32_leaf's and pt32_a's */
static pid_t child;
/* leaf, after int $0x80, returns into pt32_b, pt32_a and main */
static __u32 want[5];

enum { W_LEAF, W_INT80, W_RET_B, W_RET_A, W_RET_MAIN };


/* Run the child's chain once; @seen what it recorded. */
static int round_trip(__u32 seen[5])
{
	if (write(go[1], "r", 1) != 1)
		return -1;
	return read(out[0], seen, 5 * sizeof(__u32)) == 5 * sizeof(__u32) ?
	       0 : -1;
}

/*
 * The child's records in CPU 0's ring (it runs there): probe records
 * (@tp false) or tracepoint records whose first entry is @ip0.
 */
static int collect(bool tp, __u64 ip0, struct pt_stacks *c, int max)
{
	struct perf_event_header *h = (void *)rec;
	__u32 raw;
	int n = 0;

	while (pt_ring_next(&rings[0], rec)) {
		struct pt_stacks x;
		int bad;

		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		memcpy(&raw, rec + 8, 4);
		if (tp) {
			struct pea_tp_record *r = (void *)(rec + 12);

			if (r->tgid != (__u32)child)
				continue;
			bad = pt_stacks_parse(rec + 12, raw,
					      sizeof(*r) + r->raw_size,
					      r->flags, &x);
			if (!bad && (!x.unr || x.uips[0] != ip0))
				continue;
		} else {
			struct pea_probe_record *r = (void *)(rec + 12);

			if (r->tgid != (__u32)child || r->id != 1)
				continue;
			bad = pt_stacks_parse(rec + 12, raw, sizeof(*r),
					      r->flags, &x);
		}
		if (bad) {
			pt_diag("a malformed record (raw %u)", raw);
			n = -100;
		} else if (n >= 0 && n < max) {
			c[n++] = x;
		}
	}
	return n;
}

static int attach_uprobe(unsigned long long o, __u32 flags, __u32 depth,
			 __u64 id)
{
	struct pea_uprobe_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags | PEA_UPROBE_F_CLOEXEC;
	a.path = (uintptr_t)path;
	a.path_fd = -1;
	a.filter_tgid = child;
	a.offset = o;
	a.id = id;
	a.ustack_depth = depth;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &a);
	return fd < 0 ? -errno : fd;
}

static void chain_diag(const char *what, const char *who,
		       const struct pt_stacks *c)
{
	__u32 i;

	for (i = 0; i < c->unr; i++)
		pt_diag("%s: %s entry %u: %#llx", what, who, i,
			(unsigned long long)c->uips[i]);
}

/*
 * pea's uprobe and Linux's on pt32_leaf's entry, with a uretprobe on
 * pt32_a pending if @pending: the first four entries exact, and each
 * what Linux's perf has.
 */
static void test_entry(bool pending)
{
	const char *what = pending ? "entry, a uretprobe pending" : "entry";
	struct perf_event_attr pa;
	struct pt_ring pr = { 0 };
	struct pt_stacks c[2], pc;
	__u32 seen[5], i;
	int fd, link, ret = -1, n, ps;

	pa = pt_uprobe_pmu_attr(pt_pmu_type("uprobe"), path, off[0], false);
	pa.sample_type = PERF_SAMPLE_CALLCHAIN;
	pa.exclude_callchain_kernel = 1;
	fd = syscall(SYS_perf_event_open, &pa, child, -1, -1,
		     PERF_FLAG_FD_CLOEXEC);
	PT_OK(fd >= 0, "%s: Linux's uprobe event with a callchain (%d)", what,
	      fd < 0 ? -errno : fd);
	if (fd < 0)
		return;
	if (pt_ring_map(&pr, fd, 1, PROT_READ | PROT_WRITE)) {
		PT_OK(0, "%s: perf ring mapped", what);
		close(fd);
		return;
	}
	link = attach_uprobe(off[0], 0, DEPTH, 1);
	PT_OK(link >= 0, "%s: pea uprobe with ustack_depth %d (%d)", what,
	      DEPTH, link);
	if (pending) {
		ret = attach_uprobe(off[1], PEA_UPROBE_F_RETPROBE, 0, 2);
		PT_OK(ret >= 0, "%s: pea uretprobe on pt32_a (%d)", what, ret);
	}
	pt_rings_drain(rings, ncpu);
	PT_OK(!round_trip(seen), "%s: the chain ran", what);
	n = collect(false, 0, c, 2);
	pc.unr = pt_perf_user_ips(&pr, rec, pc.uips, PEA_USTACK_MAX, &ps);
	pt_ring_unmap(&pr);
	close(fd);
	if (link >= 0)
		close(link);
	if (ret >= 0)
		close(ret);
	chain_diag(what, "pea", &c[0]);
	chain_diag(what, "Linux", &pc);
	PT_EQ(n, 1, "%s: pea wrote one record", what);
	PT_EQ(ps, 1, "%s: Linux wrote one sample", what);
	if (n != 1 || ps != 1)
		return;
	PT_OK(c[0].unr >= 4 && c[0].uips[0] == want[W_LEAF] &&
	      c[0].uips[1] == want[W_RET_B] && c[0].uips[2] == want[W_RET_A],
	      "%s: pt32_leaf, then the returns into pt32_b (read at the stack pointer) and pt32_a",
	      what);
	if (pending) {
		PT_OK(seen[W_RET_MAIN] != want[W_RET_MAIN],
		      "%s: pt32_a saw the trampoline as its return (%#x)", what,
		      seen[W_RET_MAIN]);
		PT_OK(c[0].unr >= 4 && (c[0].uips[3] == want[W_RET_MAIN] ||
				       c[0].uips[3] == seen[W_RET_MAIN]),
		      "%s: entry 3 is main's return or the trampoline", what);
		pt_diag("%s: Linux's perf %s the trampoline", what,
			pc.unr >= 4 && pc.uips[3] == want[W_RET_MAIN] ?
			"replaces" : "keeps");
	} else {
		PT_OK(c[0].unr >= 4 && c[0].uips[3] == want[W_RET_MAIN],
		      "%s: entry 3 is the return into main", what);
	}
	PT_OK(c[0].unr >= 4 && pc.unr >= 4, "%s: 4 entries in both", what);
	for (i = 0; i < 4 && i < c[0].unr && i < pc.unr; i++)
		PT_EQ(c[0].uips[i], pc.uips[i], "%s: pea's entry %u is Linux's",
		      what, i);
}

/* raw_syscalls:sys_enter in pt32_leaf's int $0x80: the user registers. */
static void test_int80(void)
{
	const char *what = "int $0x80";
	struct pea_tp_attr a;
	struct pt_stacks c[2];
	__u32 seen[5];
	int link, n;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	strcpy(a.name, "raw_syscalls:sys_enter");
	a.event_id = pt_tp_id("raw_syscalls", "sys_enter");
	a.filter_tgid = child;
	a.filter_cpu = -1;
	a.ustack_depth = 4;
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &a);
	PT_OK(link >= 0, "%s: raw_syscalls:sys_enter with ustack_depth 4 (%d)",
	      what, link < 0 ? -errno : link);
	if (link < 0)
		return;
	pt_rings_drain(rings, ncpu);
	PT_OK(!round_trip(seen), "%s: the chain ran", what);
	close(link);
	n = collect(true, want[W_INT80], c, 2);
	PT_EQ(n, 1, "%s: one record at the ip after int $0x80", what);
	if (n != 1)
		return;
	chain_diag(what, "pea", &c[0]);
	PT_EQ(c[0].unr, 4, "%s: 4 entries", what);
	PT_OK(c[0].uips[1] == want[W_RET_B] && c[0].uips[2] == want[W_RET_A] &&
	      c[0].uips[3] == want[W_RET_MAIN],
	      "%s: then the returns into pt32_b, pt32_a and main", what);
}

int main(void)
{
	char r[16], w[16];
	int fd, status;

	pt_pin(0);
	ncpu = pt_cpu_map("ustack32", 16, &map_fd, ev_fd, rings);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0 || write(fd, pt_u32_start, pt_u32_end - pt_u32_start) !=
	    pt_u32_end - pt_u32_start || close(fd) || pipe(go) || pipe(out))
		pt_fatal("set-up");
	child = fork();
	if (child == 0) {
		close(go[1]);
		close(out[0]);
		snprintf(r, sizeof(r), "%d", go[0]);
		snprintf(w, sizeof(w), "%d", out[1]);
		execl(path, path, r, w, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(out[1]);
	PT_EQ(read(out[0], off, sizeof(off)), (ssize_t)sizeof(off),
	      "the 32-bit program told its functions' offsets");
	PT_OK(!round_trip(want), "the chain's own return addresses, no probe");
	pt_diag("leaf %#x int80 %#x ret_b %#x ret_a %#x ret_main %#x",
		want[0], want[1], want[2], want[3], want[4]);
	test_entry(false);
	test_int80();
	test_entry(true);
	close(go[1]);
	waitpid(child, &status, 0);
	PT_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the 32-bit program exited 0 (0x%x)", status);
	unlink(path);
	return pt_done();
}
