// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint filter programs (struct pea_tp_attr's @terms and @prog):
 * comparisons on an event's fields joined by ||, && and ! in postfix, as
 * Linux's event filter joins its predicates (&& before ||, ! over a
 * parenthesised group), evaluated in the kernel. The workload is
 * openat(dfd, "no such file") of this process for known dfds on
 * syscalls:sys_enter_openat (the link filtered to this process, so that
 * no other task's call counts), and forks under known comms on
 * sched:sched_process_fork: exact written and filtered counts and exactly
 * the records expected, 9, 32 and 33 terms, programs past their bounds
 * (E2BIG), malformed ones (EINVAL), the memory a program is charged, and
 * attrs of the older sizes through the older ioctl numbers.
 */
#include <sys/prctl.h>
#include "pea_test.h"
#include "pt_tp.h"
#include "pt_exec.h"
#include "pt_perm.h"
#include "pt_quota.h"

#define NCPU_MAX	64
#define TRACEFS		"/sys/kernel/tracing/events/"
#define DFD0		1000	/* the first dfd: DFD0 + i for call i */

/* The attach ioctl's numbers for the older attr sizes. */
#define ATTACH_TP_VER0 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x15, PEA_TP_ATTR_SIZE_VER0)
#define ATTACH_TP_VER1 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x15, PEA_TP_ATTR_SIZE_VER1)

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];
static char self_exe[256];
static int openat_id;

static struct pt_tp_field fdfd;

/* dfd OP @v, dfd compared as a signed 64-bit number. */
static void dfd_cmp(struct pt_tp_prog *g, int op, long v)
{
	struct pea_tp_pred *t = pt_tp_put_term(g);

	t->offset = fdfd.offset;
	t->size = fdfd.size;
	t->kind = PEA_TP_FIELD_SINT;
	t->op = op;
	t->value = (__u64)v;
}

static int attach_cmd(unsigned long cmd, struct pea_tp_attr *a)
{
	int fd = ioctl(map_fd, cmd, a);

	return fd < 0 ? -errno : fd;
}

/* Attach @a, return 0 or the errno, and detach. */
static int attach_errno(struct pea_tp_attr *a)
{
	int fd = attach_cmd(PEA_MAP_IOC_ATTACH_TP, a);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? -fd : 0;
}

static int open_errno(const struct pt_tp_prog *g)
{
	struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_openat", openat_id, getpid());

	pt_tp_prog_attr(&a, g);
	return attach_errno(&a);
}

struct run {
	__u64 written, filtered;
	__u64 seen;		/* bit i: a record of dfd DFD0 + i */
	int records, strays;
};

/*
 * Attach @a with ioctl @cmd, openat(DFD0 + i) for i < @n, and count what
 * the link says and what its records carry. 0, or the attach's errno.
 */
static int run_openat(unsigned long cmd, struct pea_tp_attr *a, int n,
		      struct run *r)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_link_info li;
	const struct pea_tp_record *tr;
	int link, cpu, i;
	__s64 dfd;

	memset(r, 0, sizeof(*r));
	pt_rings_drain(rings, ncpu);
	link = attach_cmd(cmd, a);
	if (link < 0)
		return -link;
	for (i = 0; i < n; i++)
		syscall(SYS_openat, (long)(DFD0 + i), "pea-tp-prog-no-such-file",
			(long)O_RDONLY);
	memset(&li, 0, sizeof(li));
	if (ioctl(link, PEA_LINK_IOC_INFO, &li))
		pt_fatal("PEA_LINK_IOC_INFO");
	close(link);
	r->written = li.written;
	r->filtered = li.filtered;
	for (cpu = 0; cpu < ncpu; cpu++)
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			tr = (const void *)(rec + 12);
			if (tr->event_id != (__u64)openat_id)
				continue;
			memcpy(&dfd, (const unsigned char *)(tr + 1) +
			       fdfd.offset, 8);
			r->records++;
			if (dfd >= DFD0 && dfd < DFD0 + 64)
				r->seen |= 1ULL << (dfd - DFD0);
			else
				r->strays++;
		}
	return 0;
}

