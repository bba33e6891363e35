/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea trace: PROBE arguments named by a glob (kprobe:vfs_*,
 * tracepoint:sched:sched_*, uprobe:/bin/bash:readline*), expanded into
 * one PROBE per match (probe_glob.c).
 */
#ifndef _PEA_PROBE_GLOB_H
#define _PEA_PROBE_GLOB_H

#include <stdbool.h>
#include <stddef.h>
#include "pea_tool.h"

/**
 * struct probe_glob_info - what an expansion found besides its matches
 * @what:           what the glob was matched against, for messages
 * @skipped:        matches left out: kprobes' blacklist
 * @shared:         and names several kernel symbols share
 * @kprobes:        matched against kprobe-able functions
 * @blacklist_read: and the kprobes blacklist could be read (else the
 *                  kernel refuses such a function at attach)
 */
struct probe_glob_info {
	const char *what;
	size_t skipped, shared;
	bool kprobes, blacklist_read;
};

/* Whether PROBE @text names its function, event or symbol by a glob. */
bool probe_glob_is(const char *text);

/*
 * Expand @text into PROBE strings (the same prefix, each name matched),
 * sorted, without repeats: 0 with *@out (free with probe_glob_free())
 * and *@n (0 for no match), or -errno with the reason in @msg.
 */
int probe_glob_expand(const char *text, char ***out, size_t *n,
		      struct probe_glob_info *info, char *msg, size_t len);

void probe_glob_free(char **v, size_t n);

#endif /* _PEA_PROBE_GLOB_H */
