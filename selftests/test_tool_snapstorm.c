// SPDX-License-Identifier: GPL-2.0
/*
 * `pea trace --flight-recorder` snapshots by signal during a storm, in
 * the guest: four probes write from every context the test module
 * offers, at once, on every CPU:
 *
 *   - task:    kretprobe:do_sys_openat2 on a child that opens files in a
 *              loop;
 *   - softirq: kprobe:st_exec_timer_fn, the pinned timer that the same
 *              child's PEA_ST_IOC_CONTEXTS runs at each turn;
 *   - hardirq: kprobe:st_hrtimer_fn, the storm's pinned hard hrtimer on
 *              every CPU;
 *   - NMI:     kprobe:st_nmi_handler, run for the NMI self-IPIs the
 *              hrtimer sends (the test module's storm,
 *              PEA_ST_IOC_STORM_START, writing into a map of its own);
 *
 * and the test sends SIGUSR1 SNAPS times, SNAP_GAP_MS after each
 * snapshot's line, to a pea trace whose rings (--pages PAGES a CPU) wrap
 * in between. The rates are kept to a few hundred events a second, so
 * that a snapshot is printed (under TCG) faster than the rings wrap and
 * consecutive snapshots overlap. Each snapshot, read from --json:
 *
 *   - is in time order, every event at or after its horizon, and has as
 *     many events as its line says;
 *   - has a horizon (the rings wrapped) later than the previous one's;
 *   - loses nothing it should hold: every event of the previous snapshot
 *     at or after this one's horizon is in it (the rings still hold
 *     them: they only overwrite what is older than the horizon), so
 *     what is missing from the sequence of snapshots is exactly what
 *     is older than a horizon, which each snapshot states;
 *   - and the snapshots hold events of all four contexts.
 *
 * SIGINT then ends the trace with its final snapshot (exit 0), whose
 * summary counts every snapshot's events.
 */
#include <sys/sysinfo.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "libpea.h"

#define OPEN_PROBE	"kretprobe:do_sys_openat2"
#define SOFT_PROBE	"kprobe:st_exec_timer_fn"
#define HARD_PROBE	"kprobe:st_hrtimer_fn"
#define NMI_PROBE	"kprobe:st_nmi_handler"
#define STORM_MAP	"snapstorm"
#define SNAPS		8
#define SNAP_GAP_MS	50
#define PAGES		"8"
#define MAXSNAP		(SNAPS + 1)
#define MAXEV		20000

enum { CTX_TASK, CTX_SOFT, CTX_HARD, CTX_NMI, NCTX };

static const char *const ctx_probe[NCTX] = {
	OPEN_PROBE, SOFT_PROBE, HARD_PROBE, NMI_PROBE,
};

static const char *const ctx_name[NCTX] = {
	"task", "softirq", "hardirq", "NMI",
};

struct ev {
	unsigned long long t;
	int cpu, ctx;
};

struct snap {
	struct ev *ev;
	int n, declared, order, before_h, bad;
	long long horizon, taken;
	int per_ctx[NCTX];
};

static char line[8192];
static struct snap snaps[MAXSNAP];
static struct pea_st_result storm_res;

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	return x->ctx - y->ctx;
}

/* Whether @s holds @e (its events sorted into s->ev by ev_cmp). */
static bool holds(const struct snap *s, const struct ev *e)
{
	return !!bsearch(e, s->ev, s->n, sizeof(*e), ev_cmp);
}

/*
 * The events of the next snapshot up to its line (or to EOF for the
 * final one); false if none came.
 */
