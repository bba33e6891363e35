// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace --count-by and --hist on fetch expressions (issues 21, 22),
 * on the test's own openat2(2) calls (--pid its own) with known paths and
 * struct open_how fields:
 *   - --count-by 'str(filename,24)': counted in the kernel
 *     (PEA_AGG_KEY_FETCH), "complete (in-kernel)": 3 and 2 opens of two
 *     paths, a NULL path under its own (fault@0) row, a path past 24
 *     bytes cut and marked, in JSON and text;
 *   - --hist 'how->resolve': in the kernel (PEA_AGG_VAL_FETCH), every
 *     bucket, sum, min and max exact; --count-by 'how->resolve' in the
 *     kernel, and beside --count-by comm in one kernel key; --hist dfd
 *     --lhist: a signed int (-100) in its linear bucket;
 *   - --count-by filename (64 bytes: a wide kernel key) in the kernel,
 *     and str(filename,200) (past a wide key) from the records, the same
 *     rows;
 *   - --count-by comm,filename: a list with a fetch, in the kernel;
 *   - a fetch expression not given after the probe: a usage error.
 * Without BTF (the debug kernel) fetch expressions are refused: the test
 * says so and checks the refusal.
 */
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include "pt_tool.h"

#define OPEN		"kprobe:do_sys_openat2"
#define TMPDIR		"/tmp/pea-fkey"
#define KNOWN		TMPDIR "/known"
#define MISSING		TMPDIR "/missing"
#define LONGP		TMPDIR "/a-rather-long-name"	/* 32 bytes */

static char line[65536];
static char objs[16][8192];
static char out[65536], err[65536];

static long openat2_how(const char *path, __u64 flags, __u64 resolve)
{
	struct open_how how = { .flags = flags, .resolve = resolve };
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd >= 0)
		close((int)fd);
	return fd;
}

/* The opens every case makes: 7 calls of do_sys_openat2(). */
static void workload(void)
{
	int i;

	for (i = 0; i < 3; i++)
		openat2_how(KNOWN, O_PATH, 0);
	for (i = 0; i < 2; i++)
		openat2_how(MISSING, O_PATH, RESOLVE_NO_SYMLINKS);
	openat2_how(NULL, O_PATH, RESOLVE_NO_XDEV);
	openat2_how(LONGP, O_PATH, RESOLVE_BENEATH);
}

/* Stop the tool and keep its stdout lines (of @type, if set). */
static int finish(struct pt_proc *p, const char *type)
{
	return pt_trace_stop_lines(p, type, line, sizeof(line), objs[0],
				   sizeof(objs[0]), 16);
}

static const char rows[] =
	"\"rows\":[{\"key\":\"" KNOWN "\",\"count\":3},{\"key\":\"" MISSING
	"\",\"count\":2},{\"key\":{\"fault\":0},\"count\":1},{\"key\":{\"str\":\"";

