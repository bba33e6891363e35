/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where code is in a process, from /proc/PID/maps: the file offset of an
 * address of this program (what a uprobe attr takes), and back. Needs
 * only libc, so that 32-bit helper programs include it too.
 */
#ifndef _PT_MAPS_H
#define _PT_MAPS_H

#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* The file offset of the code at @p in this process, or ~0ULL. */
static inline unsigned long long pt_file_off(const void *p)
{
	unsigned long a = (unsigned long)p, s, e, off;
	unsigned long long ret = ~0ULL;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx", &s, &e, &off) == 3 &&
		    a >= s && a < e)
			ret = a - s + off;
	if (f)
		fclose(f);
	return ret;
}

/* The address of file offset @off of @path's code in process @pid, or 0. */
static inline unsigned long pt_addr_of(pid_t pid, const char *path,
				       unsigned long long off)
{
	unsigned long s, e, pgoff, ret = 0;
	char maps[64], line[512], name[256];
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %255s", &s, &e, &pgoff,
			   name) == 4 && !strcmp(name, path) &&
		    off >= pgoff && off < pgoff + (e - s))
			ret = s + (unsigned long)(off - pgoff);
	if (f)
		fclose(f);
	return ret;
}

#endif /* _PT_MAPS_H */