static bool read_snap(struct pt_proc *p, struct snap *s, bool final)
{
	char probe[128];
	bool got = false;
	int i;

	memset(s, 0, sizeof(*s));
	s->ev = calloc(MAXEV, sizeof(*s->ev));
	if (!s->ev)
		pt_fatal("calloc");
	s->declared = -1;
	while (pt_proc_line(p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		got = true;
		if (pt_json_streq(line, "type", "snapshot")) {
			s->declared = pt_json_num(line, "events", -1);
			s->horizon = pt_json_num(line, "horizon_ns", -1);
			s->taken = pt_json_num(line, "time_ns", -1);
			if (!final)
				break;
			continue;
		}
		if (pt_json_streq(line, "type", "summary")) {
			/* The final snapshot's horizon. */
			s->horizon = pt_json_num(line, "horizon_ns", -1);
			break;
		}
		if (!pt_json_streq(line, "type", "event"))
			continue;
		if (s->n == MAXEV) {
			s->bad++;
			continue;
		}
		s->ev[s->n].t = pt_json_num(line, "time_ns", 0);
		s->ev[s->n].cpu = pt_json_num(line, "cpu", -1);
		s->ev[s->n].ctx = -1;
		pt_json_get(line, "probe", probe, sizeof(probe), NULL);
		for (i = 0; i < NCTX; i++)
			if (!strcmp(probe, ctx_probe[i]))
				s->ev[s->n].ctx = i;
		if (s->ev[s->n].ctx < 0)
			s->bad++;
		else
			s->per_ctx[s->ev[s->n].ctx]++;
		if (s->n && s->ev[s->n].t < s->ev[s->n - 1].t)
			s->order++;
		s->n++;
	}
	for (i = 0; i < s->n; i++)
		if (s->horizon > 0 && s->ev[i].t < (unsigned long long)s->horizon)
			s->before_h++;
	qsort(s->ev, s->n, sizeof(*s->ev), ev_cmp);
	return got;
}

/*
 * The child: open files and run the test module's timer (softirq) in
 * turn, until killed.
 */
/*
 * Whether a ring of pea trace @pid's map has wrapped: some ring's bytes
 * written pass its size (pea stat --json --map trace_PID).
 */
static bool ring_wrapped(pid_t pid)
{
	static char out[65536], err[4096];
	char map[32];
	const char *l;

	snprintf(map, sizeof(map), "trace_%d", (int)pid);
	if (pt_run((char *[]){ PT_PEA, "stat", "--json", "--map", map, NULL },
		   out, sizeof(out), err, sizeof(err), NULL, NULL))
		return false;
	for (l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char one[4096];
		size_t n = strcspn(l, "\n");
		long long size;

		if (n >= sizeof(one))
			continue;
		memcpy(one, l, n);
		one[n] = 0;
		size = pt_json_num(one, "size", -1);
		if (size > 0 && pt_json_num(one, "bytes", -1) > size)
			return true;
	}
	return false;
}

static void opener(int go)
{
	struct pea_st_contexts cx;
	char name[64], c;
	int i, fd;

	if (read(go, &c, 1) != 1)
		_exit(1);
	for (i = 0;; i++) {
		snprintf(name, sizeof(name), "/tmp/pea-snapstorm-%d", i % 64);
		fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
		memset(&cx, 0, sizeof(cx));
		snprintf(cx.map, sizeof(cx.map), "%s", STORM_MAP);
		ioctl(pt_st(), PEA_ST_IOC_CONTEXTS, &cx);
		usleep(5000);
	}
}

int main(void)
{
	struct pea_st_storm cfg = {
		.sources = 1U << PEA_ST_HARDIRQ | 1U << PEA_ST_NMI,
		.hrtimer_us = 20000,
		.task_burst = 1,
		.task_sleep_us = 1000,
		.nmi_every = 2,
	};
	int ncpu = get_nprocs(), go[2], map, i, k, rc, nsnap = 0;
	int lost_overlap = 0, overlap = 0, horizons = 0, ctx_all = 0;
	long long sum = 0;
	char cpid[16];
	struct pt_proc p;
	pid_t child;

	pt_st();	/* the test module, for its storm and its functions */
	if (pipe(go))
		pt_fatal("pipe");
	child = fork();
	if (child < 0)
		pt_fatal("fork");
	if (!child) {
		close(go[1]);
		opener(go[0]);
	}
	close(go[0]);
	snprintf(cpid, sizeof(cpid), "%d", child);

	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace",
					     "--flight-recorder", "--json",
					     "--pages", PAGES, OPEN_PROBE,
					     "--pid", cpid, SOFT_PROBE,
					     HARD_PROBE, NMI_PROBE, NULL }),
	      "pea trace --flight-recorder attached %s (task), %s (softirq), %s (hardirq), %s (NMI)",
	      OPEN_PROBE, SOFT_PROBE, HARD_PROBE, NMI_PROBE);
	map = pea_map_create(STORM_MAP, ncpu, 0);
	if (map < 0)
		pt_fatal("pea_map_create");
	snprintf(cfg.map, sizeof(cfg.map), "%s", STORM_MAP);
	PT_EQ(pt_ioctl_errno(pt_st(), PEA_ST_IOC_STORM_START, &cfg), 0,
	      "the test module's storm runs: hrtimer and NMIs on %d CPUs",
	      ncpu);
	if (write(go[1], "g", 1) != 1)
		pt_fatal("write");
	/*
	 * A ring wraps first: 1.5 s at the rates of 6.1 and 6.12; slower
	 * kernels (PREEMPT_RT, debug) may need longer, up to 30 s.
	 */
	usleep(1500000);
	for (k = 0; k < 114 && !ring_wrapped(p.pid); k++)
		usleep(250000);
	PT_OK(ring_wrapped(p.pid), "a ring of pea trace's map wrapped before the snapshots (%.2f s)",
	      1.5 + k * 0.25);

	for (k = 0; k < SNAPS; k++) {
		kill(p.pid, SIGUSR1);
		if (!read_snap(&p, &snaps[nsnap], false) ||
		    snaps[nsnap].declared < 0)
			break;
		nsnap++;
		usleep(SNAP_GAP_MS * 1000);
	}
	PT_EQ(nsnap, SNAPS, "%d snapshots by SIGUSR1 during the storm, each with its line", SNAPS);
	kill(p.pid, SIGINT);
	read_snap(&p, &snaps[nsnap], true);
	nsnap++;
	pt_ioctl_errno(pt_st(), PEA_ST_IOC_STORM_STOP, &storm_res);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(go[1]);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "SIGINT: pea trace exits 0 after its final snapshot");
	if (rc)
		pt_diag("stderr: %s", p.err_all ? p.err_all : "");
	pt_proc_close(&p);
	close(map);

	for (k = 0; k < nsnap; k++) {
		struct snap *s = &snaps[k];
		int have = 0;

		sum += s->n;
		PT_OK(s->n > 0 && !s->order && !s->bad &&
		      (k == nsnap - 1 || s->n == s->declared),
		      "snapshot %d%s: %d events in time order (its line: %d), every one from a session probe",
		      k + 1, k == nsnap - 1 ? " (final)" : "", s->n,
		      s->declared);
		PT_OK(s->horizon > 0 && !s->before_h,
		      "snapshot %d: horizon %lld (the rings wrapped), no event before it (%d)",
		      k + 1, s->horizon, s->before_h);
		for (i = 0; i < NCTX; i++)
			have += s->per_ctx[i] > 0;
		if (have == NCTX)
			ctx_all++;
		pt_diag("snapshot %d: task %d, softirq %d, hardirq %d, NMI %d",
			k + 1, s->per_ctx[CTX_TASK], s->per_ctx[CTX_SOFT],
			s->per_ctx[CTX_HARD], s->per_ctx[CTX_NMI]);
		if (!k)
			continue;
		if (s->horizon > snaps[k - 1].horizon)
			horizons++;
		/* What the previous one held from this one's horizon on. */
		for (i = 0; i < snaps[k - 1].n; i++) {
			const struct ev *e = &snaps[k - 1].ev[i];

			if (e->t < (unsigned long long)s->horizon)
				continue;
			overlap++;
			if (!holds(s, e)) {
				if (lost_overlap++ < 5)
					pt_diag("snapshot %d lacks %s's event at %llu on CPU %d of snapshot %d",
						k + 1, ctx_name[e->ctx], e->t,
						e->cpu, k);
			}
		}
	}
	PT_EQ(horizons, nsnap - 1,
	      "every snapshot's horizon is later than the previous one's (the final one's too)");
	PT_EQ(lost_overlap, 0,
	      "no snapshot lost an event of the previous one at or after its own horizon (%d such events checked)",
	      overlap);
	PT_OK(overlap > 0, "and some snapshots overlapped (%d events held twice)",
	      overlap);
	for (i = 0; i < NCTX; i++) {
		int n = 0;

		for (k = 0; k < nsnap; k++)
			n += snaps[k].per_ctx[i];
		PT_OK(n > 0, "%s context: %d events in the snapshots (%s)",
		      ctx_name[i], n, ctx_probe[i]);
	}
	PT_OK(ctx_all > 0, "%d of %d snapshots hold events of all four contexts",
	      ctx_all, nsnap);
	pt_diag("%lld events in %d snapshots", sum, nsnap);
	for (k = 0; k < nsnap; k++)
		free(snaps[k].ev);
	for (i = 0; i < 64; i++) {
		snprintf(line, sizeof(line), "/tmp/pea-snapstorm-%d", i);
		unlink(line);
	}
	return pt_done();
}
