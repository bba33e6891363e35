// SPDX-License-Identifier: GPL-2.0
/*
 * `pea trace --flight-recorder` snapshots on demand, in the guest: the
 * test opens files itself with pea trace kretprobe:do_sys_openat2 --pid
 * (its own pid) --no-children (not the pea snapshot it runs) --pages 1
 * --json --output DIR --format ctf recording, so
 * the one-page rings wrap, and sends SIGUSR1 after each burst:
 *
 *   - each SIGUSR1 prints the current ordered snapshot, then
 *     {"type":"snapshot","snapshot":N,"time_ns":T,"events":E,"horizon_ns":H,
 *     "output":"DIR.N"}: E events in time order, none before H, the
 *     newest being the burst's last open, consecutive names back from it;
 *   - the horizons increase from snapshot to snapshot (and to the final
 *     one at SIGINT), and pea keeps recording between them;
 *   - DIR.N is a CTF trace babeltrace2 reads with E events;
 *   - `pea snapshot trace_PID` from another process takes a third;
 *   - --snapshot-on kprobe:do_unlinkat takes one when the test unlinks a
 *     file (the opens before it and the unlink in it), rate-limited to
 *     one a second without losing the fires in between;
 *   - SIGINT then ends the trace as before (exit 0, the summary).
 */
#include "pt_tool.h"

#define PROBE		"kretprobe:do_sys_openat2"
#define UNLINK		"kprobe:do_unlinkat"
#define PT_BT		"/usr/bin/babeltrace2"
#define BURST		100
#define OUTDIR		"/tmp/pea-snap"

static char line[8192];
static char bt_out[1 << 20], bt_err[1 << 16];

static void burst(char tag)
{
	char name[64];
	int i, fd;

	for (i = 0; i < BURST; i++) {
		snprintf(name, sizeof(name), "/tmp/pea-snap-%c-%03d", tag, i);
		fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
		unlink(name);
	}
}

struct snap {
	int events, order, consecutive;
	long long first_ns, horizon, declared;
	char last[128], output[256];
};

/*
 * Read one snapshot's events up to its "snapshot" line (@final: the
 * summary line instead), checking order and names of burst @tag.
 */
static bool read_snap(struct pt_proc *p, char tag, bool final, struct snap *s)
{
	long long prev = 0;
	int idx = -1;

	memset(s, 0, sizeof(*s));
	s->order = 1;
	s->consecutive = 1;
	s->declared = -1;
	while (pt_proc_line(p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		char str[128] = "";
		long long t;
		int k;
		char c;

		if (pt_json_streq(line, "type", final ? "summary" : "snapshot")) {
			s->declared = pt_json_num(line, final ? "records" : "events",
						  -1);
			s->horizon = pt_json_num(line, "horizon_ns", -1);
			pt_json_get(line, "output", s->output,
				    sizeof(s->output), NULL);
			return true;
		}
		if (!pt_json_streq(line, "type", "event"))
			continue;
		t = pt_json_num(line, "time_ns", -1);
		if (!s->events)
			s->first_ns = t;
		if (t < prev)
			s->order = 0;
		prev = t;
		pt_json_get(line, "str", str, sizeof(str), NULL);
		snprintf(s->last, sizeof(s->last), "%s", str);
		/* Within the burst, each name follows the one before. */
		if (sscanf(str, "/tmp/pea-snap-%c-%d", &c, &k) == 2 && c == tag) {
			if (idx >= 0 && k != idx + 1)
				s->consecutive = 0;
			idx = k;
		}
		s->events++;
	}
	return false;
}

/*
 * --snapshot-on: a second probe, on do_unlinkat, takes a snapshot when
 * the test unlinks a file: the opens before it and the unlink itself are
 * in it, and a quick second unlink waits for the rate limit (one a
 * second) but is not lost: it brings the next snapshot.
 */
static void test_snapshot_on(void)
{
	char pid[16], name[64], str[128];
	struct pt_proc p;
	int i, rc, opens = 0, unlinks = 0, snaps = 0, trig = 0;
	long long t1 = -1, t2 = -1;

	snprintf(pid, sizeof(pid), "%d", getpid());
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--str",
					     "ARG1", "--pid", pid, UNLINK,
					     "--pid", pid, "--no-children",
					     "--flight-recorder",
					     "--json", "--snapshot-on", UNLINK,
					     NULL }),
	      "snapshot-on: attached, %s and %s", PROBE, UNLINK);
	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "/tmp/pea-snapon-%d", i);
		close(open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	}
	unlink("/tmp/pea-snapon-0");
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "snapshot")) {
			snaps++;
			trig = pt_json_streq(line, "trigger", UNLINK);
			t1 = pt_json_num(line, "time_ns", -1);
			break;
		}
		if (!pt_json_streq(line, "type", "event"))
			continue;
		pt_json_get(line, "probe", str, sizeof(str), NULL);
		if (!strcmp(str, UNLINK))
			unlinks++;
		else if (pt_json_get(line, "str", str, sizeof(str), NULL) &&
			 !strncmp(str, "/tmp/pea-snapon-", 16))
			opens++;
	}
	PT_OK(snaps == 1 && trig, "snapshot-on: the unlink took a snapshot, its line names the trigger");
	PT_OK(opens == 5 && unlinks == 1,
	      "snapshot-on: it holds the 5 opens and the unlink (%d, %d)", opens, unlinks);

	/* Two more at once: they wait for the rate limit, and are not lost. */
	unlink("/tmp/pea-snapon-1");
	unlink("/tmp/pea-snapon-2");
	snaps = 0;
	unlinks = 0;
	while (snaps < 1 &&
	       pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "snapshot")) {
			snaps++;
			t2 = pt_json_num(line, "time_ns", -1);
		} else if (pt_json_streq(line, "probe", UNLINK)) {
			unlinks++;
		}
	}
	PT_OK(snaps == 1 && t1 > 0 && t2 - t1 >= 1000000000LL,
	      "snapshot-on: the next snapshot waited for the rate limit (%lld ns after the first)",
	      t2 - t1);
	PT_EQ(unlinks, 3, "snapshot-on: it holds all three unlinks");
	for (i = 3; i < 5; i++) {
		snprintf(name, sizeof(name), "/tmp/pea-snapon-%d", i);
		unlink(name);
	}
	kill(p.pid, SIGINT);
	pt_proc_drain_err(&p);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		;
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "snapshot-on: SIGINT ends it with exit 0");
	pt_proc_close(&p);
}

