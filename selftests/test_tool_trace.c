// SPDX-License-Identifier: GPL-2.0
/*
 * `pea trace` end to end: the test runs /bin/pea trace on
 * kprobe/kretprobe:do_sys_openat2 filtered on a workload child of its own,
 * which opens exactly the files it is told to, and checks what the tool
 * prints against what the workload did:
 *
 *   - --json --count: one valid JSON object per line; every open appears
 *     once, in order, with the workload's pid, tid and comm, the exact
 *     file name (quotes, backslashes, control characters, UTF-8, a byte
 *     that is not UTF-8 in "str_hex", a name longer than the capture
 *     "truncated"); a last summary line with the exact counts;
 *   - kretprobe: the exact return value (an fd, -ENOENT) and a latency;
 *   - --args (AT_FDCWD and the name's address), --bytes ARG1:8, --cpu;
 *   - human output and SIGINT: header, one line per open, summary on
 *     stderr, exit 0; `pea stat` meanwhile shows the trace's rings and link;
 *   - --duration with nothing to show: only the summary line;
 *   - a stopped reader: the exact number of records that fit in a one-page
 *     ring is printed and every other one is reported lost;
 *   - --flight-recorder: after a burst, exactly the newest records that fit
 *     in a one-page ring, oldest first, nothing lost, and the summary's
 *     horizon is the oldest one's time;
 *   - order: opens alternating between CPU 0 and CPU 1 while the tool is
 *     stopped come out alternating by default (ordered delivery) and one
 *     ring after the other, each in ring order, with --unordered;
 *   - errors: an unknown function (exit 1, message naming it), an offset
 *     inside an instruction, a function kprobes refuse.
 */
#include <sys/prctl.h>
#include "pt_tool.h"
#include "pt_caller.h"

#define PROBE		"kprobe:do_sys_openat2"
#define RETPROBE	"kretprobe:do_sys_openat2"
#define WL_COMM		"pea_tool_wl"
#define NAME_MAX_LEN	400

static int ncpu;

/* ---- the workload child ---- */

enum { WL_OPEN, WL_PIN, WL_BURST, WL_EXIT };

struct wl_cmd {
	int op;
	int arg;		/* PIN: the CPU; BURST: how many */
	char name[NAME_MAX_LEN];	/* OPEN: the name; BURST: the prefix */
};

struct wl_reply {
	long ret;		/* OPEN: fd or -errno */
	unsigned long ptr;	/* OPEN: the name's address */
};

static void wl_main(int cmd, int reply)
{
	static struct wl_cmd c;
	struct wl_reply r;
	char name[NAME_MAX_LEN + 16];
	cpu_set_t set;
	int i;

	prctl(PR_SET_NAME, WL_COMM);
	while (read(cmd, &c, sizeof(c)) == sizeof(c)) {
		memset(&r, 0, sizeof(r));
		switch (c.op) {
		case WL_OPEN:
			r.ret = syscall(SYS_openat, AT_FDCWD, c.name, O_RDONLY);
			if (r.ret < 0)
				r.ret = -errno;
			else
				close(r.ret);
			r.ptr = (unsigned long)c.name;
			break;
		case WL_PIN:
			CPU_ZERO(&set);
			CPU_SET(c.arg, &set);
			r.ret = sched_setaffinity(0, sizeof(set), &set);
			break;
		case WL_BURST:
			for (i = 0; i < c.arg; i++) {
				snprintf(name, sizeof(name), "%s%03d", c.name, i);
				syscall(SYS_openat, AT_FDCWD, name, O_RDONLY);
			}
			break;
		case WL_EXIT:
			_exit(0);
		}
		if (write(reply, &r, sizeof(r)) != sizeof(r))
			_exit(1);
	}
	_exit(0);
}

static struct wl_reply wl_do(struct pt_caller *w, int op, int arg,
			     const char *name)
{
	static struct wl_cmd c;
	struct wl_reply r = { -EIO, 0 };

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.arg = arg;
	if (name)
		snprintf(c.name, sizeof(c.name), "%s", name);
	if (write(w->req, &c, sizeof(c)) != sizeof(c) ||
	    read(w->done, &r, sizeof(r)) != sizeof(r))
		pt_fatal("workload");
	return r;
}

/* ---- running the tool ---- */

static char line[65536];

/* Start pea trace with @args...; wait for its "tracing" banner. */
static bool trace_start(struct pt_proc *p, char *const argv[])
{
	bool ok = false;

	pt_spawn(p, argv, NULL, NULL);
	while (pt_proc_line(p, true, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (strstr(line, "pea: tracing ")) {
			ok = true;
			break;
		}
		pt_diag("pea trace: %s", line);
	}
	return ok;
}

static char *hex(const void *s, size_t len, char *out)
{
	const unsigned char *p = s;
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * len] = '\0';
	return out;
}

/* ---- --json --count: exact names ---- */

