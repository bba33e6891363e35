// SPDX-License-Identifier: GPL-2.0
/*
 * pea: decoding the payload of a probe hit (kprobes and uprobes): struct
 * pea_probe_record, then capture_len captured bytes, padded by the ring to
 * 8 bytes. With PEA_REC_F_FETCH a struct pea_fetch_block follows at the
 * next 8-byte boundary. With PEA_REC_F_KSTACK a struct pea_kstack ends it (or a
 * tracepoint's record, tracepoint.c), at the next 8-byte boundary; with
 * PEA_REC_F_USTACK a second one, the user stack, follows it.
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

int ustack_take(const unsigned char *p, __u32 size, __u32 used, __u32 knr,
		__u16 flags, struct trace_event *ev)
{
	__u32 off = (used + 7) & ~7U;
	struct pea_kstack us;

	ev->ustack = NULL;
	ev->ustack_nr = 0;
	if (!(flags & PEA_REC_F_USTACK))
		return 0;
	if (knr)
		off += sizeof(struct pea_kstack) + knr * sizeof(__u64);
	if (used > size || off > size || size - off < sizeof(us))
		return -EINVAL;
	memcpy(&us, p + off, sizeof(us));
	if (!us.nr || us.nr > PEA_USTACK_MAX ||
	    (size - off - sizeof(us)) / sizeof(__u64) < us.nr)
		return -EINVAL;
	ev->ustack = malloc(us.nr * sizeof(__u64));
	if (!ev->ustack)
		return -ENOMEM;
	memcpy(ev->ustack, p + off + sizeof(us), us.nr * sizeof(__u64));
	ev->ustack_nr = us.nr;
	return 0;
}

int fetch_copy(const unsigned char *p, __u32 size, __u32 *used,
	       struct trace_event *ev)
{
	__u32 off = (*used + 7) & ~7U;
	struct pea_fetch_block b;

	if (!(ev->rec.flags & PEA_REC_F_FETCH))
		return 0;
	if (off > size || size - off < sizeof(b))
		return -EINVAL;
	memcpy(&b, p + off, sizeof(b));
	if (b.nr > PEA_FETCH_MAX || b.size > size - off ||
	    b.size < sizeof(b) + b.nr * sizeof(struct pea_fetch_value))
		return -EINVAL;
	ev->fetch = malloc(b.size);
	if (!ev->fetch)
		return -ENOMEM;
	memcpy(ev->fetch, p + off, b.size);
	ev->fetch_size = b.size;
	*used = off + b.size;
	return 0;
}

int decode_probe_record(const void *data, __u32 size, struct trace_event *ev)
{
	const unsigned char *p = data;
	__u32 extra, nr, used;
	int err;

	ev->kstack = NULL;
	ev->kstack_nr = 0;
	ev->ustack = NULL;
	ev->ustack_nr = 0;
	ev->fetch = NULL;
	ev->fetch_size = 0;
	if (size < sizeof(ev->rec))
		return -EINVAL;
	memcpy(&ev->rec, p, sizeof(ev->rec));
	extra = ev->rec.flags & PEA_REC_F_COUNTERS ?
		sizeof(struct pea_event_value) : 0;
	if (ev->rec.capture_len > PEA_CAPTURE_MAX ||
	    ev->rec.capture_len + extra > size - sizeof(ev->rec))
		return -EINVAL;
	used = sizeof(ev->rec) + extra + ev->rec.capture_len;
	err = fetch_copy(p, size, &used, ev);
	if (err)
		return err;
	if (kstack_check(p, size, used, ev->rec.flags, &nr)) {
		free(ev->fetch);
		ev->fetch = NULL;
		return -EINVAL;
	}
	memcpy(ev->cap, p + sizeof(ev->rec) + extra, ev->rec.capture_len);
	/* comm is NUL-terminated in the kernel; make sure of it here. */
	ev->rec.comm[sizeof(ev->rec.comm) - 1] = '\0';
	err = kstack_copy(p, used, nr, ev);
	if (!err)
		err = ustack_take(p, size, used, nr, ev->rec.flags, ev);
	if (err) {
		free(ev->kstack);
		ev->kstack = NULL;
		ev->kstack_nr = 0;
		free(ev->fetch);
		ev->fetch = NULL;
	}
	return err;
}
