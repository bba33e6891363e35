// SPDX-License-Identifier: GPL-2.0
/*
 * The capability matrix (issue 26): every create and attach operation of
 * pea, once /dev/pea is opened to other users (mode 0666), as root, as
 * nobody with CAP_PERFMON, with CAP_PERFMON and CAP_BPF, with
 * CAP_NET_ADMIN, with CAP_SYS_ADMIN and with no capability (and, for the
 * tracepoint's uid and gid terms, with CAP_BPF alone), at every
 * perf_event_paranoid level (-1 to 3; Debian's default is 3), each next to
 * what Linux's own interface for the same thing answers in the same guest,
 * in the same child:
 *
 *   map, output event   bpf(BPF_MAP_CREATE) of a PERF_EVENT_ARRAY and
 *                       perf_event_open() of a BPF output event (pid -1):
 *                       pea differs on purpose (docs/security.md)
 *   named map           no Linux counterpart: pea's own rule
 *   map for BPF writers a map with PEA_F_BPF_WRITE (BPF programs may write
 *                       into it with pea's kfunc): as a map
 *   counters            perf_event_open() of the same attr, CPU-wide
 *   kprobe, kretprobe   the kprobe PMU (its type from sysfs), pid -1
 *   tracepoint          PERF_TYPE_TRACEPOINT with PERF_SAMPLE_RAW, pid -1
 *   tracepoint uid term the tracepoint with a filter program of one
 *   (gid term)          ctx.uid (ctx.gid) term (PEA_TP_FIELD_CTX): the
 *                       tracepoint as above, then bpf(BPF_PROG_LOAD) of a
 *                       tracepoint program (bpf_get_current_uid_gid());
 *                       also for nobody with CAP_BPF alone ("bpf"), which
 *                       tells the two capabilities apart
 *   tracepoint field    a tracepoint link whose fetch takes a field as it is
 *   fetch               (sched_process_fork's parent_pid): the tracepoint's
 *                       rule, nothing read
 *   tracepoint user     sys_enter_openat's filename followed as a user
 *   fetch               string (PEA_FETCH_BASE_FIELD, @user set): the
 *                       tracepoint, then bpf(BPF_PROG_LOAD) of a tracepoint
 *                       program (bpf_probe_read_user())
 *   tracepoint kernel   hrtimer_start's hrtimer followed into struct hrtimer
 *   fetch               (bpf_probe_read_kernel(): the same load)
 *   uprobe, uretprobe   the uprobe PMU on the same file and offset, pid -1
 *   sampling            perf_event_open() of the same sampling event with
 *                       PERF_SAMPLE_CALLCHAIN, pid -1 (cpu-clock with
 *                       kernel and user stacks; :u, exclude_kernel, user
 *                       stacks only; cycles, ENOENT where no PMU)
 *   sampling a task     perf_event_open(pid, -1) of the same event with
 *                       attr.inherit and PERF_SAMPLE_CALLCHAIN: the
 *                       caller's own process (cpu-clock, and :u), and
 *                       init (pid 1, root's: ptrace read access or
 *                       CAP_PERFMON)
 *   kprobe kernel       the kprobe PMU, then bpf(BPF_PROG_LOAD) of a kprobe
 *   capture             program (what reads kernel memory at a kprobe)
 *   kprobe user capture the same: a kprobe program's bpf_probe_read_user()
 *   and user fetch      is what reads user memory behind a probed argument
 *   fprobe, fprobe      an fprobe link on the kprobe's function: the kprobe
 *   kernel capture      PMU's rule on it (and the capture's), as the kprobe
 *                       rows; EOPNOTSUPP for all where the kernel has no
 *                       fprobe (6.1)
 *   BPF program calling bpf(BPF_PROG_LOAD) of a SYSCALL program calling
 *   pea_kf_output       pea_kf_output(), the pea module's BTF fd from
 *                       BPF_BTF_GET_FD_BY_ID in its fd_array; Linux's: a
 *                       kprobe program, bpf_perf_event_output()'s usual
 *                       caller; pea's rule adds CAP_SYS_ADMIN, which the
 *                       kernel asks for the BTF fd (docs/security.md)
 *   netfilter           bpf(BPF_PROG_LOAD) of a program at a network hook
 *                       (SCHED_CLS: NETFILTER's rule on 6.12, and 6.1 has
 *                       no NETFILTER type)
 *   debugfs files       /sys/kernel/debug/kprobes/list, the kernel's list
 *                       of probes, in the same debugfs
 *   perf_event_mlock_kb a ring past the budget: pea's output event ring
 *                       against a perf ring of a per-task event
 *
 * Each case prints a "# caps OP|WHO|PARANOID|linux=E|pea=E" line, from
 * which docs/security.md is written.
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/hw_breakpoint.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "pea_test.h"
#include "pt_counter.h"
#include "pt_perm.h"
#include "pt_maps.h"
#include "pt_tp.h"
#include "pt_fprobe.h"

#define ROOT		(~0ULL)
#define CAP(c)		(1ULL << (c))
#define ENA		1000	/* Linux has no counterpart */

struct who {
	const char *name;
	__u64 caps;
};

static const struct who whos[] = {
	{ "root", ROOT },
	{ "perfmon", CAP(CAP_PERFMON) },
	{ "perfmon+bpf", CAP(CAP_PERFMON) | CAP(CAP_BPF) },
	{ "net_admin", CAP(CAP_NET_ADMIN) },
	{ "net_admin+bpf", CAP(CAP_NET_ADMIN) | CAP(CAP_BPF) },
	{ "sys_admin", CAP(CAP_SYS_ADMIN) },
	{ "none", 0 },
	{ "bpf", CAP(CAP_BPF) },	/* only for op_ctx()'s: who_ctx_only() */
};

#define NWHOS	(sizeof(whos) / sizeof(whos[0]))

