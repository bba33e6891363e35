// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace --output PATH --format ctf|perfetto, through /bin/pea in the
 * guest. Each run writes the trace file and prints --json at once, so
 * the two can be compared event by event:
 *   - CTF: the trace read back by babeltrace2 (--clock-cycles) has every
 *     event of the JSON output, with the same fields and values (the
 *     header timestamp equal to time_ns), for a kretprobe with --args and
 *     --str, for a kprobe with --kstack (the stack's names and
 *     addresses), and for the tracepoint sched:sched_process_exec (a
 *     __data_loc string and integers typed from its tracefs format), and
 *     for raw_syscalls:sys_enter (an array of unsigned longs); a
 *     netfilter record's fields and packet bytes;
 *   - lost records: the tool is stopped (SIGSTOP) while its workload
 *     overflows a one-page ring; babeltrace2's "discarded N events"
 *     add up to the lost count of the summary, and events + lost equal
 *     the workload's calls;
 *   - Perfetto: every line of the file checked against the Trace Event
 *     format (keys and types per phase, X events with dur >= 0, ts
 *     non-decreasing per track), X events whose args are the JSON lines
 *     and whose ts/dur are entry time and latency in us, thread names,
 *     and lost markers adding up to the lost count.
 */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_exec.h"
#include "pt_net.h"
#include "pt_ctf.h"

#define PT_BT		"/usr/bin/babeltrace2"
#define RETPROBE	"kretprobe:do_sys_openat2"
#define EXEC_TP		"tracepoint:sched:sched_process_exec"
#define KSTACK_PROBE	"kprobe:__x64_sys_getppid"
#define MAXEV		PT_CTF_MAXEV
#define EVLEN		PT_CTF_EVLEN
#define OVERFLOW_OPENS	400

static char line[65536];
static char self_exe[256];
static char json_ev[MAXEV][EVLEN];	/* the --json event lines of a run */
static int njson;
static char summary[EVLEN];
static unsigned long long json_lost;	/* sum of the "lost" lines */

/* Read the tool's --json stdout to EOF; its exit status. */
static int trace_collect(struct pt_proc *p)
{
	int rc;

	njson = 0;
	json_lost = 0;
	summary[0] = 0;
	while (pt_proc_line(p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "event") && njson < MAXEV)
			snprintf(json_ev[njson++], EVLEN, "%.4000s", line);
		else if (pt_json_streq(line, "type", "lost"))
			json_lost += pt_json_num(line, "lost", 0);
		else if (pt_json_streq(line, "type", "summary"))
			snprintf(summary, sizeof(summary), "%.4000s", line);
		else if (!pt_json_streq(line, "type", "event"))
			pt_diag("unexpected: %s", line);
	}
	pt_proc_drain_err(p);
	rc = pt_proc_wait(p);
	if (rc)
		pt_diag("pea trace stderr: %s", p->err_all ? p->err_all : "");
	pt_proc_close(p);
	return rc;
}

/*
 * The CTF trace in @dir, read by babeltrace2, against json_ev: the same
 * events, each with the same fields.
 */
static void compare_ctf(const char *dir, const char *probe, const char *what)
{
	pt_ctf_compare(dir, probe, what, json_ev, njson);
}

/* ---- CTF: kretprobe ---- */

static void test_ctf_kretprobe(void)
{
	static const char *const names[] = {
		"/tmp/pea-ctf-missing-1", "/proc/version",
		"/tmp/pea-ctf-missing-2", "/proc/self/stat",
	};
	const char *dir = "/tmp/pea-ctf-kret";
	struct pt_proc p;
	char pid[16], want[32];
	int i, rc, fds[4];

	snprintf(pid, sizeof(pid), "%d", getpid());
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", RETPROBE, "--args",
					  "--str", "ARG1", "--json", "-c", "4",
					  "--pid", pid, "--output", (char *)dir,
					  "--format", "ctf", NULL }),
	      "kretprobe with --output DIR --format ctf attaches");
	for (i = 0; i < 4; i++)
		fds[i] = open(names[i], O_RDONLY);
	rc = trace_collect(&p);
	PT_EQ(rc, 0, "kretprobe: pea trace exits 0");
	PT_EQ(njson, 4, "kretprobe: 4 JSON events");
	for (i = 0; i < 4 && i < njson; i++) {
		snprintf(want, sizeof(want), "%d", fds[i] < 0 ? -ENOENT : fds[i]);
		PT_OK(pt_json_streq(json_ev[i], "str", names[i]) &&
		      pt_json_num(json_ev[i], "ret", 1) == (fds[i] < 0 ? -ENOENT : fds[i]),
		      "kretprobe: event %d is the open of %s, ret %s", i,
		      names[i], want);
	}
	for (i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	compare_ctf(dir, RETPROBE, "kretprobe");
}

