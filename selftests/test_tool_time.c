// SPDX-License-Identifier: GPL-2.0
/*
 * `pea trace --time` in the guest: the test opens files itself, with
 * pea trace kretprobe:do_sys_openat2 --pid (its own pid) running, and
 * reads the clocks around each open:
 *
 *   - --time wall --json: every event's "time_wall" (ISO 8601 UTC, ns)
 *     lies between CLOCK_REALTIME read before and after that open, give
 *     or take WALL_BOUND_NS (the offset is read once at start), and is
 *     time_ns plus one offset for all of them;
 *   - --time wall (text): the column heading WALL(UTC) and each line
 *     starting with such a time, within the same bound;
 *   - --time mono (text): the column is CLOCK_MONOTONIC seconds, between
 *     the clock read before and after the open;
 *   - --time with anything else: exit 2;
 *   - --output FILE --format pftrace with --time wall --json: the
 *     Perfetto file's clock snapshots (decoded by pt_pftrace.h) hold
 *     CLOCK_BOOTTIME, CLOCK_MONOTONIC and CLOCK_REALTIME within the
 *     guest's readings around the run, each open's slice ends at its
 *     time_ns on CLOCK_MONOTONIC, and converted through the snapshot
 *     it is on the wall clock at its "time_wall" (within WALL_BOUND_NS)
 *     and on CLOCK_BOOTTIME where the guest's clocks put it.
 */
#include "pt_tool.h"
#include "pt_pftrace.h"

#define PROBE		"kretprobe:do_sys_openat2"
#define NOPENS		3
/* The stated bound of a wall-clock time against CLOCK_REALTIME. */
#define WALL_BOUND_NS	2000000LL

static char line[8192];

static long long clk(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* "2026-11-27T11:54:46.123456789Z" in ns since the epoch; -1 if not. */
static long long iso_ns(const char *s)
{
	struct tm tm = { 0 };
	char frac[16];
	int n = 0;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%9[0-9]Z%n", &tm.tm_year,
		   &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, frac, &n) != 7 || n != 30 || strlen(frac) != 9)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (long long)timegm(&tm) * 1000000000LL + atoll(frac);
}

/* Open (and close) /tmp/pea-time-@tag-@i, the clocks read around it. */
static void do_open(const char *tag, int i, long long rt[2],
		    long long mono[2])
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "/tmp/pea-time-%s-%d", tag, i);
	rt[0] = clk(CLOCK_REALTIME);
	mono[0] = clk(CLOCK_MONOTONIC);
	fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	mono[1] = clk(CLOCK_MONOTONIC);
	rt[1] = clk(CLOCK_REALTIME);
	if (fd >= 0)
		close(fd);
	unlink(name);
}

static bool start_json(struct pt_proc *p, const char *mode)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", getpid());
	return pt_trace_start(p, (char *[]){ PT_PEA, "trace", PROBE, "--str",
					     "ARG1", "--pid", pid, "--time",
					     (char *)mode, "--count", "3",
					     "--json", NULL });
}

static void test_wall_json(void)
{
	long long rt[NOPENS][2], mono[NOPENS][2], off = 0;
	struct pt_proc p;
	int i, n = 0, rc;

	PT_OK(start_json(&p, "wall"), "wall json: attached");
	for (i = 0; i < NOPENS; i++)
		do_open("j", i, rt[i], mono[i]);
	while (n < NOPENS &&
	       pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		char wall[64] = "";
		long long w, t;

		if (!pt_json_streq(line, "type", "event"))
			continue;
		pt_json_get(line, "time_wall", wall, sizeof(wall), NULL);
		w = iso_ns(wall);
		t = pt_json_num(line, "time_ns", -1);
		PT_OK(w > 0, "wall json: event %d has time_wall \"%s\" (ISO 8601 UTC, ns)",
		      n, wall);
		PT_OK(w >= rt[n][0] - WALL_BOUND_NS &&
		      w <= rt[n][1] + WALL_BOUND_NS,
		      "wall json: event %d within %lld ns of CLOCK_REALTIME around its open (%lld ns after the read before it, the open took %lld ns)",
		      n, WALL_BOUND_NS, w - rt[n][0], rt[n][1] - rt[n][0]);
		PT_OK(t >= mono[n][0] && t <= mono[n][1],
		      "wall json: event %d's time_ns is within its open's CLOCK_MONOTONIC", n);
		if (!n)
			off = w - t;
		PT_EQ(w - t, off, "wall json: event %d: time_wall - time_ns is the same offset",
		      n);
		n++;
	}
	PT_EQ(n, NOPENS, "wall json: %d events", NOPENS);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "wall json: --count ends it with exit 0");
	pt_proc_close(&p);
}

