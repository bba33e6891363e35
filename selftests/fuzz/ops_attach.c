// SPDX-License-Identifier: GPL-2.0
/*
 * test_fuzz: the producers beyond kprobes. Tracepoint, uprobe, netfilter
 * and fprobe links attached with random attrs (filters, predicates on
 * random offsets, kernel stacks, captures, ids, priorities, packet
 * lengths; on uprobes, random fetch chains and predicates on them; on
 * tracepoints, chains from the event's fields and predicates on them), one
 * attr in four (uprobes: three) broken in a way the ioctl must refuse
 * with a known errno whatever else is random. Each link that attaches goes into the fd table, where
 * the other families read, ioctl and close it at random; the op then
 * makes its producer fire.
 *
 * Uprobes go only on the first instruction of fz_uprobe_target() in this
 * very program (a random offset could land inside an instruction, which
 * is the prober's own crash, not the kernel's).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/pea.h>
#include "fuzz.h"

#define FZ_MAX_LINKS	16	/* links of every kind in the fd table */
#define FZ_NO_MAP	INT_MIN	/* fz_attach_cmd(): no map to attach to */

/* Trace events to attach to: frequent, rare, with strings and without. */
static const char *const fz_events[] = {
	"syscalls/sys_enter_getppid", "syscalls/sys_exit_read",
	"raw_syscalls/sys_enter", "sched/sched_process_fork",
	"signal/signal_generate", "sched/sched_switch",
};

#define FZ_NR_EVENTS ARRAY_SIZE(fz_events)

static pthread_mutex_t fz_attach_init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool fz_attach_inited;
static int fz_event_ids[FZ_NR_EVENTS];	/* 0: not in this kernel */

/* Each event's integer and pointer fields: where a fetch chain may start. */
#define FZ_FIELDS_MAX	8
struct fz_field {
	__u16 offset, size;
};
static struct fz_field fz_fields[FZ_NR_EVENTS][FZ_FIELDS_MAX];
static unsigned int fz_nfields[FZ_NR_EVENTS];
static __u64 fz_target_offset;		/* file offset of fz_uprobe_target */

/* Where a uprobe may go; the op calls it after attaching. */
__attribute__((noinline)) long fz_uprobe_target(long a, const char *s)
{
	__asm__ volatile("" : : "r"(s) : "memory");
	return a + (s ? s[0] : 0);
}

static int fz_read_event_id(const char *event)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events",
	};
	char path[256], buf[32];
	unsigned int i;
	ssize_t n;
	int fd;

	for (i = 0; i < ARRAY_SIZE(roots); i++) {
		snprintf(path, sizeof(path), "%s/%s/id", roots[i], event);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			return atoi(buf);
		}
	}
	return 0;
}

/*
 * @event's fields of 1, 2, 4 or 8 bytes past the common ones that are no
 * array or string in the entry, from its format, into fz_fields[@i].
 */
static void fz_read_fields(unsigned int i, const char *event)
{
	char path[256], line[512];
	unsigned int off, size;
	const char *decl;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/format",
		 event);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && fz_nfields[i] < FZ_FIELDS_MAX) {
		decl = strstr(line, "field:");
		if (!decl || strchr(decl, '[') || strstr(decl, "__data_loc") ||
		    strstr(decl, "__rel_loc") || strstr(decl, "common_"))
			continue;
		decl = strstr(decl, "offset:");
		if (!decl || sscanf(decl, "offset:%u;\tsize:%u;", &off,
				    &size) != 2 ||
		    (size != 1 && size != 2 && size != 4 && size != 8))
			continue;
		fz_fields[i][fz_nfields[i]].offset = (__u16)off;
		fz_fields[i][fz_nfields[i]++].size = (__u16)size;
	}
	fclose(f);
}

/* fz_uprobe_target's file offset, from the mapping that holds it. */
static __u64 fz_find_target_offset(void)
{
	unsigned long addr = (unsigned long)fz_uprobe_target;
	unsigned long start, end, pgoff;
	char line[512], perms[8];
	__u64 off = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms,
			   &pgoff) != 4)
			continue;
		if (addr >= start && addr < end && perms[2] == 'x') {
			off = addr - start + pgoff;
			break;
		}
	}
	fclose(f);
	return off;
}

/* ---- fprobes ---- */

/*
 * Functions an fprobe link may go on: ordinary system-call paths with an
 * ftrace location, none of which ftrace, kprobes, NMIs or printk call
 * themselves (ops_prod.c's kprobe symbols, whole functions here).
 */
static const char *const fz_fp_symbols[] = {
	"do_sys_openat2", "ksys_read", "ksys_write", "vfs_read", "vfs_write",
	"__x64_sys_getpid", "__x64_sys_getppid", "__x64_sys_sched_yield",
	"__x64_sys_close", "__x64_sys_ioctl", "do_sys_poll", "do_epoll_wait",
};

#define FZ_NR_FP_SYMBOLS ARRAY_SIZE(fz_fp_symbols)

/* Those kallsyms has (a name it has not would be ENOENT first). */
static const char *fz_fp_avail[FZ_NR_FP_SYMBOLS];
static unsigned int fz_nr_fp_avail;

static void fz_fp_find_symbols(void)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	bool seen[FZ_NR_FP_SYMBOLS] = { false };
	FILE *f = fopen("/proc/kallsyms", "re");
	unsigned int i;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) != 3 ||
		    (type != 't' && type != 'T'))
			continue;
		for (i = 0; i < FZ_NR_FP_SYMBOLS; i++)
			if (!seen[i] && !strcmp(sym, fz_fp_symbols[i])) {
				seen[i] = true;
				fz_fp_avail[fz_nr_fp_avail++] = fz_fp_symbols[i];
			}
	}
	if (f)
		fclose(f);
}