static char self[256];
static __u64 up_off;
static __u32 tp_id;
static int ncpu;
static long bp_target;

__attribute__((noipa, used)) long pt_caps_fn(long a)
{
	__asm__ volatile("" ::: "memory");
	return a + 1;
}

static int errno_of(int fd)
{
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int dev_open(void)
{
	return open(PEA_DEVICE_PATH, O_RDWR | O_CLOEXEC);
}

/* A map of the caller's own, from its own open of /dev/pea; -1 if none. */
static int own_map_flags(__u32 flags)
{
	struct pea_map_attr a = {
		.key_size = 4, .value_size = 4, .max_entries = 4,
		.map_flags = flags, .open_flags = O_CLOEXEC,
	};
	int dev = dev_open(), fd;

	if (dev < 0)
		return -1;
	fd = ioctl(dev, PEA_IOC_MAP_CREATE, &a);
	close(dev);
	return fd;
}

static int perf_open(struct perf_event_attr *a, int pid, int cpu)
{
	return errno_of(syscall(SYS_perf_event_open, a, pid, cpu, -1,
				PERF_FLAG_FD_CLOEXEC));
}

/* ---- maps and output events ---- */

static int own_map(void)
{
	return own_map_flags(0);
}

static int pea_map(void)
{
	int fd = own_map();

	return fd < 0 ? errno : errno_of(fd);
}

static int pea_bpf_map(void)
{
	int fd = own_map_flags(PEA_F_BPF_WRITE);

	return fd < 0 ? errno : errno_of(fd);
}

static int linux_map(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_PERF_EVENT_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 4;
	return errno_of(syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a)));
}

/* bpf(BPF_PROG_LOAD) of "r0 = 0; exit" of @type, GPL: 0 or the errno. */
static int linux_prog_load(__u32 type)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (__u64)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (__u64)(uintptr_t)"GPL";
	return errno_of(syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a)));
}

static int pea_named_map(void)
{
	struct pea_map_attr a = {
		.key_size = 4, .value_size = 4, .max_entries = 4,
		.open_flags = O_CLOEXEC,
	};
	int dev = dev_open(), err;

	if (dev < 0)
		return errno;
	snprintf(a.name, sizeof(a.name), "pt_caps%d", getpid() % 100000);
	err = errno_of(ioctl(dev, PEA_IOC_MAP_CREATE, &a));
	close(dev);
	return err;
}

static int pea_output_event(void)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);
	struct pea_event_open o = {
		.attr = (uintptr_t)&attr, .cpu = 0,
		.flags = PEA_FLAG_FD_CLOEXEC,
	};
	int dev = dev_open(), err;

	if (dev < 0)
		return errno;
	err = errno_of(ioctl(dev, PEA_IOC_EVENT_OPEN, &o));
	close(dev);
	return err;
}

static int linux_output_event(void)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);

	return perf_open(&attr, -1, 0);
}

/* ---- counters: the same attr through pea and perf_event_open() ---- */

static struct perf_event_attr cnt_attr;

static int pea_counter(void)
{
	struct pea_event_open o = {
		.attr = (uintptr_t)&cnt_attr, .cpu = 1 % ncpu,
		.flags = PEA_FLAG_FD_CLOEXEC,
	};
	int dev = dev_open(), err;

	if (dev < 0)
		return errno;
	err = errno_of(ioctl(dev, PEA_IOC_EVENT_OPEN, &o));
	close(dev);
	return err;
}

static int linux_counter(void)
{
	return perf_open(&cnt_attr, -1, 1 % ncpu);
}

static void cnt_set(__u32 type, __u64 config, bool exclude_kernel)
{
	cnt_attr = pt_counter_attr(type, config);
	cnt_attr.exclude_kernel = exclude_kernel;
	if (type == PERF_TYPE_BREAKPOINT) {
		cnt_attr.bp_type = HW_BREAKPOINT_W;
		cnt_attr.bp_addr = (uintptr_t)&bp_target;
		cnt_attr.bp_len = HW_BREAKPOINT_LEN_8;
	}
}

static void cnt_sw_kernel(void)
{
	cnt_set(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false);
}

static void cnt_sw_user(void)
{
	cnt_set(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true);
}

static void cnt_hw(void)
{
	cnt_set(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true);
}

static void cnt_cache(void)
{
	cnt_set(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D |
		(PERF_COUNT_HW_CACHE_OP_READ << 8) |
		(PERF_COUNT_HW_CACHE_RESULT_MISS << 16), true);
}

static void cnt_raw(void)
{
	cnt_set(PERF_TYPE_RAW, 0x003c, true);
}

static void cnt_bp(void)
{
	cnt_set(PERF_TYPE_BREAKPOINT, 0, true);
}

static void cnt_msr(void)
{
	cnt_set(pt_pmu_type("msr"), 0, false);
}

/* ---- kprobes and kretprobes ---- */

#define KP_SYM	"ksys_mmap_pgoff"

/* A kprobe with @flags, capturing @kcap bytes of kernel memory (0: none). */
static int pea_kprobe_attach(__u32 flags, __u32 kcap)
{
	struct pea_probe_attr a;
	int map = own_map(), err;

	if (map < 0)
		return 200 + errno;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags | PEA_PROBE_F_CLOEXEC;
	strcpy(a.symbol, KP_SYM);
	if (kcap) {
		a.capture_mode = PEA_CAPTURE_FIXED;
		a.capture_len = kcap;
	}
	err = errno_of(ioctl(map, PEA_MAP_IOC_ATTACH_PROBE, &a));
	close(map);
	return err;
}

static int linux_kprobe_cfg(__u64 config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = pt_pmu_type("kprobe");
	a.config = config;	/* format "retprobe": config:0 */
	a.kprobe_func = (uintptr_t)KP_SYM;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_RAW;
	return perf_open(&a, -1, 0);
}

