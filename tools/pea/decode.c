// SPDX-License-Identifier: GPL-2.0
/*
 * pea: decoding the payload of a probe hit: struct pea_probe_record, then
 * capture_len captured bytes, padded by the ring to 8 bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pea_tool.h"

int decode_probe_record(const void *data, __u32 size, struct trace_event *ev)
{
	const unsigned char *p = data;

	if (size < sizeof(ev->rec))
		return -EINVAL;
	memcpy(&ev->rec, p, sizeof(ev->rec));
	if (ev->rec.capture_len > PEA_CAPTURE_MAX ||
	    ev->rec.capture_len > size - sizeof(ev->rec))
		return -EINVAL;
	memcpy(ev->cap, p + sizeof(ev->rec), ev->rec.capture_len);
	/* comm is NUL-terminated in the kernel; make sure of it here. */
	ev->rec.comm[sizeof(ev->rec.comm) - 1] = '\0';
	return 0;
}

int decode_tp_record(const void *data, __u32 size, struct trace_event *ev)
{
	const unsigned char *p = data;
	struct pea_tp_record tr;

	if (size < sizeof(tr))
		return -EINVAL;
	memcpy(&tr, p, sizeof(tr));
	if (!(tr.flags & PEA_REC_F_TRACEPOINT) ||
	    tr.raw_size > size - sizeof(tr))
		return -EINVAL;
	memset(&ev->rec, 0, sizeof(ev->rec));
	ev->rec.time_ns = tr.time_ns;
	ev->rec.id = tr.id;
	ev->rec.addr = tr.event_id;
	ev->rec.cpu = tr.cpu;
	ev->rec.pid = tr.pid;
	ev->rec.tgid = tr.tgid;
	ev->rec.flags = tr.flags;
	memcpy(ev->rec.comm, tr.comm, sizeof(tr.comm));
	ev->rec.comm[sizeof(ev->rec.comm) - 1] = '\0';
	ev->raw = malloc(tr.raw_size ? tr.raw_size : 1);
	if (!ev->raw)
		return -ENOMEM;
	memcpy(ev->raw, p + sizeof(tr), tr.raw_size);
	ev->raw_size = tr.raw_size;
	return 0;
}