static void fz_attach_init(void)
{
	unsigned int i;

	pthread_mutex_lock(&fz_attach_init_lock);
	if (!fz_attach_inited) {
		for (i = 0; i < FZ_NR_EVENTS; i++) {
			fz_event_ids[i] = fz_read_event_id(fz_events[i]);
			fz_read_fields(i, fz_events[i]);
		}
		fz_target_offset = fz_find_target_offset();
		fz_fp_find_symbols();
		fz_attach_inited = true;
	}
	pthread_mutex_unlock(&fz_attach_init_lock);
}

/*
 * Put a new link fd into the table (or close it when the table is full),
 * then make it fire with @fire.
 */
static void fz_keep_link(struct fz_rng *r, int fd, void (*fire)(void))
{
	int slot = fz_fd_lock_free(r);

	if (slot < 0) {
		close(fd);
		return;
	}
	fz_fds[slot].fd = fd;
	fz_fds[slot].kind = FZ_LINK;
	fz_fd_unlock(slot);
	if (fire && fz_chance(r, 2))
		fire();
}

/*
 * Attach @cmd with @attr on a random map: the link fd, -errno, or
 * FZ_NO_MAP when the table holds no map.
 */
static int fz_attach_cmd(struct fz_rng *r, unsigned long cmd, void *attr)
{
	int s = fz_fd_lock(r, FZ_MAP), fd;

	if (s < 0)
		return FZ_NO_MAP;
	fd = ioctl(fz_fds[s].fd, cmd, attr);
	if (fd < 0)
		fd = -errno;
	fz_fd_unlock(s);
	return fd;
}

/* ---- tracepoints ---- */

