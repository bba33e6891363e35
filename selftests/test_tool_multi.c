// SPDX-License-Identifier: GPL-2.0
/*
 * Several probes in one `pea trace` session, through /bin/pea in the
 * guest: a kprobe, a kretprobe and a tracepoint on three system calls
 * this test makes an exact number of times each:
 *   - JSON: every event names its probe, per-probe event counts exact, the
 *     summary's "probes" has each probe's events, records and link
 *     counters (written exact), and its totals add them up;
 *   - options bind per probe: --pid and --cpu given before the probes are
 *     defaults, given after one they replace them for it alone (the test
 *     thread pinned to CPU 0, one probe left on --cpu 1 sees nothing);
 *   - the same with the flight recorder (rings read once, at the end);
 *   - the text output: a PROBE column on every line, the per-probe table
 *     in the summary;
 *   - usage errors name the probe whose options are wrong; at most 256
 *     probes (--max-probes), 3 with --max-probes 2 refused;
 *   - --output ctf with two probes: one event class per probe, read back
 *     by babeltrace2 with exact per-class counts; --output perfetto: each
 *     probe's events under its name;
 *   - every kind in one session: a uprobe on this program, a netfilter
 *     hook on lo and a kprobe, each record decoded by its probe's kind
 *     (without netfilter, as in the debug kernel: the session fails to
 *     attach, exit 1, with the reason).
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_net.h"

#define KP	"kprobe:__x64_sys_getppid"
#define KRP	"kretprobe:__x64_sys_getpgid"
#define TP	"tracepoint:syscalls:sys_enter_getsid"
#define N_KP	3
#define N_KRP	5
#define N_TP	7
#define PT_BT	"/usr/bin/babeltrace2"

static char line[65536];
static char pid_s[16];
static pid_t pgid;	/* read once: getpgid() while tracing would count */
static char self[256];

#define MIX_PORT	41101
static int lo_idx;
#define N_UP		4
#define N_PKT		3

__attribute__((noipa, used)) long pt_multi_fn(const char *s, long n)
{
	__asm__ volatile("" : : "r"(s) : "memory");
	return n + 1;
}

/* N_KP getppid, N_KRP getpgid(0), N_TP getsid(self) calls, interleaved. */
static void workload(void)
{
	int i;

	for (i = 0; i < N_TP; i++) {
		if (i < N_KP)
			syscall(SYS_getppid);
		if (i < N_KRP)
			syscall(SYS_getpgid, 0);
		syscall(SYS_getsid, getpid());
	}
}

struct per_probe {
	const char *name;
	long long events;		/* event lines */
	long long s_events, s_records;	/* the summary's "probes" entry */
	long long written, hits, filtered;
	bool in_summary;
};

/*
 * Each object of the JSON array @arr: its "probe" names the entry of @pp
 * (@n of them) to fill. False if the array does not parse or names a
 * probe twice or one not in @pp.
 */
static bool read_probes(const char *arr, struct per_probe *pp, int n)
{
	static char obj[8192], link[1024];
	const char *p = arr, *s;
	int i;

	if (*p++ != '[')
		return false;
	while (*p != ']') {
		s = p;
		if (!pt_json_skip(&p) || (size_t)(p - s) >= sizeof(obj))
			return false;
		memcpy(obj, s, p - s);
		obj[p - s] = 0;
		for (i = 0; i < n; i++)
			if (pt_json_streq(obj, "probe", pp[i].name))
				break;
		if (i == n || pp[i].in_summary)
			return false;
		pp[i].in_summary = true;
		pp[i].s_events = pt_json_num(obj, "events", -1);
		pp[i].s_records = pt_json_num(obj, "records", -1);
		if (pt_json_get(obj, "link", link, sizeof(link), NULL)) {
			pp[i].written = pt_json_num(link, "written", -1);
			pp[i].hits = pt_json_num(link, "hits", -1);
			pp[i].filtered = pt_json_num(link, "filtered", -1);
		}
		if (*p == ',')
			p++;
	}
	return true;
}