/* Run program @g over @n calls; expect exactly the calls in @want. */
static void expect(const char *what, const struct pt_tp_prog *g, int n,
		   __u64 want)
{
	struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_openat", openat_id, getpid());
	int nw = __builtin_popcountll(want), err;
	struct run r;

	pt_tp_prog_attr(&a, g);
	err = run_openat(PEA_MAP_IOC_ATTACH_TP, &a, n, &r);
	PT_OK(!err && r.written == (__u64)nw && r.filtered == (__u64)(n - nw) &&
	      r.records == nw && !r.strays && r.seen == want,
	      "%s: %d written, %d filtered, those records (err %d, %llu written, %llu filtered, %d records, seen %#llx)",
	      what, nw, n - nw, err, (unsigned long long)r.written,
	      (unsigned long long)r.filtered, r.records,
	      (unsigned long long)r.seen);
}

/* Bits DFD0 + i for i in [@lo, @hi]. */
static __u64 span(int lo, int hi)
{
	__u64 m = 0;

	for (; lo <= hi; lo++)
		m |= 1ULL << lo;
	return m;
}

static void test_logic(void)
{
	struct pt_tp_prog g;
	int i;

	/* dfd == 1001 || dfd == 1003 */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 1);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 3);
	pt_tp_put_op(&g, PEA_PRED_OR);
	expect("dfd == 1001 || dfd == 1003", &g, 12, span(1, 1) | span(3, 3));

	/* !(dfd == 1001) */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 1);
	pt_tp_put_op(&g, PEA_PRED_NOT);
	expect("!(dfd == 1001)", &g, 12, span(0, 11) & ~span(1, 1));

	/*
	 * dfd == 1001 && dfd == 1002 || dfd == 1003: && first, as Linux's
	 * predicate_parse(): one call; "||" first would leave none.
	 */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 1);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 2);
	pt_tp_put_op(&g, PEA_PRED_AND);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 3);
	pt_tp_put_op(&g, PEA_PRED_OR);
	expect("dfd == 1001 && dfd == 1002 || dfd == 1003", &g, 12,
	       span(3, 3));

	/* dfd == 1001 && (dfd == 1002 || dfd == 1001): the parentheses. */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 1);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 2);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 1);
	pt_tp_put_op(&g, PEA_PRED_OR);
	pt_tp_put_op(&g, PEA_PRED_AND);
	expect("dfd == 1001 && (dfd == 1002 || dfd == 1001)", &g, 12,
	       span(1, 1));

	/* !((dfd < 1003 || dfd > 1007) && !(dfd == 1001)) */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_LT, DFD0 + 3);
	dfd_cmp(&g, PEA_TP_OP_GT, DFD0 + 7);
	pt_tp_put_op(&g, PEA_PRED_OR);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 1);
	pt_tp_put_op(&g, PEA_PRED_NOT);
	pt_tp_put_op(&g, PEA_PRED_AND);
	pt_tp_put_op(&g, PEA_PRED_NOT);
	expect("!((dfd < 1003 || dfd > 1007) && !(dfd == 1001))", &g, 12,
	       span(1, 1) | span(3, 7));

	/* dfd >= 1010 || dfd <= 1001: the operators a term adds. */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_PRED_OP_GE, DFD0 + 10);
	dfd_cmp(&g, PEA_PRED_OP_LE, DFD0 + 1);
	pt_tp_put_op(&g, PEA_PRED_OR);
	expect("dfd >= 1010 || dfd <= 1001", &g, 12,
	       span(0, 1) | span(10, 11));

	/* A term past the entry is false, its negation true. */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_NE, 12345);
	g.terms[0].offset = 4000;
	pt_tp_put_op(&g, PEA_PRED_NOT);
	expect("!(a field past the entry != 12345)", &g, 12, span(0, 11));

	/* Nine terms: dfd == 1000 || ... || dfd == 1008. */
	pt_tp_prog_reset(&g);
	for (i = 0; i < 9; i++) {
		dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + i);
		if (i)
			pt_tp_put_op(&g, PEA_PRED_OR);
	}
	expect("9 terms ORed", &g, 12, span(0, 8));

	/* 32 terms, 63 instructions, over 40 calls. */
	pt_tp_prog_reset(&g);
	for (i = 0; i < PEA_TP_TERM_MAX; i++) {
		dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 2 * i);
		if (i)
			pt_tp_put_op(&g, PEA_PRED_OR);
	}
	{
		__u64 want = 0;

		for (i = 0; i < PEA_TP_TERM_MAX && 2 * i < 64; i++)
			want |= 1ULL << (2 * i);
		expect("32 terms ORed (the even dfds of 64 calls)", &g, 64,
		       want);
	}

	/* The same 32 terms, each negated and ANDed: the odd ones. */
	pt_tp_prog_reset(&g);
	for (i = 0; i < PEA_TP_TERM_MAX; i++) {
		dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 2 * i);
		pt_tp_put_op(&g, PEA_PRED_NOT);
		if (i)
			pt_tp_put_op(&g, PEA_PRED_AND);
	}
	expect("32 negated terms ANDed, 95 instructions (the odd dfds)", &g,
	       64, 0xaaaaaaaaaaaaaaaaULL);

	/* A term used twice: one term, two CMPs. */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_GT, DFD0 + 5);
	g.p[g.np].op = PEA_PRED_CMP;
	g.p[g.np++].fetch = 0;
	pt_tp_put_op(&g, PEA_PRED_NOT);
	pt_tp_put_op(&g, PEA_PRED_OR);
	expect("t0 || !t0: every call", &g, 12, span(0, 11));
}