static void test_json_names(void)
{
	char longname[301], pid[16], count[16], want[2 * NAME_MAX_LEN + 1];
	char got[2048], *argv[16];
	const char *names[7];
	struct pt_caller w;
	struct pt_proc p;
	int i, n = 0, events = 0, valid = 1, rc, bad = 0, order = 1;
	long long last_time = 0;
	bool summary = false, after_summary = false;
	size_t len;

	memset(longname, 0, sizeof(longname));
	memcpy(longname, "/tmp/", 5);
	memset(longname + 5, 'L', 295);
	names[n++] = "/tmp/pea-tool-plain";
	names[n++] = "/tmp/pea \"quoted\" and \\back\\slashed";
	names[n++] = "/tmp/pea-tab\t-newline\n-cr\r-bell\a-end";
	names[n++] = "/tmp/pea-utf8-\xc3\xa9\xe2\x82\xac";
	names[n++] = "/tmp/pea-bad-\xff\xfe-bytes";
	names[n++] = longname;

	pt_caller_start(&w, wl_main);
	snprintf(pid, sizeof(pid), "%d", w.pid);
	snprintf(count, sizeof(count), "%d", n);
	i = 0;
	argv[i++] = PT_PEA;
	argv[i++] = "trace";
	argv[i++] = PROBE;
	argv[i++] = "--str";
	argv[i++] = "ARG1";
	argv[i++] = "--json";
	argv[i++] = "--count";
	argv[i++] = count;
	argv[i++] = "--pid";
	argv[i++] = pid;
	argv[i] = NULL;
	PT_OK(trace_start(&p, argv), "json: pea trace attached (banner on stderr)");
	for (i = 0; i < n; i++)
		wl_do(&w, WL_OPEN, 0, names[i]);

	i = 0;
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_valid(line)) {
			valid = 0;
			pt_diag("not JSON: %s", line);
			continue;
		}
		if (summary)
			after_summary = true;
		if (pt_json_streq(line, "type", "summary")) {
			summary = true;
			PT_EQ(pt_json_num(line, "events", -1), n,
			      "json summary: events %d", n);
			PT_EQ(pt_json_num(line, "records", -1), n,
			      "json summary: records %d (others filtered by --pid)", n);
			PT_EQ(pt_json_num(line, "lost", -1), 0, "json summary: lost 0");
			PT_EQ(pt_json_num(line, "malformed", -1), 0,
			      "json summary: malformed 0");
			PT_OK(pt_json_get(line, "link", got, sizeof(got), NULL) &&
			      pt_json_num(got, "written", -1) == n &&
			      pt_json_num(got, "errors", -1) == 0,
			      "json summary: link written %d, errors 0", n);
			PT_OK(pt_json_get(line, "cpus", got, sizeof(got), NULL) &&
			      got[0] == '[', "json summary: per-CPU array");
			continue;
		}
		if (!pt_json_streq(line, "type", "event")) {
			pt_diag("unexpected: %s", line);
			bad++;
			continue;
		}
		events++;
		if (i >= n) {
			bad++;
			continue;
		}
		if (pt_json_num(line, "pid", -1) != w.pid ||
		    pt_json_num(line, "tid", -1) != w.pid ||
		    !pt_json_streq(line, "comm", WL_COMM) ||
		    !pt_json_streq(line, "probe", PROBE) ||
		    pt_json_num(line, "cpu", -1) < 0 ||
		    pt_json_num(line, "cpu", -1) >= ncpu) {
			pt_diag("event %d: %s", i, line);
			bad++;
		}
		if (pt_json_num(line, "time_ns", 0) < last_time)
			order = 0;
		last_time = pt_json_num(line, "time_ns", 0);
		if (!pt_json_get(line, "str", got, sizeof(got), &len)) {
			bad++;
		} else if (i == 4) {
			/* Not UTF-8: U+FFFD in "str", the bytes in "str_hex". */
			char h[2 * NAME_MAX_LEN + 1];

			PT_OK(!strcmp(got, "/tmp/pea-bad-\xef\xbf\xbd\xef\xbf\xbd-bytes"),
			      "json: a name that is not UTF-8 has U+FFFD in str");
			PT_OK(pt_json_get(line, "str_hex", h, sizeof(h), NULL) &&
			      !strcmp(h, hex(names[4], strlen(names[4]), want)),
			      "json: ... and its exact bytes in str_hex");
		} else if (i == 5) {
			PT_OK(len == PEA_CAPTURE_MAX &&
			      !memcmp(got, longname, PEA_CAPTURE_MAX),
			      "json: a 300-byte name: its first %d bytes", PEA_CAPTURE_MAX);
			PT_OK(pt_json_get(line, "truncated", got, sizeof(got), NULL) &&
			      !strcmp(got, "true"), "json: ... marked truncated");
		} else {
			PT_OK(len == strlen(names[i]) && !strcmp(got, names[i]),
			      "json: name %d exact after JSON decoding", i);
			PT_OK(!strstr(line, "\"truncated\"") &&
			      !strstr(line, "\"str_hex\""),
			      "json: name %d neither truncated nor str_hex", i);
		}
		i++;
	}
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "json: pea trace --count %d exits 0 by itself", n);
	PT_EQ(events, n, "json: exactly %d events", n);
	PT_EQ(bad, 0, "json: every event has the workload's pid, tid, comm, probe and a valid cpu");
	PT_OK(valid, "json: every stdout line is one valid JSON object");
	PT_OK(order, "json: events in time order");
	PT_OK(summary && !after_summary, "json: the summary is the last line");
	pt_proc_close(&p);
	pt_caller_stop(&w);
}

