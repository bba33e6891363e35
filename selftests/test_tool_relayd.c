// SPDX-License-Identifier: GPL-2.0
/*
 * `pea trace --output net://... --format ctf` in the guest, against a real
 * lttng-relayd (lttng-tools, packed into the initramfs with its libraries
 * when this test may run) on the guest's own loopback, 127.0.0.1:
 *
 *   - a kretprobe on do_sys_openat2 with --args --str ARG1 for the test's
 *     own opens, --json on stdout and the CTF trace to relayd: pea exits
 *     0, relayd stored guest/SESSION-DATE-TIME/pea/ with metadata and a
 *     stream per CPU, and babeltrace2 reads there exactly the --json
 *     events, in order, each with every field and value of its --json
 *     line (pt_ctf.h: time_ns, cpu, pid, tid, comm, ret, latency_ns, the
 *     six args, str and whatever else --json prints);
 *   - a flight recorder streaming to relayd: each SIGUSR1's snapshot N
 *     goes to relayd as its own snapshot session SESSION.N, which holds
 *     exactly the snapshot's --json events, every field (README, "Many
 *     machines"); the final snapshot at SIGINT goes to SESSION itself;
 *   - relayd killed during the trace: pea says it lost the connection,
 *     keeps tracing (every open still on stdout) and exits 1;
 *   - nothing listening: exit 1 and the message, before any probe.
 *
 * All traffic stays on the guest's loopback.
 */
#include <dirent.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "pt_tool.h"
#include "pt_ctf.h"

#define RELAYD		"/usr/bin/lttng-relayd"
#define PT_BT		"/usr/bin/babeltrace2"
#define PROBE		"kretprobe:do_sys_openat2"
#define OUTDIR		"/tmp/relayd-out"
#define RD_PORT		15342
#define NOPENS		20

static char line[8192];
static char json[PT_CTF_MAXEV][PT_CTF_EVLEN];

static bool port_open(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a));
	if (fd >= 0)
		close(fd);
	return ok;
}

/* lttng-relayd on 127.0.0.1:@base (control), +1 (data), +2 (live). */
static pid_t relayd_start(int base)
{
	char c[64], d[64], l[64];
	pid_t pid;
	int i;

	snprintf(c, sizeof(c), "tcp://127.0.0.1:%d", base);
	snprintf(d, sizeof(d), "tcp://127.0.0.1:%d", base + 1);
	snprintf(l, sizeof(l), "tcp://127.0.0.1:%d", base + 2);
	pid = fork();
	if (pid < 0)
		pt_fatal("fork");
	if (!pid) {
		int fd = open("/tmp/relayd.log", O_WRONLY | O_CREAT | O_APPEND,
			      0644);

		dup2(fd, 1);
		dup2(fd, 2);
		execl(RELAYD, RELAYD, "-C", c, "-D", d, "-L", l, "-o", OUTDIR,
		      (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 1000; i++) {
		if (port_open(base) && port_open(base + 1) &&
		    port_open(base + 2))
			return pid;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			break;
		usleep(20000);
	}
	pt_diag("lttng-relayd did not listen on 127.0.0.1:%d", base);
	return -1;
}

static void relayd_kill(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* relayd's directory of session @s of host "guest": OUTDIR/guest/s-DATE/pea. */
static bool session_dir(const char *s, char *path, size_t len)
{
	size_t n = strlen(s);
	struct dirent *e;
	bool found = false;
	DIR *d = opendir(OUTDIR "/guest");

	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, s, n) && e->d_name[n] == '-') {
			snprintf(path, len, OUTDIR "/guest/%s/pea", e->d_name);
			found = true;
		}
	if (d)
		closedir(d);
	return found;
}

static void do_open(const char *tag, int i)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "/tmp/pea-relayd-%s-%d", tag, i);
	fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	unlink(name);
}

