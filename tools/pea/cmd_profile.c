// SPDX-License-Identifier: GPL-2.0
/*
 * pea profile: sample a process, a command or the whole system at a
 * frequency (cpu-clock, PEA_MAP_IOC_ATTACH_SAMPLE) with kernel and user
 * stacks, and print the heaviest stacks, named: kernel frames from
 * /proc/kallsyms (ksym.c), user frames from snapshots of the process's
 * /proc/PID/maps and the ELF symbol tables of the files mapped (usym.c).
 *
 * When the snapshots are taken, so that a process that exits before the
 * tool reads its records is still named:
 *   - -p PID: at the start; again when a sample falls outside every
 *     mapping of the snapshot (a library loaded since), at most once a
 *     read pass;
 *   - -- CMD: the child is traced (PTRACE_SEIZE with PTRACE_O_TRACEEXEC
 *     and PTRACE_O_TRACEEXIT), and so is every task it creates
 *     (PTRACE_O_TRACEFORK, _VFORK, _CLONE), as the sampler follows them:
 *     a process's maps are read at its exec, and at its tasks' exit
 *     stops, where its memory is still there; only then may they exit;
 *   - every other process (the whole system, or threads of another
 *     process): when its first record is read.
 * Records are kept as they come (addresses), and named at the end.
 *
 * The stacks go into a set of tools/pea/stacks.h: root first, the
 * process (comm), the user frames from the outermost, then the kernel
 * frames from the outermost.
 *
 * With -- CMD, -p of a single-threaded process, or the whole system, the
 * kernel counts the samples itself where it can: a table on the
 * sampler's link keyed by comm and the stacks
 * (PEA_AGG_KEY_COMM, _KSTACK, _USTACK, no records: no ring can lose a
 * sample), read and cleared every second and at the end; each of its
 * entries is a sample with a weight. The summary then says "complete
 * (in-kernel)". For the whole system with user stacks the key is the
 * process instead of the comm (comm, pid and two stacks would be five
 * words, where the kernel takes four), read every 200 ms: a process's
 * comm and maps are read at its first entry. Without the table (an older
 * module, no memory), the records as above.
 *
 * --call-graph dwarf[,SIZE] asks the kernel for each sample's user
 * registers and the top SIZE bytes of its user stack instead of a user
 * stack by frame pointers (PEA_SAMPLE_F_USER_REGS, as perf record
 * --call-graph dwarf), and unwinds them with libdw when the record is
 * read (udwunw.c), with the process's maps as they were snapshotted for
 * naming; the record's copy is then dropped, only the frames are kept.
 * The kernel cannot count such stacks, so the records count.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "libpea.h"
#include "pea_tool.h"
#include "stacks.h"
#include "udwunw.h"
#include "usym.h"

#define PROFILE_HZ_DEFAULT	99
#define PROFILE_TOP_DEFAULT	10
#define PROFILE_PAGES_DEFAULT	64
#define PROFILE_DEPTH		127
#define PROFILE_SAMPLES_MAX	(16U << 20)	/* records kept, at most */
#define FRAME_LEN		256	/* a frame's name, at most */
#define PROFILE_GENS_MAX	64	/* -p: programs whose maps are kept apart */
#define PROFILE_KEYS		4096	/* the kernel table's keys and stacks */
#define PROFILE_STACK_USER	8192	/* --call-graph dwarf: perf's default */
/* Its most: a record with PROFILE_DEPTH kernel frames and the registers. */
#define PROFILE_STACK_ROOM	((PEA_SAMPLE_RECORD_MAX - \
				  sizeof(struct pea_sample_record) - \
				  PROFILE_DEPTH * sizeof(__u64) - \
				  sizeof(struct pea_user_regs)) & ~7UL)

struct prof_sample {
	int pid, tgid;
	char comm[16];
	__u16 knr, unr;
	int symkey;		/* whose maps name it: tgid, or an exec's (-p) */
	__u64 *ips;		/* knr kernel, then unr user */
	__u64 weight;		/* samples (a kernel table's entry: its count) */
};

/*
 * /proc/PID/stat's fields of a memory's layout, which an exec sets anew
 * (randomised: the code of a PIE, the stack, the heap, the arguments):
 * startcode, endcode, startstack, then start_data .. env_end.
 */
#define PROF_LAYOUT_N	10

/* -p: the program the process runs, from one exec to the next. */
struct prof_gen {
	dev_t dev;		/* /proc/PID/exe's file */
	ino_t ino;
	unsigned long long layout[PROF_LAYOUT_N];	/* and its memory */
	char comm[16];		/* the comm it gave the process */
	int key;		/* its maps' key in usyms: the pid while current */
};

/* kern_wide: a process's comm, read when its first entry is. */
struct prof_comm {
	int tgid;
	char comm[16];
};

struct profiler {
	unsigned int hz, top, pages;
	double secs;		/* 0: until the end (or Ctrl-C) */
	bool kernel_only, user_only;
	bool dwarf;		/* --call-graph dwarf */
	unsigned int stack_user;	/* its SIZE */
	struct udwunw *uw;
	__u64 uregs_missing;	/* dwarf: user samples without registers */
	int pid;		/* -p */
	char **cmd;		/* -- CMD */
	const char *folded, *svg, *build_ids;
	int map_fd;
	int *links;		/* link fds: one CPU-wide, or one per task */
	size_t nlinks;
	unsigned int kdepth, udepth;	/* the sampler's stack depths */
	bool kern;		/* the kernel counts (a table on the link) */
	bool kern_wide;		/* ... keyed by process: every task's */
	struct prof_comm *comms;	/* kern_wide: each process's comm */
	size_t ncomms;
	bool records;		/* --records: it does not */
	__u64 wsum;		/* samples kept: the weights' sum */
	__u64 khits, kdropped, kstack_dropped, kerrors;
	void *kbuf, *sbuf;	/* what a read of the table copies */
	size_t kbuf_len, sbuf_len;
	pid_t child;
	struct pea_buffer *pb;
	struct usyms *us;
	struct prof_sample *s;
	size_t n, cap, dropped;
	__u64 lost;
	bool resnap;		/* -p: a sample outside the snapshot */
	struct prof_gen gens[PROFILE_GENS_MAX];
	int ngens;		/* -p: 1 + the execs seen, at most */
	unsigned int execs_past;	/* -p: execs past PROFILE_GENS_MAX */
	bool draining;		/* -p: reading what came before an exec */
	unsigned int cmd_execs;	/* -- CMD: execs whose earlier maps are kept */
	int err;
};

static volatile sig_atomic_t prof_stop;

static void prof_on_signal(int sig)
{
	(void)sig;
	prof_stop = 1;
}