/* ---- kretprobe, --args, --bytes, --cpu ---- */

/* Run a --json trace for @argv while @work runs; collect event lines. */
static int trace_json(char **argv, struct pt_caller *w,
		      void (*work)(struct pt_caller *, void *), void *arg,
		      char events[][4096], int max, char *summary)
{
	struct pt_proc p;
	int n = 0, rc;

	if (!trace_start(&p, argv)) {
		pt_proc_close(&p);
		return -1;
	}
	work(w, arg);
	summary[0] = '\0';
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "event") && n < max)
			snprintf(events[n++], 4096, "%.4000s", line);
		else if (pt_json_streq(line, "type", "summary"))
			snprintf(summary, 4096, "%.4000s", line);
		else
			pt_diag("unexpected: %s", line);
	}
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	return rc ? -100 - rc : n;
}

static struct wl_reply replies[4];

static void work_ret(struct pt_caller *w, void *arg)
{
	(void)arg;
	replies[0] = wl_do(w, WL_OPEN, 0, "/tmp/pea-no-such-file");
	replies[1] = wl_do(w, WL_OPEN, 0, "/proc/version");
}

static void work_one(struct pt_caller *w, void *arg)
{
	replies[0] = wl_do(w, WL_OPEN, 0, arg);
}

static void work_cpu(struct pt_caller *w, void *arg)
{
	int cpu = *(int *)arg;

	wl_do(w, WL_PIN, (cpu + 1) % ncpu, NULL);
	wl_do(w, WL_OPEN, 0, "/tmp/pea-other-cpu");
	wl_do(w, WL_PIN, cpu, NULL);
	wl_do(w, WL_OPEN, 0, "/tmp/pea-this-cpu");
}

static void test_variants(void)
{
	static char ev[4][4096], sum[4096];
	char pid[16], buf[256], cpus[16], want[64];
	struct pt_caller w;
	int n, cpu = ncpu - 1;
	unsigned long long a0 = 0, a1 = 0;

	pt_caller_start(&w, wl_main);
	snprintf(pid, sizeof(pid), "%d", w.pid);

	n = trace_json((char *[]){ PT_PEA, "trace", RETPROBE, "--str", "ARG1",
				   "--json", "--count", "2", "--pid", pid, NULL },
		       &w, work_ret, NULL, ev, 4, sum);
	PT_EQ(n, 2, "kretprobe: 2 events");
	PT_OK(n == 2 && pt_json_num(ev[0], "ret", 1) == -ENOENT &&
	      pt_json_streq(ev[0], "str", "/tmp/pea-no-such-file") &&
	      pt_json_streq(ev[0], "probe", RETPROBE),
	      "kretprobe: the missing file returns -ENOENT (%lld), name captured at entry",
	      n >= 1 ? pt_json_num(ev[0], "ret", 1) : 1);
	PT_OK(n == 2 && pt_json_num(ev[1], "ret", -1) == replies[1].ret &&
	      replies[1].ret >= 0 && pt_json_streq(ev[1], "str", "/proc/version"),
	      "kretprobe: /proc/version returns the fd the workload got (%ld)",
	      replies[1].ret);
	PT_OK(n == 2 && pt_json_num(ev[0], "latency_ns", 0) > 0 &&
	      pt_json_num(ev[1], "latency_ns", 0) > 0,
	      "kretprobe: latency_ns present and non-zero");

	n = trace_json((char *[]){ PT_PEA, "trace", PROBE, "--args", "--json",
				   "--count", "1", "--pid", pid, NULL },
		       &w, work_one, "/tmp/pea-args", ev, 4, sum);
	PT_EQ(n, 1, "--args: 1 event");
	if (n == 1 && pt_json_get(ev[0], "args", buf, sizeof(buf), NULL))
		sscanf(buf, "[\"0x%llx\",\"0x%llx\"", &a0, &a1);
	PT_EQ(a0 & 0xffffffffULL, 0xffffff9cULL,
	      "--args: ARG0 is AT_FDCWD (low 32 bits 0xffffff9c)");
	PT_EQ(a1, replies[0].ptr, "--args: ARG1 is the name's address in the workload");
	PT_OK(n == 1 && !strstr(ev[0], "\"str\"") && !strstr(ev[0], "\"ret\""),
	      "--args: no capture, no ret in a kprobe event without them");

	n = trace_json((char *[]){ PT_PEA, "trace", PROBE, "--bytes", "ARG1:8",
				   "--json", "--count", "1", "--pid", pid, NULL },
		       &w, work_one, "/tmp/pea-bytes", ev, 4, sum);
	PT_OK(n == 1 && pt_json_streq(ev[0], "bytes", hex("/tmp/pea-bytes", 8, want)),
	      "--bytes ARG1:8: the first 8 bytes of the name in hex");

	snprintf(cpus, sizeof(cpus), "%d", cpu);
	n = trace_json((char *[]){ PT_PEA, "trace", PROBE, "--str", "ARG1",
				   "--cpu", cpus, "--json", "--count", "1",
				   "--pid", pid, NULL },
		       &w, work_cpu, &cpu, ev, 4, sum);
	PT_OK(n == 1 && pt_json_streq(ev[0], "str", "/tmp/pea-this-cpu") &&
	      pt_json_num(ev[0], "cpu", -1) == cpu,
	      "--cpu %d: only the open on CPU %d", cpu, cpu);
	PT_OK(pt_json_get(sum, "link", buf, sizeof(buf), NULL) &&
	      pt_json_num(buf, "filtered", 0) >= 1,
	      "--cpu: the link counted the other CPU's hit as filtered");
	pt_caller_stop(&w);
}

