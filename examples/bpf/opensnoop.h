/* SPDX-License-Identifier: GPL-2.0 */
/* The event opensnoop's BPF program writes and its loader reads. */
#ifndef _OPENSNOOP_H
#define _OPENSNOOP_H

struct open_event {
	__u32 pid;
	__u32 tgid;
	__s32 dfd;
	char comm[16];
	char filename[128];
};

#endif /* _OPENSNOOP_H */
