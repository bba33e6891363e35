/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea tool: user-space symbols of profiled processes from snapshots of
 * their /proc/PID/maps and the ELF files mapped (usym.c).
 */
#ifndef _PEA_USYM_H
#define _PEA_USYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct usyms;

struct usyms *usyms_new(void);
void usyms_free(struct usyms *u);

/*
 * Snapshot process @pid's executable mappings now (replacing an earlier
 * snapshot of it) and read the files they map. 0, or -errno (-ESRCH: it
 * has no memory any more, -ENOENT: no such process).
 */
int usyms_snap(struct usyms *u, int pid);

/*
 * Keep @pid's snapshot under @key (a number no process has: negative) so
 * that a new snapshot of @pid can be taken beside it (a process that has
 * exec'd: its earlier frames are named by its earlier maps). 0, -ENOENT
 * (no snapshot of @pid) or -EEXIST (@key taken).
 */
int usyms_rekey(struct usyms *u, int pid, int key);

/* Whether @pid has a snapshot. */
bool usyms_known(const struct usyms *u, int pid);

/*
 * Whether @addr is inside a mapping of @pid's snapshot (no file is
 * counted as holding a frame, as usyms_name() counts it).
 */
bool usyms_covers(const struct usyms *u, int pid, __u64 addr);

/*
 * Name @addr of process @pid into @buf: "func", or "[file+0xOFF]" when no
 * symbol covers it, or "[unknown]" outside every mapping of the snapshot.
 * Returns 0 when a symbol named it, -ESRCH outside every mapping (or no
 * snapshot), else -ENOENT.
 */
int usyms_name(const struct usyms *u, int pid, __u64 addr, char *buf,
	       size_t len);

/*
 * The number of @pid's snapshot: a new one for each usyms_snap(), kept by
 * usyms_rekey(); 0 without a snapshot.
 */
unsigned int usyms_gen(const struct usyms *u, int pid);

/*
 * Call @cb once for each ELF file of @pid's snapshot: its path (the file
 * the process mapped: same device and inode when the snapshot was
 * taken), its load bias (where its ELF address 0 sits in the process)
 * and the span of its mappings. Stops at a @cb that returns non-zero and
 * returns that; -ESRCH without a snapshot of @pid.
 */
int usyms_files(const struct usyms *u, int pid,
		int (*cb)(const char *path, __u64 bias, __u64 start,
			  __u64 end, void *arg), void *arg);

/*
 * Write the build-ids (NT_GNU_BUILD_ID, up to 20 bytes as perf keeps them)
 * of the files that held at least one frame usyms_name() was asked about,
 * one "HEX PATH" line each, as perf buildid-list prints them; files
 * without a build-id are left out, as perf leaves them out. Returns the
 * lines written, or -EIO.
 */
int usyms_write_build_ids(const struct usyms *u, FILE *out);

#endif /* _PEA_USYM_H */