/*
 * Run a JSON session already started in @p, make the calls, stop it, and
 * check each probe got exactly @want[i] events. @what names the case.
 */
static void json_session(struct pt_proc *p, struct per_probe *pp, int n,
			 const long long *want, const char *what)
{
	static char summary[16384], probes[8192], link[1024];
	long long total = 0;
	int i, bad = 0, other = 0, rc;

	workload();
	kill(p->pid, SIGINT);
	summary[0] = 0;
	while (pt_proc_line(p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_valid(line)) {
			bad++;
			pt_diag("bad JSON: %s", line);
			continue;
		}
		if (pt_json_streq(line, "type", "summary")) {
			snprintf(summary, sizeof(summary), "%.16000s", line);
			continue;
		}
		if (!pt_json_streq(line, "type", "event"))
			continue;
		for (i = 0; i < n; i++)
			if (pt_json_streq(line, "probe", pp[i].name))
				break;
		if (i == n) {
			other++;
			pt_diag("%s: event of no probe: %s", what, line);
			continue;
		}
		pp[i].events++;
		if (pt_json_num(line, "pid", -1) != getpid() ||
		    pt_json_num(line, "tid", -1) != gettid()) {
			bad++;
			pt_diag("%s: not this thread: %s", what, line);
		}
		if (!strncmp(pp[i].name, "kretprobe:", 10) &&
		    pt_json_num(line, "ret", -1) != pgid) {
			bad++;
			pt_diag("%s: ret is not the pgid: %s", what, line);
		}
		if (!strncmp(pp[i].name, "tracepoint:", 11)) {
			static char fields[4096];

			if (!pt_json_get(line, "fields", fields, sizeof(fields), NULL) ||
			    pt_json_num(fields, "pid", -1) != getpid()) {
				bad++;
				pt_diag("%s: fields: %s", what, line);
			}
		}
	}
	pt_proc_drain_err(p);
	rc = pt_proc_wait(p);
	if (rc)
		pt_diag("stderr: %s", p->err_all ? p->err_all : "");
	pt_proc_close(p);
	PT_EQ(rc, 0, "%s: SIGINT ends pea trace with exit 0", what);
	PT_EQ(bad, 0, "%s: every line valid, every event this thread's, with its probe's fields",
	      what);
	PT_EQ(other, 0, "%s: every event names one of the probes", what);
	for (i = 0; i < n; i++) {
		PT_EQ(pp[i].events, want[i], "%s: %s: %lld events", what,
		      pp[i].name, want[i]);
		total += want[i];
	}
	PT_OK(summary[0], "%s: a summary line", what);
	PT_EQ(pt_json_num(summary, "events", -1), total,
	      "%s: summary: %lld events in all", what, total);
	PT_OK(pt_json_get(summary, "link", link, sizeof(link), NULL) &&
	      pt_json_num(link, "written", -1) == total,
	      "%s: summary: the links wrote %lld in all (%s)", what, total, link);
	PT_OK(pt_json_get(summary, "probes", probes, sizeof(probes), NULL) &&
	      read_probes(probes, pp, n),
	      "%s: summary: \"probes\" has each probe once", what);
	for (i = 0; i < n; i++) {
		PT_OK(pp[i].in_summary && pp[i].s_events == want[i] &&
		      pp[i].s_records == want[i] && pp[i].written == want[i] &&
		      pp[i].hits >= want[i],
		      "%s: summary: %s: events, records and written %lld (%lld, %lld, %lld; %lld hits)",
		      what, pp[i].name, want[i], pp[i].s_events,
		      pp[i].s_records, pp[i].written, pp[i].hits);
	}
	if (!summary[0] || pt_json_num(summary, "events", -1) != total)
		pt_diag("summary: %s", summary);
}

