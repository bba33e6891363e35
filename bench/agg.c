// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench: in-kernel aggregation per hit (figure "agg", issue 22).
 *
 * One thread pinned to a CPU calls getppid() AGG_N times in a row, with
 * a kprobe on the syscall doing one of:
 *   - record: pea's kprobe producer writing its record (a 1 MiB ring per
 *     CPU, drained after each loop: nothing lost);
 *   - pea count / log2 hist / kstack: pea's kprobe producer with an
 *     in-kernel table and no records (PEA_AGG_F_NO_RECORDS): a count
 *     keyed by nothing, a log2 histogram of arg0, a count keyed by the
 *     kernel stack (the stack store);
 *   - bpf count / log2 hist / stackid: a BPF kprobe program doing the same
 *     with a BPF hash map, as bcc's tools do; the stack by
 *     bpf_get_stackid() into a stack map (bcc's stackcount).
 * and, for the kprobe mechanism alone, pea_bench's kprobe with a handler
 * that returns and an empty BPF program. The tgid filter's cost for a
 * process it rejects: pea's kprobe filtered on another process (a child
 * that waits), plainly and as that process's tree (PEA_PROBE_F_DESCENDANTS:
 * the walk from this process up to the idle task, its depth noted). Each loop is timed between two
 * loops without a probe; the per-hit cost is the difference over AGG_N. Under `make bench-icount` (one vCPU,
 * -icount shift=0: a guest ns is an instruction) with BENCH_ARGS="-f agg"
 * the figures are instructions per hit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/pea.h>
#include <bpf/libbpf.h>
#include "libpea.h"
#include "module/pea_bench.h"
#include "bench.h"
#include "bench.skel.h"

#define AGG_PAGES	256	/* 1 MiB per CPU: AGG_N records fit */
#define AGG_KEYS	10240	/* as the BPF maps (bench.bpf.c) */
#define AGG_DEPTH	127

enum agg_cfg {
	AG_KP_EMPTY,	/* pea_bench's kprobe, a handler that returns */
	AG_BPF_EMPTY,	/* a BPF kprobe program that returns */
	AG_RECORD,
	AG_PEA_COUNT,
	AG_PEA_HIST,
	AG_PEA_KSTACK,
	AG_BPF_COUNT,
	AG_BPF_HIST,
	AG_BPF_STACK,
	AG_PEA_OTHER,	/* filtered: another process */
	AG_PEA_TREE,	/* filtered: not in another process's tree */
	AG_NR,
};

static const char *const ag_name[AG_NR] = {
	"kprobe empty", "bpf empty", "record", "pea count", "pea log2 hist", "pea kstack",
	"bpf count", "bpf log2 hist", "bpf stackid", "pea other tgid",
	"pea other tree",
};

static pid_t ag_other;	/* the process AG_PEA_OTHER and _TREE filter on */

struct ag_on {
	int pea_link;
	struct bpf_link *link;
};

static unsigned int agg_n(void)
{
	return g_quick ? 2000 : 5000;
}

static int ag_probe(int map_fd, enum agg_cfg c)
{
	struct pea_probe_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_PROBE_F_CLOEXEC;
	snprintf(a.symbol, sizeof(a.symbol), "%s", BENCH_KP_SYMBOL);
	a.id = 1;
	a.filter_cpu = -1;
	if (c == AG_PEA_OTHER || c == AG_PEA_TREE)
		a.filter_tgid = ag_other;
	if (c == AG_PEA_TREE)
		a.flags |= PEA_PROBE_F_DESCENDANTS;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
	if (fd < 0)
		die("PEA_MAP_IOC_ATTACH_PROBE %s: %m", BENCH_KP_SYMBOL);
	return fd;
}