static void test_stream(void)
{
	char pid[16], path[512], want[256], url[64];
	struct pt_proc p;
	const char *b;
	pid_t relayd = relayd_start(RD_PORT);
	int i, n = 0, rc, in_order = 0;

	PT_OK(relayd > 0, "stream: lttng-relayd listens on 127.0.0.1:%d-%d",
	      RD_PORT, RD_PORT + 2);
	if (relayd <= 0)
		return;
	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(url, sizeof(url), "net://127.0.0.1:%d:%d", RD_PORT, RD_PORT + 1);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--args",
					     "--str", "ARG1", "--pid", pid,
					     "--no-children",
					     "--json", "--count", "20",
					     "--output", url, "--format", "ctf",
					     "--session", "s1", "--hostname",
					     "guest", "--live-interval", "0.2",
					     NULL }),
	      "stream: pea trace attached, streaming to %s", url);
	for (i = 0; i < NOPENS; i++)
		do_open("s", i);
	while (n < NOPENS &&
	       pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		if (pt_json_streq(line, "type", "event"))
			snprintf(json[n++], sizeof(json[0]), "%.4000s", line);
	PT_EQ(n, NOPENS, "stream: %d events on stdout", NOPENS);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "stream: pea trace exits 0");
	if (rc)
		pt_diag("stderr: %s", p.err_all ? p.err_all : "");
	pt_proc_close(&p);

	/* relayd has everything once the session closed; wait for it. */
	for (i = 0; i < 500 && !session_dir("s1", path, sizeof(path)); i++)
		usleep(20000);
	PT_OK(session_dir("s1", path, sizeof(path)),
	      "stream: relayd stored the session under " OUTDIR "/guest/s1-DATE-TIME/pea");
	usleep(500000);
	/* Every field of every event, then their order. */
	pt_ctf_compare(path, PROBE, "stream", json, n);
	rc = babeltrace(path);
	PT_EQ(rc, 0, "stream: babeltrace2 reads relayd's copy");
	for (i = 0, b = bt_out; b && *b; i++) {
		b = strchr(b, '\n');
		if (b)
			b++;
	}
	PT_EQ(i, NOPENS, "stream: babeltrace2 prints %d events", NOPENS);
	b = bt_out;
	for (i = 0; i < n; i++) {
		char str[128] = "";

		pt_json_get(json[i], "str", str, sizeof(str), NULL);
		snprintf(want, sizeof(want), "time_ns = %lld, ",
			 pt_json_num(json[i], "time_ns", -1));
		b = strstr(b, want);
		if (b && strstr(b, str) && strchr(b, '\n') &&
		    strstr(b, str) < strchr(b, '\n'))
			in_order++;
		if (!b)
			break;
	}
	PT_EQ(in_order, NOPENS,
	      "stream: each --json event is in relayd's copy, in order, with its time_ns and file name");
	relayd_kill(relayd);
}

/* How many of the @n events in json[] are the opens of do_open("f"). */
static int f_opens(int n)
{
	char str[128];
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (pt_json_get(json[i], "str", str, sizeof(str), NULL) &&
		    !strncmp(str, "/tmp/pea-relayd-f-", 18))
			k++;
	return k;
}

/*
 * Snapshot @no of a flight recorder streaming to relayd: read its --json
 * events into json[] up to its line; 0 if that line is missing or does
 * not name relayd's session SESSION.@no. (The test's own opens of
 * relayd's directories are events too.)
 */
static int read_net_snap(struct pt_proc *p, int no, const char *url)
{
	char want[256], out[256] = "";
	int n = 0;

	snprintf(want, sizeof(want), "%s (host guest, session s3.%d)", url, no);
	while (pt_proc_line(p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "snapshot")) {
			pt_json_get(line, "output", out, sizeof(out), NULL);
			if (pt_json_num(line, "snapshot", -1) != no ||
			    pt_json_num(line, "events", -1) != n ||
			    strcmp(out, want)) {
				pt_diag("snapshot line: %s (want %s)", line, want);
				return 0;
			}
			return n;
		}
		if (pt_json_streq(line, "type", "event") && n < PT_CTF_MAXEV)
			snprintf(json[n++], sizeof(json[0]), "%.4000s", line);
	}
	return 0;
}

/* relayd's copy of session @s, once it holds @n events (or 10 s). */
static bool net_snap_dir(const char *s, int n, char *path, size_t len)
{
	int i, lines;
	const char *b;

	for (i = 0; i < 500; i++, usleep(20000)) {
		if (!session_dir(s, path, len) || babeltrace(path))
			continue;
		for (lines = 0, b = bt_out; (b = strchr(b, '\n')); b++)
			lines++;
		if (lines == n)
			return true;
	}
	return false;
}

