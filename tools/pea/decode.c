// SPDX-License-Identifier: GPL-2.0
/*
 * pea: decoding the payload of a probe hit (kprobes and uprobes): struct
 * pea_probe_record, then capture_len captured bytes, padded by the ring to
 * 8 bytes. With PEA_REC_F_KSTACK a struct pea_kstack ends it (or a
 * tracepoint's record, tracepoint.c), at the next 8-byte boundary.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pea_tool.h"

int kstack_check(const unsigned char *p, __u32 size, __u32 used,
		 __u16 flags, __u32 *nr)
{
	__u32 off = (used + 7) & ~7U;
	struct pea_kstack ks;

	*nr = 0;
	if (!(flags & PEA_REC_F_KSTACK))
		return 0;
	if (used > size || off > size || size - off < sizeof(ks))
		return -EINVAL;
	memcpy(&ks, p + off, sizeof(ks));
	if (!ks.nr || ks.nr > PEA_KSTACK_MAX ||
	    (size - off - sizeof(ks)) / sizeof(__u64) < ks.nr)
		return -EINVAL;
	*nr = ks.nr;
	return 0;
}

int kstack_copy(const unsigned char *p, __u32 used, __u32 nr,
		struct trace_event *ev)
{
	__u32 off = ((used + 7) & ~7U) + sizeof(struct pea_kstack);

	if (!nr)
		return 0;
	ev->kstack = malloc(nr * sizeof(__u64));
	if (!ev->kstack)
		return -ENOMEM;
	memcpy(ev->kstack, p + off, nr * sizeof(__u64));
	ev->kstack_nr = nr;
	return 0;
}

int decode_probe_record(const void *data, __u32 size, struct trace_event *ev)
{
	const unsigned char *p = data;
	__u32 extra, nr;

	ev->kstack = NULL;
	ev->kstack_nr = 0;
	if (size < sizeof(ev->rec))
		return -EINVAL;
	memcpy(&ev->rec, p, sizeof(ev->rec));
	extra = ev->rec.flags & PEA_REC_F_COUNTERS ?
		sizeof(struct pea_event_value) : 0;
	if (ev->rec.capture_len > PEA_CAPTURE_MAX ||
	    ev->rec.capture_len + extra > size - sizeof(ev->rec))
		return -EINVAL;
	if (kstack_check(p, size, sizeof(ev->rec) + extra +
			 ev->rec.capture_len, ev->rec.flags, &nr))
		return -EINVAL;
	memcpy(ev->cap, p + sizeof(ev->rec) + extra, ev->rec.capture_len);
	/* comm is NUL-terminated in the kernel; make sure of it here. */
	ev->rec.comm[sizeof(ev->rec.comm) - 1] = '\0';
	return kstack_copy(p, sizeof(ev->rec) + extra + ev->rec.capture_len,
			   nr, ev);
}