/* ---- CTF: kernel stacks ---- */

static void test_ctf_kstack(void)
{
	const char *dir = "/tmp/pea-ctf-kstack";
	struct pt_proc p;
	char pid[16];
	int i, rc;

	snprintf(pid, sizeof(pid), "%d", getpid());
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", KSTACK_PROBE,
					  "--kstack", "--json", "-c", "3",
					  "--pid", pid, "--output", (char *)dir,
					  "--format", "ctf", NULL }),
	      "kprobe --kstack with --output DIR --format ctf attaches");
	for (i = 0; i < 3; i++)
		syscall(SYS_getppid);
	rc = trace_collect(&p);
	PT_EQ(rc, 0, "kstack: pea trace exits 0");
	PT_EQ(njson, 3, "kstack: 3 JSON events");
	PT_OK(njson >= 1 && strstr(json_ev[0], "\"kstack\":[\"__x64_sys_getppid+0x") &&
	      strstr(json_ev[0], "\"kstack_addr\":[\"0x"),
	      "kstack: the JSON events carry the stack");
	compare_ctf(dir, KSTACK_PROBE, "kstack");
}

/* ---- CTF: a tracepoint ---- */

static void test_ctf_tracepoint(void)
{
	const char *dir = "/tmp/pea-ctf-tp";
	char names[2][64];
	pid_t pids[2];
	struct pt_proc p;
	char fields[4096];
	int i, rc, ok = 0;

	for (i = 0; i < 2; i++) {
		snprintf(names[i], sizeof(names[i]), "/tmp/pea_ctf_exe_%c", 'a' + i);
		unlink(names[i]);
		if (symlink(self_exe, names[i]))
			pt_fatal("symlink");
	}
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", EXEC_TP, "--json",
					  "-c", "2", "--filter",
					  "filename ~ \"/tmp/pea_ctf_exe_*\"",
					  "--output", (char *)dir, "--format",
					  "ctf", NULL }),
	      "sched_process_exec with --output DIR --format ctf attaches");
	for (i = 0; i < 2; i++)
		pids[i] = pt_exec_exit(names[i]);
	rc = trace_collect(&p);
	PT_EQ(rc, 0, "tracepoint: pea trace exits 0");
	PT_EQ(njson, 2, "tracepoint: 2 JSON events");
	for (i = 0; i < 2 && i < njson; i++) {
		if (pt_json_get(json_ev[i], "fields", fields, sizeof(fields), NULL) &&
		    pt_json_streq(fields, "filename", names[i]) &&
		    pt_json_num(fields, "pid", -1) == pids[i] &&
		    pt_json_num(fields, "old_pid", -1) == pids[i])
			ok++;
		else
			pt_diag("event %d: %s", i, json_ev[i]);
	}
	PT_EQ(ok, 2, "tracepoint: filename, pid and old_pid exact in JSON");
	compare_ctf(dir, EXEC_TP, "tracepoint");
	for (i = 0; i < 2; i++)
		unlink(names[i]);
}

/* raw_syscalls:sys_enter: a signed long and an unsigned long[6] array. */
static void test_ctf_array(void)
{
	const char *dir = "/tmp/pea-ctf-array";
	struct pt_proc p;
	char pid[16], fields[4096], args[256];
	int rc;

	snprintf(pid, sizeof(pid), "%d", getpid());
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "tp:raw_syscalls:sys_enter",
					  "--json", "-c", "1", "--pid", pid,
					  "--filter", "id == 4242", "--output",
					  (char *)dir, "--format", "ctf", NULL }),
	      "raw_syscalls:sys_enter with --output DIR --format ctf attaches");
	syscall(4242, 11L, 22L, 33L, -1L, 0x7fffffffffffL, 66L);
	rc = trace_collect(&p);
	PT_EQ(rc, 0, "array: pea trace exits 0");
	PT_EQ(njson, 1, "array: 1 JSON event");
	PT_OK(njson == 1 &&
	      pt_json_get(json_ev[0], "fields", fields, sizeof(fields), NULL) &&
	      pt_json_num(fields, "id", -1) == 4242 &&
	      pt_json_get(fields, "args", args, sizeof(args), NULL) &&
	      !strcmp(args, "[11,22,33,18446744073709551615,140737488355327,66]"),
	      "array: id and args exact in JSON");
	compare_ctf(dir, "tp:raw_syscalls:sys_enter", "array");
}