/* The text runs: the first column against the clocks. */
static void test_text(const char *mode)
{
	long long rt[NOPENS][2], mono[NOPENS][2];
	bool wall = !strcmp(mode, "wall");
	char pid[16], arg[64];
	struct pt_proc p;
	int i, n = 0, header = 0, rc;

	snprintf(pid, sizeof(pid), "%d", getpid());
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--str",
					     "ARG1", "--pid", pid, "--time",
					     (char *)mode, "--count", "3",
					     NULL }),
	      "%s text: attached", mode);
	for (i = 0; i < NOPENS; i++)
		do_open(mode, i, rt[i], mono[i]);
	while (n < NOPENS &&
	       pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		long long v;

		if (!strncmp(line, wall ? "WALL(UTC) " : "MONO(s) ",
			     wall ? 10 : 8)) {
			header++;
			continue;
		}
		snprintf(arg, sizeof(arg), "\"/tmp/pea-time-%s-%d\"", mode, n);
		if (wall) {
			char col[32];

			snprintf(col, sizeof(col), "%.30s", line);
			v = iso_ns(col);
			PT_OK(v >= rt[n][0] - WALL_BOUND_NS &&
			      v <= rt[n][1] + WALL_BOUND_NS && line[30] == ' ',
			      "wall text: line %d starts with its wall-clock time %s, within %lld ns",
			      n, col, WALL_BOUND_NS);
		} else {
			unsigned long long s, ns;

			PT_OK(sscanf(line, " %llu.%9llu", &s, &ns) == 2, "mono text: line %d starts with seconds.ns",
			      n);
			v = s * 1000000000LL + ns;
			PT_OK(v >= mono[n][0] && v <= mono[n][1],
			      "mono text: line %d's time is CLOCK_MONOTONIC at its open", n);
		}
		PT_OK(strstr(line, arg), "%s text: line %d is the open of %s", mode, n, arg);
		n++;
	}
	PT_EQ(header, 1, "%s text: one heading line, %s", mode,
	      wall ? "WALL(UTC)" : "MONO(s)");
	PT_EQ(n, NOPENS, "%s text: %d lines", mode, NOPENS);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "%s text: exit 0", mode);
	pt_proc_close(&p);
}

