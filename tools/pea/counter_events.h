/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: event names for `pea counters` (perf's generic names, rHEX raw
 * events and pmu/term=value,.../ forms), turned into perf_event_attrs.
 */
#ifndef _PEA_COUNTER_EVENTS_H
#define _PEA_COUNTER_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>

#define PEA_EV_NAME_LEN		128
#define PEA_EV_DESC_LEN		(PEA_EV_NAME_LEN + 64)

/*
 * struct pea_ev - one event of an -e list
 * @name:  as the user wrote it
 * @desc:  what it resolved to, for messages ("hardware event 0x0")
 * @attr:  the attr to open (read_format and disabled left to the caller)
 * @clock: a clock event (cpu-clock, task-clock): its count is ns
 */
struct pea_ev {
	char name[PEA_EV_NAME_LEN];
	char desc[PEA_EV_DESC_LEN];
	struct perf_event_attr attr;
	bool clock;
};

/**
 * pea_ev_parse_list() - parse a comma-separated event list
 * @list:   e.g. "cycles,page-faults:u,msr/tsc/,pea_st/config=0x0/"
 * @evs:    set to a malloc'ed array of the events
 * @n:      set to their number
 * @err:    receives a message when parsing fails
 * @errlen: size of @err
 *
 * Return: 0, or -EINVAL (unknown event, bad term, bad modifier), -ENOENT
 * (no such PMU in /sys/bus/event_source/devices), -ENOMEM.
 */
int pea_ev_parse_list(const char *list, struct pea_ev **evs, int *n,
		      char *err, size_t errlen);

/**
 * pea_ev_sysfs_root() - the directory PMUs are looked up in
 *
 * Return: $PEA_EVENT_SOURCE_DIR if set (for tests), else
 * /sys/bus/event_source/devices.
 */
const char *pea_ev_sysfs_root(void);

#endif /* _PEA_COUNTER_EVENTS_H */
