// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the context values of a hit (PEA_FETCH_CTX_*), what the task that
 * hit a probe or a tracepoint is, as bpf_get_current_comm(),
 * bpf_get_current_pid_tgid(), bpf_get_current_uid_gid(),
 * bpf_get_current_cgroup_id() and bpf_get_smp_processor_id() give a
 * tracing program (kernel/bpf/helpers.c, kernel/trace/bpf_trace.c). The
 * one place that reads them: a probe's fetches (pea_fetch.c) and a
 * tracepoint's filter terms (pea_tp_filter.c).
 *
 * Read from current in the handler's context, NMI included: no locks but
 * RCU's read side (NMI-safe), no allocation, never sleeps. Ids are in the
 * link's pid namespace (its attacher's); uids and gids in the initial user
 * namespace, the attacher's (attaching needs what no task of another user
 * namespace has, docs/security.md).
 */
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>
#include <linux/pea.h>
#include "pea_ctx.h"

/* The cgroup v2 id of @task, as bpf_get_current_cgroup_id(). */
static u64 pea_task_cgroup_id(struct task_struct *task)
{
#ifdef CONFIG_CGROUPS
	u64 id;

	rcu_read_lock();
	id = cgroup_id(task_dfl_cgroup(task));
	rcu_read_unlock();
	return id;
#else
	return 0;
#endif
}

/**
 * pea_ctx_comm() - the current task's comm
 * @comm: TASK_COMM_LEN bytes, filled and zero-padded
 *
 * Copied as a record's comm is (strscpy_pad(), which stops at the NUL the
 * task's 16 bytes always hold).
 *
 * Return: its length, without the NUL.
 */
u32 pea_ctx_comm(char comm[TASK_COMM_LEN])
{
	ssize_t n = strscpy_pad(comm, current->comm, TASK_COMM_LEN);

	return n < 0 ? TASK_COMM_LEN - 1 : n;
}

/**
 * pea_ctx_int() - an integer context value of the current task
 * @pid_ns: the pid namespace ids are given in (the link's)
 * @key: PEA_FETCH_CTX_TID .. PEA_FETCH_CTX_CPU (not _COMM)
 *
 * Return: the thread or process id in @pid_ns (0 if not in it, or if
 * the task is already released: an exiting thread's last switch), the
 * real uid or gid in the initial user namespace, the cgroup v2 id, or
 * the CPU.
 */
u64 pea_ctx_int(struct pid_namespace *pid_ns, u32 key)
{
	struct task_struct *task = current;

	switch (key) {
	case PEA_FETCH_CTX_TID:
		return task_pid_nr_ns(task, pid_ns);
	case PEA_FETCH_CTX_PID:
		return task_tgid_nr_ns(task, pid_ns);
	case PEA_FETCH_CTX_UID:
		return from_kuid_munged(&init_user_ns, current_uid());
	case PEA_FETCH_CTX_GID:
		return from_kgid_munged(&init_user_ns, current_gid());
	case PEA_FETCH_CTX_CGROUP:
		return pea_task_cgroup_id(task);
	default:	/* PEA_FETCH_CTX_CPU */
		return raw_smp_processor_id();
	}
}

/**
 * pea_ctx_width() - the bytes a context value has
 * @key: PEA_FETCH_CTX_*
 *
 * Return: TASK_COMM_LEN for the comm (its NUL included), 8 for the cgroup
 * id, 4 for the ids and the CPU, 0 for a key that is none of these.
 */
u32 pea_ctx_width(u32 key)
{
	switch (key) {
	case PEA_FETCH_CTX_COMM:
		return TASK_COMM_LEN;
	case PEA_FETCH_CTX_CGROUP:
		return 8;
	case PEA_FETCH_CTX_TID:
	case PEA_FETCH_CTX_PID:
	case PEA_FETCH_CTX_UID:
	case PEA_FETCH_CTX_GID:
	case PEA_FETCH_CTX_CPU:
		return 4;
	}
	return 0;
}

/**
 * pea_ctx_is_cred() - whether a context value is one of the task's
 * credentials (the uid or the gid)
 * @key: PEA_FETCH_CTX_*
 *
 * Those only a BPF program gets at a kprobe or a tracepoint
 * (bpf_get_current_uid_gid()): no perf sample or tracefs filter carries
 * them, so they take that program's rule (pea_perm_kernel_read()).
 *
 * Return: true for PEA_FETCH_CTX_UID and _GID.
 */
bool pea_ctx_is_cred(u32 key)
{
	return key == PEA_FETCH_CTX_UID || key == PEA_FETCH_CTX_GID;
}