static int pea_kprobe(void)
{
	return pea_kprobe_attach(0, 0);
}

static int linux_kprobe(void)
{
	return linux_kprobe_cfg(0);
}

/* A kprobe capturing 8 bytes of kernel memory argument 0 points to. */
static int pea_kprobe_kcapture(void)
{
	return pea_kprobe_attach(0, 8);
}

/* A kprobe capturing 8 bytes of user memory argument 0 points to. */
static int pea_kprobe_ucapture(void)
{
	struct pea_probe_attr a;
	int map = own_map(), err;

	if (map < 0)
		return 200 + errno;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_PROBE_F_CLOEXEC;
	strcpy(a.symbol, KP_SYM);
	a.capture_mode = PEA_CAPTURE_FIXED;
	a.capture_len = 8;
	a.capture_flags = PEA_CAPTURE_USER;
	err = errno_of(ioctl(map, PEA_MAP_IOC_ATTACH_PROBE, &a));
	close(map);
	return err;
}

/* A kprobe with a fetch chain whose one read is user-marked. */
static int pea_kprobe_ufetch(void)
{
	struct pea_fetch f;
	struct pea_probe_attr a;
	int map = own_map(), err;

	if (map < 0)
		return 200 + errno;
	memset(&f, 0, sizeof(f));
	f.base = PEA_FETCH_BASE_ARG;
	f.type = PEA_FETCH_U64;
	f.flags = PEA_FETCH_F_LOAD;
	f.user = 1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_PROBE_F_CLOEXEC;
	strcpy(a.symbol, KP_SYM);
	a.fetches = (uintptr_t)&f;
	a.nr_fetches = 1;
	err = errno_of(ioctl(map, PEA_MAP_IOC_ATTACH_PROBE, &a));
	close(map);
	return err;
}

/*
 * The kprobe, then the program that reads memory there
 * (bpf_probe_read_kernel() or bpf_probe_read_user(): the same rule).
 */
static int linux_kprobe_kcapture(void)
{
	int err = linux_kprobe();

	return err ? err : linux_prog_load(BPF_PROG_TYPE_KPROBE);
}

static int pea_kretprobe(void)
{
	return pea_kprobe_attach(PEA_PROBE_F_RETPROBE, 0);
}

static int linux_kretprobe(void)
{
	return linux_kprobe_cfg(1);
}

/*
 * An fprobe link on KP_SYM (PEA_MAP_IOC_ATTACH_FPROBE): the kprobe's rule
 * for the same function, capturing @kcap bytes of kernel memory as the
 * kprobe case does (0: none).
 */
static int pea_fprobe_attach(__u32 kcap)
{
	static const char sym[1][PEA_SYM_LEN] = { KP_SYM };
	struct pea_fprobe_attr a;
	int map = own_map(), err;

	if (map < 0)
		return 200 + errno;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_FPROBE_F_CLOEXEC;
	a.syms = (uintptr_t)sym;
	a.nr_syms = 1;
	a.filter_cpu = -1;
	if (kcap) {
		a.capture_mode = PEA_CAPTURE_FIXED;
		a.capture_len = kcap;
	}
	err = errno_of(ioctl(map, PEA_MAP_IOC_ATTACH_FPROBE, &a));
	close(map);
	return err;
}

static int pea_fprobe(void)
{
	return pea_fprobe_attach(0);
}

static int pea_fprobe_kcapture(void)
{
	return pea_fprobe_attach(8);
}

/* ---- tracepoints ---- */

/* The tracepoint, with filter program @g (NULL: none). */
static int pea_tracepoint_prog(const struct pt_tp_prog *g)
{
	struct pea_tp_attr a;
	int map = own_map(), err;

	if (map < 0)
		return 200 + errno;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	a.event_id = tp_id;
	a.filter_cpu = -1;
	strcpy(a.name, "sched:sched_process_fork");
	if (g)
		pt_tp_prog_attr(&a, g);
	err = errno_of(ioctl(map, PEA_MAP_IOC_ATTACH_TP, &a));
	close(map);
	return err;
}

static int pea_tracepoint(void)
{
	return pea_tracepoint_prog(NULL);
}

static int linux_tracepoint(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = tp_id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_RAW;
	return perf_open(&a, -1, 0);
}

/*
 * The same tracepoint with a filter program of one context term, ctx.uid
 * == 0 or ctx.gid == 0 (PEA_TP_FIELD_CTX): the values
 * bpf_get_current_uid_gid() gives a tracepoint program.
 */
static int pea_tracepoint_ctx(int key)
{
	struct pea_tp_pred *t;
	struct pt_tp_prog g;

	pt_tp_prog_reset(&g);
	t = pt_tp_put_term(&g);
	t->kind = PEA_TP_FIELD_CTX;
	t->offset = key;
	t->op = PEA_TP_OP_EQ;
	t->value = 0;
	return pea_tracepoint_prog(&g);
}

static int pea_tracepoint_uid(void)
{
	return pea_tracepoint_ctx(PEA_FETCH_CTX_UID);
}

static int pea_tracepoint_gid(void)
{
	return pea_tracepoint_ctx(PEA_FETCH_CTX_GID);
}

/*
 * The tracepoint, then the program that reads the uid and gid there
 * (bpf_get_current_uid_gid() in a BPF_PROG_TYPE_TRACEPOINT program).
 */
static int linux_tracepoint_prog(void)
{
	int err = linux_tracepoint();

	return err ? err : linux_prog_load(BPF_PROG_TYPE_TRACEPOINT);
}

/*
 * Tracepoint fetch chains: event @id (SYS:NAME @name) with one fetch
 * from its field at @off of @size bytes: @read 0 takes it as it is, 1
 * follows it as a user string, 2 follows it into kernel memory.
 */
static __u32 openat_id, hrt_id, fork_pid_off, filename_off, hrtimer_off;

