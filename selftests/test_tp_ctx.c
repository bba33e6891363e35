// SPDX-License-Identifier: GPL-2.0
/*
 * Context terms in tracepoint filter programs (PEA_TP_FIELD_CTX): the
 * comm (==, !=, ~), tid, pid, uid, gid, cgroup v2 id and CPU of the task
 * that hit the tracepoint, alone and mixed with field terms by ||, && and
 * !. The workload is getpgid(PID0 + i) on syscalls:sys_enter_getpgid,
 * which nothing else in the guest calls, from known tasks: this process
 * under two comms, a thread of it, a child with its own uid, gid, comm
 * and cgroup v2 directory, this process on two CPUs, and a child in a pid
 * namespace of its own that attaches there; and the tick's tracepoint in
 * hard interrupt context on this process spinning, and nmi:nmi_handler in
 * NMI context (the test module's self-NMI) on this process and on a child
 * with its own comm, uid, gid and cgroup. Each case asserts the link's
 * exact written and filtered counts and exactly the records expected;
 * then malformed terms (EINVAL), bounds (E2BIG) and who may attach a
 * uid or gid term (CAP_BPF and CAP_PERFMON, else EPERM).
 */
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include "pea_test.h"
#include "pt_tp.h"
#include "pt_perm.h"

#define NCPU_MAX	64
#define TRACEFS		"/sys/kernel/tracing/events/"
#define PID0		0x40000000L	/* no task has it: ESRCH */
#define NCALLS		8
#define CTX_UID		1234
#define CTX_GID		4321
#define CTX_CG		"/tmp/pea-tpctx-cg2"
#define CTX_CG_DIR	CTX_CG "/pea-tpctx"
#define MY_COMM		"test_tp_ctx"

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];
static int gp_id;
static unsigned int f_off;	/* the event's "pid" field: 8 bytes */
static __u64 cg_id;
static pid_t thr_tid, kid_pid;

/* The offset of sys_enter_getpgid's "pid" (pid_t, 8 bytes): 0 or -1. */
static int get_field(void)
{
	static char buf[8192];
	unsigned int size;
	char *p;

	if (pt_read_file(TRACEFS "syscalls/sys_enter_getpgid/format", buf,
			 sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "pid_t pid;");
	if (!p || sscanf(p, "pid_t pid;\toffset:%u;\tsize:%u;", &f_off,
			 &size) != 2 || size != 8)
		return -1;
	return 0;
}

static struct pea_tp_attr tp_attr(void)
{
	struct pea_tp_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	a.event_id = gp_id;
	a.filter_cpu = -1;
	strcpy(a.name, "syscalls:sys_enter_getpgid");
	return a;
}

/* ctx.KEY OP @v */
static void ctx_int(struct pt_tp_prog *g, int key, int op, __u64 v)
{
	struct pea_tp_pred *t = pt_tp_put_term(g);

	t->kind = PEA_TP_FIELD_CTX;
	t->offset = key;
	t->op = op;
	t->value = v;
}

/* ctx.comm OP "@s" */
static void ctx_comm(struct pt_tp_prog *g, int op, const char *s)
{
	struct pea_tp_pred *t = pt_tp_put_term(g);

	t->kind = PEA_TP_FIELD_CTX;
	t->offset = PEA_FETCH_CTX_COMM;
	t->op = op;
	strcpy(t->str, s);
}

/* The event's field: pid OP PID0 + @i */
static void field_cmp(struct pt_tp_prog *g, int op, int i)
{
	struct pea_tp_pred *t = pt_tp_put_term(g);

	t->offset = f_off;
	t->size = 8;
	t->kind = PEA_TP_FIELD_UINT;
	t->op = op;
	t->value = PID0 + i;
}

static int attach_prog(const struct pt_tp_prog *g)
{
	struct pea_tp_attr a = tp_attr();
	int fd;

	pt_tp_prog_attr(&a, g);
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &a);
	return fd < 0 ? -errno : fd;
}

static int attach_errno(const struct pt_tp_prog *g)
{
	int fd = attach_prog(g);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? -fd : 0;
}

static void call(int i)
{
	syscall(SYS_getpgid, PID0 + i);
}

/* ---- workloads: calls 0..3 from one task or state, 4..7 another ---- */

/* This process as "pea-tpc-a", then as "pea-tpc-bb". */
static void wl_comm(void)
{
	int i;

	for (i = 0; i < NCALLS; i++) {
		prctl(PR_SET_NAME, i < 4 ? "pea-tpc-a" : "pea-tpc-bb");
		call(i);
	}
	prctl(PR_SET_NAME, MY_COMM);
}

static void *thr_fn(void *arg)
{
	int i;

	(void)arg;
	thr_tid = syscall(SYS_gettid);
	for (i = 4; i < NCALLS; i++)
		call(i);
	return NULL;
}

/* The main thread, then a second thread of this process. */
static void wl_thread(void)
{
	pthread_t t;
	int i;

	for (i = 0; i < 4; i++)
		call(i);
	if (pthread_create(&t, NULL, thr_fn, NULL))
		pt_fatal("pthread_create");
	pthread_join(t, NULL);
}

/*
 * The child: in cgroup CTX_CG_DIR, comm "pea-tpc-kid", gid CTX_GID, uid
 * CTX_UID; calls 4..7.
 */
static int kid(void)
{
	char pid[16];
	int fd, i;

	snprintf(pid, sizeof(pid), "%d", getpid());
	fd = open(CTX_CG_DIR "/cgroup.procs", O_WRONLY);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		return 101;
	close(fd);
	prctl(PR_SET_NAME, "pea-tpc-kid");
	if (setresgid(CTX_GID, CTX_GID, CTX_GID) ||
	    setresuid(CTX_UID, CTX_UID, CTX_UID))
		return 102;
	for (i = 4; i < NCALLS; i++)
		call(i);
	return 0;
}

static void wl_child(void)
{
	int i, st;

	for (i = 0; i < 4; i++)
		call(i);
	fflush(stdout);
	kid_pid = fork();
	if (!kid_pid)
		_exit(kid());
	if (kid_pid < 0 || waitpid(kid_pid, &st, 0) != kid_pid ||
	    !WIFEXITED(st) || WEXITSTATUS(st))
		pt_fatal("the child's calls");
}