/* sched_process_fork's parent_comm (char[16]): || and ! on strings. */
static void test_strings(void)
{
	int id = pt_tp_id("sched", "sched_process_fork");
	struct pea_tp_attr a = pt_tp_attr("sched:sched_process_fork", id, getpid());
	static const char *const comms[] = {
		"pea_tpp_a", "pea_tpp_b", "pea_tpp_c", "pea_tpp_dd",
	};
	struct pea_link_info li;
	struct pea_tp_pred *t;
	struct pt_tp_field fcomm;
	struct pt_tp_prog g;
	int link, i;

	if (id <= 0 ||
	    pt_tp_get_field("sched", "sched_process_fork", "parent_comm", &fcomm)) {
		PT_OK(0, "sched_process_fork: format");
		return;
	}
	/* parent_comm == "pea_tpp_a" || !(parent_comm ~ "pea_tpp_?") */
	pt_tp_prog_reset(&g);
	t = pt_tp_put_term(&g);
	t->offset = fcomm.offset;
	t->size = fcomm.size;
	t->kind = PEA_TP_FIELD_STR;
	t->op = PEA_TP_OP_EQ;
	strcpy(t->str, "pea_tpp_a");
	t = pt_tp_put_term(&g);
	*t = g.terms[0];
	t->op = PEA_TP_OP_GLOB;
	strcpy(t->str, "pea_tpp_?");
	pt_tp_put_op(&g, PEA_PRED_NOT);
	pt_tp_put_op(&g, PEA_PRED_OR);
	pt_tp_prog_attr(&a, &g);
	link = attach_cmd(PEA_MAP_IOC_ATTACH_TP, &a);
	PT_OK(link >= 0, "fork with a string program attaches (%d)", link);
	if (link < 0)
		return;
	for (i = 0; i < 8; i++) {
		prctl(PR_SET_NAME, comms[i % 4]);
		pt_exec_exit(self_exe);
	}
	prctl(PR_SET_NAME, "test_tp_prog");
	memset(&li, 0, sizeof(li));
	if (ioctl(link, PEA_LINK_IOC_INFO, &li))
		pt_fatal("PEA_LINK_IOC_INFO");
	PT_OK(li.written == 4 && li.filtered == 4,
	      "parent_comm == \"pea_tpp_a\" || !(parent_comm ~ \"pea_tpp_?\"): 4 written (a, dd), 4 filtered (b, c) (%llu, %llu)",
	      (unsigned long long)li.written,
	      (unsigned long long)li.filtered);
	close(link);
	pt_rings_drain(rings, ncpu);
}

