// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the privilege each producer's attach requires, as Linux's own
 * interface for the same thing requires it: perf_event_open() of the
 * kprobe PMU, of a tracepoint with PERF_SAMPLE_RAW, of the uprobe PMU,
 * each for every task on a CPU (pid -1), since a pea link sees every task.
 * Each rule takes perf_event_open()'s checks in its order and answers its
 * errno (selftests/test_caps.c compares every case with the syscall in the
 * same guest; the table is docs/security.md):
 *
 *   1. Debian's perf_event_paranoid 3: nothing without CAP_SYS_ADMIN,
 *      EACCES, before anything else.
 *   2. A kernel-mode event (exclude_kernel 0, as kprobes and tracepoints
 *      are): paranoid <= 1 or CAP_PERFMON, EACCES (perf_allow_kernel()).
 *   3. The PMU's event_init: kprobe CAP_PERFMON, uprobe CAP_SYS_ADMIN
 *      (since "perf: Revert to requiring CAP_SYS_ADMIN for uprobes"),
 *      both EACCES.
 *   4. perf_trace_event_perm(): raw tracepoint data needs paranoid -1 or
 *      CAP_PERFMON, EPERM (perf_allow_tracepoint()).
 *   5. A CPU-wide event: paranoid <= 0 or CAP_PERFMON, EACCES
 *      (perf_allow_cpu()).
 *   6. A task's event (pid > -1): CAP_PERFMON or ptrace read access to the
 *      task, EACCES (perf_check_permission()), which only the sampler's
 *      per-task mode has: pea_perm_task(); another process's task needs
 *      CAP_PERFMON unless pea.task_ptrace (the LSM hook of ptrace).
 *
 * Two producers go where perf events do not, and take the rule of the BPF
 * program that would do the same and write into a perf event array, as
 * bpf(BPF_PROG_LOAD) checks it in the initial user namespace (a BPF token
 * aside, which pea has no counterpart of), EPERM:
 *
 *   - a kprobe capture or fetch that reads memory, kernel or user: a
 *     kprobe program calling bpf_probe_read_kernel() or
 *     bpf_probe_read_user(), CAP_BPF and CAP_PERFMON (after the kprobe
 *     rule above, which perf_event_open() of its kprobe applies);
 *   - a netfilter hook: a program at a network hook (BPF_PROG_TYPE_
 *     NETFILTER on 6.12, SCHED_CLS on both), CAP_BPF and CAP_NET_ADMIN.
 *
 * CAP_SYS_ADMIN implies CAP_PERFMON (perfmon_capable()), CAP_BPF
 * (bpf_capable()) and CAP_NET_ADMIN, as bpf_ns_capable() has it. The LSM hooks
 * perf consults with them (security_perf_event_open()) are not exported to
 * modules, except through perf_allow_kernel() on 6.12 (docs/security.md).
 * The uprobe rule, CAP_SYS_ADMIN, which every other step accepts, is
 * pea_uprobe_attach()'s own.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>
#include <linux/user_namespace.h>
#include <linux/moduleparam.h>
#include "pea_compat.h"
#include "pea_perm.h"

/*
 * pea.task_ptrace: let ptrace read access (its credential and
 * dumpability rules, without the LSM hook pea cannot call) admit a
 * per-task sampler of another process. Off: another process's task needs
 * CAP_PERFMON, so that no LSM ptrace policy is bypassed.
 */
static bool task_ptrace;
module_param(task_ptrace, bool, 0444);
MODULE_PARM_DESC(task_ptrace,
		 "per-task samplers of another process on ptrace read access alone, without the LSM's ptrace hook (default off: CAP_PERFMON); never for a sampler that copies its user registers and stack, which needs CAP_PERFMON (a user-stack walk still reads its frames)");

/*
 * Steps 1 and 2, which every event pea compares with passes: Debian's
 * perf_event_paranoid 3, then a kernel-mode event's rule.
 */
static int pea_perm_kernel_event(void)
{
	if (pea_perf_paranoid() > 2 && !capable(CAP_SYS_ADMIN))
		return -EACCES;
	return pea_perf_allow_kernel();
}

/**
 * pea_perm_kprobe() - may the caller attach a kprobe or kretprobe
 *
 * As perf_event_open() of the kprobe PMU for pid -1: steps 1, 2, 3.
 *
 * Return: 0 or -EACCES.
 */
