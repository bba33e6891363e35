/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What test_kfunc and its BPF programs (test_kfunc.bpf.c) share.
 */
#ifndef _TEST_KFUNC_H
#define _TEST_KFUNC_H

/* The payload array: past pea's largest payload, 65516 bytes. */
#define KF_PAYLOAD_MAX	65536
/* Bytes of the packet kf_xdp writes. */
#define XDP_BYTES	24

/* Bytes of the map value kf_maybe_null passes. */
#define KF_NULL_BYTES	64

#define KF_MAGIC	0x70656131deadbeefULL
#define KF_KIND_FENTRY	1
#define KF_KIND_KPROBE	2
#define KF_KIND_PERF	3
#define KF_KIND_TP	4

/* Payload bytes of the zero-copy programs (test_kfunc_zc.bpf.c). */
#define ZC_BYTES	64
#define ZC_SHORT	8

struct kf_event {
	__u64 magic;
	__u64 seq;
	__u32 kind;
	__u32 pid;
};

#endif /* _TEST_KFUNC_H */
