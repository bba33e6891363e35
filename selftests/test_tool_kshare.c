// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace --count-by probe of several probes in ONE kernel table their
 * links share (PEA_LINK_IOC_AGG_SHARE, docs/aggregations.md): a kprobe
 * and a kretprobe on the test module's pea_st_kstack_target(), called
 * 2000 times in task and in hardirq context under a one-page ring:
 *   - --count-by probe: each probe's 4000 calls, "complete (in-kernel)",
 *     with --events (records written, most lost) and without (none);
 *   - with --count-by cpu too: each probe's cpu table from the same
 *     shared table (key probe, cpu), 4000 on the CPU, complete;
 *   - the text header of the probe table.
 */
#include "pt_tool.h"

#define N	2000
#define KP	"kprobe:pea_st_kstack_target"
#define KR	"kretprobe:pea_st_kstack_target"

static char line[65536];
static char objs[16][4096];
static int ncpu;

static void calls(int ctx, __u32 count)
{
	struct pea_st_kstack_nmi c = {
		.count = count, .hardirq = ctx == 1, .task = ctx == 0,
	};

	if (pt_ioctl_errno(pt_st(), PEA_ST_IOC_KSTACK_NMI, &c) ||
	    c.calls != count)
		pt_fatal("PEA_ST_IOC_KSTACK_NMI");
}

/* Stop the tool and keep its stdout lines (of @type, if set). */
static int finish(struct pt_proc *p, const char *type)
{
	return pt_trace_stop_lines(p, type, line, sizeof(line), objs[0],
				   sizeof(objs[0]), 16);
}

static const char *find(int n, const char *key, const char *val, int nth)
{
	int i;

	for (i = 0; i < n; i++)
		if (pt_json_streq(objs[i], key, val) && !nth--)
			return objs[i];
	return NULL;
}

static const char probe_rows[] =
	"\"rows\":[{\"key\":\"" KP "\",\"count\":4000},{\"key\":\"" KR
	"\",\"count\":4000}]";

static void test_probe(bool events)
{
	char *argv[] = { PT_PEA, "trace", "--pages", "1", KP, KR,
			 "--count-by", "probe", "--json",
			 events ? "--events" : NULL, NULL };
	struct pt_proc p;
	const char *c;
	int n, ctx;

	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "pea trace %s %s --count-by probe starts", KP, KR);
		pt_proc_close(&p);
		return;
	}
	pt_pin(ncpu - 1);
	for (ctx = 0; ctx < 2; ctx++)
		calls(ctx, N);
	n = finish(&p, "count");
	c = find(n, "by", "probe", 0);
	PT_OK(c && pt_json_num(c, "count", -1) == 4 * N &&
	      strstr(c, "\"complete\":true,\"in_kernel\":true") &&
	      strstr(c, probe_rows) && pt_json_num(c, "other", -1) == 0,
	      "--count-by probe of a kprobe and a kretprobe%s: one shared kernel table, 4000 calls each, complete",
	      events ? ", with --events on a one-page ring" : "");
	if (c)
		pt_diag("%s", c);
}

static void test_probe_cpu(void)
{
	/* Before the probes: each probe's own cpu table. */
	char *argv[] = { PT_PEA, "trace", "--pages", "1", "--count-by",
			 "probe", "--count-by", "cpu", "--json", KP, KR,
			 NULL };
	char want[64];
	struct pt_proc p;
	const char *c, *k0, *k1;
	int n, ctx, cpu = ncpu - 1;

	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "--count-by probe --count-by cpu starts");
		pt_proc_close(&p);
		return;
	}
	pt_pin(cpu);
	for (ctx = 0; ctx < 2; ctx++)
		calls(ctx, N);
	n = finish(&p, "count");
	c = find(n, "by", "probe", 0);
	k0 = find(n, "by", "cpu", 0);
	k1 = find(n, "by", "cpu", 1);
	snprintf(want, sizeof(want), "\"rows\":[{\"key\":%d,\"count\":4000}]",
		 cpu);
	PT_OK(c && strstr(c, probe_rows) &&
	      strstr(c, "\"complete\":true,\"in_kernel\":true"),
	      "--count-by probe beside --count-by cpu: 4000 each, complete");
	PT_OK(k0 && k1 && strstr(k0, want) && strstr(k1, want) &&
	      strstr(k0, "\"complete\":true,\"in_kernel\":true") &&
	      strstr(k1, "\"complete\":true,\"in_kernel\":true") &&
	      pt_json_streq(k0, "probe", KP) && pt_json_streq(k1, "probe", KR),
	      "each probe's --count-by cpu from the shared table: 4000 on CPU %d, complete",
	      cpu);
	if (k0)
		pt_diag("%s", k0);
	if (k1)
		pt_diag("%s", k1);
}

static void test_text(void)
{
	char *argv[] = { PT_PEA, "trace", KP, KR, "--count-by", "probe",
			 NULL };
	struct pt_proc p;
	char out[8192] = "";
	int n, i;

	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "--count-by probe (text) starts");
		pt_proc_close(&p);
		return;
	}
	calls(0, N);
	n = finish(&p, NULL);
	for (i = 0; i < n; i++) {
		strncat(out, objs[i], sizeof(out) - strlen(out) - 2);
		strcat(out, "\n");
	}
	PT_OK(strstr(out, "all probes: count by probe, 4000 events, 2 keys, complete (in-kernel)") != NULL,
	      "the text header says complete (in-kernel)");
	pt_diag("%s", out);
}

int main(void)
{
	ncpu = pt_setup(64);
	test_probe(true);
	test_probe(false);
	test_probe_cpu();
	test_text();
	return pt_done();
}