static void test_count_kernel(void)
{
	char want[512];
	struct pt_proc p;
	const char *c;
	int n, i;

	if (!pt_trace_start_self(&p, OPEN, (char *[]){ "str(filename,24)",
				 "--count-by", "str(filename,24)", "--json",
				 NULL })) {
		PT_OK(0, "--count-by 'str(filename,24)' starts");
		pt_proc_close(&p);
		return;
	}
	workload();
	n = finish(&p, "count");
	c = n ? objs[0] : NULL;
	snprintf(want, sizeof(want), "%s%.24s\",\"truncated\":true},\"count\":1}],",
		 rows, LONGP);
	PT_OK(c && pt_json_streq(c, "by", "str(filename,24)") &&
	      pt_json_streq(c, "source", "fetch") &&
	      strstr(c, "\"complete\":true,\"in_kernel\":true") &&
	      pt_json_num(c, "count", -1) == 7 &&
	      pt_json_num(c, "keys", -1) == 4 &&
	      pt_json_num(c, "other", -1) == 0 && strstr(c, want),
	      "--count-by 'str(filename,24)': in the kernel, complete, 7 opens: %s 3, %s 2, the NULL path {\"fault\":0} 1, the long one cut at 24 and marked 1",
	      KNOWN, MISSING);
	if (c)
		pt_diag("%s", c);

	/* The text header says where the table comes from. */
	memset(objs, 0, sizeof(objs));
	if (!pt_trace_start_self(&p, OPEN, (char *[]){ "str(filename,24)",
				 "--count-by", "str(filename,24)", NULL })) {
		PT_OK(0, "--count-by 'str(filename,24)' (text) starts");
		pt_proc_close(&p);
		return;
	}
	workload();
	n = finish(&p, NULL);
	snprintf(want, sizeof(want),
		 OPEN ": count by str(filename,24), 7 events, 4 keys, complete (in-kernel)\n");
	out[0] = 0;
	for (i = 0; i < n; i++) {
		strncat(out, objs[i], sizeof(out) - strlen(out) - 2);
		strcat(out, "\n");
	}
	PT_OK(strstr(out, want) &&
	      strstr(out, "         3  " KNOWN "\n") &&
	      strstr(out, "         2  " MISSING "\n") &&
	      strstr(out, "         1  (fault@0)\n") &&
	      strstr(out, "         1  /tmp/pea-fkey/a-rather-l...\n"),
	      "text: %srows 3, 2, (fault@0), the long path cut with ... (got %s)",
	      want, out);
	memset(objs, 0, sizeof(objs));
}

static void test_hist_kernel(void)
{
	struct pt_proc p;
	const char *h;
	int n;

	if (!pt_trace_start_self(&p, OPEN, (char *[]){ "how->resolve",
				 "--hist", "how->resolve", "--json", NULL })) {
		PT_OK(0, "--hist 'how->resolve' starts");
		pt_proc_close(&p);
		return;
	}
	workload();
	n = finish(&p, "hist");
	h = n ? objs[0] : NULL;
	PT_OK(h && pt_json_streq(h, "source", "fetch") &&
	      strstr(h, "\"complete\":true,\"in_kernel\":true") &&
	      pt_json_num(h, "count", -1) == 7 &&
	      pt_json_num(h, "failed", -1) == 0 &&
	      pt_json_num(h, "sum", -1) == 2 * 4 + 1 + 8 &&
	      pt_json_num(h, "min", -1) == 0 && pt_json_num(h, "max", -1) == 8 &&
	      strstr(h, "\"buckets\":[{\"lo\":0,\"hi\":1,\"count\":3},{\"lo\":1,\"hi\":2,\"count\":1},{\"lo\":4,\"hi\":8,\"count\":2},{\"lo\":8,\"hi\":16,\"count\":1}]}"),
	      "--hist 'how->resolve' in the kernel, complete: 7 values, none failed, [0] 3, [1] 1, [4,8) 2, [8,16) 1, sum 17, min 0, max 8");
	if (h)
		pt_diag("%s", h);
	memset(objs, 0, sizeof(objs));
}

/*
 * An integer fetch as a count key, and a signed one in linear buckets:
 * dfd is AT_FDCWD (-100) at every open.
 */