/* ---- human output, SIGINT, and pea stat meanwhile ---- */

static void test_human(void)
{
	static char out[65536], err[4096];
	const char *names[3] = { "/tmp/pea-human-a", "/tmp/pea-human-b",
				 "/tmp/pea human \"c\"" };
	char pid[16], comm_pid[64], mapname[32], map_id[32] = "", quoted[64];
	struct pt_caller w;
	struct pt_proc p;
	int i, rc, lines = 0, rings = 0, links = 0, header = 0;

	pt_caller_start(&w, wl_main);
	snprintf(pid, sizeof(pid), "%d", w.pid);
	PT_OK(trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--str",
					  "ARG1", "--pid", pid, NULL }),
	      "human: attached");
	for (i = 0; i < 3; i++)
		wl_do(&w, WL_OPEN, 0, names[i]);

	/* pea stat while the trace runs: its rings and its link. */
	snprintf(mapname, sizeof(mapname), "trace_%d", p.pid);
	rc = pt_run((char *[]){ PT_PEA, "stat", "--json", "--map", mapname, NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 0, "pea stat --json --map %s exits 0", mapname);
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		if (pt_json_streq(l, "type", "ring") &&
		    pt_json_streq(l, "name", mapname) &&
		    pt_json_num(l, "data_pages", 0) == 64 &&
		    pt_json_num(l, "slot", -1) == pt_json_num(l, "cpu", -2)) {
			rings++;
			pt_json_get(l, "map_id", map_id, sizeof(map_id), NULL);
		}
		if (pt_json_streq(l, "type", "link") &&
		    pt_json_streq(l, "symbol", "do_sys_openat2") &&
		    pt_json_streq(l, "probe", PROBE))
			links++;
	}
	PT_EQ(rings, ncpu, "pea stat: the trace's map has one 64-page ring per CPU, slot = CPU");
	PT_EQ(links, 1, "pea stat: the trace's probe is listed with its map");
	(void)map_id;

	i = 0;
	snprintf(comm_pid, sizeof(comm_pid), "%-16s %7d %7d", WL_COMM, w.pid,
		 w.pid);
	while (lines < 3 &&
	       pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!strncmp(line, "TIME(s)", 7)) {
			header++;
			PT_OK(strstr(line, "COMM") && strstr(line, "PID") &&
			      strstr(line, "TID") && strstr(line, "STRING"),
			      "human: header names the columns");
			continue;
		}
		lines++;
		if (i == 2)
			snprintf(quoted, sizeof(quoted), "\"/tmp/pea human \\\"c\\\"\"");
		else
			snprintf(quoted, sizeof(quoted), "\"%s\"", names[i]);
		PT_OK(strstr(line, comm_pid) && strstr(line, quoted),
		      "human: line %d has comm, pid, tid and %s", i, quoted);
		if (!strstr(line, quoted))
			pt_diag("line: %s", line);
		i++;
	}
	PT_EQ(header, 1, "human: one header line");
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		lines++;
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "human: SIGINT ends pea trace with exit 0");
	PT_EQ(lines, 3, "human: 3 event lines, nothing else on stdout");
	PT_OK(p.err_all && strstr(p.err_all, "pea: " PROBE ": 3 events in") &&
	      strstr(p.err_all, "RECORDS") && strstr(p.err_all, "   all ") &&
	      strstr(p.err_all, "probe: ") && strstr(p.err_all, " 3 written"),
	      "human: the summary on stderr: 3 events, per-CPU table, probe counters");
	if (p.err_all && !strstr(p.err_all, " 3 written"))
		pt_diag("stderr: %s", p.err_all);
	pt_proc_close(&p);
	pt_caller_stop(&w);
}