static int pea_tp_fetch(__u32 id, const char *name, __u32 off, __u32 size,
			int read)
{
	struct pea_tp_attr a;
	struct pea_fetch f;
	int map = own_map(), err;

	if (map < 0)
		return 200 + errno;
	memset(&f, 0, sizeof(f));
	f.base = PEA_FETCH_BASE_FIELD;
	f.field_offset = off;
	f.field_size = size;
	f.type = read == 1 ? PEA_FETCH_STR : PEA_FETCH_U64;
	f.size = read == 1 ? 64 : 0;
	f.flags = read == 2 ? PEA_FETCH_F_LOAD : 0;
	f.user = read == 1;
	if (read == 2)
		f.offset[0] = 40;	/* struct hrtimer's function */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	a.event_id = id;
	a.filter_cpu = -1;
	strcpy(a.name, name);
	a.fetches = (uintptr_t)&f;
	a.nr_fetches = 1;
	err = errno_of(ioctl(map, PEA_MAP_IOC_ATTACH_TP, &a));
	close(map);
	return err;
}

static int pea_tp_field_fetch(void)
{
	return pea_tp_fetch(tp_id, "sched:sched_process_fork", fork_pid_off,
			    4, 0);
}

static int pea_tp_user_fetch(void)
{
	return pea_tp_fetch(openat_id, "syscalls:sys_enter_openat",
			    filename_off, 8, 1);
}

static int pea_tp_kernel_fetch(void)
{
	return pea_tp_fetch(hrt_id, "timer:hrtimer_start", hrtimer_off, 8, 2);
}

/* ---- sampling: the same event through pea and perf_event_open() ---- */

static __u32 smp_type;
static __u64 smp_config;
static bool smp_user;
/* User registers and 8 KiB of user stack (PERF_SAMPLE_REGS_USER, _STACK_USER). */
static bool smp_uregs;

static void smp_clock(void)
{
	smp_type = PERF_TYPE_SOFTWARE;
	smp_config = PERF_COUNT_SW_CPU_CLOCK;
	smp_user = false;
	smp_uregs = false;
}

static void smp_clock_u(void)
{
	smp_clock();
	smp_user = true;
}

static void smp_cycles(void)
{
	smp_type = PERF_TYPE_HARDWARE;
	smp_config = PERF_COUNT_HW_CPU_CYCLES;
	smp_user = false;
}

static pid_t smp_task = -1;	/* the task of PEA_SAMPLE_F_TASK, or -1 */

static void smp_task_own(void)
{
	smp_clock();
	smp_task = 0;
}

static void smp_task_own_u(void)
{
	smp_clock_u();
	smp_task = 0;
}

static void smp_task_init_u(void)
{
	smp_clock_u();
	smp_task = 1;
}

/*
 * A hardware event (ENOENT without a PMU) on init's task: the PMU's
 * answer before the task's rule, as perf_event_open() (the review of
 * prof2, F2).
 */
static void smp_task_init_cycles_u(void)
{
	smp_cycles();
	smp_user = true;
	smp_task = 1;
}

/*
 * Another process of the caller's (a child that execs sleep, so that it
 * is dumpable): Linux's rule is ptrace read access, pea's CAP_PERFMON
 * unless pea.task_ptrace=1 (no LSM hook: docs/security.md).
 */
static void smp_task_sibling_u(void)
{
	pid_t pid;

	smp_clock_u();
	pid = fork();
	if (pid == 0) {
		execl("/bin/sleep", "sleep", "3", (char *)NULL);
		_exit(127);
	}
	smp_task = pid;
	usleep(100000);	/* past its exec */
}

/* The user registers and stack of every sample: nothing more, as perf. */
static void smp_clock_u_regs(void)
{
	smp_clock_u();
	smp_task = -1;
	smp_uregs = true;
}

static void smp_task_own_u_regs(void)
{
	smp_task_own_u();
	smp_uregs = true;
}

static int pea_sample(void)
{
	struct pea_sample_attr a;
	int map = own_map(), err;

	if (map < 0)
		return 200 + errno;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_SAMPLE_F_CLOEXEC | PEA_SAMPLE_F_FREQ |
		  (smp_user ? PEA_SAMPLE_F_NO_KERNEL : 0) |
		  (smp_task >= 0 ? PEA_SAMPLE_F_TASK : 0);
	a.type = smp_type;
	a.config = smp_config;
	a.sample = 99;
	a.filter_tgid = smp_task >= 0 ? smp_task : 0;
	a.filter_cpu = -1;
	a.kstack_depth = smp_user ? 0 : 16;
	a.ustack_depth = 16;
	if (smp_uregs) {
		a.flags |= PEA_SAMPLE_F_USER_REGS;
		a.stack_user = 8192;
	}
	err = errno_of(ioctl(map, PEA_MAP_IOC_ATTACH_SAMPLE, &a));
	close(map);
	return err;
}

static int linux_sample(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = smp_type;
	a.config = smp_config;
	a.freq = 1;
	a.sample_freq = 99;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			PERF_SAMPLE_CALLCHAIN;
	a.exclude_kernel = smp_user;
	a.exclude_callchain_kernel = smp_user;
	if (smp_uregs) {
		a.sample_type |= PERF_SAMPLE_REGS_USER |
				 PERF_SAMPLE_STACK_USER;
		a.sample_regs_user = 0xff01ffULL;	/* ax..ip, r8..r15 */
		a.sample_stack_user = 8192;
	}
	if (smp_task >= 0) {
		a.inherit = 1;
		return perf_open(&a, smp_task, -1);
	}
	return perf_open(&a, -1, 0);
}

/* ---- uprobes and uretprobes ---- */