/* Each probe with --pid after it: exact counts per probe. */
static void test_counts(void)
{
	struct per_probe pp[3] = { { .name = KP }, { .name = KRP }, { .name = TP } };
	const long long want[3] = { N_KP, N_KRP, N_TP };
	struct pt_proc p;

	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "--json",
					  KP, "--pid", pid_s,
					  KRP, "--pid", pid_s,
					  TP, "--pid", pid_s, NULL }),
	      "a kprobe, a kretprobe and a tracepoint attach in one session");
	json_session(&p, pp, 3, want, "three probes");
}

/* The flight recorder: the rings read once at the end, all three probes. */
static void test_flight(void)
{
	struct per_probe pp[3] = { { .name = KP }, { .name = KRP }, { .name = TP } };
	const long long want[3] = { N_KP, N_KRP, N_TP };
	struct pt_proc p;

	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "-F", "--json",
					  "--pid", pid_s, KP, KRP, TP, NULL }),
	      "flight recorder: three probes attach");
	json_session(&p, pp, 3, want, "flight recorder");
}

/*
 * --pid and --cpu 1 as defaults; the kprobe and the tracepoint replace
 * --cpu with 0, where this thread runs; the kretprobe keeps CPU 1.
 */
static void test_bind(void)
{
	struct per_probe pp[3] = { { .name = KP }, { .name = KRP }, { .name = TP } };
	const long long want[3] = { N_KP, 0, N_TP };
	struct pt_proc p;

	if (pt_nr_cpus() < 2) {
		PT_OK(0, "per-probe --cpu needs 2 CPUs (the guest has %d)",
		      pt_nr_cpus());
		return;
	}
	pt_pin(0);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "--pid", pid_s,
					  "--cpu", "1", KP, "--cpu", "0", KRP,
					  TP, "--cpu", "0", "--json", NULL }),
	      "defaults --pid and --cpu 1, two probes with --cpu 0 after them");
	json_session(&p, pp, 3, want, "per-probe --cpu");
	PT_OK(pp[0].filtered == 0 && pp[1].filtered == N_KRP &&
	      pp[2].filtered == 0,
	      "per-probe --cpu: only the kretprobe on CPU 1 filtered its %d hits out (%lld, %lld, %lld)",
	      N_KRP, pp[0].filtered, pp[1].filtered, pp[2].filtered);
}

/* Text: a PROBE column; the summary's per-probe table on stderr. */
static void test_text(void)
{
	struct pt_proc p;
	int n[3] = { 0, 0, 0 }, header = 0, other = 0, rows = 0, rc, i;
	const char *names[3] = { KP, KRP, TP };
	const long long want[3] = { N_KP, N_KRP, N_TP };
	char cell[256], *l;

	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "--pid", pid_s,
					  KP, KRP, TP, NULL }),
	      "text: three probes with a default --pid attach");
	workload();
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!strncmp(line, "TIME(s)", 7)) {
			header++;
			PT_OK(sscanf(line, "TIME(s) CPU %255s COMM PID TID", cell) == 1 &&
			      !strcmp(cell, "PROBE"),
			      "text: the header has TIME(s) CPU PROBE COMM PID TID (%s)",
			      line);
			continue;
		}
		if (sscanf(line, "%*f %*u %255s", cell) != 1) {
			other++;
			continue;
		}
		for (i = 0; i < 3; i++)
			if (!strcmp(cell, names[i]))
				break;
		if (i == 3) {
			other++;
			pt_diag("text: %s", line);
			continue;
		}
		if (!n[i])
			pt_diag("e.g. %s", line);
		n[i]++;
		if ((i == 1 && !strstr(line, " ret=")) ||
		    (i == 2 && !strstr(line, " __syscall_nr=")))
			other++;
	}
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "text: exit 0");
	PT_EQ(header, 1, "text: one header line");
	PT_EQ(other, 0, "text: every line has its probe in the PROBE column, with its details");
	for (i = 0; i < 3; i++)
		PT_EQ(n[i], want[i], "text: %lld lines of %s", want[i], names[i]);
	PT_OK(p.err_all && strstr(p.err_all, "pea: 3 probes: 15 events in"),
	      "text: the summary says 3 probes, 15 events");
	for (l = p.err_all; l && (l = strchr(l, '\n')); l++) {
		unsigned long long ev, rec, hits, wr;

		if (sscanf(l + 1, "%255s %llu %llu %llu %llu", cell, &ev, &rec,
			   &hits, &wr) != 5)
			continue;
		for (i = 0; i < 3; i++)
			if (!strcmp(cell, names[i]) && ev == (unsigned long long)want[i] &&
			    rec == ev && wr == ev)
				rows++;
	}
	PT_EQ(rows, 3, "text: the summary has a row per probe: events, records, written exact");
	pt_diag("stderr: %s", p.err_all ? p.err_all : "");
	pt_proc_close(&p);
}