static void test_duration(void)
{
	static char out[65536], err[8192];
	char pid[16];
	int rc, n = 0;
	char *l;

	/* This process opens nothing while it waits for the tool. */
	snprintf(pid, sizeof(pid), "%d", getpid());
	rc = pt_run((char *[]){ PT_PEA, "trace", PROBE, "--pid", pid,
				"--duration", "0.5", "--json", "--quiet", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 0, "--duration 0.5 --quiet: exits 0 by itself");
	for (l = strtok(out, "\n"); l; l = strtok(NULL, "\n"), n++)
		PT_OK(pt_json_streq(l, "type", "summary") &&
		      pt_json_num(l, "events", -1) == 0,
		      "--duration: the only line is a summary with 0 events");
	PT_EQ(n, 1, "--duration: one line on stdout");
}

/*
 * The tool's own process is excluded in the kernel (PEA_MAP_IOC_EXCLUDE_TGID):
 * tracing every write(2) for a second, none of the events is pea's own,
 * though it writes its "tracing" line and would write each event's; with
 * --include-self those writes feed back, 20 events come at once.
 */
static void test_self(void)
{
	static char out[65536], err[8192];
	int rc, n = 0, own = 0;
	char *l;

	rc = pt_run((char *[]){ PT_PEA, "trace",
				"tp:syscalls:sys_enter_write", "--duration",
				"1", "--json", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 0, "self: a second of every write(2): exit 0");
	for (l = strtok(out, "\n"); l; l = strtok(NULL, "\n"))
		if (pt_json_streq(l, "type", "event")) {
			n++;
			own += pt_json_streq(l, "comm", "pea");
		}
	PT_EQ(own, 0, "self: none of the %d events is the tool's own", n);
	rc = pt_run((char *[]){ PT_PEA, "trace",
				"tp:syscalls:sys_enter_write", "--include-self",
				"--count", "20", "--duration", "10", "--json",
				NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	n = own = 0;
	for (l = strtok(out, "\n"); l; l = strtok(NULL, "\n"))
		if (pt_json_streq(l, "type", "event")) {
			n++;
			own += pt_json_streq(l, "comm", "pea");
		}
	PT_OK(rc == 0 && n == 20 && own >= 1,
	      "self: --include-self: its own writes traced (%d of %d events, exit %d)",
	      own, n, rc);
}

/* ---- a reader that cannot keep up: every record accounted for ---- */

/*
 * Bytes in the ring of one record of a WL_BURST with --str ARG1: the
 * probe record and the captured name, which is @prefix and 3 digits;
 * @ordered: pea trace's default, ordered delivery, adds PERF_SAMPLE_TIME.
 */
static int burst_rec_size(const char *prefix, bool ordered)
{
	return (ordered ? 16 : 8) +
	       ((4 + sizeof(struct pea_probe_record) + strlen(prefix) + 3 +
		 7) & ~7);
}

/*
 * pea stat while the one-page ring is full: the link's drops in their
 * own column (JSON "dropped", the table's DROPPED), not its errors.
 */
static void lost_stat(int dropped)
{
	static char sout[65536], serr[4096];
	char want[64], *l;
	int rc;

	rc = pt_run((char *[]){ PT_PEA, "stat", "--json", NULL },
		    sout, sizeof(sout), serr, sizeof(serr), NULL, NULL);
	l = strstr(sout, "{\"type\":\"link\"");
	if (l && strchr(l, '\n'))
		*strchr(l, '\n') = 0;
	PT_OK(rc == 0 && l && pt_json_num(l, "dropped", -1) == dropped &&
	      pt_json_num(l, "errors", -1) == 0,
	      "lost: pea stat --json: the link's dropped %d, errors 0", dropped);
	if (!l)
		pt_diag("pea stat: %s %s", sout, serr);
	rc = pt_run((char *[]){ PT_PEA, "stat", NULL },
		    sout, sizeof(sout), serr, sizeof(serr), NULL, NULL);
	snprintf(want, sizeof(want), " 0 %10d\n", dropped);
	PT_OK(rc == 0 && strstr(sout, "ERRORS   MISSED    DROPPED\n") &&
	      strstr(sout, want),
	      "lost: pea stat's link table: MISSED 0, DROPPED %d", dropped);
	if (!strstr(sout, want))
		pt_diag("pea stat: %s", sout);
}

static void test_lost(void)
{
	const char *prefix = "/tmp/pea-lost-";
	char pid[16], got[4096];
	struct pt_caller w;
	struct pt_proc p;
	int total = 100, rec, fit, events = 0, rc, status;
	long long lost_lines = 0, lost_sum = -1, records = -1;
	long page = pt_page_size();

	rec = burst_rec_size(prefix, true);
	fit = page / rec;

	pt_caller_start(&w, wl_main);
	wl_do(&w, WL_PIN, 0, NULL);
	snprintf(pid, sizeof(pid), "%d", w.pid);
	PT_OK(trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--str",
					  "ARG1", "--pid", pid, "--pages", "1",
					  "--json", NULL }),
	      "lost: attached with one-page rings");
	kill(p.pid, SIGSTOP);
	/* Stopped for sure before the burst: it reads nothing meanwhile. */
	PT_OK(waitpid(p.pid, &status, WUNTRACED) == p.pid && WIFSTOPPED(status),
	      "lost: pea trace stopped");
	wl_do(&w, WL_BURST, total, prefix);
	lost_stat(total - fit);
	kill(p.pid, SIGCONT);
	/* Let it read, then end it. */
	while (events < fit &&
	       pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "event"))
			events++;
		else if (pt_json_streq(line, "type", "lost"))
			lost_lines += pt_json_num(line, "lost", 0);
	}
	kill(p.pid, SIGTERM);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "event")) {
			events++;
		} else if (pt_json_streq(line, "type", "lost")) {
			lost_lines += pt_json_num(line, "lost", 0);
		} else if (pt_json_streq(line, "type", "summary")) {
			lost_sum = pt_json_num(line, "lost", -1);
			records = pt_json_num(line, "records", -1);
			if (pt_json_get(line, "link", got, sizeof(got), NULL)) {
				PT_EQ(pt_json_num(got, "written", -1), fit,
				      "lost: the link wrote %d", fit);
				PT_EQ(pt_json_num(got, "dropped", -1), total - fit,
				      "lost: the link dropped %d (ring full)",
				      total - fit);
				PT_EQ(pt_json_num(got, "errors", -1), 0,
				      "lost: the drops are not the link's errors");
			}
		}
	}
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "lost: SIGTERM ends pea trace with exit 0");
	PT_EQ(events, fit, "lost: the %d records that fit a %ld-byte ring are printed",
	      fit, page);
	PT_EQ(records, fit, "lost: summary records %d", fit);
	PT_EQ(lost_sum, total - fit, "lost: summary lost %d", total - fit);
	PT_EQ(lost_lines, total - fit, "lost: \"lost\" lines add up to %d",
	      total - fit);
	pt_proc_close(&p);
	pt_caller_stop(&w);
}