static int pea_uprobe_flags(__u32 flags)
{
	struct pea_uprobe_attr a;
	int map = own_map(), err;

	if (map < 0)
		return 200 + errno;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags | PEA_UPROBE_F_CLOEXEC;
	a.path = (uintptr_t)self;
	a.path_fd = -1;
	a.offset = up_off;
	err = errno_of(ioctl(map, PEA_MAP_IOC_ATTACH_UPROBE, &a));
	close(map);
	return err;
}

static int pea_uprobe(void)
{
	return pea_uprobe_flags(0);
}

static int linux_uprobe(void)
{
	struct perf_event_attr a = pt_uprobe_pmu_attr(pt_pmu_type("uprobe"),
						      self, up_off, false);

	return perf_open(&a, -1, 0);
}

static int pea_uretprobe(void)
{
	return pea_uprobe_flags(PEA_UPROBE_F_RETPROBE);
}

static int linux_uretprobe(void)
{
	struct perf_event_attr a = pt_uprobe_pmu_attr(pt_pmu_type("uprobe"),
						      self, up_off, true);

	return perf_open(&a, -1, 0);
}

/* ---- netfilter ---- */

static int pea_netfilter(void)
{
	struct pea_nf_attr a;
	int map = own_map(), err;

	if (map < 0)
		return 200 + errno;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_NF_F_CLOEXEC;
	a.family = PEA_NF_IPV4;
	a.hook = PEA_NF_LOCAL_IN;
	a.packet_len = 64;
	err = errno_of(ioctl(map, PEA_MAP_IOC_ATTACH_NF, &a));
	close(map);
	return err;
}

/* A BPF program at a network hook: CAP_BPF and CAP_NET_ADMIN. */
static int linux_netfilter(void)
{
	return linux_prog_load(BPF_PROG_TYPE_SCHED_CLS);
}

/* ---- a BPF program calling pea's kfunc ---- */

static __u32 kf_btf_id;		/* pea's BTF object; 0 if none */
static __s32 kf_func_id;	/* pea_kf_output in it */

/* As root, before the matrix: pea's BTF object and its kfunc's type. */
static void kf_find(void)
{
	struct bpf_btf_info info;
	struct btf *vml, *mod;
	char name[64];
	__u32 id = 0, len;
	int fd;

	vml = btf__load_vmlinux_btf();
	mod = vml ? btf__load_module_btf("pea", vml) : NULL;
	if (mod)
		kf_func_id = btf__find_by_name_kind(mod, "pea_kf_output",
						    BTF_KIND_FUNC);
	btf__free(mod);
	btf__free(vml);
	while (!bpf_btf_get_next_id(id, &id)) {
		fd = bpf_btf_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		info.name = (uintptr_t)name;
		info.name_len = sizeof(name);
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.kernel_btf && !strcmp(name, "pea"))
			kf_btf_id = id;
		close(fd);
	}
	pt_diag("pea's BTF object %u, pea_kf_output type %d", kf_btf_id,
		kf_func_id);
}

/*
 * What libbpf does for a program calling the kfunc: the module's BTF fd
 * (BPF_BTF_GET_FD_BY_ID), then bpf(BPF_PROG_LOAD) with it in fd_array:
 * "*(u64 *)(r10 - 8) = 0; pea_kf_output(0, 0, r10 - 8, 8); r0 = 0; exit",
 * sleepable as every SYSCALL program.
 */
static int pea_kfunc_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10,
		  .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_3,
		  .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_3,
		  .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4,
		  .imm = 8 },
		{ .code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL,
		  .off = 1, .imm = kf_func_id },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	int fds[2] = { -1, -1 }, err;

	memset(&a, 0, sizeof(a));
	a.btf_id = kf_btf_id;
	fds[1] = syscall(SYS_bpf, BPF_BTF_GET_FD_BY_ID, &a, sizeof(a));
	if (fds[1] < 0)
		return errno;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SYSCALL;
	a.insns = (__u64)(uintptr_t)insns;
	a.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	a.license = (__u64)(uintptr_t)"GPL";
	a.prog_flags = BPF_F_SLEEPABLE;	/* SYSCALL programs must be */
	a.fd_array = (__u64)(uintptr_t)fds;
	err = errno_of(syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a)));
	close(fds[1]);
	return err;
}

/* Linux's: a kprobe program (CAP_BPF and CAP_PERFMON). */
static int linux_kfunc_prog(void)
{
	return linux_prog_load(BPF_PROG_TYPE_KPROBE);
}

/* ---- debugfs ---- */

static const char *dbg_file;

static int pea_debugfs(void)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/debug/pea/%s", dbg_file);
	return errno_of(open(path, O_RDONLY | O_CLOEXEC));
}

static int linux_debugfs(void)
{
	return errno_of(open("/sys/kernel/debug/kprobes/list",
			     O_RDONLY | O_CLOEXEC));
}

static void dbg_maps(void) { dbg_file = "maps"; }
static void dbg_links(void) { dbg_file = "links"; }
static void dbg_objects(void) { dbg_file = "objects"; }
static void dbg_mlock(void) { dbg_file = "mlock"; }
static void dbg_kfunc(void) { dbg_file = "kfunc"; }

/* ---- perf_event_mlock_kb: a ring of 1 + 16 pages past the budget ---- */

#define MLOCK_PAGES	17

static int ring_errno(int fd)
{
	void *p;

	p = mmap(NULL, MLOCK_PAGES * pt_page_size(), PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return errno;
	munmap(p, MLOCK_PAGES * pt_page_size());
	return 0;
}

static int no_memlock(void)
{
	struct rlimit r = { 0, 0 };

	return setrlimit(RLIMIT_MEMLOCK, &r);
}

static int pea_mlock(void)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);
	struct pea_event_open o = {
		.attr = (uintptr_t)&attr, .cpu = 0,
		.flags = PEA_FLAG_FD_CLOEXEC,
	};
	int dev = dev_open(), fd;

	if (dev < 0 || no_memlock())
		return 200 + errno;
	fd = ioctl(dev, PEA_IOC_EVENT_OPEN, &o);
	close(dev);
	return fd < 0 ? 200 + errno : ring_errno(fd);
}