static int prof_help(void)
{
	printf("usage: pea profile [-F HZ] [-p PID | -- CMD [ARG...]] [-d SECONDS]\n"
	       "                   [--kernel-only | --user-only] [--top N] [--pages N]\n"
	       "                   [--folded FILE] [--svg FILE] [--build-ids FILE]\n"
	       "                   [--call-graph fp|dwarf[,SIZE]]\n"
	       "\n"
	       "Sample on-CPU stacks (cpu-clock at HZ per CPU, default %u) of a process\n"
	       "(-p), of a command the tool runs (--), or of every task, for SECONDS or\n"
	       "until the command exits or Ctrl-C; print the N heaviest stacks (default\n"
	       "%u), leaf first, with their sample counts.\n"
	       "\n"
	       "  -F, --freq HZ        samples per second per CPU\n"
	       "  -p, --pid PID        only this process (its threads too)\n"
	       "  -d, --duration SECS  stop after SECS seconds\n"
	       "      --kernel-only    kernel stacks only (exclude_user)\n"
	       "      --user-only      user stacks only (exclude_kernel)\n"
	       "      --top N          stacks printed (0: all)\n"
	       "      --pages N        ring pages per CPU, a power of two (default %u)\n"
	       "      --folded FILE    write folded stacks (flamegraph.pl, speedscope)\n"
	       "      --svg FILE       write an SVG flame graph\n"
	       "      --build-ids FILE write the build-ids of the files user frames\n"
	       "                       were in, \"HEX PATH\" (as perf buildid-list)\n"
	       "      --records        count from records even where the kernel can\n"
	       "                       (-p, --, every CPU: the kernel counts:\n"
	       "                       \"complete (in-kernel)\", no ring to lose them)\n"
	       "      --call-graph fp|dwarf[,SIZE]\n"
	       "                       user stacks by frame pointers (fp, default), or\n"
	       "                       unwound with libdw from a copy of the top SIZE\n"
	       "                       bytes of the user stack (default %u, at most\n"
	       "                       %u) and the user registers, as perf record\n"
	       "                       --call-graph dwarf: code without frame pointers\n"
	       "\n"
	       "Privilege: as perf record -a: CAP_PERFMON, or perf_event_paranoid <= 0\n"
	       "(Debian's default 3: CAP_SYS_ADMIN); see docs/profiling.md.\n"
	       "User frames are walked by frame pointers unless --call-graph dwarf: code\n"
	       "built without them then shows short stacks.\n",
	       PROFILE_HZ_DEFAULT, PROFILE_TOP_DEFAULT, PROFILE_PAGES_DEFAULT,
	       PROFILE_STACK_USER, PEA_STACK_USER_MAX);
	return PEA_EXIT_OK;
}

/* "fp", "dwarf" or "dwarf,SIZE" (rounded up to 8 bytes, as perf). */
static int prof_parse_call_graph(struct profiler *p, const char *arg)
{
	unsigned int v;

	if (!strcmp(arg, "fp")) {
		p->dwarf = false;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ','))
		return -1;
	p->dwarf = true;
	p->stack_user = PROFILE_STACK_USER;
	if (!arg[5])
		return 0;
	if (tool_parse_uint(arg + 6, PEA_STACK_USER_MAX, &v) || !v)
		return -1;
	p->stack_user = (v + 7) & ~7U;
	/* As perf, cut to what a record with the kernel stack holds. */
	if (p->stack_user > PROFILE_STACK_ROOM)
		p->stack_user = PROFILE_STACK_ROOM;
	return 0;
}

static int prof_parse(struct profiler *p, int argc, char **argv)
{
	enum { O_KONLY = 256, O_UONLY, O_TOP, O_PAGES, O_FOLDED, O_SVG,
	       O_RECORDS, O_BUILD_IDS, O_CALL_GRAPH };
	static const struct option opts[] = {
		{ "freq", required_argument, NULL, 'F' },
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "kernel-only", no_argument, NULL, O_KONLY },
		{ "user-only", no_argument, NULL, O_UONLY },
		{ "top", required_argument, NULL, O_TOP },
		{ "pages", required_argument, NULL, O_PAGES },
		{ "folded", required_argument, NULL, O_FOLDED },
		{ "svg", required_argument, NULL, O_SVG },
		{ "records", no_argument, NULL, O_RECORDS },
		{ "build-ids", required_argument, NULL, O_BUILD_IDS },
		{ "call-graph", required_argument, NULL, O_CALL_GRAPH },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+F:p:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (tool_parse_uint(optarg, 1000000, &p->hz) || !p->hz)
				return tool_usage("profile", "bad frequency '%s'",
						  optarg);
			break;
		case 'p':
			if (tool_parse_uint(optarg, 0x7fffffff, &v) || !v)
				return tool_usage("profile", "bad pid '%s'",
						  optarg);
			p->pid = (int)v;
			break;
		case 'd':
			if (tool_parse_seconds(optarg, &p->secs) ||
			    p->secs <= 0)
				return tool_usage("profile", "bad duration '%s'",
						  optarg);
			break;
		case O_KONLY:
			p->kernel_only = true;
			break;
		case O_UONLY:
			p->user_only = true;
			break;
		case O_TOP:
			if (tool_parse_uint(optarg, 1000000, &p->top))
				return tool_usage("profile", "bad --top '%s'",
						  optarg);
			break;
		case O_PAGES:
			if (tool_parse_uint(optarg, 1U << 20, &p->pages) ||
			    !p->pages || (p->pages & (p->pages - 1)))
				return tool_usage("profile",
						  "--pages must be a power of two, not '%s'",
						  optarg);
			break;
		case O_FOLDED:
			p->folded = optarg;
			break;
		case O_SVG:
			p->svg = optarg;
			break;
		case O_RECORDS:
			p->records = true;
			break;
		case O_BUILD_IDS:
			p->build_ids = optarg;
			break;
		case O_CALL_GRAPH:
			if (prof_parse_call_graph(p, optarg))
				return tool_usage("profile",
						  "bad --call-graph '%s' (fp, dwarf or dwarf,SIZE with SIZE 8..%u)",
						  optarg, PEA_STACK_USER_MAX);
			break;
		case 'h':
			prof_help();
			return -1;
		default:
			return tool_usage("profile", "unknown option");
		}
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--"))
			return tool_usage("profile", "unexpected '%s' (a command follows --)",
					  argv[optind]);
		p->cmd = argv + optind;
	}
	if (p->dwarf && p->kernel_only)
		return tool_usage("profile", "--call-graph dwarf unwinds user stacks, which --kernel-only leaves out");
	if (p->kernel_only && p->user_only)
		return tool_usage("profile", "--kernel-only and --user-only exclude each other");
	if (p->pid && p->cmd)
		return tool_usage("profile", "-p and a command exclude each other");
	return 0;
}

/* ---- records ---- */