/*
 * netfilter:ipv4:LOCAL_OUT: a UDP datagram on lo; the CTF event's record
 * fields and packet bytes against the JSON line's.
 */
static void test_ctf_netfilter(void)
{
	static const char msg[] = "pea ctf udp4";
	const char *dir = "/tmp/pea-ctf-nf";
	char want[4096], hex[1024], got[4096], *pk, *l;
	unsigned long long ts = 0;
	struct pt_proc p;
	int tx, rx, rc, n = 0, lo = pt_lo_up();
	size_t i;

	PT_OK(lo > 0, "netfilter: lo up (%d)", lo);
	tx = pt_udp_bound(AF_INET, 41101);
	rx = pt_udp_bound(AF_INET, 41102);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "netfilter:ipv4:LOCAL_OUT",
					  "--json", "-c", "1", "--packet", "64",
					  "--output", (char *)dir, "--format",
					  "ctf", NULL }),
	      "netfilter with --output DIR --format ctf attaches");
	pt_udp_send(tx, AF_INET, 41102, msg, sizeof(msg));
	rc = trace_collect(&p);
	close(tx);
	close(rx);
	PT_EQ(rc, 0, "netfilter: pea trace exits 0");
	PT_EQ(njson, 1, "netfilter: 1 JSON event");
	if (njson != 1 || !pt_json_get(json_ev[0], "packet", hex, sizeof(hex), NULL))
		return;
	/* babeltrace2's packet = [ [0] = 0x45, ... ] as "45..." */
	rc = babeltrace(dir);
	PT_EQ(rc, 0, "netfilter: babeltrace2 reads the CTF trace");
	for (l = bt_out; (l = strchr(l, '\n')); l++)
		n++;
	PT_EQ(n, 1, "netfilter: one CTF event");
	pk = strstr(bt_out, "packet = [");
	got[0] = 0;
	/* [0] = 0x45, [1] = 0x0, ...: hex without leading zeroes */
	for (i = 0; pk && (pk = strstr(pk, "] = 0x")) && i + 3 < sizeof(got); i += 2) {
		snprintf(got + i, 3, "%02lx", strtoul(pk + 4, &pk, 16));
		if (*pk != ',' && *pk != ' ')
			break;
	}
	PT_OK(!strcmp(got, hex), "netfilter: the packet bytes equal JSON's (%s)", hex);
	if (strcmp(got, hex))
		pt_diag("ctf: %s", got);
	/*
	 * The event's time is the one the stream is ordered on (the sample
	 * time, as kprobe and tracepoint JSON print); netfilter's JSON
	 * prints the record's own time_ns, taken just before.
	 */
	sscanf(bt_out, "[%llu]", &ts);
	snprintf(want, sizeof(want), "{ time_ns = %llu, ", ts);
	PT_OK(strstr(bt_out, want), "netfilter: the timestamp is the time_ns field (%llu)", ts);
	PT_OK(ts >= (unsigned long long)pt_json_num(json_ev[0], "time_ns", -1),
	      "netfilter: not before the record's own time_ns");
	snprintf(want, sizeof(want), "ifindex_in = 0, ifindex_out = %lld, skb_len = %lld, packet_len = %zu",
		 pt_json_num(json_ev[0], "ifindex_out", -1),
		 pt_json_num(json_ev[0], "len", -1), strlen(hex) / 2);
	PT_OK(strstr(bt_out, want), "netfilter: %s", want);
	snprintf(want, sizeof(want), "protocol = %lld, ", pt_json_num(json_ev[0], "protocol", -1));
	PT_OK(strstr(bt_out, want), "netfilter: %s", want);
	if (!strstr(bt_out, want))
		pt_diag("babeltrace2: %.1500s", bt_out);
}