static void test_usage(void)
{
	static char out[65536], err[8192];
	static char *many[262];
	static char names[258][32];
	struct {
		char *argv[12];
		const char *msg;
	} cases[] = {
		{ { PT_PEA, "trace", "--maxactive", "4", "kretprobe:a", "kprobe:b", NULL },
		  "kprobe:b: --maxactive is for kretprobes and uretprobes" },
		{ { PT_PEA, "trace", "netfilter:ipv4:local_in", "--filter", "pid == 1", TP, NULL },
		  "netfilter:ipv4:local_in: --filter is for tracepoints, kprobes, kretprobes, uprobes and uretprobes" },
		{ { PT_PEA, "trace", "--args", "kprobe:a", TP, NULL },
		  TP ": --args, --str, --bytes, --user, --kernel and --maxactive are for kprobes" },
		{ { PT_PEA, "trace", "kprobe:a", "--pid", "x", "kprobe:b", NULL },
		  "kprobe:a: --pid 'x'" },
		{ { PT_PEA, "trace", "kprobe:a", "--str", "ARG1", "kprobe:b", "--str",
		    "ARG1", "--bytes", "ARG2:4", NULL },
		  "kprobe:b: only one of --str and --bytes" },
		{ { PT_PEA, "trace", "kprobe:a", "--str", "1", "kprobe:b", "--kernel", NULL },
		  "kprobe:b: --user and --kernel go with --str or --bytes" },
		{ { PT_PEA, "trace", "kprobe:a", "netfilter:ipv4:LOCAL_IN", "--pid", "1", NULL },
		  "netfilter:ipv4:LOCAL_IN: --args, --str, --bytes, --user, --kernel, --maxactive, --pid and --cpu are not for netfilter" },
		{ { PT_PEA, "trace", "kprobe:a", "kprobe:b", "--count", "0", NULL },
		  "--count '0'" },
		/* A name after a kprobe is a parameter to print (BTF). */
		{ { PT_PEA, "trace", "kprobe:a", "kprobe:b", "nothing", NULL },
		  "kprobe:b: parameter 'nothing': no BTF" },
		{ { PT_PEA, "trace", "kprobe:a", "tp:sched:sched_switch",
		    "nothing", NULL },
		  "'nothing': sched:sched_switch has no field 'nothing'" },
	};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rc = pt_run(cases[i].argv, out, sizeof(out), err, sizeof(err),
			    NULL, NULL);
		PT_OK(rc == 2 && strstr(err, cases[i].msg) && !out[0],
		      "usage error %zu: exit 2, \"%s\"", i, cases[i].msg);
		if (rc != 2 || !strstr(err, cases[i].msg))
			pt_diag("exit %d, stderr: %s", rc, err);
	}

	rc = pt_run((char *[]){ PT_PEA, "trace", "--help", NULL }, out,
		    sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && strstr(out, "PROBE [PROBE-OPTIONS] [PROBE [PROBE-OPTIONS]]...") &&
	      strstr(out, "at most 256") && strstr(out, "PROBE column") &&
	      strstr(out, "\"probes\":[{"),
	      "--help describes several probes, their options, lines and summary");

	/*
	 * 256 probes parse (the device is what fails as nobody); 257 do
	 * not, nor 3 with --max-probes 2.
	 */
	many[0] = PT_PEA;
	many[1] = "trace";
	for (i = 0; i < 257; i++) {
		snprintf(names[i], sizeof(names[i]), "kprobe:f%zu", i);
		many[2 + i] = names[i];
	}
	many[2 + 257] = NULL;
	rc = pt_run(many, out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "more than 256 probes in one session ('kprobe:f256' is one more): --max-probes N takes up to 1024"),
	      "257 probes: exit 2, at most 256 probes");
	if (rc != 2)
		pt_diag("exit %d, stderr: %s", rc, err);
	many[2 + 3] = "--max-probes";
	many[2 + 4] = "2";
	many[2 + 5] = NULL;
	rc = pt_run(many, out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "more than 2 probes in one session ('kprobe:f2' is one more)"),
	      "3 probes with --max-probes 2: exit 2");
	if (rc != 2)
		pt_diag("exit %d, stderr: %s", rc, err);
	many[2 + 4] = "1025";
	rc = pt_run(many, out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "--max-probes '1025': 1..1024"),
	      "--max-probes 1025: exit 2");
}

