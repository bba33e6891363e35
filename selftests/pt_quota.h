/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the probe-limit tests share: debugfs pea/quota, /proc/meminfo, and
 * becoming another user with one capability.
 */
#ifndef _PT_QUOTA_H
#define _PT_QUOTA_H

#include <linux/membarrier.h>
#include "pea_test.h"

#define PT_QUOTA	"/sys/kernel/debug/pea/quota"

/* A user's links and bytes in debugfs pea/quota (uid -1: the total). */
static inline int pt_quota(long uid, long *links, long *bytes)
{
	FILE *f = fopen(PT_QUOTA, "r");
	char line[256], who[32];
	long l, b;
	int found = -1;

	*links = 0;
	*bytes = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || sscanf(line, "%31s %ld %ld", who, &l, &b) != 3)
			continue;
		if ((uid < 0 && !strcmp(who, "total")) ||
		    (uid >= 0 && strcmp(who, "total") && atol(who) == uid)) {
			*links = l;
			*bytes = b;
			found = 0;
		}
	}
	if (f)
		fclose(f);
	else
		return -1;
	return uid >= 0 ? 0 : found;
}

/*
 * Wait until @uid holds @want bytes (and, for 0, no link either): links
 * and tables go after a grace period or a work item. Returns the bytes it
 * holds then, or after 10 s (scaled), a bound a loaded host's guest can
 * still meet; the wait ends as soon as it settles.
 */
static inline long pt_quota_settled_at(long uid, long want)
{
	long l = 0, b = -1;
	int i;

	for (i = 0; i < 500 * pt_time_scale(); i++) {
		pt_quota(uid, &l, &b);
		if (b == want && (want || !l))
			return b;
		usleep(20000);
	}
	return b;
}

/* Wait until @uid holds nothing: 0, or the bytes it holds (above). */
static inline long pt_quota_settled(long uid)
{
	return pt_quota_settled_at(uid, 0);
}

static inline long pt_meminfo(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) &&
		    line[strlen(key)] == ':')
			v = atol(line + strlen(key) + 1);
	if (f)
		fclose(f);
	return v;
}

/*
 * Become @uid for good with capabilities @cap and @cap2 only (-1: none),
 * dumpable again (after setuid) so that /proc/PID files of our children
 * are ours.
 */
static inline int pt_drop_to2(uid_t uid, int cap, int cap2)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) ||
	    setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -errno;
	memset(data, 0, sizeof(data));
	if (cap >= 0) {
		data[cap / 32].effective = 1U << (cap % 32);
		data[cap / 32].permitted = 1U << (cap % 32);
	}
	if (cap2 >= 0) {
		data[cap2 / 32].effective |= 1U << (cap2 % 32);
		data[cap2 / 32].permitted |= 1U << (cap2 % 32);
	}
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ? -errno : 0;
}

/* Become @uid for good with capability @cap only (-1: none). */
static inline int pt_drop_to(uid_t uid, int cap)
{
	return pt_drop_to2(uid, cap, -1);
}

/*
 * After a child was reaped: wait until the kernel has given back what its
 * task held (a kretprobe instance goes back at the task's last put, an
 * RCU callback): a grace period (membarrier's global command waits for
 * one), then time for the callbacks, and a jiffy for pea's rate-limited
 * scan of its slots.
 */
static inline void pt_after_reap(void)
{
	syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	usleep(50000);
}

#endif /* _PT_QUOTA_H */
