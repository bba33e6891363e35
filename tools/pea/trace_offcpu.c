// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace --off-cpu: the time tasks spend blocked, summed in the kernel
 * per (pid, comm), the top entries by that time (bcc's offcputime; its
 * stacks with --count-by kstack, below). Two links on sched:sched_switch: the start keeps the
 * time of each blocked switch-out (prev_state S, D, T or t; not a
 * preemption, not an exit) under prev_pid in a pairing table; the end
 * takes it out at the task's switch-in, by next_pid, into a table keyed
 * by that pid and next_comm, summing the ns (docs/aggregations.md).
 * With --pid only that process's switch-outs are kept; with -- CMD only
 * the command's: forked and held before its exec until both links are
 * there, its pid the filter, the session over when it ends.
 *
 * With --count-by kstack (or --folded FILE) the key is (pid, comm,
 * kernel stack), as bcc's offcputime: the end is then a kprobe on
 * finish_task_switch(), which runs on the switched-in task's own stack
 * (kernel/sched/core.c: context_switch() calls it after switch_to()), so
 * the stack the kernel takes there, by the task's thread id, is the one
 * the task blocked on (__schedule() <- schedule() <- do_nanosleep() ...).
 * GCC may have renamed the function (finish_task_switch.isra.0): the
 * name is taken from /proc/kallsyms.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "libpea.h"
#include "pea_tool.h"
#include "stat_task.h"
#include "stacks.h"
#include "tpformat.h"
#include "trace.h"

#define OFFCPU_MAX_KEYS	4096	/* per CPU */
#define OFFCPU_MAX_STACKS	4096	/* distinct stacks, all CPUs */
#define OFFCPU_FUNC	"finish_task_switch"

static volatile sig_atomic_t offcpu_stop;

static void offcpu_signal(int sig)
{
	(void)sig;
	offcpu_stop = 1;
}

/* One (pid, comm[, stack]) with its entries of every CPU added up. */
struct offcpu_row {
	__u64 pid;
	char comm[16];
	__u64 stack;			/* a stack id; 0: none */
	const struct pea_agg_stack *st;	/* its frames, or NULL */
	__u64 ns, count;
};

/* What one read of the end's table gives. */
struct offcpu_table {
	struct offcpu_row *rows;
	long n;
	void *buf, *sbuf;		/* the entries and the stacks */
	const struct pea_agg_stack **stk;	/* by id */
	__u32 nstk;
	struct pea_agg_read r;
};

/*
 * The name kallsyms gives finish_task_switch(): as is, or with GCC's
 * .isra.N (bcc's offcputime takes the same two); 0 or -1 (said).
 */
static int offcpu_func(char *name, size_t len)
{
	char line[512], sym[256], type;
	size_t fl = strlen(OFFCPU_FUNC);
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f) {
		tool_err("--off-cpu --count-by kstack: /proc/kallsyms: %s",
			 strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned int n;

		if (sscanf(line, "%*s %c %255s", &type, sym) != 2 ||
		    (type != 't' && type != 'T') || strchr(line, '[') ||
		    strncmp(sym, OFFCPU_FUNC, fl))
			continue;
		if (!sym[fl]) {		/* the name itself wins */
			snprintf(name, len, "%s", sym);
			found = true;
			break;
		}
		if (!found && sscanf(sym + fl, ".isra.%u%c", &n, &type) == 1) {
			snprintf(name, len, "%s", sym);
			found = true;
		}
	}
	fclose(f);
	if (!found)
		tool_err("--off-cpu --count-by kstack: no %s in /proc/kallsyms",
			 OFFCPU_FUNC);
	return found ? 0 : -1;
}

/* By (pid, stack id, comm): the key of a row. */
static int key_cmp(const void *a, const void *b)
{
	const struct offcpu_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return memcmp(x->comm, y->comm, sizeof(x->comm));
}

/* Most blocked time first; a tie in key order. */
static int row_cmp(const void *a, const void *b)
{
	const struct offcpu_row *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return key_cmp(a, b);
}

/*
 * The start on sched:sched_switch, the end there too or (kernel stacks)
 * at finish_task_switch(), on their maps @map_fd (the end on the
 * start's when its own is -1); 0 or an exit status.
 */
