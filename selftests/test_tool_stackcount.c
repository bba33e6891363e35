// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace --count-by kstack (bcc's stackcount), counted in the kernel
 * (docs/aggregations.md): the test module's pea_st_kstack_target()
 * called from its three known chains (task 2000, hardirq 1000, NMI 500
 * times) under a one-page ring, without --kstack:
 *   - --json: one table, 3500 events, 3 keys, complete in the kernel,
 *     each row's stack the target then its chain's caller, with the
 *     chain's exact count; no record written, none lost;
 *   - the columns: the header says "complete (in-kernel)", each stack
 *     printed symbolised under its count;
 *   - --folded FILE: three lines, root first, kernel frames marked _[k],
 *     ending in the chain's caller, the target and the exact count;
 *   - --folded without --count-by kstack, and --count-by kstack of a
 *     uprobe: usage errors.
 */
#include "pt_tool.h"

static char line[65536];
static char objs[64][8192];

static void calls(int ctx, __u32 count)
{
	struct pea_st_kstack_nmi c = {
		.count = count, .hardirq = ctx == 1, .task = ctx == 0,
	};

	if (pt_ioctl_errno(pt_st(), PEA_ST_IOC_KSTACK_NMI, &c) ||
	    c.calls != count)
		pt_fatal("PEA_ST_IOC_KSTACK_NMI");
}

/* The three chains on CPU 0: 2000 task, 1000 hardirq, 500 NMI calls. */
static void chains(void)
{
	pt_pin(0);
	calls(0, 2000);
	calls(1, 1000);
	calls(2, 500);
}

/* Stop the tool (SIGINT), keep its stdout lines; their number. */
static int finish(struct pt_proc *p)
{
	int n = 0, rc;

	usleep(200000);
	kill(p->pid, SIGINT);
	while (pt_proc_line(p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		if (n < 64)
			snprintf(objs[n++], sizeof(objs[0]), "%.8191s", line);
	pt_proc_drain_err(p);
	rc = pt_proc_wait(p);
	pt_proc_close(p);
	PT_EQ(rc, 0, "pea trace exits 0");
	return n;
}

static const char *const caller[3] = {
	"st_kstack_nmi", "pea_st_kstack_irq_work", "pea_st_kstack_nmi",
};
static const long long want[3] = { 2000, 1000, 500 };

static void test_json(void)
{
	char *argv[] = { PT_PEA, "trace", "--pages", "1",
			 "kprobe:pea_st_kstack_target", "--count-by", "kstack",
			 "--json", NULL };
	const char *c = NULL, *s = NULL, *r;
	int n, i, k, seen[3] = { 0 }, good = 0;
	struct pt_proc p;
	char pat[128];

	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "pea trace --count-by kstack starts");
		pt_proc_close(&p);
		return;
	}
	chains();
	n = finish(&p);
	for (i = 0; i < n; i++) {
		if (pt_json_streq(objs[i], "type", "count"))
			c = objs[i];
		if (pt_json_streq(objs[i], "type", "summary"))
			s = objs[i];
	}
	PT_OK(c && pt_json_num(c, "count", -1) == 3500 &&
	      pt_json_num(c, "keys", -1) == 3 &&
	      strstr(c, "\"complete\":true,\"in_kernel\":true") &&
	      pt_json_num(c, "other", -1) == 0,
	      "--count-by kstack: 3500 events, 3 stacks, complete in the kernel");
	if (c)
		pt_diag("%.2000s", c);
	/* Each row: the target first, then its chain's caller; its count. */
	for (r = c ? strstr(c, "{\"key\":[\"") : NULL; r;
	     r = strstr(r + 1, "{\"key\":[\"")) {
		const char *second = strstr(r, "\",\"");
		const char *cnt = strstr(r, "\"count\":");

		if (strncmp(r + 9, "pea_st_kstack_target+0x", 23) || !second ||
		    !cnt)
			continue;
		second += 3;
		for (k = 0; k < 3; k++) {
			snprintf(pat, sizeof(pat), "%s+0x", caller[k]);
			if (!strncmp(second, pat, strlen(pat)))
				break;
		}
		if (k < 3 && !seen[k]++ && atoll(cnt + 8) == want[k])
			good++;
	}
	PT_EQ(good, 3,
	      "each chain's stack (target, then st_kstack_nmi / pea_st_kstack_irq_work / pea_st_kstack_nmi) counted exactly: 2000, 1000, 500");
	PT_OK(s && strstr(s, ",\"lost\":0,"),
	      "no records written (the kernel counted), none lost");
	if (s)
		pt_diag("%s", s);
}