static void test_bounds(void)
{
	struct pea_tp_attr a;
	struct pt_tp_prog g;
	int i;

	/* 33 terms: E2BIG, as 33 fetch predicates are. */
	pt_tp_prog_reset(&g);
	for (i = 0; i < PEA_TP_TERM_MAX + 1; i++) {
		dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + i);
		if (i)
			pt_tp_put_op(&g, PEA_PRED_OR);
	}
	PT_EQ(open_errno(&g), E2BIG, "33 terms: E2BIG");
	/* 32 terms and 97 instructions (double negations): E2BIG. */
	pt_tp_prog_reset(&g);
	for (i = 0; i < PEA_TP_TERM_MAX; i++) {
		dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + i);
		pt_tp_put_op(&g, PEA_PRED_NOT);
		if (i)
			pt_tp_put_op(&g, PEA_PRED_OR);
	}
	PT_EQ(g.np, PEA_TP_PROG_MAX - 1, "95 instructions built");
	PT_EQ(open_errno(&g), 0, "32 terms in 95 instructions attach");
	pt_tp_put_op(&g, PEA_PRED_NOT);
	PT_EQ(open_errno(&g), 0, "96 instructions attach");
	pt_tp_put_op(&g, PEA_PRED_NOT);
	PT_EQ(open_errno(&g), E2BIG, "97 instructions: E2BIG");
	/* 16 values pending attach, 17 do not. */
	pt_tp_prog_reset(&g);
	for (i = 0; i < PEA_PRED_DEPTH_MAX; i++)
		dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + i);
	for (i = 1; i < PEA_PRED_DEPTH_MAX; i++)
		pt_tp_put_op(&g, PEA_PRED_OR);
	PT_EQ(open_errno(&g), 0, "16 values pending: attaches");
	pt_tp_prog_reset(&g);
	for (i = 0; i < PEA_PRED_DEPTH_MAX + 1; i++)
		dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + i);
	for (i = 1; i < PEA_PRED_DEPTH_MAX + 1; i++)
		pt_tp_put_op(&g, PEA_PRED_OR);
	PT_EQ(open_errno(&g), E2BIG, "17 values pending: E2BIG");

	/* A 33-term count with no program is E2BIG before anything else. */
	a = pt_tp_attr("syscalls:sys_enter_openat", openat_id, getpid());
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0);
	pt_tp_prog_attr(&a, &g);
	a.nr_terms = PEA_TP_TERM_MAX + 1;
	PT_EQ(attach_errno(&a), E2BIG, "nr_terms 33: E2BIG");
	a.nr_terms = 1;
	a.nr_prog = PEA_TP_PROG_MAX + 1;
	PT_EQ(attach_errno(&a), E2BIG, "nr_prog 97: E2BIG");
}

