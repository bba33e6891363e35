// SPDX-License-Identifier: GPL-2.0
/*
 * pea: lttng-relayd's producer protocol 2.8, message by message, as bytes
 * (the layouts are in relayd_proto.h). No I/O here: sink_relayd.c sends
 * what these build.
 */
#include <string.h>
#include "relayd_proto.h"

static unsigned char *put_be32(unsigned char *p, __u32 v)
{
	int i;

	for (i = 3; i >= 0; i--, v >>= 8)
		p[i] = v & 0xff;
	return p + 4;
}

static unsigned char *put_be64(unsigned char *p, __u64 v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = v & 0xff;
	return p + 8;
}

/* A char[@size] field: @s, then NULs to the end. */
static unsigned char *put_field(unsigned char *p, const char *s, size_t size)
{
	size_t n = strnlen(s, size - 1);

	memcpy(p, s, n);
	memset(p + n, 0, size - n);
	return p + size;
}

/* The control header of command @cmd with @len payload bytes. */
static unsigned char *put_hdr(unsigned char *p, enum relayd_cmd cmd,
			      __u64 len)
{
	p = put_be64(p, 0);		/* circuit_id: unused */
	p = put_be64(p, len);		/* data_size */
	p = put_be32(p, cmd);
	return put_be32(p, 0);		/* cmd_version */
}

__u32 relayd_get_u32(const unsigned char *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

__u64 relayd_get_u64(const unsigned char *p)
{
	return (__u64)relayd_get_u32(p) << 32 | relayd_get_u32(p + 4);
}

size_t relayd_msg_version(unsigned char *buf, __u32 major, __u32 minor)
{
	unsigned char *p = put_hdr(buf, RELAYD_VERSION, 8);

	p = put_be32(p, major);
	p = put_be32(p, minor);
	return p - buf;
}

/*
 * struct lttcomm_relayd_create_session_2_4; @snapshot: marked as a
 * snapshot session (one flight-recorder snapshot, sent whole), which
 * relayd stores as any other.
 */
size_t relayd_msg_create_session(unsigned char *buf, const char *name,
				 const char *hostname, __u32 live_us,
				 bool snapshot)
{
	unsigned char *p = put_hdr(buf, RELAYD_CREATE_SESSION,
				   RELAYD_SESSION_NAME_LEN +
				   RELAYD_HOST_NAME_LEN + 8);

	p = put_field(p, name, RELAYD_SESSION_NAME_LEN);
	p = put_field(p, hostname, RELAYD_HOST_NAME_LEN);
	p = put_be32(p, live_us);
	p = put_be32(p, snapshot);
	return p - buf;
}

/*
 * struct lttcomm_relayd_add_stream_2_2: the channel is the file's name,
 * the path its directory under relayd's output; no size limit.
 */
size_t relayd_msg_add_stream(unsigned char *buf, const char *channel,
			     const char *path)
{
	unsigned char *p = put_hdr(buf, RELAYD_ADD_STREAM,
				   RELAYD_CHANNEL_LEN + RELAYD_PATH_LEN + 16);

	p = put_field(p, channel, RELAYD_CHANNEL_LEN);
	p = put_field(p, path, RELAYD_PATH_LEN);
	p = put_be64(p, 0);		/* tracefile_size */
	p = put_be64(p, 0);		/* tracefile_count */
	return p - buf;
}

size_t relayd_msg_streams_sent(unsigned char *buf)
{
	return put_hdr(buf, RELAYD_STREAMS_SENT, 0) - buf;
}

size_t relayd_msg_metadata(unsigned char *buf, __u64 handle, size_t len)
{
	unsigned char *p = put_hdr(buf, RELAYD_SEND_METADATA,
				   RELAYD_METADATA_HDR_LEN + (__u64)len);

	p = put_be64(p, handle);
	p = put_be32(p, 0);		/* padding_size */
	return p - buf;
}

/* struct lttcomm_relayd_index with the 2.8 fields. */
size_t relayd_msg_index(unsigned char *buf, const struct relayd_index *ix)
{
	unsigned char *p = put_hdr(buf, RELAYD_SEND_INDEX, RELAYD_INDEX_LEN);

	p = put_be64(p, ix->handle);
	p = put_be64(p, ix->net_seq);
	p = put_be64(p, ix->packet_bits);
	p = put_be64(p, ix->content_bits);
	p = put_be64(p, ix->ts_begin);
	p = put_be64(p, ix->ts_end);
	p = put_be64(p, ix->discarded);
	p = put_be64(p, ix->stream_id);
	p = put_be64(p, ix->instance);
	p = put_be64(p, ix->packet_seq);
	return p - buf;
}

size_t relayd_msg_close_stream(unsigned char *buf, __u64 handle,
			       __u64 last_seq)
{
	unsigned char *p = put_hdr(buf, RELAYD_CLOSE_STREAM, 16);

	p = put_be64(p, handle);
	p = put_be64(p, last_seq);
	return p - buf;
}

size_t relayd_data_hdr(unsigned char *buf, __u64 handle, __u64 net_seq,
		       __u32 len)
{
	unsigned char *p = buf;

	p = put_be64(p, 0);		/* circuit_id */
	p = put_be64(p, handle);
	p = put_be64(p, net_seq);
	p = put_be32(p, len);
	p = put_be32(p, 0);		/* padding_size */
	return p - buf;
}