/*
 * Whose maps name a sample of @tgid with @comm and user instruction
 * pointer @uip (0: none): under -p, once the process has exec'd, the
 * program it ran then. An exec sets the comm (to the new file's name), so
 * a comm of one program and not the other tells them apart. A comm both
 * had (a program exec'ing itself, or one of the same name): the program
 * whose maps alone hold @uip (an exec lays the memory out anew: a PIE's
 * code, the vDSO); else the earlier program's while the rings are read
 * right after the exec was seen (p->draining), else the current one's.
 */
static int prof_gen_key(const struct profiler *p, int tgid, const char *comm,
			__u64 uip)
{
	int cur = p->ngens - 1, i;
	bool now, before, in_now, in_before;

	if (!p->pid || tgid != p->pid || p->ngens < 2)
		return tgid;
	now = !strncmp(comm, p->gens[cur].comm, sizeof(p->gens[cur].comm));
	before = !strncmp(comm, p->gens[cur - 1].comm,
			  sizeof(p->gens[cur].comm));
	if (now && !before)
		return tgid;
	if (before && !now)
		return p->gens[cur - 1].key;
	for (i = cur - 2; !now && i >= 0; i--)
		if (!strncmp(comm, p->gens[i].comm, sizeof(p->gens[i].comm)))
			return p->gens[i].key;
	if (now && uip) {
		in_now = usyms_covers(p->us, tgid, uip);
		in_before = usyms_covers(p->us, p->gens[cur - 1].key, uip);
		if (in_now != in_before)
			return in_now ? tgid : p->gens[cur - 1].key;
	}
	return p->draining ? p->gens[cur - 1].key : tgid;
}

/*
 * --call-graph dwarf: a record's user stack, unwound from its registers
 * and stack copy into @u (PROFILE_DEPTH entries), with the maps of the
 * process as snapshotted (taken now for a process seen the first time).
 * Returns the entries, 0 without a user context.
 */
static int prof_dwarf_ustack(struct profiler *p,
			     const struct pea_sample_record *r,
			     const unsigned char *data, __u32 size, __u64 *u)
{
	static __u64 buf[65536 / sizeof(__u64)];
	size_t off = sizeof(*r) + r->kstack_nr * sizeof(__u64);
	struct pea_user_regs *ur = (struct pea_user_regs *)buf;
	int key;

	if (!(r->flags & PEA_REC_F_UREGS)) {
		if (r->flags & PEA_REC_F_USER_MODE)
			p->uregs_missing++;
		return 0;
	}
	if (off + sizeof(*ur) > size || size - off > sizeof(buf))
		return -EINVAL;
	memcpy(buf, data + off, size - off);	/* aligned */
	if (r->tgid && !usyms_known(p->us, r->tgid))
		usyms_snap(p->us, r->tgid);
	key = prof_gen_key(p, r->tgid, r->comm, ur->regs[PEA_UREG_IP]);
	return udwunw_unwind(p->uw, key, ur, size - off, u, PROFILE_DEPTH);
}

static void prof_on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	static __u64 dips[PROFILE_DEPTH];
	struct profiler *p = ctx;
	struct pea_sample_record r;
	struct prof_sample *s;
	size_t nips;
	int dnr = 0;

	(void)cpu;
	if (size < sizeof(r)) {
		p->err = -EINVAL;
		return;
	}
	memcpy(&r, data, sizeof(r));
	nips = (size_t)r.kstack_nr + r.ustack_nr;
	if (!(r.flags & PEA_REC_F_SAMPLE) ||
	    sizeof(r) + nips * sizeof(__u64) > size) {
		p->err = -EINVAL;
		return;
	}
	if (p->dwarf) {
		dnr = prof_dwarf_ustack(p, &r, data, size, dips);
		if (dnr < 0) {
			p->err = dnr;
			return;
		}
		r.ustack_nr = dnr;
		nips = (size_t)r.kstack_nr + dnr;
	}
	if (p->n == PROFILE_SAMPLES_MAX) {
		p->dropped++;
		return;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4096;
		struct prof_sample *ns = realloc(p->s, cap * sizeof(*ns));

		if (!ns) {
			p->dropped++;
			return;
		}
		p->s = ns;
		p->cap = cap;
	}
	s = &p->s[p->n];
	s->ips = malloc(nips ? nips * sizeof(__u64) : 1);
	if (!s->ips) {
		p->dropped++;
		return;
	}
	if (p->dwarf) {
		memcpy(s->ips, (unsigned char *)data + sizeof(r),
		       r.kstack_nr * sizeof(__u64));
		memcpy(s->ips + r.kstack_nr, dips, dnr * sizeof(__u64));
	} else {
		memcpy(s->ips, (unsigned char *)data + sizeof(r),
		       nips * sizeof(__u64));
	}
	s->pid = r.pid;
	s->tgid = r.tgid;
	memcpy(s->comm, r.comm, sizeof(s->comm));
	s->comm[sizeof(s->comm) - 1] = '\0';
	s->knr = r.kstack_nr;
	s->unr = r.ustack_nr;
	s->symkey = prof_gen_key(p, s->tgid, s->comm,
				 r.ustack_nr ? s->ips[r.kstack_nr] : 0);
	s->weight = 1;
	p->n++;
	p->wsum++;
	/* A process seen for the first time: its maps now, while it lives. */
	if (r.ustack_nr && r.tgid && !usyms_known(p->us, r.tgid))
		usyms_snap(p->us, r.tgid);
	else if (p->pid && r.ustack_nr && s->symkey == p->pid) {
		char buf[FRAME_LEN];

		if (usyms_name(p->us, r.tgid, s->ips[r.kstack_nr], buf,
			       sizeof(buf)) == -ESRCH)
			p->resnap = true;
	}
}

static void prof_on_lost(void *ctx, int cpu, __u64 cnt)
{
	struct profiler *p = ctx;

	(void)cpu;
	p->lost += cnt;
}

/* ---- naming ---- */

static int prof_stacks(struct profiler *p, struct pea_stack_set *set,
		       const struct ksyms *ks)
{
	static char names[2 * PROFILE_DEPTH + 1][FRAME_LEN];
	const char *frames[2 * PROFILE_DEPTH + 1];
	enum pea_frame_kind kinds[2 * PROFILE_DEPTH + 1];
	size_t i;
	int j, n, err;

	for (i = 0; i < p->n; i++) {
		const struct prof_sample *s = &p->s[i];
		const __u64 *u = s->ips + s->knr;

		n = 0;
		snprintf(names[n], FRAME_LEN, "%s", s->comm[0] ? s->comm : "?");
		kinds[n++] = PEA_FRAME_PROCESS;
		/* Return addresses name their call: look one byte back. */
		for (j = s->unr - 1; j >= 0 && n < 2 * PROFILE_DEPTH; j--) {
			usyms_name(p->us, s->symkey, u[j] - (j ? 1 : 0),
				   names[n], FRAME_LEN);
			kinds[n++] = PEA_FRAME_USER;
		}
		for (j = s->knr - 1; j >= 0 && n < 2 * PROFILE_DEPTH + 1; j--) {
			ksyms_func(ks, s->ips[j] - (j ? 1 : 0), names[n],
				   FRAME_LEN);
			kinds[n] = strchr(names[n], '[') &&
				   strcmp(names[n], "[unknown]") ?
				   PEA_FRAME_MODULE : PEA_FRAME_KERNEL;
			n++;
		}
		for (j = 0; j < n; j++)
			frames[j] = names[j];
		err = pea_stacks_add(set, frames, kinds, n, s->weight);
		if (err)
			return err;
	}
	return 0;
}