/* This process on CPU 0, then on CPU 1 (or 0 again with one CPU). */
static void wl_cpu(void)
{
	cpu_set_t all;
	int i;

	if (sched_getaffinity(0, sizeof(all), &all))
		pt_fatal("sched_getaffinity");
	for (i = 0; i < NCALLS; i++) {
		pt_pin(i < 4 ? 0 : 1 % ncpu);
		call(i);
	}
	sched_setaffinity(0, sizeof(all), &all);
}

struct run {
	__u64 written, filtered;
	unsigned int seen;	/* bit i: a record of call i */
	int records, strays;
};

/* The link's counts, then the link closed. */
static struct pea_link_info link_done(int link)
{
	struct pea_link_info li;

	memset(&li, 0, sizeof(li));
	if (ioctl(link, PEA_LINK_IOC_INFO, &li))
		pt_fatal("PEA_LINK_IOC_INFO");
	close(link);
	return li;
}

/*
 * The next record of event @id in the rings, from CPU *@c on (*@c is the
 * record's CPU), or NULL when they are drained.
 */
static const struct pea_tp_record *next_ev(int id, int *c)
{
	struct perf_event_header *h = (void *)rec;
	const struct pea_tp_record *tr;

	for (; *c < ncpu; ++*c)
		while (pt_ring_next(&rings[*c], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			tr = (const void *)(rec + 12);
			if (tr->event_id == (__u64)id)
				return tr;
		}
	return NULL;
}

/* Attach @g, run @wl, and count what the link says and records hold. */
static int run(const struct pt_tp_prog *g, void (*wl)(void), struct run *r)
{
	const struct pea_tp_record *tr;
	struct pea_link_info li;
	int link, cpu = 0;
	__u64 v;

	memset(r, 0, sizeof(*r));
	pt_rings_drain(rings, ncpu);
	link = attach_prog(g);
	if (link < 0)
		return -link;
	wl();
	li = link_done(link);
	r->written = li.written;
	r->filtered = li.filtered;
	while ((tr = next_ev(gp_id, &cpu))) {
		memcpy(&v, (const unsigned char *)(tr + 1) + f_off, 8);
		r->records++;
		if (v >= PID0 && v < PID0 + NCALLS)
			r->seen |= 1U << (v - PID0);
		else
			r->strays++;
	}
	return 0;
}

/* Program @g over workload @wl: exactly the calls in @want written. */
static void expect(const char *what, const struct pt_tp_prog *g,
		   void (*wl)(void), unsigned int want)
{
	int nw = __builtin_popcount(want), err;
	struct run r;

	err = run(g, wl, &r);
	PT_OK(!err && r.written == (__u64)nw &&
	      r.filtered == (__u64)(NCALLS - nw) && r.records == nw &&
	      !r.strays && r.seen == want,
	      "%s: %d written, %d filtered, calls %#x (err %d, %llu written, %llu filtered, %d records, seen %#x)",
	      what, nw, NCALLS - nw, want, err,
	      (unsigned long long)r.written, (unsigned long long)r.filtered,
	      r.records, r.seen);
}

#define LO	0x0fU	/* calls 0..3 */
#define HI	0xf0U	/* calls 4..7 */

static void test_comm(void)
{
	struct pt_tp_prog g;

	pt_tp_prog_reset(&g);
	ctx_comm(&g, PEA_TP_OP_EQ, "pea-tpc-a");
	expect("ctx.comm == \"pea-tpc-a\"", &g, wl_comm, LO);
	pt_tp_prog_reset(&g);
	ctx_comm(&g, PEA_TP_OP_EQ, "pea-tpc-");
	expect("ctx.comm == \"pea-tpc-\" (a prefix is not equal)", &g,
	       wl_comm, 0);
	pt_tp_prog_reset(&g);
	ctx_comm(&g, PEA_TP_OP_NE, "pea-tpc-a");
	expect("ctx.comm != \"pea-tpc-a\"", &g, wl_comm, HI);
	pt_tp_prog_reset(&g);
	ctx_comm(&g, PEA_TP_OP_GLOB, "pea-tpc-?");
	expect("ctx.comm ~ \"pea-tpc-?\"", &g, wl_comm, LO);
	pt_tp_prog_reset(&g);
	ctx_comm(&g, PEA_TP_OP_GLOB, "*-b*");
	expect("ctx.comm ~ \"*-b*\"", &g, wl_comm, HI);
	pt_tp_prog_reset(&g);
	ctx_comm(&g, PEA_TP_OP_GLOB, "pea-tpc*");
	expect("ctx.comm ~ \"pea-tpc*\"", &g, wl_comm, LO | HI);
}

static void test_ids(void)
{
	struct pt_tp_prog g;

	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_PID, PEA_TP_OP_EQ, getpid());
	expect("ctx.pid == getpid() (both threads)", &g, wl_thread, LO | HI);
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_TID, PEA_TP_OP_EQ, getpid());
	expect("ctx.tid == getpid() (the main thread)", &g, wl_thread, LO);
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_TID, PEA_TP_OP_NE, getpid());
	ctx_int(&g, PEA_FETCH_CTX_PID, PEA_TP_OP_EQ, getpid());
	pt_tp_put_op(&g, PEA_PRED_AND);
	expect("ctx.tid != getpid() && ctx.pid == getpid() (the thread)", &g,
	       wl_thread, HI);
	PT_OK(thr_tid > 0 && thr_tid != getpid(), "the thread's tid (%d)",
	      thr_tid);
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_TID, PEA_PRED_OP_GE, getpid() + 1);
	expect("ctx.tid >= getpid() + 1 (the thread, its tid is larger)", &g,
	       wl_thread, HI);
}

