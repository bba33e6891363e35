// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of test_kfunc: programs of several types calling pea's
 * kfunc pea_kf_output() with what the test put in their globals.
 *
 * kf_syscall: run with BPF_PROG_TEST_RUN; writes out_size bytes of payload
 *             (the size bounded by the array, so E2BIG is reachable).
 * kf_unbounded: the same without the bound: the verifier refuses it.
 * kf_xdp:     run with BPF_PROG_TEST_RUN on a packet; writes its first
 *             XDP_BYTES bytes.
 * kf_fentry:  on bpf_fentry_test1(), which the kernel calls when the test
 *             runs a tracing program with BPF_PROG_TEST_RUN, for the
 *             test's own pid only; writes a struct kf_event.
 * kf_kprobe:  the same from a kprobe program on getppid(2)'s entry (a
 *             type 6.1 does not let call module kfuncs).
 * kf_tp:      the same from a tracepoint program on sys_enter_getppid
 *             (nor this one).
 * kf_perf:    the same from a perf_event program, on the overflow of a
 *             cpu-clock event of the test's task (hard interrupt
 *             context; 6.1 does not let it call module kfuncs either).
 * kf_maybe_null: misuse: a map value that may be NULL passed as data
 *             unchecked (6.12's verifier refuses it; on 6.1 the kfunc
 *             answers EFAULT when it is NULL).
 * kf_rodata: a constant global (.rodata, read-only to programs) as
 *             data: the verifier refuses it, as it checks the kfunc's
 *             memory for writing too (docs/kfuncs.md).
 * kf_fentry_find, kf_fentry_output: fentry on the functions the kfunc
 *             calls before pea's nesting guard; attaching must fail.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "test_kfunc.h"

extern long pea_kf_output(__u64 map_handle, __u64 flags, const void *data,
			  __u32 data__sz) __ksym;

__u64 map_handle;
__u64 out_flags;
__u32 out_size;
__u32 target_pid;
__u64 seq;
long ret_syscall;
long ret_xdp;
long ret_fentry;
long ret_probe;
long ret_perf;
__u64 fentry_calls;
__u64 probe_calls;
__u64 perf_calls;
unsigned char payload[KF_PAYLOAD_MAX];
__u32 null_key;
long ret_null;

struct kf_val {
	unsigned char b[KF_NULL_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kf_val);
} kf_arr SEC(".maps");

SEC("syscall")
int kf_syscall(void *ctx)
{
	__u32 size = out_size;

	if (size > sizeof(payload))
		size = sizeof(payload);
	ret_syscall = pea_kf_output(map_handle, out_flags, payload, size);
	return 0;
}

/* Misuse: a size the verifier cannot bound (out_size is any u32). */
SEC("syscall")
int kf_unbounded(void *ctx)
{
	ret_syscall = pea_kf_output(map_handle, out_flags, payload, out_size);
	return 0;
}

SEC("xdp")
int kf_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	unsigned char buf[XDP_BYTES];

	if (data + XDP_BYTES > end)
		return XDP_ABORTED;
	__builtin_memcpy(buf, data, XDP_BYTES);
	ret_xdp = pea_kf_output(map_handle, out_flags, buf, XDP_BYTES);
	return XDP_PASS;
}

static __always_inline long kf_event(long *ret, __u64 *calls, __u32 kind)
{
	struct kf_event ev = {};
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if ((__u32)(pid_tgid >> 32) != target_pid)
		return 0;
	ev.magic = KF_MAGIC;
	ev.kind = kind;
	ev.pid = pid_tgid >> 32;
	ev.seq = __sync_fetch_and_add(&seq, 1);
	*ret = pea_kf_output(map_handle, out_flags, &ev, sizeof(ev));
	__sync_fetch_and_add(calls, 1);
	return 0;
}

SEC("fentry/bpf_fentry_test1")
int kf_fentry(void *ctx)
{
	return kf_event(&ret_fentry, &fentry_calls, KF_KIND_FENTRY);
}

SEC("kprobe/__x64_sys_getppid")
int kf_kprobe(void *ctx)
{
	return kf_event(&ret_probe, &probe_calls, KF_KIND_KPROBE);
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int kf_tp(void *ctx)
{
	return kf_event(&ret_probe, &probe_calls, KF_KIND_TP);
}

/* On a task-bound cpu-clock event: runs from its hrtimer interrupt. */
SEC("perf_event")
int kf_perf(void *ctx)
{
	return kf_event(&ret_perf, &perf_calls, KF_KIND_PERF);
}

const volatile unsigned char kf_const[16] = { 1, 2, 3, 4 };

SEC("syscall")
int kf_rodata(void *ctx)
{
	ret_syscall = pea_kf_output(map_handle, out_flags,
				    (const void *)kf_const, sizeof(kf_const));
	return 0;
}

/* Misuse: the lookup may return NULL (null_key past max_entries). */
SEC("syscall")
int kf_maybe_null(void *ctx)
{
	__u32 k = null_key;
	void *v = bpf_map_lookup_elem(&kf_arr, &k);

	ret_null = pea_kf_output(map_handle, out_flags, v, KF_NULL_BYTES);
	return 0;
}

/* Misuse: tracing what the kfunc runs before pea's nesting guard. */
SEC("fentry/pea_map_find_rcu")
int kf_fentry_find(void *ctx)
{
	return 0;
}

SEC("fentry/pea_output")
int kf_fentry_output(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