static void prof_print(const struct profiler *p,
		       const struct pea_stack_set *set)
{
	struct pea_stack_view *v;
	unsigned int n, i, j, shown;
	__u64 total = pea_stacks_total(set);

	v = pea_stacks_sorted(set, &n);
	if (!v && n)
		return;
	shown = p->top && p->top < n ? p->top : n;
	for (i = 0; i < shown; i++) {
		printf("%10llu samples %5.1f%%  %s\n",
		       (unsigned long long)v[i].weight,
		       total ? 100.0 * v[i].weight / total : 0.0,
		       v[i].frames[0]);
		for (j = v[i].nframes; j-- > 1;)
			printf("        %s%s\n", v[i].frames[j],
			       v[i].kinds[j] == PEA_FRAME_KERNEL ||
			       v[i].kinds[j] == PEA_FRAME_MODULE ? " [k]" : "");
		printf("\n");
	}
	free(v);
}

/* ---- the child of -- CMD ---- */

static int prof_attach(struct profiler *p, int tid);

/*
 * What the child says with the link fd: -errno or 0, and the stack depths
 * it attached with (prof_attach() may have lowered them), which the
 * parent's table on the link needs.
 */
struct prof_link_msg {
	int err;
	unsigned int kdepth, udepth;
};

/* Send link fd @fd (or, if negative, that errno) over socket @sock. */
static void prof_send_link(struct profiler *p, int sock, int fd)
{
	struct prof_link_msg msg = {
		.err = fd < 0 ? fd : 0,
		.kdepth = p->kdepth, .udepth = p->udepth,
	};
	char buf[CMSG_SPACE(sizeof(int))];
	struct msghdr m = { 0 };
	struct iovec iov;

	iov.iov_base = &msg;
	iov.iov_len = sizeof(msg);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(buf, 0, sizeof(buf));
		m.msg_control = buf;
		m.msg_controllen = sizeof(buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (sendmsg(sock, &m, 0) < 0)
		_exit(127);
}

/* The link fd the child sent (its depths into @p), or -errno. */
static int prof_recv_link(struct profiler *p, int sock)
{
	struct prof_link_msg msg = { .err = -EIO };
	char buf[CMSG_SPACE(sizeof(int))];
	struct msghdr m = { 0 };
	struct cmsghdr *c;
	struct iovec iov;
	int fd;

	iov.iov_base = &msg;
	iov.iov_len = sizeof(msg);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = buf;
	m.msg_controllen = sizeof(buf);
	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != sizeof(msg))
		return -EIO;
	if (msg.err)
		return msg.err;
	p->kdepth = msg.kdepth;
	p->udepth = msg.udepth;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EIO;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * Fork CMD stopped before its exec; its pid, the go pipe in @go, a socket
 * in @sock. On 'a' from the go pipe the child attaches the sampler to
 * itself (its own thread group: the task rule without any other
 * process's ptrace check, as perf record -- CMD opens its events on its
 * own child, which it may trace) and sends the link fd back; on 'g' it
 * execs (the link fd is close-on-exec).
 */
static pid_t prof_fork(struct profiler *p, int *go, int *sock)
{
	int fds[2], sv[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;

		close(fds[1]);
		close(sv[0]);
		while (read(fds[0], &c, 1) == 1 && c == 'a')
			prof_send_link(p, sv[1], prof_attach(p, -1));
		if (c != 'g')
			_exit(127);
		execvp(p->cmd[0], p->cmd);
		fprintf(stderr, "pea: %s: %s\n", p->cmd[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	close(sv[1]);
	*go = fds[1];
	*sock = sv[0];
	return pid;
}

/* The process of task @tid (its tgid), or @tid if it cannot be read. */
static int prof_tgid(int tid)
{
	char path[64], line[128];
	int tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/*
 * -- CMD: process @tgid of the command has exec'd and is stopped there.
 * If its maps were read before (at an earlier exec, or at its first
 * record), what it has sampled until now was its earlier program: the
 * rings and the kernel's table are read now, and those samples keep the
 * earlier maps under another key (usyms_rekey()); then the new program's
 * are read. At most PROFILE_GENS_MAX execs are kept apart this way; after
 * them, as before, the new maps replace the old.
 */
static void prof_collect(struct profiler *p);

static void prof_cmd_exec(struct profiler *p, int tgid)
{
	int key = -1 - (int)p->cmd_execs;	/* no process's */
	size_t i;

	if (usyms_known(p->us, tgid) && p->cmd_execs < PROFILE_GENS_MAX) {
		pea_buffer__consume(p->pb);
		if (p->links)	/* not once they are closed, at the end */
			prof_collect(p);
		if (!usyms_rekey(p->us, tgid, key)) {
			p->cmd_execs++;
			for (i = 0; i < p->n; i++)
				if (p->s[i].symkey == tgid)
					p->s[i].symkey = key;
		}
	} else if (usyms_known(p->us, tgid)) {
		p->execs_past++;
	}
	usyms_snap(p->us, tgid);
}

/*
 * Handle the stops of the traced command and of every task it creates
 * (PTRACE_O_TRACEFORK, _VFORK, _CLONE: the sampler follows them too)
 * without blocking: a process's maps at its exec and at its tasks' exit
 * stops, where its memory is still there. Returns 1 once the command
 * itself is gone, else 0.
 */
static int prof_reap(struct profiler *p, int *status)
{
	int st, ev, sig;
	pid_t r;

	for (;;) {
		r = waitpid(-1, &st, WNOHANG | __WALL);
		if (r <= 0)
			return 0;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (r != p->child)
				continue;
			*status = st;
			return 1;
		}
		if (!WIFSTOPPED(st))
			continue;
		ev = st >> 16;
		sig = WSTOPSIG(st);
		if (ev == PTRACE_EVENT_EXEC) {
			prof_cmd_exec(p, prof_tgid(r));
			sig = 0;
		} else if (ev == PTRACE_EVENT_EXIT) {
			usyms_snap(p->us, prof_tgid(r));
			sig = 0;
		} else if (ev == PTRACE_EVENT_STOP && sig != SIGTRAP) {
			/* A group-stop: stay stopped, as without pea. */
			ptrace(PTRACE_LISTEN, r, 0, 0);
			continue;
		} else if (sig == SIGTRAP) {
			/* fork, clone, a new task's first stop */
			sig = 0;
		}
		ptrace(PTRACE_CONT, r, 0, (void *)(long)sig);
	}
}

/* ---- the command ---- */

/*
 * Attach the sampler: of task @tid (-1: the caller itself) and the tasks
 * it creates from then on (PEA_SAMPLE_F_TASK, as perf record -p or --
 * CMD), or of every CPU (@tid 0, as perf record -a). Returns the link fd
 * or -errno (said).
 */
static int prof_attach(struct profiler *p, int tid)
{
	struct pea_sample_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_SAMPLE_F_CLOEXEC | PEA_SAMPLE_F_FREQ |
		  (p->user_only ? PEA_SAMPLE_F_NO_KERNEL : 0) |
		  (p->kernel_only ? PEA_SAMPLE_F_NO_USER : 0) |
		  (tid ? PEA_SAMPLE_F_TASK : 0);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample = p->hz;
	a.filter_tgid = tid > 0 ? tid : 0;
	a.filter_cpu = -1;
	a.kstack_depth = p->user_only ? 0 : PROFILE_DEPTH;
	a.ustack_depth = p->kernel_only || p->dwarf ? 0 : PROFILE_DEPTH;
	if (p->dwarf) {
		a.flags |= PEA_SAMPLE_F_USER_REGS;
		a.stack_user = p->stack_user;
	}
	p->kdepth = a.kstack_depth;
	p->udepth = a.ustack_depth;
	fd = ioctl(p->map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, &a);
	if (fd < 0) {
		int err = errno;

		if (err == EOVERFLOW) {
			/* perf_event_max_stack is lower: ask for that much. */
			FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack",
					"re");
			unsigned int m = 0;

			if (f && fscanf(f, "%u", &m) == 1 && m) {
				if (a.kstack_depth)
					a.kstack_depth = m < PROFILE_DEPTH ?
							 m : PROFILE_DEPTH;
				if (a.ustack_depth)
					a.ustack_depth = m < PROFILE_DEPTH ?
							 m : PROFILE_DEPTH;
				fd = ioctl(p->map_fd,
					   PEA_MAP_IOC_ATTACH_SAMPLE, &a);
				err = errno;
				p->kdepth = a.kstack_depth;
				p->udepth = a.ustack_depth;
			}
			if (f)
				fclose(f);
			if (fd >= 0)
				return fd;
		}
		if (err == ESRCH && tid)
			return -err;	/* a thread gone meanwhile */
		if (err == EACCES && tid < 0)
			tool_err("sampling the command's kernel stacks needs perf_event_paranoid <= 1 or CAP_PERFMON (as perf record -- CMD; --user-only asks for less): %s",
				 strerror(err));
		else if (err == EACCES && tid)
			tool_err("sampling another process (task %d) needs CAP_PERFMON (or pea.task_ptrace=1 and ptrace access to it), and its kernel stacks perf_event_paranoid <= 1 (--user-only asks for less): %s",
				 tid, strerror(err));
		else if (err == EACCES)
			tool_err("sampling every CPU needs CAP_PERFMON or perf_event_paranoid <= 0 (as perf record -a): %s",
				 strerror(err));
		else if (err == EINVAL && p->hz > 1)
			tool_err("the sampler refused the attr (a frequency past kernel.perf_event_max_sample_rate?): %s",
				 strerror(err));
		else
			tool_explain_dev_error("attaching the sampler", -err);
		return -err;
	}
	return fd;
}

/* ---- counting in the kernel ---- */

/*
 * The table on the sampler's link (-p, -- CMD): keyed by comm and the
 * stacks sampled, no records. false when the kernel cannot (the records
 * then count).
 */
static bool prof_kernel_table(struct profiler *p)
{
	struct pea_agg_attr a;
	int n = 0;

	/*
	 * -p of a process of several threads has a link per thread (one
	 * table each would be per-thread memory): the records count. The
	 * whole system with user stacks: keyed by the process (comm, pid
	 * and two stacks would be 5 words, where the kernel takes 4), whose
	 * comm and maps are read when its first entry is.
	 */
	if (p->records || p->nlinks != 1 || p->dwarf)
		return false;
	p->kern_wide = !p->pid && !p->cmd && p->udepth;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_AGG_F_NO_RECORDS;
	a.max_keys = PROFILE_KEYS;
	a.keys[n++] = p->kern_wide ? PEA_AGG_KEY_PID : PEA_AGG_KEY_COMM;
	if (p->kdepth)
		a.keys[n++] = PEA_AGG_KEY_KSTACK;
	if (p->udepth)
		a.keys[n++] = PEA_AGG_KEY_USTACK;
	a.max_stacks = PROFILE_KEYS;
	/* Both depths are the same (prof_attach()). */
	a.stack_depth = p->kdepth ? p->kdepth : p->udepth;
	p->kern = !ioctl(p->links[0], PEA_LINK_IOC_AGG_CREATE, &a);
	return p->kern;
}

static int prof_stk_cmp(const void *x, const void *y)
{
	const struct pea_agg_stack *a = *(const struct pea_agg_stack *const *)x;
	const struct pea_agg_stack *b = *(const struct pea_agg_stack *const *)y;

	return (a->id > b->id) - (a->id < b->id);
}

static const struct pea_agg_stack *prof_stk(const struct pea_agg_stack **s,
					    size_t n, __u64 id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid]->id == id)
			return s[mid];
		if (s[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * kern_wide: the comm of process @tgid into @comm, read from /proc the
 * first time (with its maps), then kept: "swapper" for the idle tasks,
 * "[PID]" for a process gone before its first entry was read.
 */
static void prof_wide_comm(struct profiler *p, int tgid, char *comm)
{
	char path[64], buf[32] = "";
	struct prof_comm *c;
	size_t i;

	for (i = p->ncomms; i-- > 0;)
		if (p->comms[i].tgid == tgid) {
			memcpy(comm, p->comms[i].comm, 16);
			return;
		}
	if (!tgid) {
		snprintf(buf, sizeof(buf), "swapper");
	} else {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", tgid);
		f = fopen(path, "re");
		if (f && fgets(buf, sizeof(buf), f))
			buf[strcspn(buf, "\n")] = '\0';
		else
			snprintf(buf, sizeof(buf), "[%d]", tgid);
		if (f)
			fclose(f);
		if (!usyms_known(p->us, tgid))
			usyms_snap(p->us, tgid);
	}
	snprintf(comm, 16, "%s", buf);
	if (p->ncomms % 256 == 0) {
		c = realloc(p->comms, (p->ncomms + 256) * sizeof(*c));
		if (!c)
			return;
		p->comms = c;
	}
	p->comms[p->ncomms].tgid = tgid;
	memcpy(p->comms[p->ncomms++].comm, comm, 16);
}

/* One table entry as a sample of weight @e->count. */
static void prof_add_entry(struct profiler *p, const struct pea_agg_entry *e,
			   const struct pea_agg_stack **stk, size_t nstk)
{
	const struct pea_agg_stack *ks = NULL, *us = NULL;
	struct prof_sample *s;
	unsigned int w = p->kern_wide ? 1 : 2;
	size_t knr, unr;

	if (p->kdepth && e->key[w++] && !(ks = prof_stk(stk, nstk,
							  e->key[w - 1])))
		goto bad;
	if (p->udepth && e->key[w++] && !(us = prof_stk(stk, nstk,
							  e->key[w - 1])))
		goto bad;
	knr = ks ? ks->nr : 0;
	unr = us ? us->nr : 0;
	if (p->n == PROFILE_SAMPLES_MAX)
		goto bad;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4096;
		struct prof_sample *ns = realloc(p->s, cap * sizeof(*ns));

		if (!ns)
			goto bad;
		p->s = ns;
		p->cap = cap;
	}
	s = &p->s[p->n];
	s->ips = malloc(knr + unr ? (knr + unr) * sizeof(__u64) : 1);
	if (!s->ips)
		goto bad;
	if (knr)
		memcpy(s->ips, ks->ips, knr * sizeof(__u64));
	if (unr)
		memcpy(s->ips + knr, us->ips, unr * sizeof(__u64));
	s->tgid = p->cmd ? p->child : p->pid;	/* 0: --kernel-only, every task */
	if (p->kern_wide) {
		s->tgid = (int)e->key[0];
		prof_wide_comm(p, s->tgid, s->comm);
	} else {
		memcpy(s->comm, e->key, sizeof(s->comm));
	}
	s->pid = s->tgid;
	s->comm[sizeof(s->comm) - 1] = '\0';
	s->knr = knr;
	s->unr = unr;
	s->symkey = prof_gen_key(p, s->tgid, s->comm, unr ? s->ips[knr] : 0);
	s->weight = e->count;
	p->n++;
	p->wsum += e->count;
	/* -p: a library loaded since the snapshot: another one. */
	if (p->pid && unr && s->symkey == p->pid) {
		char buf[FRAME_LEN];

		if (usyms_name(p->us, s->tgid, s->ips[knr], buf,
			       sizeof(buf)) == -ESRCH)
			p->resnap = true;
	}
	return;
bad:
	/* An id the read did not resolve, or no memory: said at the end. */
	p->dropped += e->count;
}

/* Read and clear the table into the samples. */
static void prof_collect(struct profiler *p)
{
	const struct pea_agg_stack **stk = NULL;
	const unsigned char *q;
	struct pea_agg_read r;
	size_t i;

	if (!p->kern)
		return;
	for (;;) {
		memset(&r, 0, sizeof(r));
		r.size = sizeof(r);
		r.flags = PEA_AGG_READ_F_CLEAR;
		r.buf = (uintptr_t)p->kbuf;
		r.buf_len = p->kbuf_len;
		r.stacks = (uintptr_t)p->sbuf;
		r.stacks_len = p->sbuf_len;
		if (!ioctl(p->links[0], PEA_LINK_IOC_AGG_READ, &r))
			break;
		if (errno != ENOSPC) {
			tool_err("reading the kernel's table: %s",
				 strerror(errno));
			return;
		}
		/* Nothing was cleared: again with room for all of it. */
		if ((size_t)r.nr_entries * r.entry_size > p->kbuf_len) {
			free(p->kbuf);
			p->kbuf_len = (size_t)r.nr_entries * r.entry_size +
				      65536;
			p->kbuf = malloc(p->kbuf_len);
		}
		if (r.stacks_size > p->sbuf_len) {
			free(p->sbuf);
			p->sbuf_len = r.stacks_size + 65536;
			p->sbuf = malloc(p->sbuf_len);
		}
		if ((r.nr_entries && !p->kbuf) || (r.stacks_size && !p->sbuf)) {
			p->kbuf_len = p->kbuf ? p->kbuf_len : 0;
			p->sbuf_len = p->sbuf ? p->sbuf_len : 0;
			tool_err("out of memory reading the kernel's table");
			return;
		}
	}
	p->khits += r.hits;
	p->kdropped += r.dropped;
	p->kstack_dropped += r.stack_dropped;
	p->kerrors += r.errors;
	if (r.nr_stacks) {
		stk = malloc(r.nr_stacks * sizeof(*stk));
		if (!stk) {
			p->dropped += r.hits - r.dropped - r.errors;
			return;
		}
	}
	for (i = 0, q = p->sbuf; i < r.nr_stacks; i++) {
		stk[i] = (const void *)q;
		q += sizeof(*stk[i]) + stk[i]->nr * sizeof(__u64);
	}
	qsort(stk, r.nr_stacks, sizeof(*stk), prof_stk_cmp);
	for (i = 0; i < r.nr_entries; i++)
		prof_add_entry(p, (const struct pea_agg_entry *)
			       ((const char *)p->kbuf + i * r.entry_size),
			       stk, r.nr_stacks);
	free(stk);
}

/* Keep link @fd. Return: 0 or -ENOMEM. */
static int prof_keep_link(struct profiler *p, int fd)
{
	int *l = realloc(p->links, (p->nlinks + 1) * sizeof(*l));

	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	p->links = l;
	p->links[p->nlinks++] = fd;
	return 0;
}

/*
 * -p PID: a task sampler on each thread of the process (as perf record
 * -p opens one event per thread); threads created later are inherited.
 * A thread that exits meanwhile is skipped. Return: 0 or -errno.
 */
static int prof_attach_threads(struct profiler *p, int pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return prof_attach(p, pid) < 0 ? -ESRCH : 0;
	while (!err && (d = readdir(dir))) {
		int tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		fd = prof_attach(p, tid);
		if (fd == -ESRCH)
			continue;
		err = fd < 0 ? fd : prof_keep_link(p, fd);
	}
	closedir(dir);
	if (!err && !p->nlinks) {
		tool_err("no process %d", pid);
		err = -ESRCH;
	}
	return err;
}

/*
 * @pid's memory layout from /proc/PID/stat (fields 26-28 and 45-51; zeroes
 * where the kernel does not show them to this reader).
 */
static void prof_layout_read(int pid, unsigned long long *layout)
{
	static const int field[PROF_LAYOUT_N] = { 26, 27, 28, 45, 46, 47, 48,
						   49, 50, 51 };
	char path[64], buf[1024], *q;
	int f, k = 0;
	FILE *in;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	in = fopen(path, "re");
	if (!in)
		return;
	q = fgets(buf, sizeof(buf), in) ? strrchr(buf, ')') : NULL;
	fclose(in);
	/* Field 3 (the state) follows the comm's ')'. */
	for (f = 3; q && k < PROF_LAYOUT_N; f++) {
		q = strchr(q, ' ');
		if (!q)
			break;
		q++;
		if (f == field[k])
			layout[k++] = strtoull(q, NULL, 10);
	}
}

/*
 * -p: the program @pid runs now (/proc/PID/exe's file, and its memory's
 * layout) and its comm.
 */
static int prof_gen_read(int pid, struct prof_gen *g)
{
	char path[64];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &st))
		return -errno;
	memset(g, 0, sizeof(*g));
	g->dev = st.st_dev;
	g->ino = st.st_ino;
	prof_layout_read(pid, g->layout);
	g->key = pid;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, g->comm, sizeof(g->comm) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	g->comm[strcspn(g->comm, "\n")] = '\0';
	return 0;
}

/*
 * -p: has the process exec'd since the last look (another file at
 * /proc/PID/exe, or the same file with its memory laid out anew)? Then
 * the maps read so far are kept for the samples taken before (their key
 * moves to a negative one), the new ones are read, and what the rings and
 * the kernel's table hold is read at once; those samples, and the ones
 * read since the last look, are split by comm and user instruction
 * pointer (prof_gen_key()). Looked at every pass of the loop (100 ms at
 * most apart). A program exec'ing the same file with the same layout
 * (no address randomisation) has the same maps: they name both.
 */
static void prof_check_exec(struct profiler *p)
{
	struct prof_gen g, *cur = &p->gens[p->ngens - 1];
	int key = -p->ngens;	/* no process's */
	bool rekeyed;
	size_t i;

	if (!p->ngens || prof_gen_read(p->pid, &g) ||
	    (g.dev == cur->dev && g.ino == cur->ino &&
	     !memcmp(g.layout, cur->layout, sizeof(g.layout))))
		return;
	if (p->ngens == PROFILE_GENS_MAX) {
		/* Past the bound: the last program's maps name the rest. */
		p->execs_past++;
		*cur = g;
		usyms_snap(p->us, p->pid);
		return;
	}
	rekeyed = !usyms_rekey(p->us, p->pid, key);
	cur->key = key;
	p->gens[p->ngens++] = g;
	usyms_snap(p->us, p->pid);
	p->draining = true;
	/* Read before this look: the earlier program's, or the new one's. */
	for (i = 0; rekeyed && i < p->n; i++)
		if (p->s[i].symkey == p->pid)
			p->s[i].symkey = prof_gen_key(p, p->s[i].tgid,
						      p->s[i].comm,
						      p->s[i].unr ?
						      p->s[i].ips[p->s[i].knr] :
						      0);
	pea_buffer__consume(p->pb);
	prof_collect(p);
	p->draining = false;
}

/* Whether @pid has exited: no such process, or a zombie. */
static bool prof_pid_gone(int pid)
{
	char path[64], buf[512], *rp;
	bool gone = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	if (fgets(buf, sizeof(buf), f)) {
		rp = strrchr(buf, ')');
		gone = !rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X';
	}
	fclose(f);
	return gone;
}

/*
 * The records path's counts once every link is closed: a sampler still
 * running between a link's PEA_LINK_IOC_INFO and its close (every CPU,
 * or -p of a live process at -d's end) writes records the info did not
 * count. The rings' own counts (PEA_EVENT_IOC_STATS: records written and
 * dropped since they were opened; the map is the tool's, its samplers'
 * alone) hold every one of them: overflows are those plus the errors.
 */
static void prof_ring_counts(struct profiler *p, struct pea_link_info *li)
{
	__u64 records = 0, lost = 0;
	size_t i;

	for (i = 0; i < pea_buffer__buffer_cnt(p->pb); i++) {
		struct pea_event_stats st;

		memset(&st, 0, sizeof(st));
		if (ioctl(pea_buffer__buffer_fd(p->pb, i), PEA_EVENT_IOC_STATS,
			  &st))
			return;		/* the links' counts, then */
		records += st.records;
		lost += st.lost;
	}
	li->written = records;
	li->dropped = lost;
	li->hits = li->filtered + records + lost + li->errors;
}

static int prof_run(struct profiler *p)
{
	LIBPEA_OPTS(pea_buffer_opts, opts);
	struct pea_link_info li, sum;
	__u64 t_end = 0, t_read;
	__u64 n_before_exit = 0;
	size_t i;
	int status = 0, go = -1, sock = -1, ncpus, ret;
	bool gone = false;

	ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	p->map_fd = pea_map_create(NULL, ncpus, 0);
	if (p->map_fd < 0) {
		tool_explain_dev_error("creating a map", p->map_fd);
		return PEA_EXIT_ERR;
	}
	opts.wakeup_watermark = (__u32)(p->pages * sysconf(_SC_PAGESIZE) / 4);
	p->pb = pea_buffer__new(p->map_fd, p->pages, prof_on_sample,
				prof_on_lost, p, &opts);
	if (!p->pb) {
		tool_explain_dev_error("setting up the rings", -errno);
		return PEA_EXIT_ERR;
	}
	if (p->pid && usyms_snap(p->us, p->pid) == -ENOENT) {
		tool_err("no process %d", p->pid);
		return PEA_EXIT_ERR;
	}
	if (p->pid && !prof_gen_read(p->pid, &p->gens[0]))
		p->ngens = 1;
	if (p->cmd) {
		p->child = prof_fork(p, &go, &sock);
		if (p->child < 0) {
			tool_err("fork: %s", strerror(-p->child));
			return PEA_EXIT_ERR;
		}
		if (ptrace(PTRACE_SEIZE, p->child, 0,
			   (void *)(long)(PTRACE_O_TRACEEXEC |
					  PTRACE_O_TRACEEXIT |
					  PTRACE_O_TRACEFORK |
					  PTRACE_O_TRACEVFORK |
					  PTRACE_O_TRACECLONE |
					  PTRACE_O_EXITKILL)))
			tool_err("cannot trace the command (%s): its maps are read when its records are",
				 strerror(errno));
	}
	if (p->pid) {
		ret = prof_attach_threads(p, p->pid);
	} else if (p->cmd) {
		ret = write(go, "a", 1) == 1 ? prof_recv_link(p, sock) : -EIO;
		close(sock);
		if (ret >= 0)
			ret = prof_keep_link(p, ret);
		else if (ret == -EIO)
			tool_err("the command is gone");
	} else {
		ret = prof_attach(p, 0);
		if (ret >= 0)
			ret = prof_keep_link(p, ret);
	}
	if (ret < 0) {
		if (p->child > 0) {
			kill(p->child, SIGKILL);
			waitpid(p->child, NULL, __WALL);
		}
		return PEA_EXIT_ERR;
	}
	prof_kernel_table(p);
	if (p->secs)
		t_end = tool_now_ns() + (__u64)(p->secs * 1e9);
	t_read = tool_now_ns() + 1000000000ULL;
	if (go >= 0) {
		if (write(go, "g", 1) != 1)
			tool_err("cannot start the command");
		close(go);
	}
	while (!prof_stop && !gone) {
		ret = pea_buffer__poll(p->pb, 100);
		if (ret < 0 && ret != -EINTR) {
			tool_err("reading the rings: %s", strerror(-ret));
			break;
		}
		if (p->child > 0 && prof_reap(p, &status))
			gone = true;
		if (p->pid && prof_pid_gone(p->pid))
			gone = true;
		if (gone)
			n_before_exit = p->wsum;
		if (p->pid && !gone)
			prof_check_exec(p);
		if (p->resnap) {
			usyms_snap(p->us, p->pid);
			p->resnap = false;
		}
		if (p->kern && tool_now_ns() >= t_read) {
			prof_collect(p);
			/* Every process: often, to read its maps alive. */
			t_read += p->kern_wide ? 200000000ULL : 1000000000ULL;
		}
		if (t_end && tool_now_ns() >= t_end)
			break;
	}
	prof_collect(p);
	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < p->nlinks; i++) {
		memset(&li, 0, sizeof(li));
		ioctl(p->links[i], PEA_LINK_IOC_INFO, &li);
		close(p->links[i]);
		sum.hits += li.hits;
		sum.filtered += li.filtered;
		sum.written += li.written;
		sum.errors += li.errors;
		sum.dropped += li.dropped;
	}
	li = sum;
	free(p->links);
	p->links = NULL;
	pea_buffer__consume(p->pb);
	if (!p->kern)
		prof_ring_counts(p, &li);
	if (p->child > 0 && !gone) {
		kill(p->child, SIGTERM);
		while (!prof_reap(p, &status))
			usleep(10000);
	}
	/*
	 * With a table, its hits are overflows the link does not count, and
	 * those past its keys or stacks (or unreadable) are lost samples.
	 */
	if (p->kern)
		fprintf(stderr,
			"pea profile: %llu samples, %llu lost, overflows %llu, complete (in-kernel): %llu counted in the kernel (%llu past its %u keys or stacks, %llu of them for the stacks), records %llu%s\n",
			(unsigned long long)p->wsum,
			(unsigned long long)(p->lost + p->kdropped +
					     p->kerrors),
			(unsigned long long)(p->khits + li.hits - li.filtered),
			(unsigned long long)p->khits,
			(unsigned long long)p->kdropped, PROFILE_KEYS,
			(unsigned long long)p->kstack_dropped,
			(unsigned long long)li.written,
			p->dropped ? ", some not kept (memory)" : "");
	else
		fprintf(stderr,
			"pea profile: %llu samples, %llu lost, overflows %llu (records %llu, dropped by the ring %llu)%s\n",
			(unsigned long long)p->wsum,
			(unsigned long long)p->lost,
			(unsigned long long)(li.hits - li.filtered),
			(unsigned long long)li.written,
			(unsigned long long)li.dropped,
			p->dropped ? ", some not kept (memory)" : "");
	if (gone)
		fprintf(stderr, "pea profile: %llu samples read after the process exited\n",
			(unsigned long long)(p->wsum - n_before_exit));
	if (p->ngens > 1)
		fprintf(stderr, "pea profile: process %d exec'd %u time(s): each program's frames named by its own maps%s\n",
			p->pid, p->ngens - 1 + p->execs_past,
			p->execs_past ? " for the first 64 programs; the last maps name the rest" : "");
	if (p->cmd && p->execs_past)
		fprintf(stderr, "pea profile: %u exec(s) past the first %u: frames before them named by the maps read at them\n",
			p->execs_past, PROFILE_GENS_MAX);
	if (p->dwarf)
		fprintf(stderr, "pea profile: user stacks unwound with libdw from %u bytes of stack%s\n",
			p->stack_user,
			p->uregs_missing ? " (some user samples had no registers)" : "");
	if (p->err)
		tool_err("malformed sample records: %s", strerror(-p->err));
	return PEA_EXIT_OK;
}