static void test_child(void)
{
	struct pt_tp_prog g;

	mkdir(CTX_CG, 0755);
	if (mount("none", CTX_CG, "cgroup2", 0, NULL) && errno != EBUSY)
		pt_diag("mount cgroup2: %s", strerror(errno));
	rmdir(CTX_CG_DIR);
	PT_EQ(mkdir(CTX_CG_DIR, 0755), 0, "a cgroup v2 directory for the child");
	cg_id = pt_cgroup_id(CTX_CG_DIR);
	PT_OK(cg_id != 0, "its id (%llu)", (unsigned long long)cg_id);

	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_UID, PEA_TP_OP_EQ, CTX_UID);
	expect("ctx.uid == 1234 (the child)", &g, wl_child, HI);
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_UID, PEA_TP_OP_LT, 1000);
	expect("ctx.uid < 1000 (root)", &g, wl_child, LO);
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_GID, PEA_TP_OP_NE, CTX_GID);
	expect("ctx.gid != 4321 (root)", &g, wl_child, LO);
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_GID, PEA_TP_OP_AND, 0x1000);
	expect("ctx.gid & 0x1000 (4321 has it, 0 not)", &g, wl_child, HI);
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_CGROUP, PEA_TP_OP_EQ, cg_id);
	expect("ctx.cgroup == the directory's id (the child)", &g, wl_child,
	       HI);
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_CGROUP, PEA_TP_OP_NE, cg_id);
	expect("ctx.cgroup != the directory's id (this process)", &g,
	       wl_child, LO);
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_PID, PEA_TP_OP_GT, getpid());
	ctx_comm(&g, PEA_TP_OP_EQ, "pea-tpc-kid");
	pt_tp_put_op(&g, PEA_PRED_AND);
	expect("ctx.pid > getpid() && ctx.comm == \"pea-tpc-kid\"", &g,
	       wl_child, HI);
	/* Mixed with the event's field. */
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_UID, PEA_TP_OP_EQ, CTX_UID);
	field_cmp(&g, PEA_TP_OP_EQ, 5);
	pt_tp_put_op(&g, PEA_PRED_NOT);
	pt_tp_put_op(&g, PEA_PRED_AND);
	ctx_comm(&g, PEA_TP_OP_EQ, MY_COMM);
	field_cmp(&g, PEA_PRED_OP_LE, 1);
	pt_tp_put_op(&g, PEA_PRED_AND);
	pt_tp_put_op(&g, PEA_PRED_OR);
	expect("ctx.uid == 1234 && !(pid == PID0+5) || ctx.comm == \"test_tp_ctx\" && pid <= PID0+1",
	       &g, wl_child, 0x03 | 0xd0);
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_CGROUP, PEA_TP_OP_EQ, cg_id);
	field_cmp(&g, PEA_TP_OP_GT, 5);
	ctx_int(&g, PEA_FETCH_CTX_GID, PEA_TP_OP_EQ, 0);
	pt_tp_put_op(&g, PEA_PRED_OR);
	pt_tp_put_op(&g, PEA_PRED_AND);
	pt_tp_put_op(&g, PEA_PRED_NOT);
	expect("!(ctx.cgroup == ID && (pid > PID0+5 || ctx.gid == 0))", &g,
	       wl_child, LO | 0x30);
	rmdir(CTX_CG_DIR);
	umount(CTX_CG);
}

static void test_cpu(void)
{
	struct pt_tp_prog g;

	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_CPU, PEA_TP_OP_EQ, 1 % ncpu);
	expect(ncpu > 1 ? "ctx.cpu == 1" : "ctx.cpu == 0 (one CPU)", &g,
	       wl_cpu, ncpu > 1 ? HI : LO | HI);
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_CPU, PEA_TP_OP_EQ, 0);
	field_cmp(&g, PEA_TP_OP_NE, 2);
	pt_tp_put_op(&g, PEA_PRED_AND);
	expect(ncpu > 1 ? "ctx.cpu == 0 && pid != PID0+2" :
	       "ctx.cpu == 0 && pid != PID0+2 (one CPU)", &g, wl_cpu,
	       ncpu > 1 ? LO & ~0x04U : (LO | HI) & ~0x04U);
}

/* ---- hard interrupt context: the interrupted task's values ---- */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * irq_vectors:local_timer_entry fires in hard interrupt context, on the
 * task the tick interrupted: a program over every context key that holds
 * only for this process spinning on one CPU, as root, in a cgroup, under
 * its comm, writes exactly the ticks that landed on it there.
 */
static void test_irq(void)
{
	int id = pt_tp_id("irq_vectors", "local_timer_entry");
	const struct pea_tp_record *tr;
	struct pea_tp_attr a = tp_attr();
	struct pea_link_info li;
	int cpu = 1 % ncpu, link, c, n = 0, bad = 0;
	long long end;
	cpu_set_t all;
	struct pt_tp_prog g;

	if (id <= 0) {
		PT_OK(0, "irq_vectors:local_timer_entry");
		return;
	}
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_PID, PEA_TP_OP_EQ, getpid());
	ctx_int(&g, PEA_FETCH_CTX_TID, PEA_TP_OP_EQ, getpid());
	pt_tp_put_op(&g, PEA_PRED_AND);
	ctx_int(&g, PEA_FETCH_CTX_CPU, PEA_TP_OP_EQ, cpu);
	pt_tp_put_op(&g, PEA_PRED_AND);
	ctx_comm(&g, PEA_TP_OP_GLOB, "test_tp_c?x");
	pt_tp_put_op(&g, PEA_PRED_AND);
	ctx_int(&g, PEA_FETCH_CTX_UID, PEA_TP_OP_EQ, 0);
	ctx_int(&g, PEA_FETCH_CTX_GID, PEA_TP_OP_EQ, 0);
	pt_tp_put_op(&g, PEA_PRED_AND);
	pt_tp_put_op(&g, PEA_PRED_AND);
	ctx_int(&g, PEA_FETCH_CTX_CGROUP, PEA_TP_OP_NE, 0);
	pt_tp_put_op(&g, PEA_PRED_AND);
	a.event_id = id;
	strcpy(a.name, "irq_vectors:local_timer_entry");
	pt_tp_prog_attr(&a, &g);
	if (sched_getaffinity(0, sizeof(all), &all))
		pt_fatal("sched_getaffinity");
	pt_pin(cpu);
	pt_rings_drain(rings, ncpu);
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &a);
	PT_OK(link >= 0, "local_timer_entry with a program over 7 context keys attaches (%d)",
	      link < 0 ? errno : 0);
	if (link < 0)
		return;
	for (end = now_ms() + 400; now_ms() < end;)
		;
	/*
	 * Off the CPU before the counts are read: a tick between the read
	 * and the close wrote one record more than they said (400 records,
	 * 399 written, on the debug kernel).
	 */
	if (ncpu > 1)
		pt_pin((cpu + 1) % ncpu);
	li = link_done(link);
	sched_setaffinity(0, sizeof(all), &all);
	for (c = 0; (tr = next_ev(id, &c));) {
		n++;
		bad += tr->tgid != (__u32)getpid() ||
		       tr->pid != (__u32)getpid() ||
		       tr->cpu != (__u32)cpu || c != cpu;
	}
	pt_diag("local_timer_entry: %llu written, %llu filtered, %d records",
		(unsigned long long)li.written,
		(unsigned long long)li.filtered, n);
	PT_OK(li.written >= 1 && li.written == (__u64)n &&
	      li.hits == li.written + li.filtered && !li.errors &&
	      !li.dropped && !bad,
	      "in hard interrupt context: the ticks on this spinning process are written, each its record, the others filtered (%llu written, %llu filtered, %llu hits, %llu errors, %llu dropped, %d records, %d not this process on CPU %d)",
	      (unsigned long long)li.written, (unsigned long long)li.filtered,
	      (unsigned long long)li.hits, (unsigned long long)li.errors,
	      (unsigned long long)li.dropped, n, bad, cpu);
}

