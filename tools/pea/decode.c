// SPDX-License-Identifier: GPL-2.0
/*
 * pea: decoding the payload of a probe hit: struct pea_probe_record, then
 * capture_len captured bytes, padded by the ring to 8 bytes.
 */
#include <errno.h>
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