static void test_int_kernel(void)
{
	struct pt_proc p;
	const char *c;
	int n;

	if (!pt_trace_start_self(&p, OPEN, (char *[]){ "how->resolve",
				 "--count-by", "how->resolve", "--json",
				 NULL })) {
		PT_OK(0, "--count-by 'how->resolve' starts");
		pt_proc_close(&p);
		return;
	}
	workload();
	n = finish(&p, "count");
	c = n ? objs[0] : NULL;
	PT_OK(c && strstr(c, "\"complete\":true,\"in_kernel\":true") &&
	      pt_json_num(c, "count", -1) == 7 &&
	      strstr(c, "\"rows\":[{\"key\":0,\"count\":3},{\"key\":4,\"count\":2},{\"key\":1,\"count\":1},{\"key\":8,\"count\":1}],"),
	      "--count-by 'how->resolve' in the kernel: 0 x3, 4 x2, 1, 8");
	if (c)
		pt_diag("%s", c);
	memset(objs, 0, sizeof(objs));

	/* Two count tables in one kernel key: comm (2 words), the fetch (2). */
	if (!pt_trace_start_self(&p, OPEN, (char *[]){ "how->resolve",
				 "--count-by", "comm", "--count-by",
				 "how->resolve", "--json", NULL })) {
		PT_OK(0, "--count-by comm --count-by 'how->resolve' starts");
		pt_proc_close(&p);
		return;
	}
	workload();
	n = finish(&p, "count");
	{
		const char *cm = NULL, *rs = NULL;
		char want[256];
		int i;

		for (i = 0; i < n; i++) {
			if (pt_json_streq(objs[i], "by", "comm"))
				cm = objs[i];
			if (pt_json_streq(objs[i], "by", "how->resolve"))
				rs = objs[i];
		}
		snprintf(want, sizeof(want), "\"rows\":[{\"key\":\"%s\",\"count\":7}]",
			 "test_tool_fkey");
		PT_OK(cm && rs && strstr(cm, "\"in_kernel\":true") &&
		      strstr(rs, "\"in_kernel\":true") && strstr(cm, want) &&
		      strstr(rs, "\"rows\":[{\"key\":0,\"count\":3},{\"key\":4,\"count\":2},{\"key\":1,\"count\":1},{\"key\":8,\"count\":1}],"),
		      "--count-by comm and 'how->resolve': one kernel key, both in the kernel: comm 7, resolve 0 x3, 4 x2, 1, 8");
		if (cm)
			pt_diag("%s", cm);
		if (rs)
			pt_diag("%s", rs);
	}
	memset(objs, 0, sizeof(objs));

	if (!pt_trace_start_self(&p, OPEN, (char *[]){ "dfd", "--hist", "dfd",
				 "--lhist", "-200,0,50", "--json", NULL })) {
		PT_OK(0, "--hist dfd --lhist starts");
		pt_proc_close(&p);
		return;
	}
	workload();
	n = finish(&p, "hist");
	c = n ? objs[0] : NULL;
	PT_OK(c && strstr(c, "\"complete\":true,\"in_kernel\":true") &&
	      pt_json_num(c, "count", -1) == 7 &&
	      pt_json_num(c, "sum", 0) == -700 &&
	      pt_json_num(c, "min", 0) == -100 &&
	      pt_json_num(c, "max", 0) == -100 &&
	      strstr(c, "\"linear\":{\"min\":-200,\"max\":0,\"step\":50},\"buckets\":[{\"lo\":-100,\"hi\":-50,\"count\":7}]}"),
	      "--hist dfd --lhist -200,0,50 in the kernel: signed as int, 7 in [-100, -50), sum -700");
	if (c)
		pt_diag("%s", c);
	memset(objs, 0, sizeof(objs));
}

/*
 * @expr (a string of 64 bytes: a wide kernel key; of 200: past one) with
 * --count-by: the same rows, the long path whole, in the kernel or from
 * the records as @kernel says.
 */