/* ---- NMI: the terms evaluated in an NMI (nmi:nmi_handler) ---- */

/*
 * The test module's PEA_ST_IOC_KSTACK_NMI sends an NMI to the calling CPU
 * and handles it in pea_st_kstack_nmi(); the NMI's nmi:nmi_handler event
 * fires for each handler of the NMI_LOCAL list, that one included, in NMI
 * context on the task the NMI interrupted: this process (root, MY_COMM)
 * NMI_ME times, then a child (uid CTX_UID, gid CTX_GID, comm
 * "pea-tpc-nmi", in a cgroup of its own) NMI_KID times.
 */
#define NMI_ME		3
#define NMI_KID		5
#define NMI_CG_DIR	CTX_CG "/pea-tpctx-nmi"
#define NMI_COMM	"pea-tpc-nmi"

static int nmi_id;
static unsigned int nmi_off_fn, nmi_off_handled;
static __u64 nmi_fn;		/* pea_st_kstack_nmi's address */
static __u64 nmi_cg;		/* NMI_CG_DIR's id */

struct nmi_res {
	__u64 written, filtered, hits;
	int me, kid, strays;	/* records of this process, the child's, others */
};

/* The offset of nmi_handler's field "TYPE NAME;" of @size bytes, or -1. */
static int nmi_field(const char *buf, const char *decl, unsigned int size)
{
	unsigned int off, sz;
	const char *p = strstr(buf, decl);

	if (!p || sscanf(p + strlen(decl), "\toffset:%u;\tsize:%u;", &off,
			 &sz) != 2 || sz != size)
		return -1;
	return off;
}

/* The event's id and field offsets, the handler's address: 0 or -1. */
static int nmi_setup(void)
{
	static char buf[8192];
	char line[512], name[256];
	unsigned long long a;
	char t;
	FILE *f;
	int o1, o2;

	nmi_id = pt_tp_id("nmi", "nmi_handler");
	if (nmi_id <= 0 || pt_read_file(TRACEFS "nmi/nmi_handler/format", buf,
					sizeof(buf)) < 0)
		return -1;
	o1 = nmi_field(buf, "void * handler;", 8);
	o2 = nmi_field(buf, "int handled;", 4);
	if (o1 < 0 || o2 < 0)
		return -1;
	nmi_off_fn = o1;
	nmi_off_handled = o2;
	pt_st();	/* the test module, loaded */
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &t, name) == 3 &&
		    !strcmp(name, "pea_st_kstack_nmi")) {
			nmi_fn = a;
			break;
		}
	fclose(f);
	return nmi_fn ? 0 : -1;
}

/* handler == pea_st_kstack_nmi && handled == 1: the module's NMIs. */
static void nmi_base(struct pt_tp_prog *g)
{
	struct pea_tp_pred *t;

	pt_tp_prog_reset(g);
	t = pt_tp_put_term(g);
	t->offset = nmi_off_fn;
	t->size = 8;
	t->kind = PEA_TP_FIELD_UINT;
	t->op = PEA_TP_OP_EQ;
	t->value = nmi_fn;
	t = pt_tp_put_term(g);
	t->offset = nmi_off_handled;
	t->size = 4;
	t->kind = PEA_TP_FIELD_SINT;
	t->op = PEA_TP_OP_EQ;
	t->value = 1;
	pt_tp_put_op(g, PEA_PRED_AND);
}

/* @n NMIs on this CPU: how many came in NMI context. */
static int nmi_fire(int n)
{
	struct pea_st_kstack_nmi c;
	int i, ok = 0;

	for (i = 0; i < n; i++) {
		memset(&c, 0, sizeof(c));
		if (!ioctl(pt_st(), PEA_ST_IOC_KSTACK_NMI, &c) && c.in_nmi)
			ok++;
	}
	return ok;
}

/* The child: its own cgroup, comm and ids, then NMI_KID NMIs on "go". */
static int nmi_kid(int ready, int go)
{
	char pid[16], c;
	int fd;

	snprintf(pid, sizeof(pid), "%d", getpid());
	fd = open(NMI_CG_DIR "/cgroup.procs", O_WRONLY);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		return 101;
	close(fd);
	prctl(PR_SET_NAME, NMI_COMM);
	if (setresgid(CTX_GID, CTX_GID, CTX_GID) ||
	    setresuid(CTX_UID, CTX_UID, CTX_UID))
		return 102;
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 103;
	return nmi_fire(NMI_KID) == NMI_KID ? 0 : 104;
}

/*
 * Attach the module's NMIs && (@g's program), with the child ready (its
 * pid in *@kid before @mk builds the program), fire this process's NMIs
 * and the child's, and count.
 */