static int offcpu_attach(const int map_fd[2], const struct trace_opts *o,
			 pid_t child,
			 int fd[2], const struct tp_format **fmt_out,
			 struct probe_spec spec[2])
{
	struct probe_opts po[2];
	struct trace_fmt fmt[2];
	char end[300] = "tp:sched:sched_switch", func[256];
	int i, rc;

	if (o->off_cpu_kstack) {
		if (offcpu_func(func, sizeof(func)))
			return PEA_EXIT_ERR;
		snprintf(end, sizeof(end), "kprobe:%s", func);
	}
	for (i = 0; i < 2; i++) {
		memset(&po[i], 0, sizeof(po[i]));
		memset(&fmt[i], 0, sizeof(fmt[i]));
		po[i].cpu = -1;
		if (probe_parse(i ? end : "tp:sched:sched_switch", &spec[i]))
			return PEA_EXIT_ERR;
	}
	/*
	 * The start: blocked switch-outs, of --pid's (-- CMD's) only, and
	 * their descendants' (pea's but pea's own, with -- CMD: see
	 * trace_cmd_fork()) unless --no-children.
	 */
	po[0].pid = child ? (unsigned int)child : o->defaults.pid;
	if (po[0].pid && !o->no_children) {
		po[0].tree = PEA_PROBE_F_DESCENDANTS;
		if (child) {
			po[0].pid = (unsigned int)getpid();
			po[0].tree |= PEA_PROBE_F_DESC_ONLY;
		}
	}
	po[0].filter = "prev_state > 0 && prev_state < 16";
	for (i = 0; i < 2; i++) {
		rc = spec[i].kind->prepare(&spec[i], &po[i], &fmt[i]);
		if (rc)
			return rc;
	}
	*fmt_out = fmt[0].tp;
	for (i = 0; i < 2; i++) {
		fd[i] = spec[i].kind->attach(map_fd[i] >= 0 ? map_fd[i] :
					     map_fd[0], &spec[i], &po[i],
					     i + 1);
		if (fd[i] < 0)
			return PEA_EXIT_ERR;
	}
	return 0;
}

/* The tables of the start (fd[0]) and the end (fd[1]); 0 or an exit status. */
static int offcpu_tables(const struct tp_format *tp, const int fd[2],
			 bool kstack)
{
	const struct tp_field *prev = tp_field_find(tp, "prev_pid");
	const struct tp_field *next = tp_field_find(tp, "next_pid");
	const struct tp_field *comm = tp_field_find(tp, "next_comm");
	struct pea_lat_attr la;
	struct pea_agg_attr a;

	if (!prev || !next || !comm || comm->size != 16) {
		tool_err("--off-cpu: sched:sched_switch has no prev_pid, next_pid and next_comm[16] here");
		return PEA_EXIT_ERR;
	}
	memset(&la, 0, sizeof(la));
	la.size = sizeof(la);
	la.flags = PEA_LAT_F_NO_RECORDS;
	la.max_pending = PEA_LAT_MAX_PENDING;
	la.key.kind = PEA_LAT_KEY_FIELD;
	la.key.offset = prev->offset;
	la.key.size = prev->size;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_AGG_F_NO_RECORDS;
	a.max_keys = OFFCPU_MAX_KEYS;
	a.keys[0] = PEA_AGG_KEY_PAIR;
	a.keys[1] = PEA_AGG_KEY_FIELD;
	a.key_offset = comm->offset;
	a.key_size = 16;
	a.value = PEA_AGG_VAL_PAIRED;
	a.pair_key.kind = PEA_LAT_KEY_FIELD;
	a.pair_key.offset = next->offset;
	a.pair_key.size = next->size;
	if (kstack) {
		/*
		 * finish_task_switch() of the task switched in: its thread id
		 * (prev_pid's, the initial namespace's), its comm and stack.
		 */
		memset(&a.pair_key, 0, sizeof(a.pair_key));
		a.keys[0] = PEA_AGG_KEY_TID;
		a.keys[1] = PEA_AGG_KEY_COMM;
		a.keys[2] = PEA_AGG_KEY_KSTACK;
		a.key_offset = 0;
		a.key_size = 0;
		a.max_stacks = OFFCPU_MAX_STACKS;
		a.stack_depth = PEA_KSTACK_MAX;
	}
	if (ioctl(fd[0], PEA_LINK_IOC_LAT_CREATE, &la)) {
		tool_err("--off-cpu: the pairing table: %s", strerror(errno));
		return PEA_EXIT_ERR;
	}
	a.pair_fd = fd[0];
	if (ioctl(fd[1], PEA_LINK_IOC_AGG_CREATE, &a)) {
		tool_err("--off-cpu: the table: %s", strerror(errno));
		return PEA_EXIT_ERR;
	}
	return 0;
}