/* --output ctf with a kretprobe and a tracepoint: two event classes. */
static void test_ctf(void)
{
	static char out[1 << 20], err[1 << 16], meta[1 << 16];
	const char *dir = "/tmp/pea-multi-ctf";
	int n_krp = 0, n_tp = 0, other = 0, rc, fd;
	char want_ret[64], want_nr[64], *l, *nl, *c;
	struct per_probe pp[2] = { { .name = KRP }, { .name = TP } };
	const long long want[2] = { N_KRP, N_TP };
	struct stat st;
	struct pt_proc p;
	ssize_t len;

	PT_OK(!stat(PT_BT, &st), "babeltrace2 is in the guest");
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "--json",
					  "--output", (char *)dir, "--format", "ctf",
					  KRP, "--pid", pid_s, TP, "--pid", pid_s,
					  NULL }),
	      "ctf: a kretprobe and a tracepoint with --output attach");
	json_session(&p, pp, 2, want, "ctf");

	fd = open("/tmp/pea-multi-ctf/metadata", O_RDONLY);
	len = fd >= 0 ? read(fd, meta, sizeof(meta) - 1) : -1;
	if (fd >= 0)
		close(fd);
	meta[len > 0 ? len : 0] = 0;
	for (c = meta, rc = 0; (c = strstr(c, "event {")); c++)
		rc++;
	PT_EQ(rc, 2, "ctf: the metadata has two event classes");
	PT_OK(strstr(meta, "name = \"" KRP "\"") && strstr(meta, "name = \"" TP "\""),
	      "ctf: one named after each probe");

	rc = pt_run((char *[]){ PT_BT, "--clock-cycles", "--no-delta",
				(char *)dir, NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 0, "ctf: babeltrace2 reads the trace");
	if (rc)
		pt_diag("babeltrace2: %.2000s", err);
	snprintf(want_ret, sizeof(want_ret), "ret = %d,", pgid);
	snprintf(want_nr, sizeof(want_nr), "__syscall_nr = %d,", SYS_getsid);
	for (l = out; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			break;
		*nl = 0;
		if (strstr(l, " " KRP ": { cpu_id = ") && strstr(l, want_ret))
			n_krp++;
		else if (strstr(l, " " TP ": { cpu_id = ") && strstr(l, want_nr))
			n_tp++;
		else {
			other++;
			pt_diag("babeltrace2: %s", l);
		}
	}
	PT_EQ(n_krp, N_KRP, "ctf: %d events of class %s with its ret", N_KRP, KRP);
	PT_EQ(n_tp, N_TP, "ctf: %d events of class %s with its fields", N_TP, TP);
	PT_EQ(other, 0, "ctf: no other events");
}