static void fz_fire_tp(void)
{
	pid_t pid;

	syscall(SYS_getppid);
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void fz_random_pred(struct fz_rng *r, struct pea_tp_pred *p)
{
	static const __u16 num_sizes[] = { 1, 2, 4, 8 };

	memset(p, 0, sizeof(*p));
	p->offset = (__u16)fz_below(r, 96);
	p->kind = 1 + (__u8)fz_below(r, 5);
	switch (p->kind) {
	case PEA_TP_FIELD_UINT:
	case PEA_TP_FIELD_SINT:
		p->size = num_sizes[fz_below(r, 4)];
		p->op = PEA_TP_OP_EQ + (__u8)fz_below(r, 5);
		p->value = fz_u64(r);
		return;
	case PEA_TP_FIELD_STR:
		p->size = 1 + (__u16)fz_below(r, 64);
		break;
	default:
		p->size = 4;	/* __data_loc, __rel_loc */
		break;
	}
	p->op = fz_chance(r, 3) ? PEA_TP_OP_GLOB :
		PEA_TP_OP_EQ + (__u8)fz_below(r, 2);
	fz_fill(r, p->str, 1 + fz_below(r, PEA_TP_STR_MAX - 1));
	p->str[PEA_TP_STR_MAX - 1] = 0;
}

static __u64 fz_fit(__u64 v, __u8 type);

/*
 * A context term (PEA_TP_FIELD_CTX): the comm with a random string or
 * pattern, or an id, the cgroup id or the CPU with an operand its width
 * (4 bytes, the cgroup id 8) holds.
 */
static void fz_random_ctx_term(struct fz_rng *r, struct pea_tp_pred *p)
{
	static const __u8 ops[] = {
		PEA_TP_OP_EQ, PEA_TP_OP_NE, PEA_TP_OP_LT, PEA_TP_OP_GT,
		PEA_TP_OP_AND, PEA_PRED_OP_LE, PEA_PRED_OP_GE,
	};

	memset(p, 0, sizeof(*p));
	p->kind = PEA_TP_FIELD_CTX;
	p->offset = 1 + (__u16)fz_below(r, PEA_FETCH_CTX_MAX);
	if (p->offset == PEA_FETCH_CTX_COMM) {
		p->op = fz_chance(r, 3) ? PEA_TP_OP_GLOB :
			PEA_TP_OP_EQ + (__u8)fz_below(r, 2);
		fz_fill(r, p->str, 1 + fz_below(r, 17));
		p->str[PEA_TP_STR_MAX - 1] = 0;
		return;
	}
	p->op = ops[fz_below(r, sizeof(ops))];
	p->value = fz_chance(r, 2) ? fz_below(r, 4096) : fz_u64(r);
	if (p->offset != PEA_FETCH_CTX_CGROUP)
		p->value = fz_fit(p->value, PEA_FETCH_U32);
}

/* A filter program's term: a predicate whose operand its field holds. */
static void fz_random_term(struct fz_rng *r, struct pea_tp_pred *p)
{
	__u8 type;

	if (fz_chance(r, 4)) {
		fz_random_ctx_term(r, p);
		return;
	}
	fz_random_pred(r, p);
	if (p->kind != PEA_TP_FIELD_UINT && p->kind != PEA_TP_FIELD_SINT)
		return;
	if (fz_chance(r, 4))
		p->op = fz_chance(r, 2) ? PEA_PRED_OP_LE : PEA_PRED_OP_GE;
	type = p->kind == PEA_TP_FIELD_SINT ? PEA_FETCH_S8 : PEA_FETCH_U8;
	type += p->size == 1 ? 0 : p->size == 2 ? 1 : p->size == 4 ? 2 : 3;
	p->value = fz_fit(p->value, type);
}

/* A random well-formed program over @nt terms: its length (0: none). */
static __u32 fz_random_tp_prog(struct fz_rng *r, __u32 nt, struct pea_pred *p)
{
	__u32 n = 0, depth = 0, want = 1 + (__u32)fz_below(r, 40);

	memset(p, 0, PEA_TP_PROG_MAX * sizeof(*p));
	while (n + 2 < PEA_TP_PROG_MAX) {
		if (want && depth < PEA_PRED_DEPTH_MAX &&
		    (depth < 2 || fz_chance(r, 2))) {
			p[n].op = PEA_PRED_CMP;
			p[n++].fetch = (__u8)fz_below(r, nt);
			depth++;
			want--;
		} else if (depth >= 2) {
			p[n++].op = fz_chance(r, 2) ? PEA_PRED_AND :
						      PEA_PRED_OR;
			depth--;
		} else {
			break;
		}
		if (depth && fz_chance(r, 6))
			p[n++].op = PEA_PRED_NOT;
	}
	while (depth > 1 && n < PEA_TP_PROG_MAX) {
		p[n++].op = PEA_PRED_OR;
		depth--;
	}
	return depth == 1 ? n : 0;
}

static __u32 fz_random_tp_fetches(struct fz_rng *r, unsigned int ev,
				  struct pea_fetch *f);
static __u32 fz_random_preds(struct fz_rng *r, const struct pea_fetch *f,
			     __u32 nf, struct pea_pred *p);

static int op_attach_tp(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	struct pea_tp_attr a;
	struct pea_tp_pred terms[PEA_TP_TERM_MAX];
	struct pea_pred prog[PEA_TP_PROG_MAX];
	struct pea_fetch fetches[PEA_FETCH_MAX + 1];
	struct pea_pred fpreds[PEA_PRED_MAX];
	const char *invalid = NULL;
	unsigned int ev = (unsigned int)fz_below(r, FZ_NR_EVENTS), i;
	int fd;

	fz_attach_init();
	if (!fz_event_ids[ev])
		return -ENOENT;
	if (fz_count_kind(FZ_LINK) >= FZ_MAX_LINKS)
		return -EMLINK;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	a.event_id = fz_event_ids[ev];
	a.filter_cpu = -1;
	snprintf(a.name, sizeof(a.name), "%s", fz_events[ev]);
	if (fz_chance(r, 4))
		a.id = fz_u64(r);
	if (fz_chance(r, 3))
		a.filter_tgid = fz_chance(r, 2) ? getpid() :
			(__s32)fz_below(r, 100);
	if (a.filter_tgid && fz_chance(r, 3))	/* the process's tree */
		a.flags |= PEA_TP_F_DESCENDANTS |
			   (fz_chance(r, 2) ? PEA_TP_F_DESC_ONLY : 0);
	if (fz_chance(r, 4))
		a.filter_cpu = (int)fz_below(r, fz_ncpu + 1) - 1;
	if (fz_chance(r, 3))	/* unwound from every event's context */
		a.kstack_depth = 1 + (__u32)fz_below(r, PEA_KSTACK_MAX);
	if (fz_chance(r, 2)) {
		a.nr_preds = 1 + (__u32)fz_below(r, PEA_TP_PRED_MAX);
		for (i = 0; i < a.nr_preds; i++)
			fz_random_pred(r, &a.preds[i]);
	} else if (fz_chance(r, 2)) {
		/* A filter program: ||, && and ! over up to 32 terms. */
		a.nr_terms = 1 + (__u32)fz_below(r, PEA_TP_TERM_MAX);
		for (i = 0; i < a.nr_terms; i++)
			fz_random_term(r, &terms[i]);
		a.nr_prog = fz_random_tp_prog(r, a.nr_terms, prog);
		a.nr_terms = a.nr_prog ? a.nr_terms : 0;
		a.terms = a.nr_prog ? (__u64)(unsigned long)terms : 0;
		a.prog = a.nr_prog ? (__u64)(unsigned long)prog : 0;
	}
	if (fz_chance(r, 2)) {
		/* Fetch chains from the event's fields, a predicate on them. */
		a.nr_fetches = fz_random_tp_fetches(r, ev, fetches);
		a.fetches = a.nr_fetches ? (__u64)(unsigned long)fetches : 0;
		if (a.nr_fetches && fz_chance(r, 2)) {
			a.nr_fetch_preds = fz_random_preds(r, fetches,
							   a.nr_fetches,
							   fpreds);
			a.fetch_preds = a.nr_fetch_preds ?
					(__u64)(unsigned long)fpreds : 0;
		}
	}
	switch (fz_below(r, 66)) {	/* 20 broken cases of 66 */
	case 0:
		a.flags |= fz_unknown_flag(r, 2, PEA_TP_FLAGS);
		invalid = "unknown flag";
		break;
	case 1:
		a.nr_preds = PEA_TP_PRED_MAX + 1 + (__u32)fz_below(r, 1000);
		invalid = "nr_preds";
		break;
	case 2:
		a.filter_cpu = -2 - (int)fz_below(r, 100);
		invalid = "filter_cpu";
		break;
	case 3:
		a.filter_tgid = -1 - (int)fz_below(r, 100);
		invalid = "filter_tgid";
		break;
	case 4:
		a.size = (__u32)fz_below(r, PEA_TP_ATTR_SIZE_VER0);
		invalid = "short size";
		break;
	case 5:
		memset(a.name, 'n', sizeof(a.name));
		invalid = "unterminated name";
		break;
	case 6:
		a.event_id = 0;
		invalid = "event_id 0";
		break;
	case 7:
		a.nr_preds = 1;
		fz_random_pred(r, &a.preds[0]);
		a.preds[0].reserved = 1 + (__u16)fz_below(r, 0xffff);
		invalid = "pred reserved";
		break;
	case 8:
		/* A predicate past nr_preds must be zero. */
		a.nr_preds = (__u32)fz_below(r, PEA_TP_PRED_MAX);
		a.preds[PEA_TP_PRED_MAX - 1].op = PEA_TP_OP_EQ;
		invalid = "a used slot past nr_preds";
		break;
	case 9:
		/* Far above any id a kernel hands out. */
		a.event_id = 0x7fff0000U | (fz_u32(r) & 0xffff);
		invalid = "no such event";
		break;
	case 10:
		a.kstack_depth = PEA_KSTACK_MAX + 1 + fz_u32(r) % 1000000;
		invalid = "kstack_depth past PEA_KSTACK_MAX";
		break;
	case 11:
		/* Was @reserved (a value from 1 was EINVAL): now a depth. */
		a.ustack_depth = PEA_USTACK_MAX + 1 + fz_u32(r) % 1000000;
		invalid = "ustack_depth past PEA_USTACK_MAX";
		break;
	case 12:
		fz_random_term(r, &terms[0]);
		memset(prog, 0, sizeof(prog));
		prog[0].op = PEA_PRED_CMP;
		a.terms = (__u64)(unsigned long)terms;
		a.nr_terms = PEA_TP_TERM_MAX + 1 + (__u32)fz_below(r, 1000);
		a.prog = (__u64)(unsigned long)prog;
		a.nr_prog = 1;
		invalid = "nr_terms past PEA_TP_TERM_MAX";
		break;
	case 13:
		/* Two values left: CMP CMP. */
		fz_random_term(r, &terms[0]);
		memset(prog, 0, sizeof(prog));
		prog[0].op = PEA_PRED_CMP;
		prog[1].op = PEA_PRED_CMP;
		a.terms = (__u64)(unsigned long)terms;
		a.nr_terms = 1;
		a.prog = (__u64)(unsigned long)prog;
		a.nr_prog = 2;
		invalid = "a program leaving two values";
		break;
	case 14:
		/* A program and inline predicates both. */
		a.nr_preds = 1;
		fz_random_pred(r, &a.preds[0]);
		fz_random_term(r, &terms[0]);
		memset(prog, 0, sizeof(prog));
		prog[0].op = PEA_PRED_CMP;
		a.terms = (__u64)(unsigned long)terms;
		a.nr_terms = 1;
		a.prog = (__u64)(unsigned long)prog;
		a.nr_prog = 1;
		invalid = "a program and inline predicates";
		break;
	case 15:
	case 16:
	case 17:
	case 18:
	case 19:
		/* One fetch broken as the kernel must refuse it. */
		memset(fetches, 0, sizeof(fetches));
		fetches[0].base = PEA_FETCH_BASE_FIELD;
		fetches[0].type = PEA_FETCH_U64;
		fetches[0].field_offset = (__u16)(4096 + fz_below(r, 4096));
		fetches[0].field_size = 8;
		a.fetches = (__u64)(unsigned long)fetches;
		a.nr_fetches = 1;
		a.fetch_preds = 0;
		a.nr_fetch_preds = 0;
		invalid = "a field past any entry";
		if (fz_chance(r, 2) && fz_nfields[ev]) {
			fetches[0].field_offset = fz_fields[ev][0].offset;
			fetches[0].field_size = 3;
			invalid = "a field size of 3";
		} else if (fz_chance(r, 2)) {
			fetches[0].base = PEA_FETCH_BASE_ARG;
			fetches[0].field_offset = 0;
			fetches[0].field_size = 0;
			invalid = "an argument base at a tracepoint";
		} else if (fz_chance(r, 2)) {
			for (i = 1; i <= PEA_FETCH_MAX; i++)
				fetches[i] = fetches[0];
			a.nr_fetches = PEA_FETCH_MAX + 1;
			invalid = "nr_fetches past PEA_FETCH_MAX";
		} else if (fz_chance(r, 2)) {
			a.reserved3 = 1 + fz_u32(r) % 1000;
			invalid = "reserved3";
		}
		break;
	}
	fd = fz_attach_cmd(r, PEA_MAP_IOC_ATTACH_TP, &a);
	if (fd == FZ_NO_MAP)
		return ENOENT;
	if (invalid) {
		if (fd >= 0)
			close(fd);
		return fz_expect_fail("attach_tp", invalid, fd < 0 ? -fd : 0);
	}
	if (fd < 0)
		return -fd;
	fz_keep_link(r, fd, fz_fire_tp);
	return 0;
}

/* ---- uprobes ---- */

static void fz_fire_uprobe(void)
{
	static const char s[] = "fz_uprobe_target";

	fz_uprobe_target(getpid(), s);
}

/*
 * Random fetch chains on a uprobe (the probed process's own memory, so
 * any address is harmless): a random base, up to PEA_FETCH_DEPTH_MAX
 * pointer reads at random offsets (most fault, some land in this
 * process), a random type and size within the byte budget; and a random
 * predicate on them, well formed by construction (a postfix tree of at
 * most PEA_PRED_MAX instructions). Returns the fetches' count.
 */
static __u32 fz_random_fetches(struct fz_rng *r, struct pea_fetch *f,
			       bool ret)
{
	__u32 n = 1 + (__u32)fz_below(r, PEA_FETCH_MAX), i, j, budget = 0;

	memset(f, 0, PEA_FETCH_MAX * sizeof(*f));
	for (i = 0; i < n; i++) {
		__u32 w;

		f[i].base = ret && fz_chance(r, 4) ? PEA_FETCH_BASE_RET :
			    fz_chance(r, 8) ? PEA_FETCH_BASE_SP :
					      PEA_FETCH_BASE_ARG;
		if (f[i].base == PEA_FETCH_BASE_ARG)
			f[i].arg = (__u8)fz_below(r, 6);
		f[i].nr_deref = (__u8)fz_below(r, PEA_FETCH_DEPTH_MAX + 1);
		for (j = 0; j < f[i].nr_deref; j++)
			f[i].offset[j] = (__s32)fz_below(r, 64) - 16;
		f[i].type = 1 + (__u8)fz_below(r, PEA_FETCH_ARRAY);
		if (f[i].type >= PEA_FETCH_STR) {
			f[i].size = 1 + (__u16)fz_below(r, 96);
			f[i].offset[f[i].nr_deref] = (__s32)fz_below(r, 32);
			w = f[i].size;
		} else {
			w = 8;
			if (fz_chance(r, 2)) {
				f[i].flags = PEA_FETCH_F_LOAD;
				f[i].offset[f[i].nr_deref] =
					(__s32)fz_below(r, 32);
			}
		}
		if (fz_chance(r, 8))
			f[i].flags |= PEA_FETCH_F_PTR32;
		budget += (w + 7) & ~7U;
		if (budget > PEA_FETCH_DATA_MAX)
			return i ? i : 1;
	}
	return n;
}

/* A random well-formed predicate on @nf fetches @f: its length. */
/*
 * @v as a value of fetch type @type can hold (an operand that does not fit
 * is EINVAL at attach, pea_pred.c): cut to the width, sign-extended for
 * the signed types.
 */
static __u64 fz_fit(__u64 v, __u8 type)
{
	unsigned int bits = 8U << ((type - PEA_FETCH_U8) % 4);
	__u64 mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;

	v &= mask;
	if (type >= PEA_FETCH_S8 && bits < 64 && (v >> (bits - 1)) & 1)
		v |= ~mask;
	return v;
}

static __u32 fz_random_preds(struct fz_rng *r, const struct pea_fetch *f,
			     __u32 nf, struct pea_pred *p)
{
	__u32 n = 0, depth = 0, want = 1 + (__u32)fz_below(r, 8), i;

	memset(p, 0, PEA_PRED_MAX * sizeof(*p));
	for (i = 0; i < nf && f[i].type == PEA_FETCH_ARRAY; i++)
		;
	if (i == nf)
		return 0;	/* arrays take no comparison */
	while (n + 2 < PEA_PRED_MAX && (want || depth != 1)) {
		if (want && depth < PEA_PRED_DEPTH_MAX &&
		    (depth < 2 || fz_chance(r, 2))) {
			i = (__u32)fz_below(r, nf);
			if (f[i].type == PEA_FETCH_ARRAY)
				continue;
			p[n].op = PEA_PRED_CMP;
			p[n].fetch = (__u8)i;
			if (f[i].type == PEA_FETCH_STR) {
				static const __u8 s_ops[] = { PEA_TP_OP_EQ,
					PEA_TP_OP_NE, PEA_TP_OP_GLOB };

				p[n].cmp = s_ops[fz_below(r, 3)];
				snprintf(p[n].str, sizeof(p[n].str), "%s",
					 fz_chance(r, 2) ? "fz_*" : "?");
			} else {
				p[n].cmp = 1 + (__u8)fz_below(r, 8);
				if (p[n].cmp == PEA_TP_OP_GLOB)
					p[n].cmp = PEA_TP_OP_EQ;
				p[n].value = fz_fit(fz_u64(r), f[i].type);
			}
			n++;
			depth++;
			want--;
		} else if (depth >= 2) {
			p[n++].op = fz_chance(r, 2) ? PEA_PRED_AND :
						      PEA_PRED_OR;
			depth--;
		} else if (depth == 1 && !want) {
			break;
		} else {
			want = want ? want : 1;
		}
		if (depth && fz_chance(r, 6))
			p[n++].op = PEA_PRED_NOT;
	}
	while (depth > 1 && n < PEA_PRED_MAX) {
		p[n++].op = PEA_PRED_AND;
		depth--;
	}
	return depth == 1 ? n : 0;
}

/*
 * Random fetch chains on event @ev's fields (PEA_FETCH_BASE_FIELD): a
 * field of the event, up to PEA_FETCH_DEPTH_MAX pointer reads at random
 * offsets from its value (pids, priorities and states: small numbers,
 * read as user memory of whatever task hit it, fault-safe), random user
 * bits over the reads, a random type and size within the byte budget;
 * now and then the hit's task (PEA_FETCH_BASE_CTX) instead. Returns the
 * fetches' count (0: the event has no such field).
 */
static __u32 fz_random_tp_fetches(struct fz_rng *r, unsigned int ev,
				  struct pea_fetch *f)
{
	__u32 n, i, budget = 0;

	if (!fz_nfields[ev])
		return 0;
	n = fz_random_fetches(r, f, false);
	for (i = 0; i < n; i++) {
		const struct fz_field *fl =
			&fz_fields[ev][fz_below(r, fz_nfields[ev])];

		f[i].flags &= ~PEA_FETCH_F_PTR32;	/* a probe's only */
		if (fz_chance(r, 10)) {
			memset(&f[i], 0, sizeof(f[i]));
			f[i].base = PEA_FETCH_BASE_CTX;
			f[i].arg = 1 + (__u8)fz_below(r, 3);	/* comm, tid, pid */
			f[i].type = f[i].arg == PEA_FETCH_CTX_COMM ?
				    PEA_FETCH_STR : PEA_FETCH_U32;
			f[i].size = f[i].type == PEA_FETCH_STR ? 16 : 0;
			budget += 16;
			continue;
		}
		f[i].base = PEA_FETCH_BASE_FIELD;
		f[i].arg = 0;
		f[i].field_offset = fl->offset;
		f[i].field_size = fl->size;
		if (fz_chance(r, 2))
			f[i].user = (__u8)fz_below(r, 1U << (f[i].nr_deref + 1));
		/* An integer taken as it is reads nothing: no user bit there. */
		if (f[i].type < PEA_FETCH_STR &&
		    !(f[i].flags & PEA_FETCH_F_LOAD))
			f[i].user &= (__u8)((1U << f[i].nr_deref) - 1);
		budget += f[i].type >= PEA_FETCH_STR ? (f[i].size + 7U) & ~7U : 8;
	}
	return budget <= PEA_FETCH_DATA_MAX ? n : 1;
}

static int op_attach_uprobe(struct fz_thread *t)
{
	static const char self[] = "/proc/self/exe";
	struct fz_rng *r = &t->rng;
	struct pea_fetch fetches[PEA_FETCH_MAX];
	struct pea_pred preds[PEA_PRED_MAX];
	struct pea_uprobe_attr a;
	const char *invalid = NULL;
	int fd, want = 0, path_fd = -1;

	fz_attach_init();
	if (!fz_target_offset)
		return -ENOENT;
	if (fz_count_kind(FZ_LINK) >= FZ_MAX_LINKS)
		return -EMLINK;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_UPROBE_F_CLOEXEC;
	a.path = (__u64)(unsigned long)self;
	a.path_fd = -1;
	a.offset = fz_target_offset;
	if (fz_chance(r, 3)) {
		a.flags |= PEA_UPROBE_F_RETPROBE;
		if (fz_chance(r, 2))
			a.maxactive = 1 + (__u32)fz_below(r, 128);
	}
	if (fz_chance(r, 4))
		a.id = fz_u64(r);
	if (fz_chance(r, 3))
		a.filter_tgid = fz_chance(r, 2) ? getpid() :
			(__s32)fz_below(r, 100);
	if (a.filter_tgid && fz_chance(r, 3))	/* the process's tree */
		a.flags |= PEA_UPROBE_F_DESCENDANTS |
			   (fz_chance(r, 2) ? PEA_UPROBE_F_DESC_ONLY : 0);
	if (fz_chance(r, 3)) {
		a.capture_mode = 1 + (__u32)fz_below(r, 2);
		a.capture_arg = (__u32)fz_below(r, 6);
		a.capture_len = 1 + (__u32)fz_below(r, PEA_CAPTURE_MAX);
	}
	if (fz_chance(r, 4)) {
		path_fd = open(self, O_RDONLY | O_CLOEXEC);
		a.path = 0;
		a.path_fd = path_fd;
	}
	if (fz_chance(r, 2)) {
		a.nr_fetches = fz_random_fetches(r, fetches, a.flags &
						 PEA_UPROBE_F_RETPROBE);
		a.fetches = (__u64)(unsigned long)fetches;
		if (fz_chance(r, 2)) {
			a.nr_preds = fz_random_preds(r, fetches, a.nr_fetches,
						     preds);
			a.preds = a.nr_preds ? (__u64)(unsigned long)preds : 0;
		}
	}
	switch (fz_below(r, 36)) {	/* 12 broken cases of 36 */
	case 0:
		a.flags |= fz_unknown_flag(r, 2, PEA_UPROBE_FLAGS);
		invalid = "unknown flag";
		want = EINVAL;
		break;
	case 1:
		if (a.flags & PEA_UPROBE_F_RETPROBE) {
			a.maxactive = PEA_MAXACTIVE_MAX + 1 +
				      fz_u32(r) % (0xffffffffU -
						   PEA_MAXACTIVE_MAX);
			invalid = "maxactive past PEA_MAXACTIVE_MAX";
		} else {
			a.maxactive = 1 + fz_u32(r) % 0xfffffffe;
			invalid = "maxactive on a uprobe";
		}
		want = EINVAL;
		break;
	case 2:
		a.path = (__u64)(unsigned long)fz_bad_ptr(r);
		a.path_fd = -1;
		invalid = "bad path pointer";
		want = a.path ? EFAULT : EBADF;	/* NULL: use path_fd */
		break;
	case 3:
		a.path = (__u64)(unsigned long)(fz_chance(r, 2) ? "/" :
						   "/dev/null");
		a.path_fd = -1;
		invalid = "not a regular file";
		want = EINVAL;
		break;
	case 4:
		a.offset = (1ULL << 40) + fz_below(r, 1ULL << 20);
		invalid = "offset past the file";
		want = EINVAL;
		break;
	case 5:
		a.capture_mode = PEA_CAPTURE_STR;
		a.capture_arg = 6 + (__u32)fz_below(r, 100);
		a.capture_len = 8;
		invalid = "capture_arg";
		want = EINVAL;
		break;
	case 6:
		a.filter_tgid = -1 - (int)fz_below(r, 100);
		invalid = "filter_tgid";
		want = EINVAL;
		break;
	case 7:
		a.size = (__u32)fz_below(r, PEA_UPROBE_ATTR_SIZE_VER0);
		invalid = "short size";
		want = EINVAL;
		break;
	case 8:
		fz_random_fetches(r, fetches, false);
		a.fetches = (__u64)(unsigned long)fetches;
		a.nr_fetches = PEA_FETCH_MAX + 1 + (__u32)fz_below(r, 100);
		a.nr_preds = 0;
		a.preds = 0;
		invalid = "more than PEA_FETCH_MAX fetches";
		want = E2BIG;
		break;
	case 9:
		a.nr_fetches = fz_random_fetches(r, fetches, false);
		a.fetches = (__u64)(unsigned long)fetches;
		fetches[fz_below(r, a.nr_fetches)].nr_deref =
			PEA_FETCH_DEPTH_MAX + 1 + (__u8)fz_below(r, 200);
		a.nr_preds = 0;
		a.preds = 0;
		invalid = "deeper than PEA_FETCH_DEPTH_MAX";
		want = EINVAL;
		break;
	case 10:
		a.nr_fetches = fz_random_fetches(r, fetches, false);
		a.fetches = (__u64)(unsigned long)fetches;
		fetches[fz_below(r, a.nr_fetches)].user =
			1 + (__u8)fz_below(r, 255);
		a.nr_preds = 0;
		a.preds = 0;
		invalid = "a user bit on a uprobe";
		want = EINVAL;
		break;
	case 11:
		a.nr_fetches = fz_random_fetches(r, fetches, false);
		a.fetches = (__u64)(unsigned long)fetches;
		memset(preds, 0, sizeof(preds));
		preds[0].op = fz_chance(r, 2) ? PEA_PRED_AND : PEA_PRED_NOT;
		a.preds = (__u64)(unsigned long)preds;
		a.nr_preds = 1 + (__u32)fz_below(r, 3);
		invalid = "a predicate starting with an operator";
		want = EINVAL;
		break;
	}
	fd = fz_attach_cmd(r, PEA_MAP_IOC_ATTACH_UPROBE, &a);
	if (path_fd >= 0)
		close(path_fd);
	if (fd == FZ_NO_MAP)
		return ENOENT;
	if (invalid) {
		if (fd >= 0)
			close(fd);
		return fz_expect("attach_uprobe", invalid, fd < 0 ? -fd : 0,
				 want);
	}
	if (fd < 0)
		return -fd;
	fz_keep_link(r, fd, fz_fire_uprobe);
	return 0;
}

/* ---- netfilter ---- */

/* One UDP datagram over loopback (dropped quietly if lo is down). */
static void fz_fire_nf(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(9) };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sendto(s, "fz", 2, MSG_DONTWAIT, (struct sockaddr *)&sin,
	       sizeof(sin));
	close(s);
}