static void ag_table(int link, enum agg_cfg c)
{
	struct pea_agg_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_AGG_F_NO_RECORDS;
	/* No key: one entry (the BPF map holds 1 or 66 of its 10240). */
	a.max_keys = 1;
	if (c == AG_PEA_HIST) {
		a.value = PEA_AGG_VAL_ARG;
		a.hist = PEA_AGG_HIST_LOG2;
	} else if (c == AG_PEA_KSTACK) {
		a.max_keys = AGG_KEYS;
		a.keys[0] = PEA_AGG_KEY_KSTACK;
		a.max_stacks = AGG_KEYS;
		a.stack_depth = AGG_DEPTH;
	}
	if (ioctl(link, PEA_LINK_IOC_AGG_CREATE, &a))
		die("PEA_LINK_IOC_AGG_CREATE (%s): %m", ag_name[c]);
}

static struct ag_on ag_attach(enum agg_cfg c, int map_fd)
{
	struct bpf_program *prog = NULL;
	struct ag_on on = { -1, NULL };

	switch (c) {
	case AG_KP_EMPTY:
		module_kprobe(PEA_BENCH_KP_EMPTY);
		return on;
	case AG_BPF_EMPTY:
		prog = g_skel->progs.kp_empty;
		break;
	case AG_BPF_COUNT:
		prog = g_skel->progs.kp_agg_count;
		break;
	case AG_BPF_HIST:
		prog = g_skel->progs.kp_agg_hist;
		break;
	case AG_BPF_STACK:
		prog = g_skel->progs.kp_agg_stack;
		break;
	default:
		on.pea_link = ag_probe(map_fd, c);
		if (c != AG_RECORD && c != AG_PEA_OTHER && c != AG_PEA_TREE)
			ag_table(on.pea_link, c);
		return on;
	}
	on.link = bpf_program__attach_kprobe(prog, false, BENCH_KP_SYMBOL);
	if (!on.link)
		die("attach %s: %m", bpf_program__name(prog));
	return on;
}

/* Detach; check that every hit was counted, once. */
static void ag_detach(enum agg_cfg c, struct ag_on *on, __u64 hits)
{
	struct pea_agg_read r;
	static unsigned char buf[1 << 20], sbuf[1 << 20];

	if (c == AG_PEA_OTHER || c == AG_PEA_TREE) {
		struct pea_link_info li;

		memset(&li, 0, sizeof(li));
		if (ioctl(on->pea_link, PEA_LINK_IOC_INFO, &li))
			die("PEA_LINK_IOC_INFO (%s): %m", ag_name[c]);
		if (li.filtered < hits || li.written || li.deep)
			die("%s: %llu filtered for %llu calls, %llu written, %llu deep",
			    ag_name[c], (unsigned long long)li.filtered,
			    (unsigned long long)hits,
			    (unsigned long long)li.written,
			    (unsigned long long)li.deep);
	} else if (on->pea_link >= 0 && c != AG_RECORD) {
		memset(&r, 0, sizeof(r));
		r.size = sizeof(r);
		r.flags = PEA_AGG_READ_F_CLEAR;
		r.buf = (uintptr_t)buf;
		r.buf_len = sizeof(buf);
		r.stacks = (uintptr_t)sbuf;
		r.stacks_len = sizeof(sbuf);
		if (ioctl(on->pea_link, PEA_LINK_IOC_AGG_READ, &r))
			die("PEA_LINK_IOC_AGG_READ (%s): %m", ag_name[c]);
		if (r.hits < hits || r.dropped || r.errors)
			die("%s: %llu hits for %llu calls, %llu dropped, %llu errors",
			    ag_name[c], (unsigned long long)r.hits,
			    (unsigned long long)hits,
			    (unsigned long long)r.dropped,
			    (unsigned long long)r.errors);
	}
	if (on->pea_link >= 0)
		close(on->pea_link);
	bpf_link__destroy(on->link);
	if (c == AG_KP_EMPTY)
		module_kprobe(PEA_BENCH_KP_OFF);
	if (g_skel->bss->agg_fail)
		die("%s: %llu BPF map updates failed", ag_name[c],
		    (unsigned long long)g_skel->bss->agg_fail);
}