int pea_perm_kprobe(void)
{
	int err = pea_perm_kernel_event();

	if (err)
		return err;
	return perfmon_capable() ? 0 : -EACCES;
}

/**
 * pea_perm_tracepoint() - may the caller attach a tracepoint producer
 *
 * As perf_event_open() of PERF_TYPE_TRACEPOINT with PERF_SAMPLE_RAW for
 * pid -1: steps 1, 2, 4, 5 (so paranoid -1 lets anyone attach, as perf).
 *
 * Return: 0, -EACCES or -EPERM.
 */
int pea_perm_tracepoint(void)
{
	int err = pea_perm_kernel_event();

	if (err)
		return err;
	if (perfmon_capable())
		return 0;
	if (pea_perf_paranoid() > -1)
		return -EPERM;
	return 0;	/* step 5 allows whatever step 4 allowed */
}

/**
 * pea_perm_kernel_read() - may the caller read memory at a kprobe
 *
 * As bpf(BPF_PROG_LOAD) of a kprobe program, the Linux way to read the
 * kernel or user memory a probed argument points to
 * (bpf_probe_read_kernel(), bpf_probe_read_user()): CAP_BPF and
 * CAP_PERFMON (or CAP_SYS_ADMIN). The kprobe itself is
 * pea_perm_kprobe()'s. Also the rule of the task's uid and gid at a
 * kprobe or a tracepoint (a context fetch or filter term), which only
 * such a program gets there (bpf_get_current_uid_gid()); a tracepoint
 * program's load asks the same CAP_BPF and CAP_PERFMON.
 *
 * Return: 0 or -EPERM.
 */
int pea_perm_kernel_read(void)
{
	return bpf_capable() && perfmon_capable() ? 0 : -EPERM;
}

/**
 * pea_perm_probe_lockdown() - kernel lockdown's rules for a kprobe or
 * fprobe link
 * @kernel_read: a capture or a fetch of the link may read kernel memory
 *
 * As Linux applies them: trace_kprobe refuses to register a kprobe under
 * LOCKDOWN_KPROBES, and BPF loses bpf_probe_read_kernel() under
 * LOCKDOWN_BPF_READ_KERNEL (both at the confidentiality level); user
 * pointer reads stay allowed.
 *
 * Return: 0 or -EPERM.
 */
int pea_perm_probe_lockdown(bool kernel_read)
{
	int err = security_locked_down(LOCKDOWN_KPROBES);

	if (err)
		return err;
	if (kernel_read)
		return security_locked_down(LOCKDOWN_BPF_READ_KERNEL);
	return 0;
}

/**
 * pea_perm_tp_read() - may the caller follow a tracepoint's field into
 * memory
 * @kernel_read: a read may be of kernel memory (not marked user)
 *
 * As a tracepoint program's bpf_probe_read_user() and
 * bpf_probe_read_kernel(), the Linux way to read what a field points to:
 * the program's load asks CAP_BPF and CAP_PERFMON
 * (pea_perm_kernel_read()), and lockdown's confidentiality level takes
 * the kernel read away (LOCKDOWN_BPF_READ_KERNEL), leaving the user one.
 * The tracepoint itself is pea_perm_tracepoint()'s.
 *
 * Return: 0 or -EPERM.
 */
int pea_perm_tp_read(bool kernel_read)
{
	int err = pea_perm_kernel_read();

	if (err)
		return err;
	return kernel_read ? security_locked_down(LOCKDOWN_BPF_READ_KERNEL) : 0;
}

/**
 * pea_perm_netfilter() - may the caller attach a netfilter producer
 *
 * As bpf(BPF_PROG_LOAD) of a program at a network hook that writes into
 * a perf event array: CAP_BPF and CAP_NET_ADMIN (or CAP_SYS_ADMIN), in the
 * initial user namespace, so not from a user namespace of one's own.
 *
 * Return: 0 or -EPERM.
 */
