// SPDX-License-Identifier: GPL-2.0
/*
 * opensnoop's BPF side, written for pea: an fentry program on
 * do_sys_openat2() emitting one struct open_event per call. With a perf
 * event array it would end in bpf_perf_event_output(ctx, &events,
 * BPF_F_CURRENT_CPU, &ev, sizeof(ev)); here it calls pea's kfunc on the
 * pea map whose handle the loader put in map_handle (docs/kfuncs.md).
 */
#include <linux/bpf.h>
#include <linux/pea.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "opensnoop.h"

/* pea's kfunc (module/pea_kfunc.c), resolved by libbpf from pea.ko's BTF. */
extern long pea_kf_output(__u64 map_handle, __u64 flags, const void *data,
			  __u32 data__sz) __ksym;

const volatile __u64 map_handle;		/* set by the loader before load */
const volatile __u32 target_tgid;	/* 0: every process */
__u64 errors;				/* calls pea_kf_output() refused */

SEC("fentry/do_sys_openat2")
int BPF_PROG(on_openat2, int dfd, const char *filename)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct open_event ev = {};

	ev.tgid = pid_tgid >> 32;
	if (target_tgid && ev.tgid != target_tgid)
		return 0;
	ev.pid = (__u32)pid_tgid;
	ev.dfd = dfd;
	bpf_get_current_comm(ev.comm, sizeof(ev.comm));
	bpf_probe_read_user_str(ev.filename, sizeof(ev.filename), filename);
	if (pea_kf_output(map_handle, PEA_F_CURRENT_CPU, &ev, sizeof(ev)))
		__sync_fetch_and_add(&errors, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
