// SPDX-License-Identifier: GPL-2.0
/*
 * `pea trace 'kprobe:GLOB' 'kretprobe:GLOB'` through one fprobe link per
 * glob (issue 21), through /bin/pea in the guest, on the test module's
 * pea_st_fp_0 .. pea_st_fp_7 (PEA_ST_IOC_FPROBE calls each a known
 * number of times):
 *   - where the kernel has fprobes (6.12) stderr says "one fprobe link
 *     for 8 functions" for each glob; where it has none (6.1) "one kprobe
 *     per function, 8 links (this kernel has no fprobe)"; with
 *     --no-fprobe, one kprobe each, said so;
 *   - each way, every function's events are exact, each named as its own
 *     probe (kprobe:pea_st_fp_N), the kretprobes' ret exact;
 *   - with an in-kernel --count-by (a table per link) one kprobe each,
 *     said so, and the counts per probe exact.
 */
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_fprobe.h"

#define NF	PEA_ST_FP_NR
#define ARG	100

static char line[65536];
static char err[1 << 16];
static char pid_s[16];
static const __u32 counts[NF] = { 3, 1, 4, 1, 5, 9, 2, 6 };

static void call_funcs(void)
{
	struct pea_st_fprobe f;

	memset(&f, 0, sizeof(f));
	memcpy(f.counts, counts, sizeof(f.counts));
	f.arg = ARG;
	if (ioctl(pt_st(), PEA_ST_IOC_FPROBE, &f))
		pt_fatal("PEA_ST_IOC_FPROBE");
}

/* Events per function of the kprobe and kretprobe globs, and mistakes. */
struct seen {
	int entry[NF], ret[NF];
	int bad, other;
};

static int collect(struct pt_proc *p, struct seen *s)
{
	int rc;

	memset(s, 0, sizeof(*s));
	while (pt_proc_line(p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		char name[256];
		int i;

		if (!pt_json_streq(line, "type", "event"))
			continue;
		if (!pt_json_get(line, "probe", name, sizeof(name), NULL))
			name[0] = 0;
		if (sscanf(name, "kprobe:pea_st_fp_%d", &i) == 1 &&
		    i >= 0 && i < NF) {
			s->entry[i]++;
		} else if (sscanf(name, "kretprobe:pea_st_fp_%d", &i) == 1 &&
			   i >= 0 && i < NF) {
			long long r = pt_json_num(line, "ret", 1);

			s->ret[i]++;
			/* i * 1000 - (ARG + k) - i for k < counts[i] */
			if (r > i * 1000 - ARG - i ||
			    r <= i * 1000 - ARG - i - (long long)counts[i])
				s->bad++;
		} else {
			s->other++;
		}
	}
	pt_proc_drain_err(p);
	rc = pt_proc_wait(p);
	snprintf(err, sizeof(err), "%s", p->err_all ? p->err_all : "");
	pt_proc_close(p);
	return rc;
}

static void check_counts(const struct seen *s, const char *what)
{
	int i, good = 0;

	for (i = 0; i < NF; i++) {
		good += s->entry[i] == (int)counts[i] &&
			s->ret[i] == (int)counts[i];
		if (s->entry[i] != (int)counts[i] || s->ret[i] != (int)counts[i])
			pt_diag("%s: pea_st_fp_%d: %d entries, %d returns, want %u",
				what, i, s->entry[i], s->ret[i], counts[i]);
	}
	PT_EQ(good, NF, "%s: every function's entries and returns exact", what);
	PT_EQ(s->bad, 0, "%s: ret exact in every return", what);
	PT_EQ(s->other, 0, "%s: no event of another probe", what);
}

/* One session of both globs; @extra: one more option or NULL. */
static void session(const char *extra, const char *want_msg,
		    const char *what)
{
	struct pt_proc p;
	struct seen s;
	char *argv[] = { PT_PEA, "trace", "--json", "--pid", pid_s,
			 "kprobe:pea_st_fp_*", "kretprobe:pea_st_fp_*",
			 (char *)extra, NULL };
	char want[512];
	int rc;

	PT_OK(pt_trace_start(&p, argv), "%s: attached", what);
	call_funcs();
	kill(p.pid, SIGINT);
	rc = collect(&p, &s);
	PT_EQ(rc, 0, "%s: exit 0", what);
	snprintf(want, sizeof(want), "pea: 'kprobe:pea_st_fp_*': %s\n",
		 want_msg);
	PT_OK(strstr(err, want), "%s: stderr says \"%.*s\"", what,
	      (int)strlen(want) - 1, want);
	snprintf(want, sizeof(want), "pea: 'kretprobe:pea_st_fp_*': %s\n",
		 want_msg);
	PT_OK(strstr(err, want), "%s: and for the kretprobe glob", what);
	if (!strstr(err, want))
		pt_diag("stderr: %s", err);
	check_counts(&s, what);
}

/* In-kernel --count-by: a table per link, so one kprobe per function. */
static void count_by(void)
{
	/* Before the glob: a table for each of its probes. */
	char *argv[] = { PT_PEA, "trace", "--json", "--pid", pid_s,
			 "--count-by", "comm", "kprobe:pea_st_fp_*", NULL };
	int seen[NF] = { 0 }, good = 0, i, rc;
	struct pt_proc p;

	PT_OK(pt_trace_start(&p, argv), "--count-by comm: attached");
	call_funcs();
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		char name[256];

		if (!pt_json_streq(line, "type", "count"))
			continue;
		if (!pt_json_get(line, "probe", name, sizeof(name), NULL) ||
		    sscanf(name, "kprobe:pea_st_fp_%d", &i) != 1 ||
		    i < 0 || i >= NF) {
			pt_diag("a table of no function: %s", line);
			continue;
		}
		/* One key, this test's comm: the table's count is its row's. */
		if (pt_json_num(line, "keys", -1) == 1)
			seen[i] = (int)pt_json_num(line, "count", -1);
		else
			pt_diag("%s", line);
	}
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	snprintf(err, sizeof(err), "%s", p.err_all ? p.err_all : "");
	pt_proc_close(&p);
	PT_EQ(rc, 0, "--count-by comm: exit 0");
	for (i = 0; i < NF; i++) {
		good += seen[i] == (int)counts[i];
		if (seen[i] != (int)counts[i])
			pt_diag("--count-by comm: pea_st_fp_%d: %d, want %u", i,
				seen[i], counts[i]);
	}
	PT_EQ(good, NF, "--count-by comm: each function's count exact");
	PT_OK(strstr(err, "pea: 'kprobe:pea_st_fp_*': one kprobe per function, 8 links (in-kernel tables are one per link)\n"),
	      "--count-by comm: stderr says one kprobe per function, and why");
	if (good != NF)
		pt_diag("stderr: %s", err);
}

int main(void)
{
	bool fp = pt_kernel_has_fprobe();

	pt_st();
	snprintf(pid_s, sizeof(pid_s), "%d", getpid());
	pt_diag("the kernel %s fprobes", fp ? "has" : "has no");
	session(NULL, fp ? "one fprobe link for 8 functions" :
		"one kprobe per function, 8 links (this kernel has no fprobe)",
		fp ? "fprobe links" : "no fprobe: kprobes");
	session("--no-fprobe", "one kprobe per function, 8 links (--no-fprobe)",
		"--no-fprobe");
	count_by();
	return pt_done();
}