static int op_attach_nf(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	struct pea_nf_attr a;
	const char *invalid = NULL;
	int fd, want = 0;

	if (fz_count_kind(FZ_LINK) >= FZ_MAX_LINKS)
		return -EMLINK;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_NF_F_CLOEXEC;
	a.family = fz_chance(r, 2) ? PEA_NF_IPV4 : PEA_NF_IPV6;
	a.hook = (__u32)fz_below(r, PEA_NF_POST_ROUTING + 1);
	a.packet_len = 1 + (__u32)fz_below(r, PEA_NF_PACKET_MAX);
	if (fz_chance(r, 4))
		a.id = fz_u64(r);
	if (fz_chance(r, 3)) {
		a.flags |= PEA_NF_F_PRIORITY;
		a.priority = (__s32)fz_u32(r);
		if (a.priority == INT_MIN || a.priority == INT_MAX)
			a.priority = 0;
	}
	switch (fz_below(r, 28)) {	/* 7 broken cases of 28 */
	case 0:
		a.flags |= 1U << (3 + fz_below(r, 29));
		invalid = "unknown flag";
		want = EINVAL;
		break;
	case 1:
		a.family = (__u32)fz_below(r, 256);
		if (a.family == PEA_NF_IPV4 || a.family == PEA_NF_IPV6)
			a.family = 0;
		invalid = "family";
		want = EAFNOSUPPORT;
		break;
	case 2:
		a.hook = PEA_NF_POST_ROUTING + 1 + fz_u32(r) % 1000;
		invalid = "hook";
		want = EPROTO;
		break;
	case 3:
		a.flags |= PEA_NF_F_PRIORITY;
		a.priority = fz_chance(r, 2) ? INT_MIN : INT_MAX;
		invalid = "priority FIRST or LAST";
		want = ERANGE;
		break;
	case 4:
		a.packet_len = 0;
		invalid = "packet_len 0";
		want = EINVAL;
		break;
	case 5:
		a.packet_len = PEA_NF_PACKET_MAX + 1 + fz_u32(r) % 100000;
		invalid = "packet_len past the maximum";
		want = E2BIG;
		break;
	case 6:
		a.reserved = fz_u64(r) | 1;
		invalid = "reserved";
		want = EINVAL;
		break;
	}
	fd = fz_attach_cmd(r, PEA_MAP_IOC_ATTACH_NF, &a);
	if (fd == FZ_NO_MAP)
		return ENOENT;
	if (!fz_have_netfilter()) {
		if (fd >= 0)
			close(fd);
		return fz_expect("attach_nf", "a kernel without netfilter",
				 fd < 0 ? -fd : 0, EOPNOTSUPP);
	}
	if (invalid) {
		if (fd >= 0)
			close(fd);
		return fz_expect("attach_nf", invalid, fd < 0 ? -fd : 0, want);
	}
	if (fd < 0)
		return -fd;
	fz_keep_link(r, fd, fz_fire_nf);
	return 0;
}