static int nmi_run(void (*mk)(struct pt_tp_prog *g, pid_t kid),
		   struct nmi_res *r)
{
	const struct pea_tp_record *tr;
	struct pea_tp_attr a = tp_attr();
	struct pea_link_info li;
	struct pt_tp_prog g;
	int ready[2], go[2], link, c, st, me;
	pid_t kid;
	__u64 fn;
	char x;

	memset(r, 0, sizeof(*r));
	if (pipe(ready) || pipe(go))
		pt_fatal("pipe");
	fflush(stdout);
	kid = fork();
	if (!kid) {
		close(ready[0]);
		close(go[1]);
		_exit(nmi_kid(ready[1], go[0]));
	}
	close(ready[1]);
	close(go[0]);
	if (kid < 0 || read(ready[0], &x, 1) != 1)
		pt_fatal("the NMI child");
	nmi_base(&g);
	if (mk) {
		mk(&g, kid);
		pt_tp_put_op(&g, PEA_PRED_AND);
	}
	a.event_id = nmi_id;
	strcpy(a.name, "nmi:nmi_handler");
	pt_tp_prog_attr(&a, &g);
	pt_rings_drain(rings, ncpu);
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &a);
	if (link < 0) {
		link = errno;
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
		close(ready[0]);
		close(go[1]);
		return link;
	}
	me = nmi_fire(NMI_ME);
	if (write(go[1], "g", 1) != 1 || waitpid(kid, &st, 0) != kid ||
	    !WIFEXITED(st) || WEXITSTATUS(st) || me != NMI_ME) {
		pt_diag("the child's status %#x, %d of this process's NMIs",
			st, me);
		pt_fatal("the NMIs");
	}
	close(ready[0]);
	close(go[1]);
	li = link_done(link);
	r->written = li.written;
	r->filtered = li.filtered;
	r->hits = li.hits;
	for (c = 0; (tr = next_ev(nmi_id, &c));) {
		memcpy(&fn, (const unsigned char *)(tr + 1) + nmi_off_fn, 8);
		if (fn == nmi_fn && tr->tgid == (__u32)getpid() &&
		    tr->pid == (__u32)getpid())
			r->me++;
		else if (fn == nmi_fn && tr->tgid == (__u32)kid &&
			 tr->pid == (__u32)kid)
			r->kid++;
		else
			r->strays++;
	}
	return 0;
}

static __u64 nmi_hits;	/* of nmi:nmi_handler in a run: the base run's */

/*
 * Program @mk over the run: the NMIs of this process (@me) and of the
 * child (@kid) written, each its record, every other hit filtered.
 */
static void nmi_expect(const char *what,
		       void (*mk)(struct pt_tp_prog *g, pid_t kid), bool me,
		       bool kid)
{
	int nw = (me ? NMI_ME : 0) + (kid ? NMI_KID : 0), err;
	struct nmi_res r;

	err = nmi_run(mk, &r);
	PT_OK(!err && r.hits == nmi_hits && r.written == (__u64)nw &&
	      r.filtered == nmi_hits - nw && r.me == (me ? NMI_ME : 0) &&
	      r.kid == (kid ? NMI_KID : 0) && !r.strays,
	      "in NMI: %s: %d written (this process %d, the child %d), %llu filtered of %llu hits (err %d, %llu written, %llu filtered, %llu hits, records %d, %d, %d strays)",
	      what, nw, me ? NMI_ME : 0, kid ? NMI_KID : 0,
	      (unsigned long long)(nmi_hits - nw),
	      (unsigned long long)nmi_hits, err,
	      (unsigned long long)r.written, (unsigned long long)r.filtered,
	      (unsigned long long)r.hits, r.me, r.kid, r.strays);
}

/* Where a case's operand comes from. */
enum nmi_val { NV_CONST, NV_KID, NV_ME, NV_CG };

/*
 * One context term over the NMIs: ctx.@key @op the operand (@str for the
 * comm; else @v, plus the child's pid, this process's or the cgroup's id
 * as @from says), and whose NMIs it writes (@me, @kid).
 */
struct nmi_case {
	const char *what;
	int key, op;
	const char *str;
	enum nmi_val from;
	__u64 v;
	bool me, kid;
};

static const struct nmi_case nmi_cases[] = {
	{ "ctx.comm == \"" NMI_COMM "\"", PEA_FETCH_CTX_COMM, PEA_TP_OP_EQ,
	  NMI_COMM, NV_CONST, 0, false, true },
	{ "ctx.comm != \"" NMI_COMM "\"", PEA_FETCH_CTX_COMM, PEA_TP_OP_NE,
	  NMI_COMM, NV_CONST, 0, true, false },
	{ "ctx.comm ~ \"test_tp_c?x\"", PEA_FETCH_CTX_COMM, PEA_TP_OP_GLOB,
	  "test_tp_c?x", NV_CONST, 0, true, false },
	{ "ctx.comm == \"pea-tpc-none\"", PEA_FETCH_CTX_COMM, PEA_TP_OP_EQ,
	  "pea-tpc-none", NV_CONST, 0, false, false },
	{ "ctx.tid == the child", PEA_FETCH_CTX_TID, PEA_TP_OP_EQ, NULL,
	  NV_KID, 0, false, true },
	{ "ctx.pid == getpid()", PEA_FETCH_CTX_PID, PEA_TP_OP_EQ, NULL, NV_ME,
	  0, true, false },
	{ "ctx.pid == nobody's", PEA_FETCH_CTX_PID, PEA_TP_OP_EQ, NULL, NV_KID,
	  100000, false, false },
	{ "ctx.uid == 1234", PEA_FETCH_CTX_UID, PEA_TP_OP_EQ, NULL, NV_CONST,
	  CTX_UID, false, true },
	{ "ctx.uid < 1000", PEA_FETCH_CTX_UID, PEA_TP_OP_LT, NULL, NV_CONST,
	  1000, true, false },
	{ "ctx.gid == 4321", PEA_FETCH_CTX_GID, PEA_TP_OP_EQ, NULL, NV_CONST,
	  CTX_GID, false, true },
	{ "ctx.gid == 4322", PEA_FETCH_CTX_GID, PEA_TP_OP_EQ, NULL, NV_CONST,
	  CTX_GID + 1, false, false },
	{ "ctx.cgroup == the child's directory", PEA_FETCH_CTX_CGROUP,
	  PEA_TP_OP_EQ, NULL, NV_CG, 0, false, true },
	{ "ctx.cgroup != the child's directory", PEA_FETCH_CTX_CGROUP,
	  PEA_TP_OP_NE, NULL, NV_CG, 0, true, false },
};