static void test_malformed(void)
{
	struct pea_tp_attr a;
	struct pt_tp_prog g;

	/* Two values left. */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 1);
	PT_EQ(open_errno(&g), EINVAL, "a program leaving 2 values: EINVAL");
	/* An operator without its operands. */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0);
	pt_tp_put_op(&g, PEA_PRED_AND);
	PT_EQ(open_errno(&g), EINVAL, "AND with one operand: EINVAL");
	pt_tp_prog_reset(&g);
	pt_tp_put_op(&g, PEA_PRED_NOT);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0);
	PT_EQ(open_errno(&g), EINVAL, "NOT before any value: EINVAL");
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0);
	g.p[0].op = 9;
	PT_EQ(open_errno(&g), EINVAL, "unknown instruction: EINVAL");
	/* A CMP naming a term past nr_terms. */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0);
	g.p[0].fetch = 1;
	PT_EQ(open_errno(&g), EINVAL, "a CMP of term 1 of 1: EINVAL");
	/* A CMP with its own comparison: the term has it. */
	pt_tp_prog_reset(&g);
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0);
	g.p[0].cmp = PEA_TP_OP_EQ;
	PT_EQ(open_errno(&g), EINVAL, "a CMP with cmp set: EINVAL");
	g.p[0].cmp = 0;
	g.p[0].value = 1;
	PT_EQ(open_errno(&g), EINVAL, "a CMP with value set: EINVAL");
	g.p[0].value = 0;
	g.p[0].str[5] = 'x';
	PT_EQ(open_errno(&g), EINVAL, "a CMP with str set: EINVAL");
	g.p[0].str[5] = 0;
	g.p[0].reserved[2] = 1;
	PT_EQ(open_errno(&g), EINVAL, "an instruction's reserved: EINVAL");
	g.p[0].reserved[2] = 0;
	PT_EQ(open_errno(&g), 0, "the same program, clean, attaches");
	/* An operator with an operand. */
	dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + 1);
	pt_tp_put_op(&g, PEA_PRED_OR);
	g.p[2].fetch = 1;
	PT_EQ(open_errno(&g), EINVAL, "an OR with a term index: EINVAL");
	g.p[2].fetch = 0;

	/* Terms: the rules of the inline predicates, and widths. */
	g.terms[1].size = 3;
	PT_EQ(open_errno(&g), EINVAL, "a term of size 3: EINVAL");
	g.terms[1].size = 8;
	g.terms[1].op = PEA_TP_OP_GLOB;
	PT_EQ(open_errno(&g), EINVAL, "a glob on a number: EINVAL");
	g.terms[1].op = 0;
	PT_EQ(open_errno(&g), EINVAL, "a term's op 0: EINVAL");
	g.terms[1].op = PEA_TP_OP_EQ;
	g.terms[1].reserved = 1;
	PT_EQ(open_errno(&g), EINVAL, "a term's reserved: EINVAL");
	g.terms[1].reserved = 0;
	g.terms[1].size = 4;
	g.terms[1].kind = PEA_TP_FIELD_UINT;
	g.terms[1].value = 0x100000000ULL;
	PT_EQ(open_errno(&g), EINVAL,
	      "a u32 term's operand 0x100000000: EINVAL (pea_pred's width rule)");
	g.terms[1].value = (__u64)-1;
	PT_EQ(open_errno(&g), EINVAL, "a u32 term's operand -1: EINVAL");
	g.terms[1].op = PEA_TP_OP_AND;
	PT_EQ(open_errno(&g), 0, "a u32 term's mask -1 (&): attaches");
	g.terms[1].op = PEA_TP_OP_EQ;
	g.terms[1].kind = PEA_TP_FIELD_SINT;
	PT_EQ(open_errno(&g), 0, "an s32 term's operand -1: attaches");
	g.terms[1].kind = PEA_TP_FIELD_STR;
	g.terms[1].value = 0;
	g.terms[1].op = PEA_PRED_OP_LE;
	PT_EQ(open_errno(&g), EINVAL, "<= on a string term: EINVAL");
	g.terms[1].op = PEA_TP_OP_EQ;
	memset(g.terms[1].str, 'a', sizeof(g.terms[1].str));
	PT_EQ(open_errno(&g), EINVAL, "an unterminated string term: EINVAL");
	g.terms[1].str[PEA_TP_STR_MAX - 1] = 0;
	PT_EQ(open_errno(&g), 0, "a 63-byte string term attaches");

	/* The attr's own rules. */
	a = pt_tp_attr("syscalls:sys_enter_openat", openat_id, getpid());
	pt_tp_prog_attr(&a, &g);
	a.nr_prog = 0;
	PT_EQ(attach_errno(&a), EINVAL, "a prog pointer with nr_prog 0: EINVAL");
	a.prog = 0;
	PT_EQ(attach_errno(&a), EINVAL, "terms without a program: EINVAL");
	pt_tp_prog_attr(&a, &g);
	a.nr_terms = 0;
	PT_EQ(attach_errno(&a), EINVAL, "a terms pointer with nr_terms 0: EINVAL");
	a.terms = 0;
	PT_EQ(attach_errno(&a), EINVAL, "a program without terms: EINVAL");
	pt_tp_prog_attr(&a, &g);
	a.nr_preds = 1;
	a.preds[0] = g.terms[0];
	PT_EQ(attach_errno(&a), EINVAL, "a program and inline preds: EINVAL");
	pt_tp_prog_attr(&a, &g);
	a.nr_preds = 0;
	memset(a.preds, 0, sizeof(a.preds));
	a.prog = 8;
	PT_EQ(attach_errno(&a), EFAULT, "a program at address 8: EFAULT");
	pt_tp_prog_attr(&a, &g);
	a.terms = 8;
	PT_EQ(attach_errno(&a), EFAULT, "terms at address 8: EFAULT");
}