/* A per-task event (this process, any CPU), so that paranoid 2 opens it. */
static int linux_mlock(void)
{
	struct perf_event_attr a;
	int fd;

	if (no_memlock())
		return 200 + errno;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? errno : ring_errno(fd);
}

/* ---- the matrix ---- */

/*
 * What pea answers where it differs from Linux on purpose (docs/security.md),
 * from the caller and Linux's answer @lin; an op without a rule must
 * answer as Linux.
 */
static int rule_open_dev(const struct who *w, int paranoid, int lin)
{
	(void)w, (void)paranoid, (void)lin;
	return 0;	/* whoever may open /dev/pea */
}

static int rule_named(const struct who *w, int paranoid, int lin)
{
	(void)paranoid, (void)lin;
	return w->caps & (CAP(CAP_PERFMON) | CAP(CAP_SYS_ADMIN)) ? 0 : EPERM;
}

/* Linux's answer is perf_event_open()'s when it refuses the event. */
static int rule_mlock(const struct who *w, int paranoid, int lin)
{
	(void)paranoid;
	if (lin == EACCES)
		return w->caps == ROOT ? 0 : EPERM;
	return lin;
}

/*
 * A kernel without the bpf() syscall (pea's debug kernel, from
 * x86_64_defconfig) answers ENOSYS for the BPF program that is Linux's
 * same thing: there pea's rule is the one bpf(BPF_PROG_LOAD) applies on
 * the kernels that have it, from the capabilities (docs/security.md).
 */
static bool has(const struct who *w, int cap)
{
	return w->caps & (CAP(cap) | CAP(CAP_SYS_ADMIN));
}

static int rule_bpf_kread(const struct who *w, int paranoid, int lin)
{
	(void)paranoid;
	if (lin != ENOSYS)
		return lin;
	return has(w, CAP_BPF) && has(w, CAP_PERFMON) ? 0 : EPERM;
}

/* Whether the kernel has fprobes (register_fprobe_ips in kallsyms). */
static bool fprobe_kernel;

/*
 * An fprobe link: the kprobe's rule (Linux's kprobe PMU on the same
 * function); EOPNOTSUPP for everyone where the kernel has no fprobe.
 */
static int rule_fprobe(const struct who *w, int paranoid, int lin)
{
	(void)w;
	(void)paranoid;
	return fprobe_kernel ? lin : EOPNOTSUPP;
}

static int rule_fprobe_kread(const struct who *w, int paranoid, int lin)
{
	return fprobe_kernel ? rule_bpf_kread(w, paranoid, lin) : EOPNOTSUPP;
}

/*
 * A program calling pea's kfunc: the type's rule (Linux's answer), and
 * CAP_SYS_ADMIN for pea's module BTF fd (BPF_BTF_GET_FD_BY_ID).
 */
static int rule_bpf_kfunc(const struct who *w, int paranoid, int lin)
{
	(void)paranoid;
	if (!lin && !(w->caps & CAP(CAP_SYS_ADMIN)))
		return EPERM;
	return lin;
}

static int rule_task_other(const struct who *w, int paranoid, int lin)
{
	(void)paranoid;
	return lin == 0 && !has(w, CAP_PERFMON) ? EACCES : lin;
}

static int rule_bpf_netfilter(const struct who *w, int paranoid, int lin)
{
	(void)paranoid;
	if (lin != ENOSYS)
		return lin;
	return has(w, CAP_BPF) && has(w, CAP_NET_ADMIN) ? 0 : EPERM;
}

struct op {
	const char *name;
	void (*setup)(void);
	int (*pea)(void);
	int (*lx)(void);
	int (*rule)(const struct who *w, int paranoid, int lin);
};