static const struct nmi_case *nmi_cur;	/* the case mk_case() builds */

static void mk_case(struct pt_tp_prog *g, pid_t kid)
{
	const struct nmi_case *c = nmi_cur;
	__u64 v = c->v;

	if (c->str) {
		ctx_comm(g, c->op, c->str);
		return;
	}
	if (c->from == NV_KID)
		v += kid;
	else if (c->from == NV_ME)
		v += getpid();
	else if (c->from == NV_CG)
		v += nmi_cg;
	ctx_int(g, c->key, c->op, v);
}

/* Every kind at once: the child's six values, or this process's comm. */
static void mk_all(struct pt_tp_prog *g, pid_t kid)
{
	ctx_comm(g, PEA_TP_OP_EQ, NMI_COMM);
	ctx_int(g, PEA_FETCH_CTX_TID, PEA_TP_OP_EQ, kid);
	pt_tp_put_op(g, PEA_PRED_AND);
	ctx_int(g, PEA_FETCH_CTX_PID, PEA_TP_OP_EQ, kid);
	pt_tp_put_op(g, PEA_PRED_AND);
	ctx_int(g, PEA_FETCH_CTX_UID, PEA_TP_OP_EQ, CTX_UID);
	pt_tp_put_op(g, PEA_PRED_AND);
	ctx_int(g, PEA_FETCH_CTX_GID, PEA_TP_OP_EQ, CTX_GID);
	pt_tp_put_op(g, PEA_PRED_AND);
	ctx_int(g, PEA_FETCH_CTX_CGROUP, PEA_TP_OP_EQ, nmi_cg);
	pt_tp_put_op(g, PEA_PRED_AND);
	ctx_comm(g, PEA_TP_OP_EQ, MY_COMM);
	pt_tp_put_op(g, PEA_PRED_OR);
}

static void test_nmi(void)
{
	struct nmi_res r;
	size_t i;
	int err;

	if (nmi_setup()) {
		PT_OK(0, "nmi:nmi_handler, its fields and pea_st_kstack_nmi's address");
		return;
	}
	mkdir(CTX_CG, 0755);
	if (mount("none", CTX_CG, "cgroup2", 0, NULL) && errno != EBUSY)
		pt_diag("mount cgroup2: %s", strerror(errno));
	rmdir(NMI_CG_DIR);
	PT_EQ(mkdir(NMI_CG_DIR, 0755), 0, "a cgroup v2 directory for the NMI child");
	nmi_cg = pt_cgroup_id(NMI_CG_DIR);
	/* Without a context term: every NMI of the module's, both tasks'. */
	err = nmi_run(NULL, &r);
	nmi_hits = r.hits;
	pt_diag("nmi:nmi_handler: %llu hits for %d NMIs",
		(unsigned long long)r.hits, NMI_ME + NMI_KID);
	PT_OK(!err && r.written == NMI_ME + NMI_KID && r.me == NMI_ME &&
	      r.kid == NMI_KID && !r.strays &&
	      r.hits % (NMI_ME + NMI_KID) == 0 &&
	      r.filtered == r.hits - (NMI_ME + NMI_KID),
	      "in NMI: the module's handler, handled: %d written (%d, %d records), the other handlers' hits filtered (%llu of %llu)",
	      NMI_ME + NMI_KID, r.me, r.kid, (unsigned long long)r.filtered,
	      (unsigned long long)r.hits);
	for (i = 0; i < sizeof(nmi_cases) / sizeof(nmi_cases[0]); i++) {
		nmi_cur = &nmi_cases[i];
		nmi_expect(nmi_cur->what, mk_case, nmi_cur->me, nmi_cur->kid);
	}
	nmi_expect("the child's comm, tid, pid, uid, gid and cgroup || ctx.comm == \"" MY_COMM "\"",
		   mk_all, true, true);
	rmdir(NMI_CG_DIR);
	umount(CTX_CG);
}

/* ---- pid namespaces: ids as the attacher's namespace sees them ---- */

static int ns_pipe[2][2];

/*
 * Pid 1 of a new pid namespace: attaches "ctx.pid == 1" and
 * "ctx.pid == 0" (no id here: a task outside), makes calls 0..3, lets
 * its parent (outside) make 4..7, and checks both links' counts.
 */
static int ns_init(void)
{
	struct pea_link_info li[2];
	struct pt_tp_prog g[2];
	int l[2], i;
	char c = 0;

	if (getpid() != 1)
		return 110;
	for (i = 0; i < 2; i++) {
		pt_tp_prog_reset(&g[i]);
		ctx_int(&g[i], PEA_FETCH_CTX_PID, PEA_TP_OP_EQ, i ? 0 : 1);
		field_cmp(&g[i], PEA_TP_OP_LT, NCALLS);
		pt_tp_put_op(&g[i], PEA_PRED_AND);
		l[i] = attach_prog(&g[i]);
		if (l[i] < 0)
			return 111;
	}
	for (i = 0; i < 4; i++)
		call(i);
	if (write(ns_pipe[0][1], &c, 1) != 1 || read(ns_pipe[1][0], &c, 1) != 1)
		return 112;
	for (i = 0; i < 2; i++) {
		memset(&li[i], 0, sizeof(li[i]));
		if (ioctl(l[i], PEA_LINK_IOC_INFO, &li[i]))
			return 113;
		close(l[i]);
	}
	if (li[0].written != 4 || li[0].filtered != 4)
		return 120 + (int)li[0].written;
	if (li[1].written != 4 || li[1].filtered != 4)
		return 140 + (int)li[1].written;
	return 0;
}