static void fz_fire_fprobe(void)
{
	char c;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	syscall(SYS_getpid);
	syscall(SYS_getppid);
	syscall(SYS_sched_yield);
	if (fd >= 0) {
		if (read(fd, &c, 1) < 0)
			c = 0;
		close(fd);
	}
}

/*
 * An fprobe link on 1..all of those functions, in a random order, entry
 * or return, with random ids, filters, captures and stacks; one attr in
 * four broken in a way pea_fprobe_attach() refuses with a known errno.
 * A kernel without fprobe answers EOPNOTSUPP to all.
 */
static int op_attach_fprobe(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	struct pea_fprobe_attr a;
	char syms[FZ_NR_FP_SYMBOLS + 1][PEA_SYM_LEN];
	unsigned int order[FZ_NR_FP_SYMBOLS], i, j, tmp;
	const char *invalid = NULL;
	unsigned int n;
	int fd, want = 0;

	fz_attach_init();
	n = fz_nr_fp_avail;
	if (n < 2)
		return ENOENT;
	if (fz_count_kind(FZ_LINK) >= FZ_MAX_LINKS)
		return -EMLINK;
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {
		j = (unsigned int)fz_below(r, i + 1);
		tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}
	memset(syms, 0, sizeof(syms));
	for (i = 0; i < n; i++)
		snprintf(syms[i], PEA_SYM_LEN, "%s", fz_fp_avail[order[i]]);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_FPROBE_F_CLOEXEC;
	a.syms = (__u64)(unsigned long)syms;
	a.nr_syms = 1 + (__u32)fz_below(r, n);
	a.filter_cpu = -1;
	if (fz_chance(r, 2)) {
		a.flags |= PEA_FPROBE_F_RETURN;
		a.maxactive = fz_chance(r, 2) ? 0 :
			1 + (__u32)fz_below(r, 64);
	}
	if (fz_chance(r, 4))
		a.id = fz_below(r, 1ULL << 62);
	if (fz_chance(r, 4))
		a.filter_tgid = fz_chance(r, 2) ? getpid() :
			(__s32)fz_below(r, 100);
	if (a.filter_tgid && fz_chance(r, 3))	/* the process's tree */
		a.flags |= PEA_FPROBE_F_DESCENDANTS |
			   (fz_chance(r, 2) ? PEA_FPROBE_F_DESC_ONLY : 0);
	if (fz_chance(r, 4))
		a.filter_cpu = (int)fz_below(r, fz_ncpu + 1) - 1;
	if (fz_chance(r, 3)) {
		a.capture_mode = 1 + (__u32)fz_below(r, 2);
		a.capture_arg = (__u32)fz_below(r, 6);
		a.capture_len = 1 + (__u32)fz_below(r, PEA_CAPTURE_MAX);
		a.capture_flags = (__u32)fz_below(r, 2);
	}
	if (fz_chance(r, 3))
		a.kstack_depth = 1 + (__u32)fz_below(r, PEA_KSTACK_MAX);
	switch (fz_below(r, 48)) {	/* 12 broken cases of 48 */
	case 0:
		a.flags |= fz_unknown_flag(r, 2, PEA_FPROBE_FLAGS);
		invalid = "unknown flag";
		want = EINVAL;
		break;
	case 1:
		a.nr_syms = 0;
		invalid = "no functions";
		want = EINVAL;
		break;
	case 2:
		a.nr_syms = PEA_FPROBE_FUNCS_MAX + 1 + fz_u32(r) % 100000;
		invalid = "nr_syms past PEA_FPROBE_FUNCS_MAX";
		want = E2BIG;
		break;
	case 3:
		a.flags |= PEA_FPROBE_F_RETURN;
		a.maxactive = PEA_FPROBE_MAXACTIVE_MAX + 1 +
			      fz_u32(r) % 1000000;
		invalid = "maxactive past PEA_FPROBE_MAXACTIVE_MAX";
		want = EINVAL;
		break;
	case 4:
		a.flags &= ~PEA_FPROBE_F_RETURN;
		a.maxactive = 1 + (__u32)fz_below(r, 64);
		invalid = "maxactive on an entry link";
		want = EINVAL;
		break;
	case 5:
		a.filter_cpu = -2 - (int)fz_below(r, 100);
		invalid = "filter_cpu";
		want = EINVAL;
		break;
	case 6:
		a.filter_tgid = -1 - (int)fz_below(r, 100);
		invalid = "filter_tgid";
		want = EINVAL;
		break;
	case 7:
		a.nr_syms = 2 + (__u32)fz_below(r, n - 1);
		a.id = ~0ULL - (__u64)fz_below(r, a.nr_syms - 1);
		invalid = "id + nr_syms wrapping";
		want = EINVAL;
		break;
	case 8:
		a.nr_syms = 2 + (__u32)fz_below(r, n - 1);
		memcpy(syms[a.nr_syms - 1], syms[fz_below(r, a.nr_syms - 1)],
		       PEA_SYM_LEN);
		invalid = "a function twice";
		want = EINVAL;
		break;
	case 9:
		memset(syms[fz_below(r, a.nr_syms)], 0, PEA_SYM_LEN);
		invalid = "an empty name";
		want = EINVAL;
		break;
	case 10:
		memset(syms[fz_below(r, a.nr_syms)], 'f', PEA_SYM_LEN);
		invalid = "an unterminated name";
		want = EINVAL;
		break;
	case 11:
		a.syms = (__u64)(unsigned long)fz_bad_ptr(r);
		invalid = a.syms ? "syms a bad pointer" : "syms NULL";
		want = a.syms ? EFAULT : EINVAL;
		break;
	}
	fd = fz_attach_cmd(r, PEA_MAP_IOC_ATTACH_FPROBE, &a);
	if (fd == FZ_NO_MAP)
		return ENOENT;
	if (!fz_have_fprobe()) {
		if (fd >= 0)
			close(fd);
		return fz_expect("attach_fprobe", "a kernel without fprobe",
				 fd < 0 ? -fd : 0, EOPNOTSUPP);
	}
	if (invalid) {
		if (fd >= 0)
			close(fd);
		return fz_expect("attach_fprobe", invalid, fd < 0 ? -fd : 0,
				 want);
	}
	if (fd < 0)
		return -fd;
	fz_keep_link(r, fd, fz_fire_fprobe);
	return 0;
}

const struct fz_op fz_ops_attach[] = {
	{ "attach_tp", op_attach_tp, 2, false },
	{ "attach_uprobe", op_attach_uprobe, 2, false },
	{ "attach_nf", op_attach_nf, 2, false },
	{ "attach_fprobe", op_attach_fprobe, 2, false },
	{ NULL, NULL, 0, false },
};
