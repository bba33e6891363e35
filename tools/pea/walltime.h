/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: times as pea trace prints them (walltime.c): --time rel (seconds
 * since the probes were attached, the default), mono (CLOCK_MONOTONIC
 * seconds, the clock of the records) or wall (CLOCK_REALTIME, ISO 8601
 * UTC with nanoseconds); and the offset from one clock to the other.
 */
#ifndef _PEA_WALLTIME_H
#define _PEA_WALLTIME_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

enum trace_time {
	TRACE_TIME_REL = 0,
	TRACE_TIME_MONO,
	TRACE_TIME_WALL,
};

/* "2026-11-27T11:54:46.123456789Z": 30 characters and the NUL. */
#define WALL_ISO_LEN	31

/*
 * CLOCK_REALTIME minus CLOCK_MONOTONIC, in ns, read now: the monotonic
 * clock read just before and just after the real-time clock, the
 * tightest of a few tries; *@bound_ns is half that gap, the most the
 * offset can be off by (besides the real-time clock's own steps later).
 */
__s64 wall_offset_ns(__u64 *bound_ns);

/*
 * @epoch_ns (ns since 1970-01-01 UTC) as ISO 8601 with nanoseconds, in
 * @buf (at least WALL_ISO_LEN bytes).
 */
void wall_iso8601(char *buf, size_t len, __s64 epoch_ns);

/* "rel", "mono" or "wall"; -1 for anything else. */
int trace_time_parse(const char *s);

/* The TIME column's heading and width for @mode. */
const char *trace_time_label(int mode);
int trace_time_width(int mode);

/*
 * The TIME column of a record written at @time_ns (monotonic): since
 * @t0_ns, as is, or on the wall clock (@wall_off_ns added).
 */
void trace_put_time(FILE *f, int mode, __u64 time_ns, __u64 t0_ns,
		    __s64 wall_off_ns);

/* With --time wall: the member ,"time_wall":"..." of a JSON event. */
void trace_put_time_wall_json(FILE *f, int mode, __u64 time_ns,
			      __s64 wall_off_ns);

#endif /* _PEA_WALLTIME_H */