/* A kernel without netfilter (the debug one): the attach fails as usual. */
static void test_ctf_no_netfilter(void)
{
	static char out[65536], err[65536];
	int rc;

	rc = pt_run((char *[]){ PT_PEA, "trace", "netfilter:ipv4:LOCAL_OUT",
				"-c", "1", "--output", "/tmp/pea-ctf-nf",
				"--format", "ctf", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 1, "no netfilter: --format ctf, exit 1");
	PT_OK(strstr(err, "this kernel has no netfilter (CONFIG_NETFILTER)"),
	      "no netfilter: the explanation: %.300s", err);
}

/* ---- lost records ---- */

/*
 * Trace opens with a one-page ring while the tool is stopped, so that
 * the ring overflows; @format is "ctf" or "perfetto". Returns the tool's
 * exit status; JSON lines in json_ev (only the first MAXEV), summary.
 */
static int overflow_run(const char *out, const char *format,
			unsigned long long *events)
{
	struct pt_proc p;
	char pid[16], cpu[16];
	int i, rc, c = sched_getcpu();
	cpu_set_t saved;

	if (sched_getaffinity(0, sizeof(saved), &saved))
		pt_fatal("sched_getaffinity");
	pt_pin(c);
	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(cpu, sizeof(cpu), "%d", c);
	if (!pt_trace_start(&p, (char *[]){ PT_PEA, "trace", RETPROBE, "--str",
					 "ARG1", "--json", "--pages", "1",
					 "--pid", pid, "--cpu", cpu,
					 "--output", (char *)out, "--format",
					 (char *)format, NULL })) {
		sched_setaffinity(0, sizeof(saved), &saved);
		return -1;
	}
	kill(p.pid, SIGSTOP);
	for (i = 0; i < OVERFLOW_OPENS; i++) {
		int fd = open("/tmp/pea-ctf-overflow-some-long-name-to-fill-the-ring",
			      O_RDONLY);

		if (fd >= 0)
			close(fd);
	}
	kill(p.pid, SIGCONT);
	usleep(300000);
	kill(p.pid, SIGINT);
	*events = 0;
	/* Count every event line: json_ev keeps only the first MAXEV. */
	njson = 0;
	json_lost = 0;
	summary[0] = 0;
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "event")) {
			(*events)++;
			if (njson < MAXEV)
				snprintf(json_ev[njson++], EVLEN, "%.4000s", line);
		} else if (pt_json_streq(line, "type", "lost")) {
			json_lost += pt_json_num(line, "lost", 0);
		} else if (pt_json_streq(line, "type", "summary")) {
			snprintf(summary, sizeof(summary), "%.4000s", line);
		}
	}
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	sched_setaffinity(0, sizeof(saved), &saved);
	return rc;
}

static void test_ctf_lost(void)
{
	const char *dir = "/tmp/pea-ctf-lost";
	unsigned long long events, lost, disc, nbt = 0;
	int rc, warnings;
	char *l;

	rc = overflow_run(dir, "ctf", &events);
	PT_EQ(rc, 0, "overflow (ctf): pea trace exits 0 on SIGINT");
	lost = pt_json_num(summary, "lost", -1);
	PT_OK(lost > 0 && lost != (unsigned long long)-1,
	      "overflow (ctf): records were lost (%llu)", lost);
	PT_EQ(json_lost, lost, "overflow (ctf): the lost lines add up to the summary");
	PT_EQ(events + lost, OVERFLOW_OPENS,
	      "overflow (ctf): events (%llu) + lost = the %d opens", events,
	      OVERFLOW_OPENS);
	rc = babeltrace(dir);
	PT_EQ(rc, 0, "overflow (ctf): babeltrace2 reads the trace");
	for (l = bt_out; (l = strchr(l, '\n')); l++)
		nbt++;
	PT_EQ(nbt, events, "overflow (ctf): babeltrace2 prints every event");
	disc = bt_discarded(&warnings);
	PT_EQ(disc, lost, "overflow (ctf): babeltrace2's discarded events = lost records");
	PT_OK(warnings >= 1, "overflow (ctf): %d discarded-events reports", warnings);
	if (disc != lost)
		pt_diag("babeltrace2 stderr: %.2000s", bt_err);
}

/* ---- Perfetto ---- */

struct track {
	long long pid, tid;
	char last_ts[32];
	bool named;
};

/* a <= b for "INT.FRAC" times with three decimals */
static bool ts_le(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	return la != lb ? la < lb : strcmp(a, b) <= 0;
}

static bool is_num(const char *s)
{
	char *end;

	if (!*s)
		return false;
	strtod(s, &end);
	return !*end;
}

/*
 * Check @path against the Trace Event format, line by line; count X
 * events, match them to json_ev (if @match), add up lost markers.
 */