/* Each probe's events in a Perfetto file, by name. */
static void test_perfetto(void)
{
	static char buf[1 << 20];
	const char *path = "/tmp/pea-multi.json";
	struct per_probe pp[2] = { { .name = KP }, { .name = TP } };
	const long long want[2] = { N_KP, N_TP };
	int n_kp = 0, n_tp = 0, fd;
	struct pt_proc p;
	ssize_t len;
	char *c;

	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "--json",
					  KP, "--pid", pid_s, TP, "--pid", pid_s,
					  "--output", (char *)path, "--format",
					  "perfetto", NULL }),
	      "perfetto: a kprobe and a tracepoint with --output attach");
	json_session(&p, pp, 2, want, "perfetto");
	fd = open(path, O_RDONLY);
	len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[len > 0 ? len : 0] = 0;
	for (c = buf; (c = strstr(c, "{\"name\":\"" KP "\",\"cat\":\"pea\",\"ph\":\"i\"")); c++)
		n_kp++;
	for (c = buf; (c = strstr(c, "{\"name\":\"" TP "\",\"cat\":\"pea\",\"ph\":\"i\"")); c++)
		n_tp++;
	PT_EQ(n_kp, N_KP, "perfetto: %d instants named %s", N_KP, KP);
	PT_EQ(n_tp, N_TP, "perfetto: %d instants named %s", N_TP, TP);
}

/* Which of the mixed session's probes an event line is of (-1: none). */
static int mixed_kind(const char *l, const char *up, bool text, char *cell,
		      size_t len)
{
	const char *names[3] = { up, "netfilter:ipv4:LOCAL_IN", KP };
	char fmt[32];
	int i;

	if (text) {
		snprintf(fmt, sizeof(fmt), "%%*f %%*u %%%zus", len - 1);
		if (sscanf(l, fmt, cell) != 1)
			return -1;
	} else if (!pt_json_streq(l, "type", "event") ||
		   !pt_json_get(l, "probe", cell, len, NULL)) {
		return -1;
	}
	for (i = 0; i < 3; i++)
		if (!strcmp(cell, names[i]))
			return i;
	return -1;
}

/* Whether event line @l of probe @kind is the @n-th the test caused. */
static bool mixed_ok(const char *l, int kind, int n, bool text)
{
	char want[128];

	switch (kind) {
	case 0:		/* the uprobe: pt_multi_fn("mN", N) */
		if (text) {
			snprintf(want, sizeof(want), " %d %7d  str=\"m%d\"",
				 getpid(), gettid(), n);
			return strstr(l, want) && !strcmp(strstr(l, want) + strlen(want), "");
		}
		snprintf(want, sizeof(want), "m%d", n);
		return pt_json_streq(l, "str", want) &&
		       pt_json_num(l, "tid", -1) == gettid();
	case 1:		/* netfilter: a UDP packet to MIX_PORT, 3 bytes */
		if (text) {
			snprintf(want, sizeof(want), "  in=%d out=0 UDP 127.0.0.1:",
				 lo_idx);
			if (!strstr(l, want))
				return false;
			snprintf(want, sizeof(want), " > 127.0.0.1:%d len=31",
				 MIX_PORT);
			return strstr(l, want) && !strcmp(strstr(l, want) + strlen(want), "");
		}
		return pt_json_streq(l, "proto", "UDP") &&
		       pt_json_num(l, "dport", -1) == MIX_PORT &&
		       pt_json_num(l, "len", -1) == 20 + 8 + 3;
	default:	/* the kprobe: getppid */
		if (text) {
			snprintf(want, sizeof(want), " %d %7d", getpid(), gettid());
			return strstr(l, want) && !strcmp(strstr(l, want) + strlen(want), "");
		}
		return pt_json_num(l, "tid", -1) == gettid();
	}
}

/*
 * A uprobe, a netfilter hook and a kprobe in one session: N_UP calls of
 * pt_multi_fn, N_PKT UDP packets to 127.0.0.1:MIX_PORT, N_KP getppid;
 * each event checked as its kind prints, in text (@text) or JSON.
 */