/* The program's allocation is charged to its user, as a predicate's. */
static void test_charge(void)
{
	struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_openat", openat_id, getpid());
	long links, b0, b1, b2;
	struct pt_tp_prog g;
	int l1, l2, i;

	pt_tp_prog_reset(&g);
	for (i = 0; i < PEA_TP_TERM_MAX; i++) {
		dfd_cmp(&g, PEA_TP_OP_EQ, DFD0 + i);
		if (i)
			pt_tp_put_op(&g, PEA_PRED_OR);
	}
	if (pt_quota(-1, &links, &b0)) {
		PT_OK(0, "debugfs pea/quota");
		return;
	}
	l1 = attach_cmd(PEA_MAP_IOC_ATTACH_TP, &a);
	pt_quota(-1, &links, &b1);
	pt_tp_prog_attr(&a, &g);
	l2 = attach_cmd(PEA_MAP_IOC_ATTACH_TP, &a);
	pt_quota(-1, &links, &b2);
	/* 16 + 63 * 80 + 32 * 80 = 7616 bytes: kmalloc-8k. */
	PT_OK(l1 >= 0 && l2 >= 0 && (b2 - b1) - (b1 - b0) == 8192,
	      "a 32-term, 63-instruction program is charged 8192 bytes (%ld)",
	      (b2 - b1) - (b1 - b0));
	close(l1);
	close(l2);
}

/* Attrs of the older sizes, through the older numbers, as before. */
static void test_old_sizes(void)
{
	struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_openat", openat_id, getpid());
	struct run r;
	int err;

	a.nr_preds = 2;
	a.preds[0].offset = fdfd.offset;
	a.preds[0].size = 8;
	a.preds[0].kind = PEA_TP_FIELD_SINT;
	a.preds[0].op = PEA_TP_OP_GT;
	a.preds[0].value = DFD0 + 2;
	a.preds[1] = a.preds[0];
	a.preds[1].op = PEA_TP_OP_NE;
	a.preds[1].value = DFD0 + 5;
	a.size = PEA_TP_ATTR_SIZE_VER0;
	err = run_openat(ATTACH_TP_VER0, &a, 8, &r);
	PT_OK(!err && r.written == 4 && r.filtered == 4 &&
	      r.seen == (span(3, 7) & ~span(5, 5)),
	      "VER0 attr (800 bytes), old number: dfd > 1002 && dfd != 1005: 4 written, 4 filtered (err %d, %llu, %llu)",
	      err, (unsigned long long)r.written,
	      (unsigned long long)r.filtered);
	a.size = PEA_TP_ATTR_SIZE_VER1;
	err = run_openat(ATTACH_TP_VER1, &a, 8, &r);
	PT_OK(!err && r.written == 4 && r.filtered == 4 &&
	      r.seen == (span(3, 7) & ~span(5, 5)),
	      "VER1 attr (808 bytes), old number: 4 written, 4 filtered (err %d, %llu, %llu)",
	      err, (unsigned long long)r.written,
	      (unsigned long long)r.filtered);
	a.size = sizeof(a);
	err = run_openat(PEA_MAP_IOC_ATTACH_TP, &a, 8, &r);
	PT_OK(!err && r.written == 4 && r.filtered == 4,
	      "the current attr with inline preds: 4 written, 4 filtered (err %d, %llu, %llu)",
	      err, (unsigned long long)r.written,
	      (unsigned long long)r.filtered);
	PT_EQ(PEA_TP_ATTR_SIZE_VER2, PEA_TP_ATTR_SIZE_VER1 + 24,
	      "struct pea_tp_attr before @fetches: 832 bytes");
	/* A VER1-sized attr never reads the program's fields. */
	a.size = PEA_TP_ATTR_SIZE_VER1;
	a.nr_terms = 1;
	a.nr_prog = 1;
	err = run_openat(ATTACH_TP_VER1, &a, 8, &r);
	PT_OK(!err && r.written == 4,
	      "VER1 attr: what lies past its size is not read (err %d, %llu)",
	      err, (unsigned long long)r.written);
}

int main(int argc, char **argv)
{
	pt_exec_init(argc, argv, self_exe, sizeof(self_exe));
	pt_dev();
	ncpu = pt_cpu_map("tpprog", 64, &map_fd, ev_fd, rings);
	openat_id = pt_tp_id("syscalls", "sys_enter_openat");
	if (openat_id <= 0 ||
	    pt_tp_get_field("syscalls", "sys_enter_openat", "dfd", &fdfd)) {
		PT_OK(0, "syscalls:sys_enter_openat and its dfd field");
		return pt_done();
	}
	PT_EQ(fdfd.size, 8, "dfd: 8 bytes");
	test_logic();
	test_strings();
	test_bounds();
	test_malformed();
	test_charge();
	test_old_sizes();
	return pt_done();
}