static void check_perfetto(const char *path, const char *what, bool match,
			   unsigned long long *lost_sum, int *nx_out)
{
	static char buf[1 << 20];
	struct track tracks[64];
	int ntracks = 0, bad = 0, nx = 0, matched = 0, unnamed = 0, i, n;
	char ph[8], name[256], ts[32], dur[32], pidv[32], tidv[32];
	char args[EVLEN], sc[8], t[64];
	bool head = false, tail = false;
	char *l, *nl, *end;
	FILE *f = fopen(path, "r");

	*lost_sum = 0;
	PT_OK(f, "%s: %s exists", what, path);
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n < 0 ? 0 : n] = 0;
	for (l = buf; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			break;
		*nl = 0;
		if (!strcmp(l, "{\"traceEvents\":[")) {
			head = l == buf;
			continue;
		}
		if (!strcmp(l, "],\"displayTimeUnit\":\"ns\"}")) {
			tail = !nl[1];
			continue;
		}
		end = l + strlen(l);
		if (end > l && end[-1] == ',')
			*--end = 0;
		if (!pt_json_valid(l) ||
		    !pt_json_get(l, "ph", ph, sizeof(ph), NULL) ||
		    !pt_json_get(l, "name", name, sizeof(name), NULL) ||
		    !pt_json_get(l, "pid", pidv, sizeof(pidv), NULL) ||
		    !pt_json_get(l, "tid", tidv, sizeof(tidv), NULL) ||
		    !is_num(pidv) || !is_num(tidv)) {
			bad++;
			pt_diag("not a trace event: %.500s", l);
			continue;
		}
		if (!strcmp(ph, "M")) {
			if (!pt_json_get(l, "args", args, sizeof(args), NULL) ||
			    (strcmp(name, "process_name") && strcmp(name, "thread_name")) ||
			    !pt_json_get(args, "name", t, sizeof(t), NULL)) {
				bad++;
				pt_diag("bad metadata event: %s", l);
				continue;
			}
			if (!strcmp(name, "thread_name")) {
				if (ntracks < 64) {
					memset(&tracks[ntracks], 0, sizeof(tracks[0]));
					tracks[ntracks].pid = atoll(pidv);
					tracks[ntracks].tid = atoll(tidv);
					tracks[ntracks].named = true;
					ntracks++;
				}
			}
			continue;
		}
		if (!pt_json_get(l, "ts", ts, sizeof(ts), NULL) || !is_num(ts) ||
		    !pt_json_get(l, "args", args, sizeof(args), NULL) ||
		    args[0] != '{') {
			bad++;
			pt_diag("no ts or args: %s", l);
			continue;
		}
		if (!strcmp(ph, "i")) {
			if (!pt_json_get(l, "s", sc, sizeof(sc), NULL) ||
			    (strcmp(sc, "t") && strcmp(sc, "g") && strcmp(sc, "p"))) {
				bad++;
				continue;
			}
			if (!strcmp(name, "lost records")) {
				if (strcmp(sc, "g") || pt_json_num(args, "lost", -1) <= 0 ||
				    pt_json_num(args, "cpu", -1) < 0)
					bad++;
				*lost_sum += pt_json_num(args, "lost", 0);
				continue;
			}
		} else if (!strcmp(ph, "X")) {
			if (!pt_json_get(l, "dur", dur, sizeof(dur), NULL) ||
			    !is_num(dur) || strtod(dur, NULL) < 0) {
				bad++;
				pt_diag("X without dur >= 0: %s", l);
				continue;
			}
			nx++;
		} else {
			bad++;
			pt_diag("unexpected phase %s", ph);
			continue;
		}
		/* A hit: on a named track, ts non-decreasing on it. */
		for (i = 0; i < ntracks; i++)
			if (tracks[i].pid == atoll(pidv) && tracks[i].tid == atoll(tidv))
				break;
		if (i == ntracks) {
			unnamed++;
			continue;
		}
		if (tracks[i].last_ts[0] && !ts_le(tracks[i].last_ts, ts)) {
			bad++;
			pt_diag("ts %s before %s on %s/%s", ts, tracks[i].last_ts,
				pidv, tidv);
		}
		snprintf(tracks[i].last_ts, sizeof(tracks[i].last_ts), "%s", ts);
		if (pt_json_num(args, "pid", -1) != atoll(pidv) ||
		    pt_json_num(args, "tid", -1) != atoll(tidv) ||
		    !pt_json_streq(args, "probe", name))
			bad++;
		if (match && !strcmp(ph, "X")) {
			unsigned long long tn = pt_json_num(args, "time_ns", 0);
			unsigned long long lat = pt_json_num(args, "latency_ns", 0);
			char wts[32], wdur[32];

			snprintf(wts, sizeof(wts), "%llu.%03llu", (tn - lat) / 1000,
				 (tn - lat) % 1000);
			snprintf(wdur, sizeof(wdur), "%llu.%03llu", lat / 1000,
				 lat % 1000);
			for (i = 0; i < njson; i++)
				if (!strcmp(json_ev[i], args))
					break;
			if (i < njson && !strcmp(ts, wts) && !strcmp(dur, wdur))
				matched++;
			else
				pt_diag("X event not in the JSON output (or ts/dur off): %s",
					l);
		}
	}
	PT_OK(head && tail, "%s: {\"traceEvents\":[ ... ]} around the events", what);
	PT_EQ(bad, 0, "%s: every trace event has the keys and types of its phase, ts in order per track",
	      what);
	PT_EQ(unnamed, 0, "%s: every hit is on a thread named by a thread_name event",
	      what);
	if (match)
		PT_EQ(matched, njson, "%s: every JSON event is an X event with args = the JSON object, ts = entry, dur = latency",
		      what);
	*nx_out = nx;
}