static const struct op ops[] = {
	{ "map", NULL, pea_map, linux_map, rule_open_dev },
	{ "named map", NULL, pea_named_map, NULL, rule_named },
	{ "map for BPF writers", NULL, pea_bpf_map, linux_map, rule_open_dev },
	{ "output event", NULL, pea_output_event, linux_output_event,
	  rule_open_dev },
	{ "counter software", cnt_sw_kernel, pea_counter, linux_counter, NULL },
	{ "counter software:u", cnt_sw_user, pea_counter, linux_counter, NULL },
	{ "counter hardware:u", cnt_hw, pea_counter, linux_counter, NULL },
	{ "counter hw-cache:u", cnt_cache, pea_counter, linux_counter, NULL },
	{ "counter raw:u", cnt_raw, pea_counter, linux_counter, NULL },
	{ "counter breakpoint:u", cnt_bp, pea_counter, linux_counter, NULL },
	{ "counter msr/tsc", cnt_msr, pea_counter, linux_counter, NULL },
	{ "kprobe", NULL, pea_kprobe, linux_kprobe, NULL },
	{ "kretprobe", NULL, pea_kretprobe, linux_kretprobe, NULL },
	{ "kprobe kernel capture", NULL, pea_kprobe_kcapture,
	  linux_kprobe_kcapture, rule_bpf_kread },
	{ "kprobe user capture", NULL, pea_kprobe_ucapture,
	  linux_kprobe_kcapture, rule_bpf_kread },
	{ "kprobe user fetch", NULL, pea_kprobe_ufetch,
	  linux_kprobe_kcapture, rule_bpf_kread },
	{ "fprobe", NULL, pea_fprobe, linux_kprobe, rule_fprobe },
	{ "fprobe kernel capture", NULL, pea_fprobe_kcapture,
	  linux_kprobe_kcapture, rule_fprobe_kread },
	{ "tracepoint", NULL, pea_tracepoint, linux_tracepoint, NULL },
	{ "tracepoint uid term", NULL, pea_tracepoint_uid,
	  linux_tracepoint_prog, rule_bpf_kread },
	{ "tracepoint gid term", NULL, pea_tracepoint_gid,
	  linux_tracepoint_prog, rule_bpf_kread },
	{ "tracepoint field fetch", NULL, pea_tp_field_fetch, linux_tracepoint,
	  NULL },
	{ "tracepoint user fetch", NULL, pea_tp_user_fetch,
	  linux_tracepoint_prog, rule_bpf_kread },
	{ "tracepoint kernel fetch", NULL, pea_tp_kernel_fetch,
	  linux_tracepoint_prog, rule_bpf_kread },
	{ "uprobe", NULL, pea_uprobe, linux_uprobe, NULL },
	{ "uretprobe", NULL, pea_uretprobe, linux_uretprobe, NULL },
	{ "sample cpu-clock", smp_clock, pea_sample, linux_sample, NULL },
	{ "sample cpu-clock:u", smp_clock_u, pea_sample, linux_sample, NULL },
	{ "sample cycles", smp_cycles, pea_sample, linux_sample, NULL },
	{ "sample own task cpu-clock", smp_task_own, pea_sample, linux_sample,
	  NULL },
	{ "sample own task cpu-clock:u", smp_task_own_u, pea_sample,
	  linux_sample, NULL },
	{ "sample init's task cpu-clock:u", smp_task_init_u, pea_sample,
	  linux_sample, NULL },
	{ "sample init's task cycles:u", smp_task_init_cycles_u, pea_sample,
	  linux_sample, NULL },
	{ "sample another own process's task cpu-clock:u", smp_task_sibling_u,
	  pea_sample, linux_sample, rule_task_other },
	{ "sample cpu-clock:u with user registers and stack",
	  smp_clock_u_regs, pea_sample, linux_sample, NULL },
	{ "sample own task cpu-clock:u with user registers and stack",
	  smp_task_own_u_regs, pea_sample, linux_sample, NULL },
	{ "BPF program calling pea_kf_output", NULL, pea_kfunc_prog,
	  linux_kfunc_prog, rule_bpf_kfunc },
	{ "netfilter", NULL, pea_netfilter, linux_netfilter,
	  rule_bpf_netfilter },
	{ "debugfs maps", dbg_maps, pea_debugfs, linux_debugfs, NULL },
	{ "debugfs links", dbg_links, pea_debugfs, linux_debugfs, NULL },
	{ "debugfs objects", dbg_objects, pea_debugfs, linux_debugfs, NULL },
	{ "debugfs mlock", dbg_mlock, pea_debugfs, linux_debugfs, NULL },
	{ "debugfs kfunc", dbg_kfunc, pea_debugfs, linux_debugfs, NULL },
	{ "ring past perf_event_mlock_kb", NULL, pea_mlock, linux_mlock,
	  rule_mlock },
};

/*
 * The users' cases of one operation run side by side, but for those whose
 * resource is bounded per user or per CPU (the mlock budget, the debug
 * registers): one user at a time.
 */
static bool op_alone(const struct op *op)
{
	return op->pea == pea_mlock || op->setup == cnt_bp;
}

/*
 * CAP_BPF alone tells apart the two capabilities the uid and gid terms
 * need; the other operations are not asked of it.
 */
static bool op_ctx(const struct op *op)
{
	return op->pea == pea_tracepoint_uid || op->pea == pea_tracepoint_gid;
}

static bool who_skip(const struct who *w, const struct op *op)
{
	return w->caps == CAP(CAP_BPF) && !op_ctx(op);
}

/* A case's child: its pid (-1: none) and the read end of its pipe. */
struct case_run {
	pid_t pid;
	int rfd;
};

/*
 * Starts one case in a child that becomes @w: Linux's answer first, then
 * pea's. Closing what a case opened waits for RCU grace periods (tens of
 * milliseconds on PREEMPT_RT): the cases of several users run at once.
 */
static struct case_run case_start(const struct op *op, const struct who *w)
{
	struct case_run c = { -1, -1 };
	int p[2], err;

	if (pipe(p))
		return c;
	fflush(stdout);
	c.pid = fork();
	if (c.pid == 0) {
		close(p[0]);
		if (w->caps != ROOT && pt_drop_to_nobody_caps(w->caps))
			_exit(200 + errno);
		if (op->setup)
			op->setup();
		err = op->lx ? op->lx() : ENA;
		if (write(p[1], &err, sizeof(err)) != sizeof(err))
			_exit(200 + EIO);
		_exit(op->pea());
	}
	close(p[1]);
	c.rfd = p[0];
	if (c.pid < 0) {
		close(p[0]);
		c.rfd = -1;
	}
	return c;
}

/*
 * Waits for a case: returns pea's errno (200 + errno: set-up failed),
 * Linux's in @lin.
 */