static int stk_cmp(const void *x, const void *y)
{
	const struct pea_agg_stack *a = *(const struct pea_agg_stack *const *)x;
	const struct pea_agg_stack *b = *(const struct pea_agg_stack *const *)y;

	return (a->id > b->id) - (a->id < b->id);
}

/* Index the read's stacks by id; 0 or -1 (malformed, out of memory). */
static int offcpu_stacks(struct offcpu_table *t)
{
	const unsigned char *p = t->sbuf, *end = p + t->r.stacks_size;
	__u32 i, nr = t->r.nr_stacks;

	t->stk = calloc(nr ? nr : 1, sizeof(*t->stk));
	if (!t->stk)
		return -1;
	for (i = 0; i < nr; i++) {
		const struct pea_agg_stack *s = (const void *)p;

		if ((size_t)(end - p) < sizeof(*s) ||
		    (size_t)(end - p) < sizeof(*s) + s->nr * 8ULL)
			return -1;
		t->stk[i] = s;
		p += sizeof(*s) + s->nr * 8ULL;
	}
	t->nstk = nr;
	qsort(t->stk, nr, sizeof(*t->stk), stk_cmp);
	return 0;
}

static const struct pea_agg_stack *offcpu_stack(const struct offcpu_table *t,
						__u64 id)
{
	__u32 lo = 0, hi = t->nstk;

	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (t->stk[mid]->id == id)
			return t->stk[mid];
		if (t->stk[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void offcpu_table_free(struct offcpu_table *t)
{
	free(t->rows);
	free(t->buf);
	free(t->sbuf);
	free(t->stk);
}

/* One read of the end's table (with its stacks); 0 or -1 (said). */
static int offcpu_fetch(int fd, struct offcpu_table *t)
{
	size_t len = 1 << 20, slen = 0;

	for (;;) {
		free(t->buf);
		free(t->sbuf);
		t->buf = malloc(len);
		t->sbuf = slen ? malloc(slen) : NULL;
		if (!t->buf || (slen && !t->sbuf)) {
			tool_err("--off-cpu: out of memory");
			return -1;
		}
		memset(&t->r, 0, sizeof(t->r));
		t->r.size = sizeof(t->r);
		t->r.buf = (uintptr_t)t->buf;
		t->r.buf_len = len;
		t->r.stacks = (uintptr_t)t->sbuf;
		t->r.stacks_len = slen;
		if (!ioctl(fd, PEA_LINK_IOC_AGG_READ, &t->r))
			return 0;
		if (errno != ENOSPC) {
			tool_err("--off-cpu: reading the table: %s",
				 strerror(errno));
			return -1;
		}
		if ((size_t)t->r.nr_entries * t->r.entry_size > len)
			len = (size_t)t->r.nr_entries * t->r.entry_size + 4096;
		if (t->r.stacks_size > slen)
			slen = t->r.stacks_size + 65536;
	}
}

/*
 * Read the end's table into rows summed per key (each CPU's entry of a
 * key is one row first, then sorted by key and added up); 0 or -1.
 */
static int offcpu_read(int fd, bool kstack, struct offcpu_table *t)
{
	struct offcpu_row *out;
	size_t i, n = 0;

	if (offcpu_fetch(fd, t))
		return -1;
	if (offcpu_stacks(t)) {
		tool_err("--off-cpu: the kernel's stacks: malformed or out of memory");
		return -1;
	}
	out = calloc(t->r.nr_entries ? t->r.nr_entries : 1, sizeof(*out));
	if (!out)
		return -1;
	for (i = 0; i < t->r.nr_entries; i++) {
		const struct pea_agg_entry *e = (const void *)
			((const char *)t->buf + i * t->r.entry_size);

		out[i].pid = e->key[0];
		memcpy(out[i].comm, &e->key[1], 16);
		out[i].stack = kstack ? e->key[3] : 0;
		out[i].ns = (__u64)e->sum;
		out[i].count = e->count;
	}
	qsort(out, t->r.nr_entries, sizeof(*out), key_cmp);
	for (i = 0; i < t->r.nr_entries; i++) {
		if (n && !key_cmp(&out[n - 1], &out[i])) {
			out[n - 1].ns += out[i].ns;
			out[n - 1].count += out[i].count;
			continue;
		}
		out[n] = out[i];
		out[n].st = out[n].stack ? offcpu_stack(t, out[n].stack) :
					   NULL;
		n++;
	}
	qsort(out, n, sizeof(*out), row_cmp);
	t->rows = out;
	t->n = (long)n;
	return 0;
}

/* A row's frames, leaf first, named as --count-by kstack names them. */
static void put_frames(const struct ksyms *ks, const struct offcpu_row *row,
		       bool json)
{
	char sym[256];
	__u32 i;

	fputs(json ? ",\"kstack\":[" : "", stdout);
	for (i = 0; row->st && i < row->st->nr; i++) {
		ksyms_format(ks, row->st->ips[i], sym, sizeof(sym));
		if (json) {
			if (i)
				putchar(',');
			json_put_str(stdout, sym, strlen(sym));
		} else {
			printf("    %s\n", sym);
		}
	}
	if (!json && !row->st)
		printf("    %s\n", row->stack ? "[stack not read]" :
			"[no stack]");
	fputs(json ? "]" : "", stdout);
}

static void offcpu_print(const struct trace_opts *o,
			 const struct offcpu_table *t,
			 const struct pea_lat_info *li, const struct ksyms *ks)
{
	const struct offcpu_row *rows = t->rows;
	const struct pea_agg_read *r = &t->r;
	unsigned int top = o->agg.top;
	bool kstack = o->off_cpu_kstack;
	long i, n = t->n;
	__u64 periods = 0;

	for (i = 0; i < n; i++)
		periods += rows[i].count;
	if (o->json) {
		printf("{\"type\":\"offcpu\",\"by\":\"%s\",\"count\":%llu,\"keys\":%ld,\"unpaired\":%llu,\"start_overflow\":%llu,\"pending\":%u,\"replaced\":%llu,\"dropped\":%llu,\"stack_dropped\":%llu,\"rows\":[",
		       kstack ? "pid,comm,kstack" : "pid,comm",
		       (unsigned long long)periods, n,
		       (unsigned long long)r->unpaired,
		       (unsigned long long)li->overflow, li->pending,
		       (unsigned long long)li->replaced,
		       (unsigned long long)r->dropped,
		       (unsigned long long)r->stack_dropped);
		for (i = 0; i < n && i < (long)top; i++) {
			printf("%s{\"pid\":%llu,\"comm\":", i ? "," : "",
			       (unsigned long long)rows[i].pid);
			json_put_str(stdout, rows[i].comm,
				     strnlen(rows[i].comm, 16));
			printf(",\"ns\":%llu,\"count\":%llu",
			       (unsigned long long)rows[i].ns,
			       (unsigned long long)rows[i].count);
			if (kstack)
				put_frames(ks, &rows[i], true);
			putchar('}');
		}
		printf("]}\n");
		fflush(stdout);
		return;
	}
	printf("off-CPU time by pid%s comm%s, %llu blocked periods, %ld keys, complete (in-kernel)\n",
	       kstack ? "," : " and", kstack ? " and kernel stack" : "",
	       (unsigned long long)periods, n);
	printf("switch-ins of tasks not seen blocked %llu, switch-outs not kept (pairing table full) %llu, blocked now %u, blocked again with no switch-in seen %llu, keys past the table %llu",
	       (unsigned long long)r->unpaired,
	       (unsigned long long)li->overflow, li->pending,
	       (unsigned long long)li->replaced,
	       (unsigned long long)r->dropped);
	if (kstack)
		printf(", stacks past the store %llu",
		       (unsigned long long)r->stack_dropped);
	putchar('\n');
	printf("%14s %10s %8s  %s\n", "OFF-CPU(us)", "COUNT", "PID", "COMM");
	for (i = 0; i < n && i < (long)top; i++) {
		printf("%14llu %10llu %8llu  %.16s\n",
		       (unsigned long long)(rows[i].ns / 1000),
		       (unsigned long long)rows[i].count,
		       (unsigned long long)rows[i].pid, rows[i].comm);
		if (kstack)
			put_frames(ks, &rows[i], false);
	}
	if (n > (long)top)
		printf("(%ld more keys)\n", n - (long)top);
	fflush(stdout);
}

/*
 * --folded FILE: comm;root...;leaf weighted by the blocked µs, as bcc's
 * offcputime -f (a return address names its call: one byte back).
 */
static int offcpu_folded(const char *path, const struct offcpu_table *t,
			 const struct ksyms *ks)
{
	static char names[PEA_KSTACK_MAX + 1][128];
	const char *frames[PEA_KSTACK_MAX + 1];
	enum pea_frame_kind kinds[PEA_KSTACK_MAX + 1];
	struct pea_stack_set *set = pea_stacks_new();
	int err = set ? 0 : -ENOMEM;
	unsigned int j, nr;
	FILE *f = NULL;
	long i;

	for (i = 0; !err && i < t->n; i++) {
		const struct offcpu_row *row = &t->rows[i];

		snprintf(names[0], sizeof(names[0]), "%.16s", row->comm);
		frames[0] = names[0][0] ? names[0] : "[unknown]";
		kinds[0] = PEA_FRAME_PROCESS;
		nr = row->st ? row->st->nr : 0;
		for (j = 0; j < nr; j++) {
			__u64 ip = row->st->ips[nr - 1 - j];

			ksyms_func(ks, ip - (nr - 1 - j ? 1 : 0),
				   names[j + 1], sizeof(names[j + 1]));
			frames[j + 1] = names[j + 1];
			kinds[j + 1] = strchr(names[j + 1], '[') &&
				       strcmp(names[j + 1], "[unknown]") ?
				       PEA_FRAME_MODULE : PEA_FRAME_KERNEL;
		}
		if (!nr) {	/* no stack */
			frames[1] = "[unknown]";
			kinds[1] = PEA_FRAME_KERNEL;
			nr = 1;
		}
		if (row->ns / 1000)
			err = pea_stacks_add(set, frames, kinds, nr + 1,
					     row->ns / 1000);
	}
	if (!err) {
		f = fopen(path, "we");
		err = f ? pea_stacks_write_folded(set, f) : -errno;
		if (f && fclose(f) && !err)
			err = -errno;
	}
	pea_stacks_free(set);
	if (err) {
		tool_err("--folded %s: %s", path, strerror(-err));
		return PEA_EXIT_ERR;
	}
	return 0;
}

/*
 * -- CMD once the links are gone: still running (--duration, Ctrl-C, an
 * error), it gets SIGTERM; how it ended is said on stderr, as pea trace
 * says it.
 */
static void offcpu_cmd_end(const struct trace_opts *o, pid_t child, int go_fd,
			   bool done, int status)
{
	if (go_fd >= 0)		/* never let go: it exits at once */
		close(go_fd);
	if (!done && waitpid(child, &status, WNOHANG) != child) {
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
	}
	if (WIFEXITED(status))
		fprintf(stderr, "pea: %s (pid %d) exited with status %d\n",
			o->cmd[0], (int)child, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		fprintf(stderr, "pea: %s (pid %d) was killed by signal %d\n",
			o->cmd[0], (int)child, WTERMSIG(status));
}

/**
 * trace_offcpu() - pea trace --off-cpu: run until --duration or a signal,
 * then print the top (pid, comm[, kernel stack]) by blocked time
 * @o: the parsed options (no PROBE)
 * @ncpus: the map's slots
 *
 * Return: an exit status.
 */
int trace_offcpu(const struct trace_opts *o, int ncpus)
{
	struct probe_spec spec[2];
	const struct tp_format *tp = NULL;
	struct offcpu_table t;
	struct ksyms *ks = NULL;
	struct pea_lat_info li;
	struct sigaction sa;
	char name[PEA_OBJ_NAME_LEN];
	int map_fd[2] = { -1, -1 }, fd[2] = { -1, -1 }, rc, go_fd = -1;
	int status = 0;
	pid_t child = 0;
	bool done = false;
	__u64 end;
	long n;

	memset(spec, 0, sizeof(spec));
	memset(&t, 0, sizeof(t));
	snprintf(name, sizeof(name), "offcpu_%d", (int)getpid());
	map_fd[0] = pea_map_create(name, ncpus, 0);
	if (map_fd[0] < 0) {
		tool_explain_dev_error("creating a map", map_fd[0]);
		return PEA_EXIT_ERR;
	}
	/*
	 * --pid and its children: pea, maybe below that process (its
	 * shell's), sleeps between reads; not what is asked for.
	 */
	if (o->defaults.pid && !o->no_children) {
		__s32 self = 0;

		if (ioctl(map_fd[0], PEA_MAP_IOC_EXCLUDE_TGID, &self)) {
			tool_explain_dev_error("excluding the tool's process",
					       -errno);
			rc = PEA_EXIT_ERR;
			goto out;
		}
		/*
		 * The exclusion looks at the running task. The end at
		 * sched_switch is the task switched in, whoever runs when
		 * it fires (the task switched out, pea among them): it
		 * gets a map of its own, which leaves nothing out. At
		 * finish_task_switch() the running task is the one
		 * switched in, and pea's own switch-ins, never started,
		 * share the start's.
		 */
		if (!o->off_cpu_kstack) {
			snprintf(name, sizeof(name), "offend_%d",
				 (int)getpid());
			map_fd[1] = pea_map_create(name, ncpus, 0);
			if (map_fd[1] < 0) {
				tool_explain_dev_error("creating a map",
						       map_fd[1]);
				rc = PEA_EXIT_ERR;
				goto out;
			}
		}
	}
	if (o->cmd) {
		if (!o->no_children && task_cmd_subreaper()) {
			tool_err("cannot follow the command's children: PR_SET_CHILD_SUBREAPER: %s (--no-children traces the command's process only)",
				 strerror(errno));
			rc = PEA_EXIT_ERR;
			goto out;
		}
		fflush(NULL);
		child = task_cmd_fork(o->cmd, &go_fd, "pea trace");
		if (child < 0) {
			child = 0;
			tool_err("cannot start %s: %s", o->cmd[0],
				 strerror(errno));
			rc = PEA_EXIT_ERR;
			goto out;
		}
	}
	rc = offcpu_attach(map_fd, o, child, fd, &tp, spec);
	if (!rc)
		rc = offcpu_tables(tp, fd, o->off_cpu_kstack);
	if (rc)
		goto out;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = offcpu_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	fprintf(stderr, "pea: tracing off-CPU time (tp:sched:sched_switch, blocked switch-outs%s%s) on %d CPUs; Ctrl-C to end\n",
		child ? " of -- CMD" : o->defaults.pid ? " of --pid" : "",
		o->off_cpu_kstack ? ", to " OFFCPU_FUNC "(): kernel stacks" :
				    "", ncpus);
	end = o->duration > 0 ? tool_now_ns() + (__u64)(o->duration * 1e9) :
				0;
	/* -- CMD: exec'ed now that both links are there. */
	if (child && task_cmd_go(go_fd))
		tool_err("cannot start %s: it ended before its exec",
			 o->cmd[0]);
	go_fd = -1;
	while (!offcpu_stop && (!end || tool_now_ns() < end) && !done) {
		usleep(20000);
		/* -- CMD, and the orphans of its tree, adopted. */
		done = child && task_cmd_reap(child, &status);
	}
	/* The counts before the start link goes, then the table. */
	memset(&li, 0, sizeof(li));
	if (ioctl(fd[0], PEA_LINK_IOC_LAT_INFO, &li))
		tool_err("--off-cpu: the pairing table's counts: %s",
			 strerror(errno));
	if (offcpu_read(fd[1], o->off_cpu_kstack, &t)) {
		rc = PEA_EXIT_ERR;
		goto out;
	}
	if (o->off_cpu_kstack) {
		ks = ksyms_load();
		if (!ks)
			tool_err("warning: cannot read /proc/kallsyms (%s): stack frames print as addresses",
				 strerror(errno));
	}
	offcpu_print(o, &t, &li, ks);
	if (o->agg.folded)
		rc = offcpu_folded(o->agg.folded, &t, ks);
out:
	offcpu_table_free(&t);
	ksyms_free(ks);
	if (fd[1] >= 0)
		close(fd[1]);
	if (fd[0] >= 0)
		close(fd[0]);
	for (n = 0; n < 2; n++)
		if (spec[n].kind && spec[n].kind->release)
			spec[n].kind->release(&spec[n]);
	for (n = 0; n < 2; n++)
		if (map_fd[n] >= 0)
			close(map_fd[n]);
	if (child)
		offcpu_cmd_end(o, child, go_fd, done, status);
	return rc;
}