static void mixed_run(const char *up, int tx, bool text)
{
	const char *what = text ? "mixed (text)" : "mixed (json)";
	const int want[3] = { N_UP, N_PKT, N_KP };
	int n[3] = { 0, 0, 0 }, bad = 0, rows = 0, i, k, rc;
	char cell[600], name[16];
	char *argv[16] = { PT_PEA, "trace", (char *)up, "--str", "ARG0",
			   "--pid", pid_s, "netfilter:ipv4:LOCAL_IN", "--packet",
			   "64", KP, "--pid", pid_s, NULL };
	struct pt_proc p;
	char *l;

	if (!text)
		argv[13] = "--json";	/* a session option after the probes */
	PT_OK(pt_trace_start(&p, argv),
	      "%s: a uprobe, a netfilter hook and a kprobe attach", what);
	for (i = 0; i < N_UP; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		pt_multi_fn(name, i);
	}
	for (i = 0; i < N_PKT; i++)
		pt_udp_send(tx, AF_INET, MIX_PORT, "pea", 3);
	for (i = 0; i < N_KP; i++)
		syscall(SYS_getppid);
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (text && !strncmp(line, "TIME(s)", 7))
			continue;
		if (!text && !pt_json_streq(line, "type", "event"))
			continue;
		k = mixed_kind(line, up, text, cell, sizeof(cell));
		if (k < 0 || n[k] >= want[k] || !mixed_ok(line, k, n[k], text)) {
			bad++;
			pt_diag("%s: %s", what, line);
			continue;
		}
		if (!n[k])
			pt_diag("e.g. %s", line);
		n[k]++;
	}
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "%s: exit 0", what);
	PT_EQ(n[0], N_UP, "%s: %d uprobe events, the strings in order", what, N_UP);
	PT_EQ(n[1], N_PKT, "%s: %d netfilter events, the test's UDP packets", what,
	      N_PKT);
	PT_EQ(n[2], N_KP, "%s: %d kprobe events", what, N_KP);
	PT_EQ(bad, 0, "%s: no other events, each as its kind prints", what);
	for (l = text ? p.err_all : NULL; l && (l = strchr(l, '\n')); l++) {
		unsigned long long ev, rec;

		if (sscanf(l + 1, "%599s %llu %llu", cell, &ev, &rec) != 3)
			continue;
		if ((!strcmp(cell, up) && ev == N_UP && rec == N_UP) ||
		    (!strcmp(cell, "netfilter:ipv4:LOCAL_IN") &&
		     ev == N_PKT && rec == N_PKT) ||
		    (!strcmp(cell, KP) && ev == N_KP && rec == N_KP))
			rows++;
	}
	if (text)
		PT_EQ(rows, 3, "%s: the summary rows: %d, %d and %d events",
		      what, N_UP, N_PKT, N_KP);
	pt_proc_close(&p);
}

static void test_mixed(void)
{
	static char out[65536], err[65536];
	char up[512];
	int rx, tx, rc;

	snprintf(up, sizeof(up), "uprobe:%s:pt_multi_fn", self);
	if (!pt_have_netfilter()) {
		rc = pt_run((char *[]){ PT_PEA, "trace", up, "--pid", pid_s,
					"netfilter:ipv4:LOCAL_IN", KP, NULL },
			    out, sizeof(out), err, sizeof(err), NULL, NULL);
		PT_OK(rc == 1 && strstr(err, "cannot attach netfilter:ipv4:LOCAL_IN: this kernel has no netfilter"),
		      "mixed, no netfilter in this kernel: exit 1, the reason (%.300s)",
		      err);
		return;
	}
	lo_idx = pt_lo_up();
	PT_OK(lo_idx > 0, "mixed: lo is up (ifindex %d)", lo_idx);
	rx = pt_udp_bound(AF_INET, MIX_PORT);
	tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	PT_OK(rx >= 0 && tx >= 0, "mixed: UDP sockets");
	mixed_run(up, tx, false);
	mixed_run(up, tx, true);
	close(rx);
	close(tx);
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	snprintf(pid_s, sizeof(pid_s), "%d", getpid());
	pgid = getpgid(0);
	test_usage();
	test_counts();
	test_text();
	test_ctf();
	test_perfetto();
	test_flight();
	test_mixed();
	test_bind();
	return pt_done();
}