static int case_end(struct case_run *c, int *lin)
{
	int status;

	*lin = ENA;
	if (c->pid < 0)
		return 200 + EIO;
	if (read(c->rfd, lin, sizeof(*lin)) != sizeof(*lin))
		*lin = -1;
	close(c->rfd);
	waitpid(c->pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

static const char *ename(int e)
{
	static char buf[8][24];
	static int i;
	char *b = buf[i++ % 8];

	if (e == 0)
		return "0";
	if (e == ENA)
		return "-";
	snprintf(b, sizeof(buf[0]), "%s", strerrorname_np(e) ?
		 strerrorname_np(e) : "?");
	return b;
}

/* Each operation's time over the whole matrix, for the suite's time. */
static double op_secs[sizeof(ops) / sizeof(ops[0])];

static double now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run_matrix(int paranoid)
{
	const struct op *op;
	const struct who *w;
	int pea, lin, want;
	double t;

	PT_EQ(pt_perm_write_int(PT_PARANOID, paranoid), 0,
	      "perf_event_paranoid %d", paranoid);
	for (op = ops; op < ops + sizeof(ops) / sizeof(ops[0]); op++) {
		struct case_run cr[NWHOS];

		t = now_secs();
		for (w = whos; w < whos + NWHOS && !op_alone(op); w++)
			if (!who_skip(w, op))
				cr[w - whos] = case_start(op, w);
		for (w = whos; w < whos + NWHOS; w++) {
			if (who_skip(w, op))
				continue;
			if (op_alone(op))
				cr[w - whos] = case_start(op, w);
			pea = case_end(&cr[w - whos], &lin);
			want = op->rule ? op->rule(w, paranoid, lin) : lin;
			pt_diag("caps %s|%s|%d|linux=%s|pea=%s", op->name,
				w->name, paranoid, ename(lin), ename(pea));
			if (op->rule && want != lin)
				PT_EQ(pea, want, "%s, %s, paranoid %d: pea's documented rule (Linux: %s)",
				      op->name, w->name, paranoid, ename(lin));
			else
				PT_EQ(pea, want, "%s, %s, paranoid %d: as Linux (%s)",
				      op->name, w->name, paranoid, ename(lin));
		}
		op_secs[op - ops] += now_secs() - t;
	}
}

/* pea's use count (/sys/module/pea/refcnt), or -1. */
static int pea_refcnt(void)
{
	char buf[32];

	if (pt_read_file("/sys/module/pea/refcnt", buf, sizeof(buf)) < 0)
		return -1;
	return atoi(buf);
}

/* The id of tracefs event SYS/NAME, 0 if none. */
static __u32 tp_event_id(const char *sysname)
{
	char path[160], buf[32];

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id",
		 sysname);
	return pt_read_file(path, buf, sizeof(buf)) ? 0 : atoi(buf);
}

/* The offset of field @field of SYS/NAME's format, 0 if none. */
static __u32 tp_field_off(const char *sysname, const char *field)
{
	static char buf[16384];
	char path[160], pat[64], *p;
	unsigned int off;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/format",
		 sysname);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	snprintf(pat, sizeof(pat), " %s;", field);
	p = strstr(buf, pat);
	if (!p || sscanf(p + strlen(pat), "\toffset:%u;", &off) != 1)
		return 0;
	return off;
}

int main(void)
{
	long paranoid = pt_perm_read_int(PT_PARANOID);
	long mlock_kb = pt_perm_read_int(PT_MLOCK_KB);
	char buf[32];
	struct stat st;
	int r0, r1 = -2, i;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	up_off = pt_file_off(pt_caps_fn);
	ncpu = pt_nr_cpus();
	PT_EQ(pt_read_file("/sys/kernel/tracing/events/sched/sched_process_fork/id",
			   buf, sizeof(buf)), 0, "the tracepoint's id");
	tp_id = atoi(buf);
	openat_id = tp_event_id("syscalls/sys_enter_openat");
	hrt_id = tp_event_id("timer/hrtimer_start");
	fork_pid_off = tp_field_off("sched/sched_process_fork", "parent_pid");
	filename_off = tp_field_off("syscalls/sys_enter_openat", "filename");
	hrtimer_off = tp_field_off("timer/hrtimer_start", "hrtimer");
	PT_OK(openat_id && hrt_id && fork_pid_off && filename_off &&
	      hrtimer_off,
	      "the fetch rows' events and fields: ids %u %u, offsets %u %u %u",
	      openat_id, hrt_id, fork_pid_off, filename_off, hrtimer_off);
	PT_OK(pt_pmu_type("kprobe") > 0 && pt_pmu_type("uprobe") > 0,
	      "the kprobe and uprobe PMUs: types %d and %d",
	      pt_pmu_type("kprobe"), pt_pmu_type("uprobe"));
	if (stat(PEA_DEVICE_PATH, &st))
		pt_fatal("stat " PEA_DEVICE_PATH);
	PT_EQ(chmod(PEA_DEVICE_PATH, 0666), 0, "/dev/pea opened to others");
	/* The budget: one page per CPU; nobody's RLIMIT_MEMLOCK is 0. */
	PT_EQ(pt_perm_write_int(PT_MLOCK_KB, pt_page_size() / 1024), 0,
	      "perf_event_mlock_kb one page");
	r0 = pea_refcnt();
	kf_find();
	fprobe_kernel = pt_kernel_has_fprobe();
	pt_diag("fprobe links: %s", fprobe_kernel ? "the kernel has fprobes" :
		"no fprobe in this kernel: EOPNOTSUPP");
	pt_diag("caps op|who|paranoid|linux|pea");
	for (int p = -1; p <= 3; p++)
		run_matrix(p);
	for (i = 0; i < (int)(sizeof(ops) / sizeof(ops[0])); i++)
		if (op_secs[i] >= 0.5)
			pt_diag("%s: %.1f s", ops[i].name, op_secs[i]);
	PT_EQ(pt_perm_write_int(PT_PARANOID, paranoid), 0,
	      "perf_event_paranoid restored");
	PT_EQ(pt_perm_write_int(PT_MLOCK_KB, mlock_kb), 0,
	      "perf_event_mlock_kb restored");
	PT_EQ(chmod(PEA_DEVICE_PATH, st.st_mode & 07777), 0,
	      "device mode restored");
	/*
	 * A program calling the kfunc holds pea until the kernel frees it,
	 * after a grace period (longer on PREEMPT_RT): wait, so that the
	 * next test starts from the references it expects (test_map).
	 */
	for (i = 0; i < 100 * pt_time_scale() && r1 != r0; i++) {
		r1 = pea_refcnt();
		if (r1 != r0)
			usleep(50000);
	}
	PT_EQ(r1, r0, "the programs' references on pea are gone");
	return pt_done();
}