static void test_count_long(const char *expr, bool kernel)
{
	char want[512];
	struct pt_proc p;
	const char *c;
	int n;

	if (!pt_trace_start_self(&p, OPEN, (char *[]){ (char *)expr,
				 "--count-by", (char *)expr, "--json",
				 NULL })) {
		PT_OK(0, "--count-by %s starts", expr);
		pt_proc_close(&p);
		return;
	}
	workload();
	n = finish(&p, "count");
	c = n ? objs[0] : NULL;
	snprintf(want, sizeof(want),
		 "\"rows\":[{\"key\":\"" KNOWN "\",\"count\":3},{\"key\":\"" MISSING "\",\"count\":2},{\"key\":\"" LONGP "\",\"count\":1},{\"key\":{\"fault\":0},\"count\":1}],");
	PT_OK(c && pt_json_streq(c, "source", "fetch") &&
	      (kernel ? strstr(c, "\"complete\":true,\"in_kernel\":true") != NULL :
	       !strstr(c, "in_kernel") &&
	       strstr(c, "\"complete\":true,\"lost\":0") != NULL) &&
	      pt_json_num(c, "count", -1) == 7 && strstr(c, want),
	      "--count-by %s %s: the same counts, the long path whole (a failed fetch after a value of the same count)",
	      expr, kernel ? "(64 bytes) in the kernel, a wide key" :
	      "(200 bytes, past a wide key) from the records");
	if (c)
		pt_diag("%s", c);
	memset(objs, 0, sizeof(objs));
}

/*
 * --count-by comm,filename: a list with a fetch, in the kernel (comm and
 * the 64-byte string: 11 words, a wide key), the same rows as
 * --count-by filename, each with the test's comm.
 */
static void test_count_list(void)
{
	char want[1024], comm[16] = "";
	struct pt_proc p;
	const char *c;
	int n;

	if (prctl(PR_GET_NAME, comm))
		pt_fatal("PR_GET_NAME");
	if (!pt_trace_start_self(&p, OPEN, (char *[]){ "filename",
				 "--count-by", "comm,filename", "--json",
				 NULL })) {
		PT_OK(0, "--count-by comm,filename starts");
		pt_proc_close(&p);
		return;
	}
	workload();
	n = finish(&p, "count");
	c = n ? objs[0] : NULL;
	snprintf(want, sizeof(want),
		 "\"rows\":[{\"key\":[\"%s\",\"" KNOWN "\"],\"count\":3},{\"key\":[\"%s\",\"" MISSING "\"],\"count\":2},",
		 comm, comm);
	PT_OK(c && pt_json_streq(c, "by", "comm,filename") &&
	      strstr(c, "\"complete\":true,\"in_kernel\":true") &&
	      pt_json_num(c, "count", -1) == 7 &&
	      pt_json_num(c, "keys", -1) == 4 && strstr(c, want) &&
	      strstr(c, "\"" LONGP "\"],\"count\":1}") &&
	      strstr(c, "{\"fault\":0}],\"count\":1}"),
	      "--count-by comm,filename: in the kernel (a wide key), complete, the same 7 opens under comm %s",
	      comm);
	if (c)
		pt_diag("%s", c);
	memset(objs, 0, sizeof(objs));
}

static void expect_usage(char **argv, const char *msg, const char *what)
{
	int rc = pt_run(argv, out, sizeof(out), err, sizeof(err), NULL, NULL);

	PT_EQ(rc, 2, "%s: a usage error", what);
	PT_OK(strstr(err, msg) != NULL, "%s: says '%s' (got %s)", what, msg,
	      err);
}

int main(void)
{
	int fd;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pt_diag("no kernel BTF: fetch expressions are refused");
		expect_usage((char *[]){ PT_PEA, "trace", OPEN,
			     "str(filename,24)", "--count-by",
			     "str(filename,24)", NULL },
			     OPEN ": fetch 'str(filename,24)': no BTF: /sys/kernel/btf/vmlinux",
			     "no BTF: a fetch expression as a key");
		return pt_done();
	}
	mkdir(TMPDIR, 0755);
	fd = open(KNOWN, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	fd = open(LONGP, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	test_count_kernel();
	test_hist_kernel();
	test_int_kernel();
	test_count_long("filename", true);
	test_count_long("str(filename,200)", false);
	test_count_list();
	expect_usage((char *[]){ PT_PEA, "trace", OPEN, "--count-by",
		     "how->flags", NULL },
		     "--count-by 'how->flags': a fetch expression is a key when it is given after the probe too",
		     "--count-by of an expression not given after the probe");
	unlink(KNOWN);
	unlink(LONGP);
	rmdir(TMPDIR);
	return pt_done();
}