static int ns_parent(void)
{
	pid_t p;
	char c;
	int st, i;

	if (unshare(CLONE_NEWPID))
		return 100;
	p = fork();
	if (!p)
		_exit(ns_init());
	if (p < 0 || read(ns_pipe[0][0], &c, 1) != 1) {
		waitpid(p, &st, 0);
		return 101;
	}
	for (i = 4; i < NCALLS; i++)
		call(i);
	if (write(ns_pipe[1][1], &c, 1) != 1)
		return 102;
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return 103;
	return WEXITSTATUS(st);
}

static pid_t ns_parent_pid;

static void wl_ns(void)
{
	int st;

	if (pipe(ns_pipe[0]) || pipe(ns_pipe[1]))
		pt_fatal("pipe");
	fflush(stdout);
	ns_parent_pid = fork();
	if (!ns_parent_pid)
		_exit(ns_parent());
	st = -1;
	if (ns_parent_pid > 0 && waitpid(ns_parent_pid, &st, 0) == ns_parent_pid)
		st = WIFEXITED(st) ? WEXITSTATUS(st) : 255;
	PT_EQ(st, 0,
	      "in a new pid namespace: its pid 1's links see 4 calls as ctx.pid == 1 and its parent's 4 as ctx.pid == 0 (outside), 4 filtered each");
	close(ns_pipe[0][0]);
	close(ns_pipe[0][1]);
	close(ns_pipe[1][0]);
	close(ns_pipe[1][1]);
}

static void test_ns(void)
{
	struct pt_tp_prog g;
	struct run r;
	int err;

	/*
	 * Here, in the initial namespace: ctx.pid > getpid() is both the
	 * namespace's parent and its pid 1 (larger numbers).
	 */
	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_PID, PEA_TP_OP_GT, getpid());
	err = run(&g, wl_ns, &r);
	PT_OK(!err && r.written == NCALLS && r.filtered == 0 &&
	      r.seen == (LO | HI) && !r.strays,
	      "this namespace's link: the 8 calls as ctx.pid > getpid() (err %d, %llu written, %llu filtered, seen %#x)",
	      err, (unsigned long long)r.written,
	      (unsigned long long)r.filtered, r.seen);
}

/* ---- malformed terms, bounds ---- */

static void test_errnos(void)
{
	struct pea_tp_attr a;
	struct pt_tp_prog g;
	int i;

	pt_tp_prog_reset(&g);
	ctx_int(&g, PEA_FETCH_CTX_TID, PEA_TP_OP_EQ, 1);
	PT_EQ(attach_errno(&g), 0, "ctx.tid == 1 attaches");
	g.terms[0].offset = 0;
	PT_EQ(attach_errno(&g), EINVAL, "a context term of value 0: EINVAL");
	g.terms[0].offset = PEA_FETCH_CTX_MAX + 1;
	PT_EQ(attach_errno(&g), EINVAL, "a context term past the last value: EINVAL");
	g.terms[0].offset = PEA_FETCH_CTX_TID;
	g.terms[0].size = 4;
	PT_EQ(attach_errno(&g), EINVAL, "a context term with a size: EINVAL");
	g.terms[0].size = 0;
	g.terms[0].reserved = 1;
	PT_EQ(attach_errno(&g), EINVAL, "a context term's reserved: EINVAL");
	g.terms[0].reserved = 0;
	g.terms[0].op = PEA_TP_OP_GLOB;
	PT_EQ(attach_errno(&g), EINVAL, "a glob on ctx.tid: EINVAL");
	g.terms[0].op = 9;
	PT_EQ(attach_errno(&g), EINVAL, "an unknown op on ctx.tid: EINVAL");
	g.terms[0].op = PEA_PRED_OP_LE;
	g.terms[0].str[3] = 'x';
	PT_EQ(attach_errno(&g), EINVAL, "ctx.tid with a string operand: EINVAL");
	g.terms[0].str[3] = 0;
	g.terms[0].value = 0x100000000ULL;
	PT_EQ(attach_errno(&g), EINVAL,
	      "ctx.tid <= 0x100000000 (past its 4 bytes): EINVAL");
	g.terms[0].value = (__u64)-1;
	PT_EQ(attach_errno(&g), EINVAL, "ctx.tid <= -1: EINVAL");
	g.terms[0].op = PEA_TP_OP_AND;
	PT_EQ(attach_errno(&g), 0, "ctx.tid & -1 (a mask) attaches");
	g.terms[0].offset = PEA_FETCH_CTX_CGROUP;
	g.terms[0].op = PEA_TP_OP_EQ;
	g.terms[0].value = 0x100000000ULL;
	PT_EQ(attach_errno(&g), 0, "ctx.cgroup == 0x100000000 (8 bytes) attaches");
	g.terms[0].value = (__u64)-1;
	PT_EQ(attach_errno(&g), 0, "ctx.cgroup == 2^64-1 attaches");

	pt_tp_prog_reset(&g);
	ctx_comm(&g, PEA_TP_OP_EQ, "x");
	PT_EQ(attach_errno(&g), 0, "ctx.comm == \"x\" attaches");
	g.terms[0].op = PEA_TP_OP_LT;
	PT_EQ(attach_errno(&g), EINVAL, "ctx.comm < \"x\": EINVAL");
	g.terms[0].op = PEA_TP_OP_AND;
	PT_EQ(attach_errno(&g), EINVAL, "ctx.comm & \"x\": EINVAL");
	g.terms[0].op = PEA_TP_OP_GLOB;
	g.terms[0].value = 1;
	PT_EQ(attach_errno(&g), EINVAL, "ctx.comm with a value: EINVAL");
	g.terms[0].value = 0;
	memset(g.terms[0].str, 'a', sizeof(g.terms[0].str));
	PT_EQ(attach_errno(&g), EINVAL, "ctx.comm with no NUL in its operand: EINVAL");
	g.terms[0].str[PEA_TP_STR_MAX - 1] = 0;
	PT_EQ(attach_errno(&g), 0, "ctx.comm ~ 63 bytes attaches");

	/* Inline predicates do not take context terms. */
	a = tp_attr();
	a.nr_preds = 1;
	a.preds[0].kind = PEA_TP_FIELD_CTX;
	a.preds[0].offset = PEA_FETCH_CTX_TID;
	a.preds[0].op = PEA_TP_OP_EQ;
	a.preds[0].value = 1;
	i = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &a);
	PT_EQ(i < 0 ? errno : 0, EINVAL, "a context term in the inline preds: EINVAL");
	if (i >= 0)
		close(i);

	/* 32 terms of context and fields attach, 33 are E2BIG. */
	pt_tp_prog_reset(&g);
	for (i = 0; i < PEA_TP_TERM_MAX; i++) {
		if (i % 2)
			ctx_int(&g, PEA_FETCH_CTX_TID, PEA_TP_OP_NE, i);
		else
			field_cmp(&g, PEA_TP_OP_NE, i);
		if (i)
			pt_tp_put_op(&g, PEA_PRED_AND);
	}
	PT_EQ(attach_errno(&g), 0, "16 context and 16 field terms attach");
	ctx_comm(&g, PEA_TP_OP_NE, "x");
	pt_tp_put_op(&g, PEA_PRED_AND);
	PT_EQ(attach_errno(&g), E2BIG, "a 33rd term (ctx.comm): E2BIG");
}