static void test_perfetto(void)
{
	static const char *const names[] = {
		"/tmp/pea-pf-missing", "/proc/version", "/proc/self/status",
	};
	const char *path = "/tmp/pea-trace.json";
	unsigned long long lost_sum, events, lost;
	struct pt_proc p;
	char pid[16];
	int i, rc, nx, fd;

	snprintf(pid, sizeof(pid), "%d", getpid());
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", RETPROBE, "--str",
					  "ARG1", "--json", "-c", "3", "--pid",
					  pid, "--output", (char *)path,
					  "--format", "perfetto", NULL }),
	      "kretprobe with --output FILE --format perfetto attaches");
	for (i = 0; i < 3; i++) {
		fd = open(names[i], O_RDONLY);
		if (fd >= 0)
			close(fd);
	}
	rc = trace_collect(&p);
	PT_EQ(rc, 0, "perfetto: pea trace exits 0");
	PT_EQ(njson, 3, "perfetto: 3 JSON events");
	check_perfetto(path, "perfetto", true, &lost_sum, &nx);
	PT_EQ(nx, 3, "perfetto: 3 complete (X) events");
	PT_EQ(lost_sum, 0, "perfetto: no lost markers");

	rc = overflow_run(path, "perfetto", &events);
	PT_EQ(rc, 0, "overflow (perfetto): pea trace exits 0 on SIGINT");
	lost = pt_json_num(summary, "lost", -1);
	PT_OK(lost > 0 && lost != (unsigned long long)-1,
	      "overflow (perfetto): records were lost (%llu)", lost);
	PT_EQ(events + lost, OVERFLOW_OPENS,
	      "overflow (perfetto): events + lost = the %d opens", OVERFLOW_OPENS);
	check_perfetto(path, "overflow (perfetto)", false, &lost_sum, &nx);
	PT_EQ(nx, events, "overflow (perfetto): one X event per JSON event");
	PT_EQ(lost_sum, lost, "overflow (perfetto): the lost markers add up to the lost records");
}

static void test_usage(void)
{
	static char out[65536], err[8192];
	int rc;

	rc = pt_run((char *[]){ PT_PEA, "trace", RETPROBE, "--output", "/tmp/x",
				NULL }, out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--output without --format: usage error");
	rc = pt_run((char *[]){ PT_PEA, "trace", RETPROBE, "--format", "ctf",
				NULL }, out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--format without --output: usage error");
	rc = pt_run((char *[]){ PT_PEA, "trace", RETPROBE, "--output", "/tmp/x",
				"--format", "pcap", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "ctf or perfetto"),
	      "--format pcap: usage error naming the formats");
	rc = pt_run((char *[]){ PT_PEA, "trace", RETPROBE, "--output",
				"/proc/version/x", "--format", "ctf", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 1 && strstr(err, "--output"),
	      "--output in a place that cannot be created: exit 1 (%s)", err);
}

int main(int argc, char **argv)
{
	struct stat st;

	pt_exec_init(argc, argv, self_exe, sizeof(self_exe));
	PT_OK(!stat(PT_BT, &st), "babeltrace2 is in the guest (%s)", PT_BT);
	test_usage();
	test_ctf_kretprobe();
	test_ctf_kstack();
	test_ctf_tracepoint();
	test_ctf_array();
	if (pt_have_netfilter())
		test_ctf_netfilter();
	else
		test_ctf_no_netfilter();
	test_ctf_lost();
	test_perfetto();
	return pt_done();
}
