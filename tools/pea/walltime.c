// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the TIME column and "time_wall" of pea trace (--time), and the
 * offset from CLOCK_MONOTONIC, the clock of pea's records, to
 * CLOCK_REALTIME.
 */
#include <string.h>
#include <time.h>
#include "walltime.h"

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__s64 wall_offset_ns(__u64 *bound_ns)
{
	__u64 best = ~0ULL;
	__s64 off = 0;
	int i;

	for (i = 0; i < 5; i++) {
		__u64 m0 = clock_ns(CLOCK_MONOTONIC);
		__u64 rt = clock_ns(CLOCK_REALTIME);
		__u64 m1 = clock_ns(CLOCK_MONOTONIC);

		if (m1 - m0 < best) {
			best = m1 - m0;
			off = (__s64)(rt - (m0 + (m1 - m0) / 2));
		}
	}
	if (bound_ns)
		*bound_ns = (best + 1) / 2;
	return off;
}

void wall_iso8601(char *buf, size_t len, __s64 epoch_ns)
{
	__s64 s = epoch_ns / 1000000000LL;
	__s64 ns = epoch_ns % 1000000000LL;
	time_t t;
	struct tm tm;
	char day[24];

	if (ns < 0) {		/* before 1970: the second below */
		ns += 1000000000LL;
		s--;
	}
	t = (time_t)s;
	if (!gmtime_r(&t, &tm) ||
	    !strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%s.%09lldZ", day, (long long)ns);
}

int trace_time_parse(const char *s)
{
	if (!strcmp(s, "rel"))
		return TRACE_TIME_REL;
	if (!strcmp(s, "mono"))
		return TRACE_TIME_MONO;
	if (!strcmp(s, "wall"))
		return TRACE_TIME_WALL;
	return -1;
}

const char *trace_time_label(int mode)
{
	if (mode == TRACE_TIME_MONO)
		return "MONO(s)";
	if (mode == TRACE_TIME_WALL)
		return "WALL(UTC)";
	return "TIME(s)";
}

int trace_time_width(int mode)
{
	if (mode == TRACE_TIME_MONO)
		return 20;		/* seconds.nanoseconds */
	if (mode == TRACE_TIME_WALL)
		return WALL_ISO_LEN - 1;
	return 12;
}

void trace_put_time(FILE *f, int mode, __u64 time_ns, __u64 t0_ns,
		    __s64 wall_off_ns)
{
	char buf[WALL_ISO_LEN];

	if (mode == TRACE_TIME_MONO) {
		fprintf(f, "%10llu.%09llu",
			(unsigned long long)(time_ns / 1000000000ULL),
			(unsigned long long)(time_ns % 1000000000ULL));
	} else if (mode == TRACE_TIME_WALL) {
		wall_iso8601(buf, sizeof(buf), (__s64)time_ns + wall_off_ns);
		fputs(buf, f);
	} else {
		fprintf(f, "%12.6f",
			((double)(__s64)(time_ns - t0_ns)) / 1e9);
	}
}

void trace_put_time_wall_json(FILE *f, int mode, __u64 time_ns,
			      __s64 wall_off_ns)
{
	char buf[WALL_ISO_LEN];

	if (mode != TRACE_TIME_WALL)
		return;
	wall_iso8601(buf, sizeof(buf), (__s64)time_ns + wall_off_ns);
	fprintf(f, ",\"time_wall\":\"%s\"", buf);
}