static void test_flight_net(void)
{
	char pid[16], path[512], url[64];
	struct pt_proc p;
	pid_t relayd = relayd_start(RD_PORT + 20);
	int i, n, rc;

	PT_OK(relayd > 0, "flight: lttng-relayd listens");
	if (relayd <= 0)
		return;
	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(url, sizeof(url), "net://127.0.0.1:%d:%d", RD_PORT + 20,
		 RD_PORT + 21);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--args",
					     "--str", "ARG1", "--pid", pid,
					     "--no-children",
					     "--json", "--flight-recorder",
					     "--output", url, "--format", "ctf",
					     "--session", "s3", "--hostname",
					     "guest", NULL }),
	      "flight: pea trace --flight-recorder attached, streaming to %s",
	      url);
	for (i = 0; i < 10; i++)
		do_open("f", i);
	kill(p.pid, SIGUSR1);
	n = read_net_snap(&p, 1, url);
	PT_EQ(f_opens(n), 10, "flight: SIGUSR1: snapshot 1 has the 10 opens, its line names relayd's session s3.1");
	PT_OK(net_snap_dir("s3.1", n, path, sizeof(path)),
	      "flight: relayd stored snapshot 1 as guest/s3.1-DATE-TIME/pea");
	pt_ctf_compare(path, PROBE, "flight: snapshot 1 in relayd", json, n);

	for (; i < 15; i++)
		do_open("f", i);
	kill(p.pid, SIGUSR1);
	n = read_net_snap(&p, 2, url);
	PT_EQ(f_opens(n), 15, "flight: snapshot 2 has all 15 opens (the rings did not wrap), session s3.2");
	PT_OK(net_snap_dir("s3.2", n, path, sizeof(path)),
	      "flight: relayd stored snapshot 2 as guest/s3.2-DATE-TIME/pea");
	pt_ctf_compare(path, PROBE, "flight: snapshot 2 in relayd", json, n);

	kill(p.pid, SIGINT);
	n = 0;
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		if (pt_json_streq(line, "type", "event") && n < PT_CTF_MAXEV)
			snprintf(json[n++], sizeof(json[0]), "%.4000s", line);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "flight: SIGINT: pea trace exits 0");
	if (rc)
		pt_diag("stderr: %s", p.err_all ? p.err_all : "");
	pt_proc_close(&p);
	PT_EQ(f_opens(n), 15, "flight: the final snapshot has the 15 opens");
	PT_OK(net_snap_dir("s3", n, path, sizeof(path)),
	      "flight: the final snapshot went to the session's own stream, guest/s3-DATE-TIME/pea");
	pt_ctf_compare(path, PROBE, "flight: final snapshot in relayd", json, n);
	relayd_kill(relayd);
}

static void test_killed(void)
{
	char pid[16], url[64];
	struct pt_proc p;
	pid_t relayd = relayd_start(RD_PORT + 10);
	int i, n = 0, rc;

	PT_OK(relayd > 0, "killed: lttng-relayd listens");
	if (relayd <= 0)
		return;
	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(url, sizeof(url), "net://127.0.0.1:%d:%d", RD_PORT + 10,
		 RD_PORT + 11);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--str",
					     "ARG1", "--pid", pid, "--json",
					     "--no-children",
					     "--count", "20", "--output", url,
					     "--format", "ctf", "--session",
					     "s2", "--hostname", "guest",
					     "--live-interval", "0.1", NULL }),
	      "killed: pea trace attached");
	for (i = 0; i < NOPENS / 2; i++)
		do_open("k", i);
	usleep(300000);
	relayd_kill(relayd);
	usleep(500000);		/* a few live intervals: packets, beacons */
	for (; i < NOPENS; i++)
		do_open("k", i);
	while (n < NOPENS &&
	       pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		if (pt_json_streq(line, "type", "event"))
			n++;
	PT_EQ(n, NOPENS, "killed: all %d opens still on stdout: tracing went on",
	      NOPENS);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 1, "killed: pea trace exits 1");
	snprintf(line, sizeof(line),
		 "pea: --output %s: lost the connection to lttng-relayd at 127.0.0.1:", url);
	PT_OK(p.err_all && strstr(p.err_all, line) &&
	      strstr(p.err_all, "; the stream to it stops here\n"),
	      "killed: pea says it lost the connection to relayd");
	if (p.err_all)
		pt_diag("stderr: %s", p.err_all);
	pt_proc_close(&p);
}

static void test_unreachable(void)
{
	static char out[4096], err[4096];
	int rc;

	rc = pt_run((char *[]){ PT_PEA, "trace", PROBE, "--output",
				"net://127.0.0.1:15399", "--format", "ctf",
				NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 1, "unreachable: nothing on 127.0.0.1:15399: exit 1");
	PT_OK(strstr(err, "pea: --output: cannot connect to lttng-relayd at 127.0.0.1:15399 (control port): Connection refused\n") &&
	      !strstr(err, "pea: tracing"),
	      "unreachable: the message, and no probe attached: %s", err);
}

int main(void)
{
	/* The loopback, and relayd's run directory (/var/run/lttng). */
	system("ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up");
	mkdir("/var", 0755);
	if (access("/var/run", F_OK))
		symlink("/run", "/var/run");
	if (access(RELAYD, X_OK)) {
		PT_OK(0, "lttng-relayd is in the guest (%s)", RELAYD);
		return pt_done();
	}
	test_stream();
	test_flight_net();
	test_killed();
	test_unreachable();
	return pt_done();
}
