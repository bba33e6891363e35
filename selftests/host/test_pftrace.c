// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): pea trace --format pftrace (tools/pea/
 * trace_pftrace.c, through trace_writer_open() as pea trace opens it),
 * fed a synthetic trace, and the written protobuf decoded here (a
 * decoder of the few perfetto.protos fields the writer uses): the clock
 * snapshots at open and close hold CLOCK_BOOTTIME, CLOCK_MONOTONIC and
 * CLOCK_REALTIME within the clock_gettime() readings around them, and
 * agree with the offset --time wall adds; every event is on its
 * thread's track at its CLOCK_MONOTONIC time, with the --json object as
 * its args; the loss is an instant with its CPU and count; converted
 * through the snapshot, an event stamped "now" lands at "now" on
 * CLOCK_BOOTTIME (other Perfetto traces of the host) and on the wall
 * clock. TAP on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "pea_tool.h"
#include "probe_kind.h"
#include "trace_writer.h"
#include "walltime.h"

#define HOST_TAP_NAME "pftrace"
#include "host_tap.h"
#include "../pt_pftrace.h"

#define NEV		60

static __u64 clk(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- the test ---- */

static const struct pkt *track_of(__u64 uuid, int upto)
{
	int i;

	for (i = 0; i < upto; i++)
		if (pk[i].kind == 60 && pk[i].uuid == uuid)
			return &pk[i];
	return NULL;
}

/* The JSON object pea trace --json prints for @ev, without its '\n'. */
static const char *json_of(const struct trace_fmt *fmt,
			   const struct trace_event *ev)
{
	static char buf[1024];
	struct trace_fmt j = *fmt;
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	j.json = true;
	trace_print_event(f, &j, ev);
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static void make_event(struct trace_event *ev, int n, __u64 t)
{
	int probe = n % 3 == 0;

	memset(ev, 0, sizeof(*ev));
	ev->rec.time_ns = t;
	ev->rec.cpu = n % 2;
	ev->rec.pid = 2000 + n % 4;
	ev->rec.tgid = 2000 + (n % 4 >= 2);
	snprintf(ev->rec.comm, sizeof(ev->rec.comm), "pf%d", n % 4);
	if (!probe) {
		ev->rec.flags = PEA_REC_F_RETPROBE;
		ev->rec.ret = n - 10;
		ev->rec.latency_ns = 1000 + n;
	} else {
		ev->rec.args[0] = n;
	}
	ev->ring = n % 2;
	ev->probe = probe;
}

int main(void)
{
	struct trace_fmt fmt[2] = {
		{ .retprobe = true, .probe = "kretprobe:pf_fn",
		  .kind = &kprobe_kind },
		{ .args = true, .probe = "kprobe:pf_other",
		  .kind = &kprobe_kind },
	};
	const struct trace_fmt *probes[2] = { &fmt[0], &fmt[1] };
	struct trace_out_opts oo = { .format = TRACE_OUT_PFTRACE };
	char path[] = "/tmp/pea-pftrace.XXXXXX", file[64], msg[512];
	struct trace_event ev[NEV];
	__u64 b0, m0, r0, b1, m1, r1, cb0, cm0, cr0, cb1, cm1, cr1;
	__u64 tb0, tm0, tr0, tb1, tm1, tr1;
	int nsnap = 0;
	__u64 bound, now_b0, now_b1, base, last = 0;
	const struct pkt *open_cs, *close_cs;
	int i, e, nslice = 0, ninst = 0, nlost = 0, bad = 0, ret;
	struct trace_writer *w;
	__s64 off;

	if (!mkdtemp(path))
		return 1;
	snprintf(file, sizeof(file), "%s/t.pftrace", path);
	oo.path = file;

	ok(trace_writer_format("pftrace") == TRACE_OUT_PFTRACE,
	   "--format pftrace is a format");
	/* Every clock before and after the open, from the widest side. */
	b0 = clk(CLOCK_BOOTTIME);
	m0 = clk(CLOCK_MONOTONIC);
	r0 = clk(CLOCK_REALTIME);
	w = trace_writer_open(&oo, probes, 2, 2, msg, sizeof(msg));
	r1 = clk(CLOCK_REALTIME);
	m1 = clk(CLOCK_MONOTONIC);
	b1 = clk(CLOCK_BOOTTIME);
	ok(!!w, "opens %s", file);
	if (!w)
		return host_tap_done();

	/* Events from "now" on, 10 us apart; a loss on CPU 1 midway. */
	now_b0 = clk(CLOCK_BOOTTIME);
	base = clk(CLOCK_MONOTONIC);
	now_b1 = clk(CLOCK_BOOTTIME);
	ret = 0;
	for (i = 0; i < NEV; i++) {
		make_event(&ev[i], i, base + i * 10000ULL);
		ret |= trace_writer_event(w, ev[i].probe, &ev[i]);
		if (i == NEV / 2)
			ret |= trace_writer_lost(w, 1, 7);
	}
	ok(ret == 0, "%d events and a loss written", NEV);
	/* pea trace's ticks: a snapshot once one is 10 s old, not before. */
	ret = trace_writer_tick(w, base + 9000000000ULL);
	tb0 = clk(CLOCK_BOOTTIME);
	tm0 = clk(CLOCK_MONOTONIC);
	tr0 = clk(CLOCK_REALTIME);
	ret |= trace_writer_tick(w, m1 + 10000000000ULL);
	tr1 = clk(CLOCK_REALTIME);
	tm1 = clk(CLOCK_MONOTONIC);
	tb1 = clk(CLOCK_BOOTTIME);
	ret |= trace_writer_tick(w, m1 + 10500000000ULL);
	ok(ret == 0, "ticks at 9 s, 10 s and 10.5 s");
	cb0 = clk(CLOCK_BOOTTIME);
	cm0 = clk(CLOCK_MONOTONIC);
	cr0 = clk(CLOCK_REALTIME);
	ret = trace_writer_close(w, msg, sizeof(msg));
	cr1 = clk(CLOCK_REALTIME);
	cm1 = clk(CLOCK_MONOTONIC);
	cb1 = clk(CLOCK_BOOTTIME);
	ok(ret == 0, "closes");
	off = wall_offset_ns(&bound);

	ret = pt_pf_decode(file);
	ok(ret == 0 && npk > 0,
	   "the file is a well-formed Trace of TracePackets (%d)", npk);
	for (i = 0; i < npk; i++)
		bad += pk[i].seq != 1 || (pk[i].flags != 0) != (i == 0);
	ok(npk > 2 && !bad,
	   "every packet is on sequence 1; the first alone says its state is cleared");

	open_cs = &pk[0];
	close_cs = &pk[npk - 1];
	ok(open_cs->kind == 6 && close_cs->kind == 6,
	   "the first and the last packets are clock snapshots");
	ok(open_cs->clocks[6] >= b0 && open_cs->clocks[6] <= b1,
	   "open: BOOTTIME %llu within clock_gettime's [%llu, %llu]",
	   (unsigned long long)open_cs->clocks[6], (unsigned long long)b0,
	   (unsigned long long)b1);
	ok(open_cs->clocks[3] >= m0 && open_cs->clocks[3] <= m1,
	   "open: MONOTONIC %llu within [%llu, %llu]",
	   (unsigned long long)open_cs->clocks[3], (unsigned long long)m0,
	   (unsigned long long)m1);
	ok(open_cs->clocks[1] >= r0 && open_cs->clocks[1] <= r1,
	   "open: REALTIME %llu within [%llu, %llu]",
	   (unsigned long long)open_cs->clocks[1], (unsigned long long)r0,
	   (unsigned long long)r1);
	ok(open_cs->has_ts && open_cs->ts == open_cs->clocks[6] &&
	   !open_cs->clock_id,
	   "open: the packet's own time is its BOOTTIME reading (the default clock)");
	ok(close_cs->clocks[6] >= cb0 && close_cs->clocks[6] <= cb1 &&
	   close_cs->clocks[3] >= cm0 && close_cs->clocks[3] <= cm1 &&
	   close_cs->clocks[1] >= cr0 && close_cs->clocks[1] <= cr1,
	   "close: BOOTTIME, MONOTONIC and REALTIME within the readings around the close");
	ok(!open_cs->clocks[0] && !open_cs->clocks[2] && !open_cs->clocks[4] &&
	   !open_cs->clocks[5] && !open_cs->clocks[7],
	   "only those three clocks");
	{
		__s64 d = (__s64)(open_cs->clocks[1] - open_cs->clocks[3]) - off;
		__s64 tol = (__s64)bound + (__s64)(m1 - m0);

		ok(d <= tol && d >= -tol,
		   "REALTIME - MONOTONIC in the snapshot is --time wall's offset (off by %lld ns, bound %lld)",
		   (long long)d, (long long)tol);
	}

	/* The events, in order, after their tracks. */
	e = 0;
	for (i = 1; i < npk - 1; i++) {
		const struct pkt *k = &pk[i], *td;
		const struct trace_event *x;
		__u64 key;

		if (k->kind == 60)
			continue;
		if (k->kind == 6) {
			nsnap++;
			ok(k->clocks[6] >= tb0 && k->clocks[6] <= tb1 &&
			   k->clocks[3] >= tm0 && k->clocks[3] <= tm1 &&
			   k->clocks[1] >= tr0 && k->clocks[1] <= tr1 &&
			   k->has_ts && k->ts == k->clocks[6],
			   "the 10 s tick's clock snapshot: its clocks within the readings around that tick");
			continue;
		}
		if (k->kind != 11) {
			bad++;
			continue;
		}
		if (!strcmp(k->name, "lost records")) {
			td = track_of(k->track, i);
			nlost++;
			ok(td && !td->thread && !td->process &&
			   !strcmp(td->name, "lost records") &&
			   k->type == 3 && k->cpu == 1 && k->lost == 7 &&
			   k->ts == last && k->clock_id == 3,
			   "the loss: an instant on the 'lost records' track, cpu 1, lost 7, at the latest event's time");
			continue;
		}
		if (e >= NEV) {
			bad++;
			continue;
		}
		x = &ev[e];
		key = ((__u64)x->rec.tgid << 32 | x->rec.pid) + 1;
		td = track_of(k->track, i);
		bad += !td || !td->thread || td->uuid != key ||
		       td->pid != x->rec.tgid || td->tid != x->rec.pid ||
		       strcmp(td->name, x->rec.comm);
		bad += !track_of(1ULL << 63 | x->rec.tgid, i);
		bad += k->clock_id != 3 || !k->has_ts ||
		       strcmp(k->cat, "pea") ||
		       strcmp(k->name, fmt[x->probe].probe);
		if (x->probe == 0) {
			/* The slice: its begin with the args, then its end. */
			bad += k->type != 1 || k->nannot != 1 ||
			       k->ts != x->rec.time_ns - x->rec.latency_ns ||
			       strcmp(k->json, json_of(&fmt[0], x));
			k = &pk[++i];
			bad += k->kind != 11 || k->type != 2 ||
			       k->track != key || k->ts != x->rec.time_ns ||
			       k->clock_id != 3 || k->nannot;
			nslice++;
		} else {
			bad += k->type != 3 || k->nannot != 1 ||
			       k->ts != x->rec.time_ns ||
			       strcmp(k->json, json_of(&fmt[1], x));
			ninst++;
		}
		last = x->rec.time_ns;
		e++;
	}
	ok(nsnap == 1, "one snapshot from the ticks (the 9 s and 10.5 s ones add none): %d",
	   nsnap);
	ok(e == NEV && nslice == 40 && ninst == 20 && nlost == 1 && !bad,
	   "%d events (want %d): %d kretprobe slices (begin at entry, end at return), %d instants, %d loss, each on its thread's track at its CLOCK_MONOTONIC time with its --json args; %d mismatches",
	   e, NEV, nslice, ninst, nlost, bad);

	/* Lined up: an event stamped "now" lands at "now" on other clocks. */
	{
		__u64 bt = ev[0].rec.time_ns - open_cs->clocks[3] +
			   open_cs->clocks[6];
		__s64 wt = (__s64)(ev[0].rec.time_ns - open_cs->clocks[3] +
				   open_cs->clocks[1]);
		__s64 wd = wt - (__s64)(ev[0].rec.time_ns + off);
		__s64 tol = (__s64)bound + (__s64)(m1 - m0);

		ok(bt + (m1 - m0) >= now_b0 && bt <= now_b1 + (m1 - m0),
		   "the first event, converted by the snapshot, is at BOOTTIME %llu: within [%llu, %llu] read around its stamp (give or take the snapshot's %llu ns)",
		   (unsigned long long)bt, (unsigned long long)now_b0,
		   (unsigned long long)now_b1,
		   (unsigned long long)(m1 - m0));
		ok(wd <= tol && wd >= -tol,
		   "and on REALTIME at the time_wall --time wall prints for it (off by %lld ns)",
		   (long long)wd);
	}

	oo.path = "/nonexistent-dir/t.pftrace";
	w = trace_writer_open(&oo, probes, 2, 2, msg, sizeof(msg));
	ok(!w && strstr(msg, "cannot create /nonexistent-dir/t.pftrace"),
	   "an uncreatable file: '%s'", w ? "(opened)" : msg);

	unlink(file);
	rmdir(path);
	return host_tap_done();
}