/*
 * Loss notices: at most one a second per CPU, and the rest at the end.
 * Five bursts into a one-page ring, each while the tool is stopped, each
 * read before the next: one notice at once, the other four losses in one
 * notice at the end (more only if the bursts took longer than a second),
 * each with the CPU's total and the time its first loss was seen.
 */
static void test_lost_rate(void)
{
	const char *prefix = "/tmp/pea-lrate-";
	long long lines = 0, sum = 0, total = -1, t_prev = 0, t_bad = 0;
	int bursts = 5, per = 100, rec, fit, events = 0, i, status;
	char pid[16];
	struct pt_caller w;
	struct pt_proc p;
	long long t0, elapsed;

	rec = burst_rec_size(prefix, true);
	fit = pt_page_size() / rec;
	pt_caller_start(&w, wl_main);
	wl_do(&w, WL_PIN, 0, NULL);
	snprintf(pid, sizeof(pid), "%d", w.pid);
	PT_OK(trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--str",
					  "ARG1", "--pid", pid, "--pages", "1",
					  "--json", NULL }),
	      "lost notices: attached with one-page rings");
	t0 = pt_now_ms();
	for (i = 0; i < bursts; i++) {
		kill(p.pid, SIGSTOP);
		waitpid(p.pid, &status, WUNTRACED);
		wl_do(&w, WL_BURST, per, prefix);
		kill(p.pid, SIGCONT);
		while (events < (i + 1) * fit &&
		       pt_proc_line(&p, false, line, sizeof(line),
				    PT_TOOL_WAIT_MS)) {
			if (pt_json_streq(line, "type", "event"))
				events++;
			if (!pt_json_streq(line, "type", "lost"))
				continue;
			lines++;
			sum += pt_json_num(line, "lost", 0);
			total = pt_json_num(line, "total", -1);
			t_bad += pt_json_num(line, "time_ns", 0) < t_prev;
			t_prev = pt_json_num(line, "time_ns", 0);
		}
	}
	elapsed = pt_now_ms() - t0;
	kill(p.pid, SIGTERM);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "lost"))
			continue;
		lines++;
		sum += pt_json_num(line, "lost", 0);
		total = pt_json_num(line, "total", -1);
		t_bad += pt_json_num(line, "time_ns", 0) < t_prev;
		t_prev = pt_json_num(line, "time_ns", 0);
	}
	PT_EQ(pt_proc_wait(&p), 0, "lost notices: exit 0");
	pt_proc_close(&p);
	pt_caller_stop(&w);
	pt_diag("%d bursts in %lld ms: %lld lost notices", bursts, elapsed,
		lines);
	PT_OK(lines >= 2 && lines <= 2 + elapsed / 1000,
	      "lost notices: one a second at most, the rest at the end (%lld in %lld ms)",
	      lines, elapsed);
	PT_OK(sum == (long long)bursts * (per - fit) && total == sum && !t_bad &&
	      t_prev > 0,
	      "lost notices add up to %d, the last one's total too, times in order (%lld, %lld)",
	      bursts * (per - fit), sum, total);
}