/* Perfetto protobuf: its clock snapshots line pea's times up. */
static void test_pftrace(void)
{
	const char *path = "/tmp/pea-time.pftrace";
	long long rt[NOPENS][2], mono[NOPENS][2], t[NOPENS], w[NOPENS];
	long long b0, m0, r0, b1, m1, r1, boot_off;
	const struct pkt *cs, *ce;
	char pid[16], wall[64];
	int i, n = 0, rc, ends = 0, wall_ok = 0, boot_ok = 0;
	struct pt_proc p;

	snprintf(pid, sizeof(pid), "%d", getpid());
	b0 = clk(CLOCK_BOOTTIME);
	m0 = clk(CLOCK_MONOTONIC);
	r0 = clk(CLOCK_REALTIME);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--str",
					     "ARG1", "--pid", pid, "--time",
					     "wall", "--count", "3", "--json",
					     "--output", (char *)path,
					     "--format", "pftrace", NULL }),
	      "pftrace: attached, writing %s", path);
	for (i = 0; i < NOPENS; i++)
		do_open("p", i, rt[i], mono[i]);
	while (n < NOPENS &&
	       pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "event"))
			continue;
		pt_json_get(line, "time_wall", wall, sizeof(wall), NULL);
		t[n] = pt_json_num(line, "time_ns", -1);
		w[n] = iso_ns(wall);
		n++;
	}
	PT_EQ(n, NOPENS, "pftrace: %d events on stdout", NOPENS);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "pftrace: exit 0");
	pt_proc_close(&p);
	r1 = clk(CLOCK_REALTIME);
	m1 = clk(CLOCK_MONOTONIC);
	b1 = clk(CLOCK_BOOTTIME);
	boot_off = b1 - m1;

	PT_EQ(pt_pf_decode(path), 0, "pftrace: the file decodes (%d packets)", npk);
	if (npk < 2)
		return;
	cs = &pk[0];
	ce = &pk[npk - 1];
	PT_OK(cs->kind == 6 && ce->kind == 6,
	      "pftrace: the first and last packets are clock snapshots");
	PT_OK(cs->clocks[6] >= (__u64)b0 && cs->clocks[6] <= (__u64)b1 &&
	      cs->clocks[3] >= (__u64)m0 && cs->clocks[3] <= (__u64)m1 &&
	      cs->clocks[1] >= (__u64)r0 && cs->clocks[1] <= (__u64)r1 &&
	      ce->clocks[3] >= (__u64)mono[NOPENS - 1][1] &&
	      ce->clocks[3] <= (__u64)m1,
	      "pftrace: BOOTTIME, MONOTONIC and REALTIME of the snapshots within the guest's readings around the run");
	for (i = 1; i < npk - 1; i++) {
		const struct pkt *k = &pk[i];
		long long ts, wt, bt;
		int e;

		if (k->kind != 11 || k->type != 2)
			continue;
		for (e = 0; e < n && t[e] != (long long)k->ts; e++)
			;
		if (e == n || k->clock_id != 3)
			continue;
		ends++;
		ts = k->ts;
		wt = ts - (long long)cs->clocks[3] + (long long)cs->clocks[1];
		bt = ts - (long long)cs->clocks[3] + (long long)cs->clocks[6];
		if (wt >= w[e] - WALL_BOUND_NS && wt <= w[e] + WALL_BOUND_NS &&
		    wt >= rt[e][0] - WALL_BOUND_NS &&
		    wt <= rt[e][1] + WALL_BOUND_NS)
			wall_ok++;
		else
			pt_diag("open %d: REALTIME by the snapshot %lld, time_wall %lld",
				e, wt, w[e]);
		if (bt - ts >= boot_off - WALL_BOUND_NS &&
		    bt - ts <= boot_off + WALL_BOUND_NS)
			boot_ok++;
	}
	PT_EQ(ends, NOPENS,
	      "pftrace: each open's slice ends at its time_ns, on CLOCK_MONOTONIC (clock id 3)");
	PT_EQ(wall_ok, NOPENS,
	      "pftrace: through the snapshot each is on the wall clock at its time_wall and within CLOCK_REALTIME around its open (%lld ns)",
	      WALL_BOUND_NS);
	PT_EQ(boot_ok, NOPENS,
	      "pftrace: and on CLOCK_BOOTTIME where the guest's clocks put it");
	unlink(path);
}

static void test_bad(void)
{
	static char out[4096], err[4096];
	int rc;

	rc = pt_run((char *[]){ PT_PEA, "trace", PROBE, "--time", "utc", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--time utc: a usage error");
	PT_OK(strstr(err, "--time 'utc': wall, mono or rel"), "--time utc: says what it takes");
}

int main(void)
{
	test_wall_json();
	test_text("wall");
	test_text("mono");
	test_bad();
	test_pftrace();
	return pt_done();
}
