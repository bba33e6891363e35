// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace --off-cpu: the time tasks spend blocked, summed in the kernel
 * per (pid, comm), the top entries by that time (bcc's offcputime
 * without stacks). Two links on sched:sched_switch: the start keeps the
 * time of each blocked switch-out (prev_state S, D, T or t; not a
 * preemption, not an exit) under prev_pid in a pairing table; the end
 * takes it out at the task's switch-in, by next_pid, into a table keyed
 * by that pid and next_comm, summing the ns (docs/aggregations.md).
 * With --pid only that process's switch-outs are kept.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "libpea.h"
#include "pea_tool.h"
#include "tpformat.h"
#include "trace.h"

#define OFFCPU_MAX_KEYS	4096	/* per CPU */

static volatile sig_atomic_t offcpu_stop;

static void offcpu_signal(int sig)
{
	(void)sig;
	offcpu_stop = 1;
}

/* One (pid, comm) with its entries of every CPU added up. */
struct offcpu_row {
	__u64 pid;
	char comm[16];
	__u64 ns, count;
};

static int row_cmp(const void *a, const void *b)
{
	const struct offcpu_row *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Both links on sched:sched_switch, the start first; 0 or an exit status. */
static int offcpu_attach(int map_fd, const struct trace_opts *o, int fd[2],
			 const struct tp_format **fmt_out,
			 struct probe_spec spec[2])
{
	struct probe_opts po[2];
	struct trace_fmt fmt[2];
	int i, rc;

	for (i = 0; i < 2; i++) {
		memset(&po[i], 0, sizeof(po[i]));
		memset(&fmt[i], 0, sizeof(fmt[i]));
		po[i].cpu = -1;
		if (probe_parse("tp:sched:sched_switch", &spec[i]))
			return PEA_EXIT_ERR;
	}
	/* The start: blocked switch-outs, of --pid's process only. */
	po[0].pid = o->defaults.pid;
	po[0].filter = "prev_state > 0 && prev_state < 16";
	for (i = 0; i < 2; i++) {
		rc = spec[i].kind->prepare(&spec[i], &po[i], &fmt[i]);
		if (rc)
			return rc;
	}
	*fmt_out = fmt[1].tp;
	for (i = 0; i < 2; i++) {
		fd[i] = spec[i].kind->attach(map_fd, &spec[i], &po[i], i + 1);
		if (fd[i] < 0)
			return PEA_EXIT_ERR;
	}
	return 0;
}

/* The tables of the start (fd[0]) and the end (fd[1]); 0 or an exit status. */
static int offcpu_tables(const struct tp_format *tp, const int fd[2])
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

/* Read the end's table into rows summed per key; the number of rows or -1. */
static long offcpu_read(int fd, struct offcpu_row **rows,
			struct pea_agg_read *r)
{
	size_t len = 1 << 20, i, n = 0, j;
	void *buf = NULL;
	struct offcpu_row *out;

	for (;;) {
		free(buf);
		buf = malloc(len);
		if (!buf)
			return -1;
		memset(r, 0, sizeof(*r));
		r->size = sizeof(*r);
		r->buf = (uintptr_t)buf;
		r->buf_len = len;
		if (!ioctl(fd, PEA_LINK_IOC_AGG_READ, r))
			break;
		if (errno != ENOSPC) {
			tool_err("--off-cpu: reading the table: %s",
				 strerror(errno));
			free(buf);
			return -1;
		}
		len = (size_t)r->nr_entries * r->entry_size + 4096;
	}
	out = calloc(r->nr_entries ? r->nr_entries : 1, sizeof(*out));
	if (!out) {
		free(buf);
		return -1;
	}
	for (i = 0; i < r->nr_entries; i++) {
		const struct pea_agg_entry *e = (const void *)
			((const char *)buf + i * r->entry_size);

		for (j = 0; j < n; j++)
			if (out[j].pid == e->key[0] &&
			    !memcmp(out[j].comm, &e->key[1], 16))
				break;
		if (j == n) {
			out[n].pid = e->key[0];
			memcpy(out[n].comm, &e->key[1], 16);
			n++;
		}
		out[j].ns += (__u64)e->sum;
		out[j].count += e->count;
	}
	free(buf);
	qsort(out, n, sizeof(*out), row_cmp);
	*rows = out;
	return (long)n;
}

static void offcpu_print(const struct trace_opts *o, struct offcpu_row *rows,
			 long n, const struct pea_agg_read *r,
			 const struct pea_lat_info *li)
{
	unsigned int top = o->agg.top;
	__u64 periods = 0;
	long i;

	for (i = 0; i < n; i++)
		periods += rows[i].count;
	if (o->json) {
		printf("{\"type\":\"offcpu\",\"count\":%llu,\"keys\":%ld,\"unpaired\":%llu,\"start_overflow\":%llu,\"pending\":%u,\"dropped\":%llu,\"rows\":[",
		       (unsigned long long)periods, n,
		       (unsigned long long)r->unpaired,
		       (unsigned long long)li->overflow, li->pending,
		       (unsigned long long)r->dropped);
		for (i = 0; i < n && i < (long)top; i++) {
			printf("%s{\"pid\":%llu,\"comm\":", i ? "," : "",
			       (unsigned long long)rows[i].pid);
			json_put_str(stdout, rows[i].comm,
				     strnlen(rows[i].comm, 16));
			printf(",\"ns\":%llu,\"count\":%llu}",
			       (unsigned long long)rows[i].ns,
			       (unsigned long long)rows[i].count);
		}
		printf("]}\n");
		fflush(stdout);
		return;
	}
	printf("off-CPU time by pid and comm, %llu blocked periods, %ld keys, complete (in-kernel)\n",
	       (unsigned long long)periods, n);
	printf("switch-ins of tasks not seen blocked %llu, switch-outs not kept (pairing table full) %llu, blocked now %u, keys past the table %llu\n",
	       (unsigned long long)r->unpaired,
	       (unsigned long long)li->overflow, li->pending,
	       (unsigned long long)r->dropped);
	printf("%14s %10s %8s  %s\n", "OFF-CPU(us)", "COUNT", "PID", "COMM");
	for (i = 0; i < n && i < (long)top; i++)
		printf("%14llu %10llu %8llu  %.16s\n",
		       (unsigned long long)(rows[i].ns / 1000),
		       (unsigned long long)rows[i].count,
		       (unsigned long long)rows[i].pid, rows[i].comm);
	if (n > (long)top)
		printf("(%ld more keys)\n", n - (long)top);
	fflush(stdout);
}

/**
 * trace_offcpu() - pea trace --off-cpu: run until --duration or a signal,
 * then print the top (pid, comm) by blocked time
 * @o: the parsed options (no PROBE)
 * @ncpus: the map's slots
 *
 * Return: an exit status.
 */
int trace_offcpu(const struct trace_opts *o, int ncpus)
{
	struct probe_spec spec[2];
	const struct tp_format *tp = NULL;
	struct offcpu_row *rows = NULL;
	struct pea_lat_info li;
	struct pea_agg_read r;
	struct sigaction sa;
	char name[PEA_OBJ_NAME_LEN];
	int map_fd, fd[2] = { -1, -1 }, rc;
	__u64 end;
	long n;

	memset(spec, 0, sizeof(spec));
	snprintf(name, sizeof(name), "offcpu_%d", (int)getpid());
	map_fd = pea_map_create(name, ncpus, 0);
	if (map_fd < 0) {
		tool_explain_dev_error("creating a map", map_fd);
		return PEA_EXIT_ERR;
	}
	rc = offcpu_attach(map_fd, o, fd, &tp, spec);
	if (!rc)
		rc = offcpu_tables(tp, fd);
	if (rc)
		goto out;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = offcpu_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	fprintf(stderr, "pea: tracing off-CPU time (tp:sched:sched_switch, blocked switch-outs%s) on %d CPUs; Ctrl-C to end\n",
		o->defaults.pid ? " of --pid" : "", ncpus);
	end = o->duration > 0 ? tool_now_ns() + (__u64)(o->duration * 1e9) :
				0;
	while (!offcpu_stop && (!end || tool_now_ns() < end))
		usleep(20000);
	/* The counts before the start link goes, then the table. */
	memset(&li, 0, sizeof(li));
	if (ioctl(fd[0], PEA_LINK_IOC_LAT_INFO, &li))
		tool_err("--off-cpu: the pairing table's counts: %s",
			 strerror(errno));
	n = offcpu_read(fd[1], &rows, &r);
	if (n < 0) {
		rc = PEA_EXIT_ERR;
		goto out;
	}
	offcpu_print(o, rows, n, &r, &li);
	free(rows);
out:
	if (fd[1] >= 0)
		close(fd[1]);
	if (fd[0] >= 0)
		close(fd[0]);
	for (n = 0; n < 2; n++)
		if (spec[n].kind && spec[n].kind->release)
			spec[n].kind->release(&spec[n]);
	close(map_fd);
	return rc;
}