/* ---- --flight-recorder: the newest records, at the end ---- */

static void test_flight(void)
{
	const char *prefix = "/tmp/pea-flight-";
	char pid[16], want[64], got[256];
	struct pt_caller w;
	struct pt_proc p;
	int total = 100, rec, fit, events = 0, rc, order = 1;
	long long records = -1, lost = -1, horizon = -1, first = -2;
	long page = pt_page_size();

	/* An ordered snapshot: the records carry their time. */
	rec = burst_rec_size(prefix, true);
	fit = page / rec;

	pt_caller_start(&w, wl_main);
	wl_do(&w, WL_PIN, 0, NULL);
	snprintf(pid, sizeof(pid), "%d", w.pid);
	PT_OK(trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--str",
					  "ARG1", "--pid", pid, "--pages", "1",
					  "--flight-recorder", "--json", NULL }),
	      "flight: attached with one-page overwrite rings");
	wl_do(&w, WL_BURST, total, prefix);
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "event")) {
			snprintf(want, sizeof(want), "%s%03d", prefix,
				 total - fit + events);
			if (!pt_json_get(line, "str", got, sizeof(got), NULL) ||
			    strcmp(got, want)) {
				order = 0;
				pt_diag("event %d: %s, want %s", events, line, want);
			}
			if (!events)
				first = pt_json_num(line, "time_ns", -2);
			events++;
		} else if (pt_json_streq(line, "type", "summary")) {
			records = pt_json_num(line, "records", -1);
			lost = pt_json_num(line, "lost", -1);
			horizon = pt_json_num(line, "horizon_ns", -1);
		}
	}
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "flight: SIGINT ends it with exit 0");
	PT_EQ(events, fit, "flight: the %d newest of %d records (a %ld-byte ring)",
	      fit, total, page);
	PT_OK(order, "flight: exactly names %03d..%03d, oldest first",
	      total - fit, total - 1);
	PT_EQ(records, fit, "flight: summary records %d", fit);
	PT_EQ(lost, 0, "flight: nothing lost: old records were overwritten, not dropped");
	PT_OK(horizon > 0 && horizon == first,
	      "flight: the ring wrapped: the horizon is its oldest record's time (%lld, %lld)",
	      horizon, first);
	pt_proc_close(&p);
	pt_caller_stop(&w);
}

/* ---- the order of delivery: ordered by default, raw with --unordered ---- */

#define ORDER_N		8

/*
 * With pea trace stopped, the workload opens a0 on CPU 0, b0 on CPU 1,
 * a1 on CPU 0, ... (sched_setaffinity() moves it before it returns), so
 * the rings hold a0..a7 and b0..b7 when the tool reads them again, in
 * one drain: no wake-up, the records fill far less than the quarter
 * ring. Ordered delivery prints them as they happened, a0 b0 a1 b1 ...;
 * --unordered prints the raw per-CPU order, one ring after the other,
 * each in ring order: a0..a7 then b0..b7, or b0..b7 then a0..a7.
 */