static void test_columns(const char *folded)
{
	char *argv[] = { PT_PEA, "trace", "--pages", "1",
			 "kprobe:pea_st_kstack_target", "--count-by", "kstack",
			 "--folded", (char *)folded, NULL };
	char hdr[256], buf[16384];
	int n, i, hdr_ok = 0, rows = 0, k, good = 0;
	struct pt_proc p;
	FILE *f;

	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "pea trace --count-by kstack --folded starts");
		pt_proc_close(&p);
		return;
	}
	chains();
	n = finish(&p);
	snprintf(hdr, sizeof(hdr),
		 "kprobe:pea_st_kstack_target: count by kstack, 3500 events, 3 keys, complete (in-kernel)");
	for (i = 0; i < n; i++) {
		if (!strcmp(objs[i], hdr))
			hdr_ok = 1;
		for (k = 0; k < 3; k++)
			if (atoll(objs[i]) == want[k] && i + 2 < n &&
			    strstr(objs[i + 1], "pea_st_kstack_target+0x") &&
			    strstr(objs[i + 2], caller[k]))
				rows++;
	}
	PT_OK(hdr_ok, "header: '%s'", hdr);
	PT_EQ(rows, 3, "each count printed over its stack, target first, then the chain's caller");
	if (!hdr_ok || rows != 3)
		for (i = 0; i < n && i < 40; i++)
			pt_diag("%s", objs[i]);
	f = fopen(folded, "r");
	n = 0;
	while (f && fgets(buf, sizeof(buf), f)) {
		n++;
		for (k = 0; k < 3; k++) {
			char tail[256];
			size_t bl = strlen(buf), tl;
			int semis = 0, marks = 0;
			const char *q;

			snprintf(tail, sizeof(tail),
				 ";%s [pea_selftest]_[k];pea_st_kstack_target [pea_selftest]_[k] %lld\n",
				 caller[k], want[k]);
			tl = strlen(tail);
			for (q = buf; *q; q++)
				semis += *q == ';';
			for (q = strstr(buf, "_[k]"); q; q = strstr(q + 1, "_[k]"))
				marks++;
			if (bl > tl && !strcmp(buf + bl - tl, tail) &&
			    marks == semis + 1)
				good++;
		}
		if (n <= 3)
			pt_diag("folded: %.300s", buf);
	}
	if (f)
		fclose(f);
	PT_OK(n == 3 && good == 3,
	      "--folded: 3 lines (%d), root first, frames marked _[k], each ending in its caller, the target and its exact count (%d)",
	      n, good);
	unlink(folded);
}

static void usage(char *const argv[], const char *msg)
{
	static char out[4096], err[4096];
	int rc = pt_run(argv, out, sizeof(out), err, sizeof(err), NULL, NULL);

	PT_OK(rc == 2 && strstr(err, msg), "%s: exit 2, '%s' (%d)", argv[4],
	      msg, rc);
	if (rc != 2 || !strstr(err, msg))
		pt_diag("%s", err);
}

static void test_usage(void)
{
	char *a1[] = { PT_PEA, "trace", "kprobe:pea_st_kstack_target",
		       "--count-by", "pid", "--folded", "/tmp/x.folded", NULL };
	char self[256], probe[300];
	char *a2[] = { PT_PEA, "trace", probe, "--count-by", "kstack", NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	snprintf(probe, sizeof(probe), "uprobe:%s:main", self);

	usage(a1, "--folded FILE writes the stacks of --count-by kstack");
	usage(a2, "has no kernel stacks (kprobes, kretprobes and tracepoints have)");
}

int main(void)
{
	char folded[64];

	pt_setup(64);
	snprintf(folded, sizeof(folded), "/tmp/pea-stk-%d.folded", getpid());
	test_json();
	test_columns(folded);
	test_usage();
	return pt_done();
}