/* ns for @n getppid() calls. */
static double ag_loop(unsigned int n)
{
	uint64_t t0 = now_ns();
	unsigned int i;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	return (double)(now_ns() - t0);
}

/* One measurement of @c: ns per hit above no probe. */
static double ag_measure(enum agg_cfg c, struct chan *ch)
{
	unsigned int n = agg_n();
	double b0, b1, t;
	struct ag_on on;

	b0 = ag_loop(n);
	on = ag_attach(c, ch->pea_map_fd);
	ag_loop(n / 10);	/* warm: keys, stacks, caches */
	if (c == AG_RECORD)
		chan_consume(ch);
	t = ag_loop(n);
	ag_detach(c, &on, n + n / 10);
	if (c == AG_RECORD) {
		uint64_t before = ch->n;

		chan_consume(ch);
		if (ch->n - before < n || ch->lost)
			die("record: %llu of %u records read, %llu lost",
			    (unsigned long long)(ch->n - before), n,
			    (unsigned long long)ch->lost);
	}
	b1 = ag_loop(n);
	return (t - (b0 + b1) / 2) / n;
}

/* Tasks the tree filter reads from this process: it, its parents, pid 0. */
static int ag_depth(void)
{
	char path[64], buf[512], *p;
	int pid = getpid(), n = 1;

	while (pid > 0 && n < 100) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "r");
		if (!f || !fgets(buf, sizeof(buf), f)) {
			if (f)
				fclose(f);
			break;
		}
		fclose(f);
		p = strrchr(buf, ')');
		if (!p || sscanf(p + 2, "%*c %d", &pid) != 1)
			break;
		n++;
	}
	return n;
}

void bench_agg(void)
{
	static const struct {
		const char *fig;
		enum agg_cfg pea, bpf;
	} rows[] = {
		{ "agg per hit: kprobe, empty handler", AG_KP_EMPTY,
		  AG_BPF_EMPTY },
		{ "agg per hit: count", AG_PEA_COUNT, AG_BPF_COUNT },
		{ "agg per hit: log2 hist of arg0", AG_PEA_HIST, AG_BPF_HIST },
		{ "agg per hit: count by kernel stack", AG_PEA_KSTACK,
		  AG_BPF_STACK },
	};
	double v[AG_NR][16];
	int cpu = g_ncpus > 1 ? 1 : 0, r, c;
	struct chan ch;
	size_t i;

	pin_cpu(cpu);
	module_kprobe(PEA_BENCH_KP_OFF);
	if (chan_open(&ch, CH_PEA, WAKE_BATCH, AGG_PAGES))
		die("agg: opening the pea channel");
	note("agg: kprobe on %s, %u calls per loop, CPU %d, %d runs",
	     BENCH_KP_SYMBOL, agg_n(), cpu, g_runs);
	ag_other = fork();
	if (ag_other < 0)
		die("agg: fork: %m");
	if (!ag_other) {
		pause();	/* the other process, until killed */
		_exit(0);
	}
	note("agg: the tree filter walks %d tasks from this one (its parents to the idle task)",
	     ag_depth());
	for (r = 0; r < g_runs; r++)
		for (c = 0; c < AG_NR; c++)
			v[c][r] = ag_measure(c, &ch);
	kill(ag_other, SIGKILL);
	waitpid(ag_other, NULL, 0);
	chan_close(&ch);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		fig_add(rows[i].fig, "pea", 0, v[rows[i].pea], g_runs, "ns");
		fig_add(rows[i].fig, "bpf", 0, v[rows[i].bpf], g_runs, "ns");
		fig_add(rows[i].fig, "record", 0, v[AG_RECORD], g_runs, "ns");
	}
	fig_add("filter per hit: another process's", "tgid", 0,
		v[AG_PEA_OTHER], g_runs, "ns");
	fig_add("filter per hit: another process's", "tree", 0,
		v[AG_PEA_TREE], g_runs, "ns");
}