/* ---- who may attach: the uid and gid take CAP_BPF and CAP_PERFMON ---- */

static int perm_one(int key)
{
	struct pt_tp_prog g;

	pt_tp_prog_reset(&g);
	if (key == PEA_FETCH_CTX_COMM)
		ctx_comm(&g, PEA_TP_OP_EQ, "x");
	else
		ctx_int(&g, key, PEA_TP_OP_EQ, 1);
	field_cmp(&g, PEA_TP_OP_EQ, 1);
	pt_tp_put_op(&g, PEA_PRED_AND);
	return attach_errno(&g);
}

/*
 * A uid or gid term in a malformed program (review L1): @what 0, with a
 * field term of size 3; 1, a program leaving two values; 2, the gid term
 * itself malformed (an operand past its 4 bytes).
 */
static int perm_malformed(int what)
{
	struct pea_tp_pred *t;
	struct pt_tp_prog g;

	pt_tp_prog_reset(&g);
	ctx_int(&g, what == 1 ? PEA_FETCH_CTX_UID : PEA_FETCH_CTX_GID,
		PEA_TP_OP_EQ, what == 2 ? 0x100000000ULL : 1);
	if (what == 2)
		return attach_errno(&g);
	field_cmp(&g, PEA_TP_OP_EQ, 1);
	if (what == 0) {
		t = &g.terms[1];
		t->size = 3;
		pt_tp_put_op(&g, PEA_PRED_AND);
	}
	return attach_errno(&g);
}

/*
 * Bit 0..6: key 1..7 did not answer @want (uid, gid) or 0 (the others);
 * bit 7: a malformed program with a uid or gid term did not answer
 * @want, or EINVAL with CAP_BPF (which one: a diagnostic): EPERM comes before the program is read,
 * as bpf(BPF_PROG_LOAD) answers before its verifier. @keep: capabilities
 * kept as nobody.
 */
static int perm_child(void *arg)
{
	__u64 keep = *(__u64 *)arg;
	int key, bad = 0, want, i, err;

	if (pt_drop_to_nobody_caps(keep))
		return 200;
	want = (keep & (1ULL << CAP_BPF)) && (keep & (1ULL << CAP_PERFMON)) ?
	       0 : EPERM;
	for (key = PEA_FETCH_CTX_COMM; key <= PEA_FETCH_CTX_MAX; key++)
		if (perm_one(key) != (key == PEA_FETCH_CTX_UID ||
				      key == PEA_FETCH_CTX_GID ? want : 0))
			bad |= 1 << (key - 1);
	for (i = 0; i < 3; i++) {
		err = perm_malformed(i);
		if (err != (want ? want : EINVAL)) {
			pt_diag("malformed program %d with a uid or gid term: %s",
				i, strerror(err));
			bad |= 1 << 7;
		}
	}
	fflush(stdout);
	return bad;
}

static void test_perm(void)
{
	static const char *path = "/proc/sys/kernel/perf_event_paranoid";
	long old = pt_perm_read_int(path);
	__u64 keep;

	PT_EQ(pt_perm_write_int(path, 2), 0, "perf_event_paranoid 2");
	keep = 1ULL << CAP_PERFMON;
	PT_EQ(pt_in_child(perm_child, &keep), 0,
	      "nobody with CAP_PERFMON: ctx.uid and ctx.gid terms EPERM, in malformed programs too; comm, tid, pid, cgroup, cpu attach");
	keep |= 1ULL << CAP_BPF;
	PT_EQ(pt_in_child(perm_child, &keep), 0,
	      "nobody with CAP_PERFMON and CAP_BPF: every context term attaches, a malformed program is EINVAL");
	PT_EQ(pt_perm_write_int(path, -1), 0, "perf_event_paranoid -1");
	keep = 0;
	PT_EQ(pt_in_child(perm_child, &keep), 0,
	      "paranoid -1, nobody without capabilities: ctx.uid and ctx.gid EPERM, in malformed programs too; the others attach, as the tracepoint");
	keep = 1ULL << CAP_BPF;
	PT_EQ(pt_in_child(perm_child, &keep), 0,
	      "paranoid -1, nobody with CAP_BPF only: ctx.uid and ctx.gid EPERM (CAP_PERFMON too is needed), the others attach");
	pt_perm_write_int(path, old);
}

int main(void)
{
	pt_dev();
	prctl(PR_SET_NAME, MY_COMM);
	ncpu = pt_cpu_map("tpctx", 64, &map_fd, ev_fd, rings);
	gp_id = pt_tp_id("syscalls", "sys_enter_getpgid");
	if (gp_id <= 0 || get_field()) {
		PT_OK(0, "syscalls:sys_enter_getpgid and its pid field");
		return pt_done();
	}
	test_comm();
	test_ids();
	test_child();
	test_cpu();
	test_irq();
	test_nmi();
	test_ns();
	test_errnos();
	test_perm();
	return pt_done();
}