static void test_order(bool unordered)
{
	const char *what = unordered ? "--unordered" : "ordered";
	char pid[16], name[64], got[256], seen[2 * ORDER_N][64];
	int cpus[2 * ORDER_N], events = 0, i, rc, status, exact = 1, pinned = 1;
	bool a_first;
	struct pt_caller w;
	struct pt_proc p;
	long long records = -1, lost = -1;

	PT_OK(ncpu >= 2, "%s: the guest has 2 CPUs or more (%d)", what, ncpu);
	if (ncpu < 2)
		return;
	pt_caller_start(&w, wl_main);
	wl_do(&w, WL_PIN, 0, NULL);
	snprintf(pid, sizeof(pid), "%d", w.pid);
	/* The default has no option: the list ends one entry earlier. */
	PT_OK(trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--str",
					  "ARG1", "--pid", pid, "--json",
					  unordered ? "--unordered" : NULL,
					  NULL }),
	      "%s: attached", what);
	kill(p.pid, SIGSTOP);
	PT_OK(waitpid(p.pid, &status, WUNTRACED) == p.pid && WIFSTOPPED(status),
	      "%s: pea trace stopped", what);
	for (i = 0; i < 2 * ORDER_N; i++) {
		if (wl_do(&w, WL_PIN, i % 2, NULL).ret)
			pinned = 0;
		snprintf(name, sizeof(name), "/tmp/pea-order-%c%d",
			 i % 2 ? 'b' : 'a', i / 2);
		wl_do(&w, WL_OPEN, 0, name);
	}
	PT_OK(pinned, "%s: the workload moved between CPU 0 and 1", what);
	kill(p.pid, SIGCONT);
	while (events < 2 * ORDER_N &&
	       pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "event"))
			continue;
		if (!pt_json_get(line, "str", got, sizeof(got), NULL))
			got[0] = '\0';
		snprintf(seen[events], sizeof(seen[events]), "%s", got);
		cpus[events] = (int)pt_json_num(line, "cpu", -1);
		events++;
	}
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "event")) {
			events++;
		} else if (pt_json_streq(line, "type", "summary")) {
			records = pt_json_num(line, "records", -1);
			lost = pt_json_num(line, "lost", -1);
		}
	}
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "%s: SIGINT ends it with exit 0", what);
	PT_EQ(events, 2 * ORDER_N, "%s: %d events", what, 2 * ORDER_N);
	PT_EQ(records, 2 * ORDER_N, "%s: summary records %d", what,
	      2 * ORDER_N);
	PT_EQ(lost, 0, "%s: nothing lost", what);
	a_first = events && !strcmp(seen[0], "/tmp/pea-order-a0");
	for (i = 0; i < 2 * ORDER_N && i < events; i++) {
		int cpu, k;

		if (unordered) {
			/* Ring after ring: either CPU's ring may come first. */
			cpu = (i < ORDER_N) == a_first ? 0 : 1;
			k = i % ORDER_N;
		} else {
			/* a0 b0 a1 b1 ...: the order of the opens. */
			cpu = i % 2;
			k = i / 2;
		}
		snprintf(name, sizeof(name), "/tmp/pea-order-%c%d",
			 cpu ? 'b' : 'a', k);
		if (strcmp(seen[i], name) || cpus[i] != cpu) {
			exact = 0;
			pt_diag("%s: event %d: %s on CPU %d, want %s on CPU %d",
				what, i, seen[i], cpus[i], name, cpu);
		}
	}
	PT_OK(exact, unordered ?
	      "--unordered: the raw per-CPU order, one ring after the other (%s first), each in ring order" :
	      "ordered: a0 b0 a1 b1 ... exactly as the opens alternated CPUs (%s)",
	      a_first ? "CPU 0" : "CPU 1");
	pt_proc_close(&p);
	pt_caller_stop(&w);
}

/* ---- attach errors ---- */

/* A function the kprobes blacklist holds, from debugfs. */
static bool blacklisted(char *sym, size_t len)
{
	FILE *f = fopen("/sys/kernel/debug/kprobes/blacklist", "r");
	char l[512], name[256];
	bool found = false;

	if (!f)
		return false;
	while (fgets(l, sizeof(l), f))
		if (sscanf(l, "%*s %255s", name) == 1 && name[0] != '[' &&
		    !strchr(name, '.') && strlen(name) < len &&
		    !strncmp(name, "kprobe_", 7)) {
			snprintf(sym, len, "%s", name);
			found = true;
			break;
		}
	fclose(f);
	return found;
}

static void test_attach_errors(void)
{
	static char out[65536], err[8192];
	char sym[128], probe[160];
	int rc;

	rc = pt_run((char *[]){ PT_PEA, "trace", "kprobe:pea_no_such_function", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 1, "unknown function: exit 1");
	PT_OK(strstr(err, "no kernel function 'pea_no_such_function'") != NULL,
	      "unknown function: the message names it");
	PT_EQ(strlen(out), 0, "unknown function: nothing on stdout");

	rc = pt_run((char *[]){ PT_PEA, "trace", PROBE "+1", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 1, "offset +1: exit 1");
	PT_OK(strstr(err, "offset +1 is not an instruction boundary") != NULL,
	      "offset +1: says it is not an instruction boundary");
	if (!strstr(err, "instruction boundary"))
		pt_diag("stderr: %s", err);

	PT_OK(blacklisted(sym, sizeof(sym)), "a kprobe_* function in the kprobes blacklist: %s",
	      sym);
	snprintf(probe, sizeof(probe), "kprobe:%s", sym);
	rc = pt_run((char *[]){ PT_PEA, "trace", probe, NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 1, "blacklisted %s: exit 1", sym);
	PT_OK(strstr(err, "the kernel refuses to probe") != NULL,
	      "blacklisted: says the kernel refuses to probe it");
	if (!strstr(err, "refuses"))
		pt_diag("stderr: %s", err);
}

int main(void)
{
	ncpu = pt_nr_cpus();
	test_attach_errors();
	test_json_names();
	test_variants();
	test_human();
	test_duration();
	test_self();
	test_lost();
	test_lost_rate();
	test_flight();
	test_order(false);
	test_order(true);
	return pt_done();
}