static int prof_output(struct profiler *p)
{
	struct pea_stack_set *set = pea_stacks_new();
	struct ksyms *ks = p->user_only ? NULL : ksyms_load();
	int err, ret = PEA_EXIT_OK;
	FILE *f;

	if (!set) {
		tool_err("out of memory");
		ksyms_free(ks);
		return PEA_EXIT_ERR;
	}
	err = prof_stacks(p, set, ks);
	if (err) {
		tool_err("counting the stacks: %s", strerror(-err));
		ret = PEA_EXIT_ERR;
		goto out;
	}
	prof_print(p, set);
	if (p->folded) {
		f = fopen(p->folded, "we");
		err = f ? pea_stacks_write_folded(set, f) : -errno;
		if (f && fclose(f) && !err)
			err = -errno;
		if (err) {
			tool_err("%s: %s", p->folded, strerror(-err));
			ret = PEA_EXIT_ERR;
		}
	}
	if (p->svg) {
		f = fopen(p->svg, "we");
		err = f ? pea_stacks_write_svg(set, f, "pea profile",
					       "samples") : -errno;
		if (f && fclose(f) && !err)
			err = -errno;
		if (err) {
			tool_err("%s: %s", p->svg, strerror(-err));
			ret = PEA_EXIT_ERR;
		}
	}
	if (p->build_ids) {
		/* After prof_stacks(): the files its frames were named in. */
		f = fopen(p->build_ids, "we");
		err = f ? usyms_write_build_ids(p->us, f) : -errno;
		if (f && fclose(f) && err >= 0)
			err = -errno;
		if (err < 0) {
			tool_err("%s: %s", p->build_ids, strerror(-err));
			ret = PEA_EXIT_ERR;
		}
	}
out:
	pea_stacks_free(set);
	ksyms_free(ks);
	return ret;
}

int cmd_profile(int argc, char **argv)
{
	struct profiler p = {
		.hz = PROFILE_HZ_DEFAULT, .top = PROFILE_TOP_DEFAULT,
		.pages = PROFILE_PAGES_DEFAULT, .map_fd = -1,
	};
	struct sigaction sa;
	size_t i;
	int ret;

	ret = prof_parse(&p, argc, argv);
	if (ret)
		return ret < 0 ? PEA_EXIT_OK : ret;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = prof_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	p.us = usyms_new();
	p.uw = p.us ? udwunw_new(p.us) : NULL;
	if (!p.uw) {
		tool_err("out of memory");
		return PEA_EXIT_ERR;
	}
	ret = prof_run(&p);
	if (ret == PEA_EXIT_OK)
		ret = prof_output(&p);
	pea_buffer__free(p.pb);
	if (p.map_fd >= 0)
		close(p.map_fd);
	for (i = 0; i < p.n; i++)
		free(p.s[i].ips);
	free(p.s);
	free(p.kbuf);
	free(p.sbuf);
	free(p.comms);
	udwunw_free(p.uw);
	usyms_free(p.us);
	return ret;
}
