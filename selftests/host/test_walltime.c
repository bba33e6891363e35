// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): pea trace's times (tools/pea/walltime.c):
 * ISO 8601 with nanoseconds, the offset from CLOCK_MONOTONIC to
 * CLOCK_REALTIME and its bound, the TIME column of --time rel, mono and
 * wall, and an event printed by the tool's own printer (output.c) as
 * text and as JSON with "time_wall". TAP on stdout.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "pea_tool.h"
#include "probe_kind.h"
#include "walltime.h"

#define HOST_TAP_NAME "walltime"
#include "host_tap.h"

static void iso(__s64 ns, const char *want)
{
	char buf[WALL_ISO_LEN];

	wall_iso8601(buf, sizeof(buf), ns);
	ok(!strcmp(buf, want), "%lld ns after the epoch is %s (got %s)",
	   (long long)ns, want, buf);
}

static __u64 clk(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* What trace_put_time() prints, as a string. */
static const char *col(int mode, __u64 t, __u64 t0, __s64 off)
{
	static char buf[128];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	trace_put_time(f, mode, t, t0, off);
	fclose(f);
	return buf;
}

/* What the tool prints for @ev with @fmt: the header, then the event. */
static const char *printed(const struct trace_fmt *fmt,
			   const struct trace_event *ev)
{
	static char buf[2048];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	trace_print_header(f, fmt);
	trace_print_event(f, fmt, ev);
	fclose(f);
	return buf;
}

int main(void)
{
	struct trace_fmt fmt = {
		.retprobe = true, .probe = "kretprobe:do_sys_openat2",
		.kind = &kprobe_kind, .t0_ns = 1000000000ULL,
		.time_mode = TRACE_TIME_WALL,
		.wall_off_ns = 1764244485123456789LL,
	};
	struct trace_event ev;
	__u64 bound, m0, rt, m1;
	__s64 off;
	const char *p;

	iso(0, "1970-01-01T00:00:00.000000000Z");
	iso(999999999, "1970-01-01T00:00:00.999999999Z");
	iso(-1, "1969-12-31T23:59:59.999999999Z");
	iso(1764244486123456789LL, "2025-11-27T11:54:46.123456789Z");
	iso(951782400000000001LL, "2000-02-29T00:00:00.000000001Z");

	m0 = clk(CLOCK_MONOTONIC);
	rt = clk(CLOCK_REALTIME);
	off = wall_offset_ns(&bound);
	m1 = clk(CLOCK_MONOTONIC);
	ok(bound < 1000000, "the offset's bound is under a millisecond (%llu ns)",
	   (unsigned long long)bound);
	/* rt - m1 <= the true offset <= rt - m0, give or take the bound. */
	ok(off >= (__s64)(rt - m1) - (__s64)bound &&
	   off <= (__s64)(rt - m0) + (__s64)bound,
	   "CLOCK_REALTIME - CLOCK_MONOTONIC: %lld ns, within [%lld, %lld]",
	   (long long)off, (long long)(rt - m1), (long long)(rt - m0));

	ok(trace_time_parse("rel") == TRACE_TIME_REL &&
	   trace_time_parse("mono") == TRACE_TIME_MONO &&
	   trace_time_parse("wall") == TRACE_TIME_WALL &&
	   trace_time_parse("utc") == -1 && trace_time_parse("") == -1,
	   "--time takes rel, mono and wall, nothing else");
	p = col(TRACE_TIME_REL, 2500000000ULL, 1000000000ULL, 0);
	ok(!strcmp(p, "    1.500000"), "rel: seconds since the attach, 12 wide: '%s'", p);
	p = col(TRACE_TIME_MONO, 2500000001ULL, 1000000000ULL, 0);
	ok(!strcmp(p, "         2.500000001"), "mono: CLOCK_MONOTONIC seconds, ns, 20 wide: '%s'", p);
	p = col(TRACE_TIME_WALL, 2000000000ULL, 1000000000ULL,
		1764244484123456789LL);
	ok(!strcmp(p, "2025-11-27T11:54:46.123456789Z") &&
	   (int)strlen(p) == trace_time_width(TRACE_TIME_WALL),
	   "wall: the offset added, ISO 8601 UTC: '%s'", p);

	memset(&ev, 0, sizeof(ev));
	ev.rec.time_ns = 1000000000ULL;
	ev.rec.cpu = 1;
	ev.rec.tgid = 42;
	ev.rec.pid = 43;
	ev.rec.ret = 3;
	ev.rec.latency_ns = 2500;
	strcpy(ev.rec.comm, "cat");
	p = printed(&fmt, &ev);
	ok(starts(p, "WALL(UTC)                      CPU COMM") &&
	   strstr(p, "\n2025-11-27T11:54:46.123456789Z   1 cat  "),
	   "text with --time wall: the column WALL(UTC), 30 wide, the wall-clock time");
	fmt.time_mode = TRACE_TIME_MONO;
	p = printed(&fmt, &ev);
	ok(starts(p, "MONO(s)              CPU COMM") &&
	   strstr(p, "\n         1.000000000   1 cat  "),
	   "text with --time mono: the column MONO(s), 20 wide, the record's CLOCK_MONOTONIC time");
	fmt.time_mode = TRACE_TIME_REL;
	p = printed(&fmt, &ev);
	ok(starts(p, "TIME(s)      CPU COMM") &&
	   strstr(p, "\n    0.000000   1 cat  "),
	   "text with --time rel: the column TIME(s), 12 wide, seconds since the attach, as before");

	fmt.json = true;
	p = printed(&fmt, &ev);
	ok(starts(p, "{\"type\":\"event\",\"time_ns\":1000000000,\"cpu\":1,") &&
	   !strstr(p, "time_wall"), "JSON without --time wall: no time_wall, as before");
	fmt.time_mode = TRACE_TIME_WALL;
	p = printed(&fmt, &ev);
	ok(starts(p, "{\"type\":\"event\",\"time_ns\":1000000000,\"time_wall\":\"2025-11-27T11:54:46.123456789Z\",\"cpu\":1,\"pid\":42,\"tid\":43,\"comm\":\"cat\","),
	   "JSON with --time wall: time_wall after time_ns");

	return host_tap_done();
}
