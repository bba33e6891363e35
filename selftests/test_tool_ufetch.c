// SPDX-License-Identifier: GPL-2.0
/*
 * Fetch expressions and --filter after a uprobe or uretprobe in `pea
 * trace` (issue 21), through /bin/pea in the guest, on a function of this
 * program called with known arguments (--pid its own):
 *   - uprobe:SELF:pt_uf_fn str(arg0) n=arg1:s32 b=+8(arg2):u32
 *     name=+0(+16(arg2)):string --filter 'n > 1': of three calls only the
 *     one with n 2 is written, its JSON "params" exact (a user string, a
 *     register cut to s32, a u32 in the struct it points to, a string
 *     through a pointer in that struct), and the summary counts 2
 *     filtered out;
 *   - uretprobe:SELF:pt_uf_fn ret:s64 n=arg1:s32 --filter 'ret:s64 < 0': the
 *     two calls that return a negative number, ret and n exact (n as it
 *     was at entry);
 *   - refusals with the reason: ret at a uprobe, -1 compared with a u32.
 */
#include "pea_test.h"
#include "pt_tool.h"

struct pt_uf_obj {
	long a;
	unsigned int b;
	const char *name;
};

static char line[65536];
static char out[1 << 16], err[1 << 16];
static char self[256];

__attribute__((noipa, used)) long pt_uf_fn(const char *s, long n,
					  struct pt_uf_obj *o)
{
	__asm__ volatile("" : : "r"(s), "r"(o) : "memory");
	return n * 2 - 7;
}

static struct pt_uf_obj objs[3] = {
	{ 1, 11, "obj-one" }, { 2, 22, "obj-two" }, { 3, 33, "obj-three" },
};
static const char *const strs[3] = { "first", "second", "third" };

/* Read a JSON session to its end: the "params" of each event into @p. */
static char link_info[1024];

static int collect(struct pt_proc *pp, char p[][512], long long *ret, int max,
		   int *n)
{
	int rc;

	*n = 0;
	link_info[0] = 0;
	while (pt_proc_line(pp, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "summary"))
			pt_json_get(line, "link", link_info, sizeof(link_info),
				    NULL);
		if (!pt_json_streq(line, "type", "event"))
			continue;
		if (*n < max) {
			pt_json_get(line, "params", p[*n], 512, NULL);
			ret[*n] = pt_json_num(line, "ret", -12345);
		}
		++*n;
	}
	pt_proc_drain_err(pp);
	snprintf(err, sizeof(err), "%s", pp->err_all ? pp->err_all : "");
	rc = pt_proc_wait(pp);
	pt_proc_close(pp);
	return rc;
}

static void test_uprobe(void)
{
	char probe[512], p[4][512];
	long long ret[4];
	struct pt_proc pp;
	int n, rc;

	snprintf(probe, sizeof(probe), "uprobe:%s:pt_uf_fn", self);
	PT_OK(pt_trace_start_self(&pp, probe, (char *[]){ "--json",
		"str(arg0)", "n=arg1:s32", "b=+8(arg2):u32",
		"name=+0(+16(arg2)):string", "--filter", "n > 1", NULL }),
	      "uprobe with fetches and --filter: attached");
	pt_uf_fn(strs[0], 1, &objs[0]);
	pt_uf_fn(strs[1], 2, &objs[1]);
	pt_uf_fn(strs[2], -5, &objs[2]);
	kill(pp.pid, SIGINT);
	rc = collect(&pp, p, ret, 4, &n);
	PT_EQ(rc, 0, "uprobe: exit 0");
	PT_EQ(n, 1, "uprobe: --filter 'n > 1' keeps 1 of 3 calls");
	PT_OK(n >= 1 && !strcmp(p[0], "{\"str(arg0)\":\"second\",\"n\":2,\"b\":22,\"name\":\"obj-two\"}"),
	      "uprobe: params exact (got %s)", n >= 1 ? p[0] : "");
	PT_OK(pt_json_num(link_info, "hits", -1) == 3 &&
	      pt_json_num(link_info, "written", -1) == 1 &&
	      pt_json_num(link_info, "filtered", -1) == 2,
	      "uprobe: the summary's link: 3 hits, 1 written, 2 filtered (%s)",
	      link_info);
}

static void test_uretprobe(void)
{
	char probe[512], p[4][512];
	long long ret[4];
	struct pt_proc pp;
	int n, rc;

	snprintf(probe, sizeof(probe), "uretprobe:%s:pt_uf_fn", self);
	PT_OK(pt_trace_start_self(&pp, probe, (char *[]){ "--json",
		"ret:s64", "n=arg1:s32", "--filter", "ret:s64 < 0", NULL }),
	      "uretprobe with fetches and --filter: attached");
	pt_uf_fn(strs[0], 1, &objs[0]);
	pt_uf_fn(strs[1], 2, &objs[1]);
	pt_uf_fn(strs[2], 5, &objs[2]);
	kill(pp.pid, SIGINT);
	rc = collect(&pp, p, ret, 4, &n);
	PT_EQ(rc, 0, "uretprobe: exit 0");
	PT_EQ(n, 2, "uretprobe: --filter 'ret:s64 < 0' keeps 2 of 3 calls");
	PT_OK(n == 2 && !strcmp(p[0], "{\"ret:s64\":-5,\"n\":1}") &&
	      !strcmp(p[1], "{\"ret:s64\":-3,\"n\":2}"),
	      "uretprobe: ret and n exact (got %s %s)", p[0], n > 1 ? p[1] : "");
}

static void test_usage(void)
{
	char probe[512];
	int rc;

	snprintf(probe, sizeof(probe), "uprobe:%s:pt_uf_fn", self);
	rc = pt_run((char *[]){ PT_PEA, "trace", probe, "ret", NULL }, out,
		    sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "'ret': ret is a uretprobe's"),
	      "ret at a uprobe: exit 2, the reason");
	rc = pt_run((char *[]){ PT_PEA, "trace", probe, "+8(arg2):u32",
				"--filter", "+8(arg2):u32 == -1", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "-1 is out of range for u32"),
	      "-1 on a u32: exit 2, the range");
	if (rc != 2)
		pt_diag("exit %d: %s", rc, err);
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	test_uprobe();
	test_uretprobe();
	test_usage();
	return pt_done();
}