int pea_perm_netfilter(void)
{
	if (!bpf_capable())
		return -EPERM;
	return capable(CAP_NET_ADMIN) || capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

/**
 * pea_perm_sample() - may the caller attach a sampling producer
 * @kernel: the event counts in kernel mode (exclude_kernel 0)
 *
 * As perf_event_open() of a sampling event for pid -1 on a CPU: steps 1
 * and 2 (only if @kernel) here; step 5 (perf_allow_cpu(), with its LSM
 * hook) perf_event_create_kernel_counter() applies, with the caller's
 * credentials, after the PMU's event_init as perf_event_open() does (so
 * an event no PMU has is ENOENT before it is EACCES): pea_sample.c asks
 * it before taking a link slot or memory.
 *
 * Return: 0 or -EACCES.
 */
int pea_perm_sample(bool kernel)
{
	if (pea_perf_paranoid() > 2 && !capable(CAP_SYS_ADMIN))
		return -EACCES;
	return kernel ? pea_perf_allow_kernel() : 0;
}

/*
 * May the caller read @task as ptrace_may_access(task,
 * PTRACE_MODE_READ_REALCREDS) decides (kernel/ptrace.c, the same on 6.1
 * and 6.12), which modules cannot call: its own thread group; else the
 * caller's real uid and gid equal to each of the task's uids and gids, or
 * CAP_SYS_PTRACE in the task's user namespace; then the task still
 * dumpable (its mm's dumpable mode SUID_DUMP_USER, or CAP_SYS_PTRACE in
 * the mm's user namespace; without an mm, user_dumpable or CAP_SYS_PTRACE
 * in the initial namespace), credentials read before dumpability. The
 * last step, security_ptrace_access_check() (the LSMs' ptrace rules;
 * Yama's apply to PTRACE_MODE_ATTACH only), is not exported: see
 * docs/security.md.
 */
static bool pea_ptrace_may_read(struct task_struct *task)
{
	const struct cred *cred = current_cred(), *tcred;
	struct mm_struct *mm;
	bool ok;

	if (same_thread_group(task, current))
		return true;
	task_lock(task);
	rcu_read_lock();
	tcred = __task_cred(task);
	ok = (uid_eq(cred->uid, tcred->euid) && uid_eq(cred->uid, tcred->suid) &&
	      uid_eq(cred->uid, tcred->uid) && gid_eq(cred->gid, tcred->egid) &&
	      gid_eq(cred->gid, tcred->sgid) && gid_eq(cred->gid, tcred->gid)) ||
	     ns_capable(tcred->user_ns, CAP_SYS_PTRACE);
	rcu_read_unlock();
	if (ok) {
		smp_rmb();	/* dumpability after credentials: commit_creds() */
		mm = task->mm;
		if (mm)
			ok = get_dumpable(mm) == SUID_DUMP_USER ||
			     ns_capable(mm->user_ns, CAP_SYS_PTRACE);
		else
			ok = task->user_dumpable ||
			     ns_capable(&init_user_ns, CAP_SYS_PTRACE);
	}
	task_unlock(task);
	return ok;
}

/**
 * pea_perm_task() - may the caller sample @task (step 6)
 * @task: the task, held
 *
 * As perf_check_permission() for an event without sigtrap: CAP_PERFMON
 * (or CAP_SYS_ADMIN), or ptrace read access with the real credentials,
 * whose first rule, the caller's own thread group, Linux applies before
 * any LSM hook. For another process ptrace_may_access() would end with
 * security_ptrace_access_check(), which modules cannot call: without
 * pea.task_ptrace, CAP_PERFMON is needed there (stricter than Linux
 * without an LSM policy, never laxer with one). The caller holds @task's
 * exec_update_lock for reading across this and the event's
 * installation, as perf_event_open() does, so that an exec cannot change
 * the credentials checked.
 *
 * Return: 0 or -EACCES.
 */
int pea_perm_task(struct task_struct *task)
{
	if (perfmon_capable() || same_thread_group(task, current))
		return 0;
	if (task_ptrace && pea_ptrace_may_read(task))
		return 0;
	return -EACCES;
}

/**
 * pea_perm_task_mem() - may the caller's sampler of @task copy its memory
 * @task: the task, held, already admitted by pea_perm_task()
 *
 * A sampler that copies the task's user registers and stack
 * (PEA_SAMPLE_F_USER_REGS) hands out its raw stack memory, which an LSM
 * ptrace policy exists to deny; pea.task_ptrace admits another process
 * without that hook, so not for this: CAP_PERFMON, as without
 * task_ptrace, or the caller's own thread group (Linux's first rule,
 * before any hook).
 *
 * Return: 0 or -EACCES.
 */
int pea_perm_task_mem(struct task_struct *task)
{
	if (perfmon_capable() || same_thread_group(task, current))
		return 0;
	return -EACCES;
}