int main(void)
{
	char pid[16], want[64], map[32];
	struct snap s1, s2, s3, s4;
	struct pt_proc p;
	int rc, lines;
	const char *b;

	snprintf(pid, sizeof(pid), "%d", getpid());
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", PROBE, "--str",
					     "ARG1", "--pid", pid,
					     "--no-children", "--pages",
					     "1", "--flight-recorder", "--json",
					     "--output", OUTDIR, "--format",
					     "ctf", NULL }),
	      "attached: a flight recorder with one-page rings");

	burst('a');
	kill(p.pid, SIGUSR1);
	PT_OK(read_snap(&p, 'a', false, &s1), "SIGUSR1: snapshot 1 and its line");
	snprintf(want, sizeof(want), "/tmp/pea-snap-a-%03d", BURST - 1);
	PT_OK(s1.events > 0 && s1.events < BURST && s1.declared == s1.events,
	      "snapshot 1: %d events, as its line says (%lld): the newest that fit",
	      s1.events, s1.declared);
	PT_OK(!strcmp(s1.last, want) && s1.consecutive,
	      "snapshot 1: the newest is the burst's last open (%s), the names consecutive",
	      s1.last);
	PT_OK(s1.order && s1.horizon > 0 && s1.first_ns >= s1.horizon,
	      "snapshot 1: in time order, none before its horizon %lld", s1.horizon);
	PT_OK(!strcmp(s1.output, OUTDIR ".1"), "snapshot 1: written to %s", s1.output);

	burst('b');
	kill(p.pid, SIGUSR1);
	PT_OK(read_snap(&p, 'b', false, &s2), "SIGUSR1 again: snapshot 2");
	snprintf(want, sizeof(want), "/tmp/pea-snap-b-%03d", BURST - 1);
	PT_OK(!strcmp(s2.last, want) && s2.consecutive && s2.order &&
	      s2.declared == s2.events,
	      "snapshot 2: %d events up to %s, consecutive, in time order: pea kept recording",
	      s2.events, s2.last);
	PT_OK(s2.horizon > s1.horizon && s2.first_ns >= s2.horizon,
	      "snapshot 2: its horizon is later (%lld > %lld), none before it",
	      s2.horizon, s1.horizon);
	PT_OK(!strcmp(s2.output, OUTDIR ".2"), "snapshot 2: written to %s", s2.output);

	/* From another process: pea snapshot with the map's name. */
	burst('c');
	snprintf(map, sizeof(map), "trace_%d", p.pid);
	rc = pt_run((char *[]){ PT_PEA, "snapshot", map, NULL }, bt_out,
		    sizeof(bt_out), bt_err, sizeof(bt_err), NULL, NULL);
	PT_EQ(rc, 0, "pea snapshot %s: exit 0", map);
	PT_OK(read_snap(&p, 'c', false, &s3), "pea snapshot: snapshot 3");
	snprintf(want, sizeof(want), "/tmp/pea-snap-c-%03d", BURST - 1);
	PT_OK(!strcmp(s3.last, want) && s3.consecutive && s3.order &&
	      s3.horizon > s2.horizon && !strcmp(s3.output, OUTDIR ".3"),
	      "snapshot 3: up to %s, in time order, horizon later again (%lld), to %s",
	      s3.last, s3.horizon, s3.output);

	burst('d');
	kill(p.pid, SIGINT);
	PT_OK(read_snap(&p, 'd', true, &s4), "SIGINT: the final snapshot and the summary");
	snprintf(want, sizeof(want), "/tmp/pea-snap-d-%03d", BURST - 1);
	PT_OK(!strcmp(s4.last, want) && s4.order && s4.horizon > s3.horizon,
	      "final: up to %s, in time order, horizon later again (%lld)",
	      s4.last, s4.horizon);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "SIGINT ends it with exit 0");
	pt_proc_close(&p);

	test_snapshot_on();

	rc = pt_run((char *[]){ PT_BT, "--clock-cycles", OUTDIR ".1", NULL },
		    bt_out, sizeof(bt_out), bt_err, sizeof(bt_err), NULL, NULL);
	for (lines = 0, b = bt_out; (b = strchr(b, '\n')); b++)
		lines++;
	PT_OK(rc == 0 && lines == s1.events,
	      "babeltrace2 reads " OUTDIR ".1: %d events (exit %d)", lines, rc);
	rc = pt_run((char *[]){ PT_BT, "--clock-cycles", OUTDIR ".2", NULL },
		    bt_out, sizeof(bt_out), bt_err, sizeof(bt_err), NULL, NULL);
	for (lines = 0, b = bt_out; (b = strchr(b, '\n')); b++)
		lines++;
	PT_OK(rc == 0 && lines == s2.events,
	      "babeltrace2 reads " OUTDIR ".2: %d events (exit %d)", lines, rc);
	return pt_done();
}
