/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: the messages of lttng-relayd's producer protocol, version 2.8, as
 * bytes (relayd_proto.c). The protocol has no document of its own: these
 * are the layouts lttng-tools' relay daemon reads (its
 * sessiond-comm/relayd.h and lttng-relayd/main.c, 2.13), which it still
 * accepts from a 2.4 to 2.10 peer. Everything is big endian and packed.
 *
 * Control connection: a 24-byte header (circuit id 0, payload size,
 * command, command version 0), then the payload; most commands get a
 * reply. Data connection: a 32-byte header per packet (circuit id 0, the
 * stream's handle, its sequence number, the packet's size, padding 0),
 * then the packet.
 */
#ifndef _PEA_RELAYD_PROTO_H
#define _PEA_RELAYD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define RELAYD_MAJOR		2
#define RELAYD_MINOR		8

/* Commands (enum lttcomm_relayd_command) pea sends. */
enum relayd_cmd {
	RELAYD_ADD_STREAM	= 1,
	RELAYD_CREATE_SESSION	= 2,
	RELAYD_VERSION		= 5,
	RELAYD_SEND_METADATA	= 6,
	RELAYD_CLOSE_STREAM	= 7,
	RELAYD_SEND_INDEX	= 13,
	RELAYD_STREAMS_SENT	= 16,
};

/* Reply codes: LTTNG_OK; anything else is an error. */
#define RELAYD_OK		10

#define RELAYD_HDR_LEN		24
#define RELAYD_DATA_HDR_LEN	32
/* Fixed fields of CREATE_SESSION (2.4) and ADD_STREAM (2.2). */
#define RELAYD_SESSION_NAME_LEN	255
#define RELAYD_HOST_NAME_LEN	64
#define RELAYD_CHANNEL_LEN	264
#define RELAYD_PATH_LEN		4096
/* The largest message pea sends on the control connection: ADD_STREAM. */
#define RELAYD_MSG_MAX		(RELAYD_HDR_LEN + RELAYD_CHANNEL_LEN + \
				 RELAYD_PATH_LEN + 16)
/* The packet header of SEND_METADATA: the stream's handle, padding. */
#define RELAYD_METADATA_HDR_LEN	12
/* SEND_INDEX of protocol 2.8: ten u64. */
#define RELAYD_INDEX_LEN	80

/* Reply sizes. */
#define RELAYD_REPLY_GENERIC	4	/* ret_code */
#define RELAYD_REPLY_VERSION	8	/* major, minor */
#define RELAYD_REPLY_SESSION	12	/* session id, ret_code */
#define RELAYD_REPLY_STREAM	12	/* stream handle, ret_code */

/**
 * struct relayd_index - what SEND_INDEX says of a packet (or, with
 * @packet_bits 0, a live beacon)
 * @handle:       the stream's handle (ADD_STREAM's reply)
 * @net_seq:      the data header's sequence number of the packet
 * @packet_bits:  packet_size, in bits
 * @content_bits: content_size, in bits
 * @ts_begin:     timestamp_begin
 * @ts_end:       timestamp_end
 * @discarded:    events_discarded
 * @stream_id:    the CTF stream class id
 * @instance:     stream_instance_id (pea: the CPU)
 * @packet_seq:   packet_seq_num, the packet's number in its stream
 */
struct relayd_index {
	__u64 handle, net_seq;
	__u64 packet_bits, content_bits;
	__u64 ts_begin, ts_end;
	__u64 discarded;
	__u64 stream_id, instance, packet_seq;
};

/*
 * Each builder writes one whole message (header and payload) to @buf,
 * which holds RELAYD_MSG_MAX bytes, and returns its length. Strings
 * longer than their field are an error of the caller (checked before).
 */
size_t relayd_msg_version(unsigned char *buf, __u32 major, __u32 minor);
size_t relayd_msg_create_session(unsigned char *buf, const char *name,
				 const char *hostname, __u32 live_us,
				 bool snapshot);
size_t relayd_msg_add_stream(unsigned char *buf, const char *channel,
			     const char *path);
size_t relayd_msg_streams_sent(unsigned char *buf);
/* Header and packet header; the @len bytes of TSDL text follow. */
size_t relayd_msg_metadata(unsigned char *buf, __u64 handle, size_t len);
size_t relayd_msg_index(unsigned char *buf, const struct relayd_index *ix);
size_t relayd_msg_close_stream(unsigned char *buf, __u64 handle,
			       __u64 last_seq);

/* The data connection's header before a packet of @len bytes. */
size_t relayd_data_hdr(unsigned char *buf, __u64 handle, __u64 net_seq,
		       __u32 len);

/* Big-endian fields of a reply. */
__u32 relayd_get_u32(const unsigned char *p);
__u64 relayd_get_u64(const unsigned char *p);

#endif /* _PEA_RELAYD_PROTO_H */
