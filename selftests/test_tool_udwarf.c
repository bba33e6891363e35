// SPDX-License-Identifier: GPL-2.0
/*
 * A uprobe's and uretprobe's parameters and return value by name and
 * type from DWARF (issue 21; tools/pea/udwarf.c), through /bin/pea in the
 * guest, on functions of this program (selftests/pt_udwarf.h, built with
 * -g) called with known arguments, --pid its own:
 *   - uprobe:SELF:pt_ud_fn i u c b s 'o->in->label' 'o->vals' 'o->tag':
 *     an int, an unsigned int above INT_MAX, an enum by its names, a
 *     bool, a char * followed in user memory, a string two pointers away,
 *     a fixed int array, a char array, each exact in text; on the call
 *     whose o->in is NULL, the chain through it is marked (fault@1) and
 *     the other values are kept;
 *   - the same in JSON, with --filter 'i > 0' on a parameter by name: of
 *     three calls two are written, their "params" exact (a long, an
 *     unsigned short, an int behind a pointer, {"fault":1} through NULL);
 *   - uretprobe:SELF:pt_ud_fn ret i s: ret an int, -19 and -27 in the
 *     JSON "ret" and in the fetch, the entry's arguments with it, and -19
 *     in the text RET column (the register holds 4294967277);
 *   - --filter 'c == PT_UD_BLUE || s ~ "hel*"': an enum by its value's
 *     name, a glob on a string in the process's memory;
 *   - --hist ret (the int's sign: three in the negative bucket) and
 *     --count-by c (the enum parameter by name: its values' names);
 *   - pea list -v: the parameters' registers and types by the x86-64
 *     SysV ABI (a double and a struct by value in none; the seventh and
 *     later integer ones at sp+8, sp+16); each refused by name with its
 *     reason (a stack one at a uretprobe), as are a float return, a bit
 *     field and an unknown name;
 *   - parameters on the stack (a long, an int, an unsigned char, a
 *     32-byte struct's array) exact, from the entry's stack pointer;
 *   - a C++ program (selftests/pt_udwarf_cxx.cc, g++ -g) as -- CMD:
 *     functions by qualified name (pt_ns::inner::twice, a method's
 *     this->fields) and by symbol, a stack parameter, ret; an overloaded
 *     name refused with its symbols, a double with the reason, an unknown
 *     name;
 *   - a shared object without DWARF: pea list -v says so, a name is
 *     refused with that reason, and a uretprobe on it notes once that ret
 *     and the arguments are raw registers.
 */
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_udwarf.h"

__asm__(".section .rodata\n"
	".globl pt_so_start\npt_so_start:\n"
	".incbin \"" PT_UPROBE_SO "\"\n"
	".globl pt_so_end\npt_so_end:\n"
	".previous\n");
extern const unsigned char pt_so_start[], pt_so_end[];

#define SO_PATH	"/tmp/pea-udwarf.so"

static char line[65536];
static char out[1 << 16], err[1 << 16];
static char self[256];

static struct pt_ud_inner in1 = { 2, "inner-one" };
static pt_ud_outer_t o1 = {
	.id = -7, .flags = 0xbeef, .in = &in1, .tag = "tagged",
	.vals = { 1, -2, 3 },
};

static pt_ud_outer_t o2 = {
	.id = 42, .flags = 7, .in = NULL, .tag = "", .vals = { 4, 5, 6 },
};

static char probe_fn[512], retprobe_fn[512];

/* The calls every case makes, with values known to the cases. */
static void call_two(void)
{
	pt_ud_fn(-3, 4000000000u, PT_UD_RED, true, "hello", &o1);
	pt_ud_fn(5, 1, PT_UD_BLUE, false, "world", &o2);
}

/* Read a JSON session to its end: the "params" and "ret" of each event. */
static int collect(struct pt_proc *pp, char p[][512], long long *ret,
		   int max, int *n, char *summary, size_t slen)
{
	int rc;

	*n = 0;
	summary[0] = 0;
	while (pt_proc_line(pp, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "summary"))
			pt_json_get(line, "link", summary, slen, NULL);
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

static void test_text(void)
{
	static const char *const want[2] = {
		"i=-3 u=4000000000 c=PT_UD_RED b=true s=\"hello\" o->in->label=\"inner-one\" o->vals=[1,-2,3] o->tag=\"tagged\"\n",
		"i=5 u=1 c=PT_UD_BLUE b=false s=\"world\" o->in->label=(fault@1) o->vals=[4,5,6] o->tag=\"\"\n",
	};
	struct pt_proc pp;
	char *a, *b;
	int rc;

	PT_OK(pt_trace_start_self(&pp, probe_fn, (char *[]){ "i", "u", "c",
		"b", "s", "o->in->label", "o->vals", "o->tag", NULL }),
	      "text: uprobe with 8 fetches by name attached");
	call_two();
	kill(pp.pid, SIGINT);
	rc = pt_proc_collect(&pp, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "text: exit 0");
	a = strstr(out, want[0]);
	b = strstr(out, want[1]);
	PT_OK(a && b && a < b, "text: both calls' values exact, in order");
	if (!a || !b)
		pt_diag("got: %s%s", out, err);
	PT_OK(!strstr(err, "note:"), "text: no note (the file has DWARF)");
}

static void test_json(void)
{
	char p[4][512], sum[1024];
	long long ret[4];
	struct pt_proc pp;
	int n, rc;

	PT_OK(pt_trace_start_self(&pp, probe_fn, (char *[]){ "--json", "i",
		"c", "o->id", "o->flags", "o->in->depth", "o->vals",
		"--filter", "i > 0", NULL }),
	      "json: uprobe with fetches by name and --filter 'i > 0' attached");
	call_two();
	pt_ud_fn(9, 3, PT_UD_GREEN, true, "again", &o1);
	kill(pp.pid, SIGINT);
	rc = collect(&pp, p, ret, 4, &n, sum, sizeof(sum));
	PT_EQ(rc, 0, "json: exit 0");
	PT_EQ(n, 2, "json: --filter 'i > 0' keeps 2 of 3 calls");
	PT_OK(n >= 1 && !strcmp(p[0], "{\"i\":5,\"c\":\"PT_UD_BLUE\",\"o->id\":42,\"o->flags\":7,\"o->in->depth\":{\"fault\":1},\"o->vals\":[4,5,6]}"),
	      "json: the call with o->in NULL: params exact, the chain marked (got %s)",
	      n >= 1 ? p[0] : "");
	PT_OK(n >= 2 && !strcmp(p[1], "{\"i\":9,\"c\":\"PT_UD_GREEN\",\"o->id\":-7,\"o->flags\":48879,\"o->in->depth\":2,\"o->vals\":[1,-2,3]}"),
	      "json: the third call: params exact (got %s)",
	      n >= 2 ? p[1] : "");
	PT_OK(pt_json_num(sum, "hits", -1) == 3 &&
	      pt_json_num(sum, "written", -1) == 2 &&
	      pt_json_num(sum, "filtered", -1) == 1 &&
	      pt_json_num(sum, "errors", -1) == 0,
	      "json: 3 hits, 2 written, 1 filtered, 0 errors (%s)", sum);
}

static void test_ret(void)
{
	char p[4][512], sum[1024], *l, *save;
	long long ret[4];
	struct pt_proc pp;
	int n, rc, rets = 0;

	PT_OK(pt_trace_start_self(&pp, retprobe_fn, (char *[]){ "--json",
		"ret", "i", "s", NULL }),
	      "ret: uretprobe with ret, i, s by name attached");
	call_two();
	kill(pp.pid, SIGINT);
	rc = collect(&pp, p, ret, 4, &n, sum, sizeof(sum));
	PT_EQ(rc, 0, "ret: exit 0");
	PT_EQ(n, 2, "ret: 2 returns");
	PT_OK(n == 2 && ret[0] == -19 && ret[1] == -27,
	      "ret: JSON \"ret\" -19 and -27 by the int return type (got %lld %lld)",
	      ret[0], ret[1]);
	PT_OK(n == 2 && !strcmp(p[0], "{\"ret\":-19,\"i\":-3,\"s\":\"hello\"}") &&
	      !strcmp(p[1], "{\"ret\":-27,\"i\":5,\"s\":\"world\"}"),
	      "ret: params exact (got %s %s)", p[0], n > 1 ? p[1] : "");

	PT_OK(pt_trace_start_self(&pp, retprobe_fn, (char *[]){ NULL }),
	      "ret text: uretprobe attached");
	pt_ud_fn(-3, 4000000000u, PT_UD_RED, true, "hello", &o1);
	kill(pp.pid, SIGINT);
	rc = pt_proc_collect(&pp, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "ret text: exit 0");
	for (l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char comm[32], r[32];
		unsigned int cpu, pid, tid;
		double t;

		if (sscanf(l, "%lf %u %31s %u %u %31s", &t, &cpu, comm, &pid,
			   &tid, r) == 6) {
			rets++;
			PT_OK(!strcmp(r, "-19"), "ret text: RET -19 (got %s)",
			      r);
		}
	}
	PT_EQ(rets, 1, "ret text: 1 line");
}

/* --filter on an enum by its value's name and on a user string. */
static void test_filter(void)
{
	char p[4][512], sum[1024];
	long long ret[4];
	struct pt_proc pp;
	int n, rc;

	PT_OK(pt_trace_start_self(&pp, probe_fn, (char *[]){ "--json", "i",
		"--filter", "c == PT_UD_BLUE || s ~ \"hel*\"", NULL }),
	      "filter: enum name and string glob attached");
	call_two();
	pt_ud_fn(9, 3, PT_UD_GREEN, true, "again", &o1);
	kill(pp.pid, SIGINT);
	rc = collect(&pp, p, ret, 4, &n, sum, sizeof(sum));
	PT_EQ(rc, 0, "filter: exit 0");
	PT_OK(n == 2 && !strcmp(p[0], "{\"i\":-3}") &&
	      !strcmp(p[1], "{\"i\":5}"),
	      "filter: the \"hello\" call and the PT_UD_BLUE call written (got %d: %s %s)",
	      n, n > 0 ? p[0] : "", n > 1 ? p[1] : "");
	PT_OK(pt_json_num(sum, "filtered", -1) == 1,
	      "filter: 1 filtered out (%s)", sum);
}

/* Aggregations by a parameter's name and by ret's type from DWARF. */
static void test_agg(void)
{
	char want[1024];
	struct pt_proc pp;
	int rc;

	PT_OK(pt_trace_start_self(&pp, retprobe_fn, (char *[]){ "--count",
		"3", "--hist", "ret", "--count-by", "c", NULL }),
	      "agg: uretprobe with --hist ret --count-by c attached");
	call_two();
	pt_ud_fn(9, 3, PT_UD_GREEN, true, "again", &o1);
	rc = pt_proc_collect(&pp, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "agg: exit 0");
	snprintf(want, sizeof(want), "%s: histogram of ret, 3 values\n"
		 "(..., 0)                  3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n",
		 retprobe_fn);
	PT_OK(strstr(out, want) != NULL,
	      "agg: --hist ret: -19, -27 and -31 in the negative bucket (int)");
	snprintf(want, sizeof(want), "%s: count by c, 3 events, 3 keys\n"
		 "     COUNT  KEY\n", retprobe_fn);
	PT_OK(strstr(out, want) && strstr(out, "         1  PT_UD_RED\n") &&
	      strstr(out, "         1  PT_UD_BLUE\n") &&
	      strstr(out, "         1  PT_UD_GREEN\n"),
	      "agg: --count-by c: one of each enum value, by name");
	if (pt_failed)
		pt_diag("output:\n%s%s", out, err);
}

/* pea list -v PROBE: exit 0 and exactly @want. */
static void list_is(const char *probe, const char *want)
{
	int rc = pt_run((char *[]){ PT_PEA, "list", "-v", (char *)probe,
				    NULL }, out, sizeof(out), err,
			sizeof(err), NULL, NULL);

	PT_OK(rc == 0 && !strcmp(out, want), "pea list -v %s exact", probe);
	if (rc || strcmp(out, want))
		pt_diag("exit %d: %s%s", rc, out, err);
}

static void test_list(void)
{
	char probe[512], want[2048];

	snprintf(want, sizeof(want),
		 "%s\n"
		 "    arg0  int i\n"
		 "    arg1  unsigned int u\n"
		 "    arg2  enum pt_ud_color c\n"
		 "    arg3  _Bool b\n"
		 "    arg4  const char *s\n"
		 "    arg5  pt_ud_outer_t *o\n"
		 "    ret   int\n", probe_fn);
	list_is(probe_fn, want);
	snprintf(probe, sizeof(probe), "uprobe:%s:pt_ud_refuse", self);
	snprintf(want, sizeof(want),
		 "%s\n"
		 "    -     double d  (SSE register)\n"
		 "    -     struct pt_ud_pair pr  (struct by value)\n"
		 "    arg1  long int a\n"
		 "    arg2  long int b\n"
		 "    arg3  long int c\n"
		 "    arg4  long int e\n"
		 "    arg5  long int h\n"
		 "    sp+8  long int f\n"
		 "    sp+16 long int g\n"
		 "    ret   double\n", probe);
	list_is(probe, want);
	snprintf(probe, sizeof(probe), "uprobe:%s:pt_ud_big", self);
	snprintf(want, sizeof(want),
		 "%s\n"
		 "    arg1  pt_ud_len_t x\n"
		 "    ret   struct pt_ud_big\n", probe);
	list_is(probe, want);
}

/* pea trace PROBE EXPR: exit 2 and @msg. */
static void refused(const char *probe, const char *expr, const char *msg)
{
	int rc = pt_run((char *[]){ PT_PEA, "trace", (char *)probe,
				    (char *)expr, NULL }, out, sizeof(out),
			err, sizeof(err), NULL, NULL);

	PT_OK(rc == 2 && strstr(err, msg), "'%s' refused: exit 2, %s", expr,
	      msg);
	if (rc != 2 || !strstr(err, msg))
		pt_diag("exit %d: %s", rc, err);
}

static void test_refused(void)
{
	char probe[512], rprobe[512];

	snprintf(probe, sizeof(probe), "uprobe:%s:pt_ud_refuse", self);
	snprintf(rprobe, sizeof(rprobe), "uretprobe:%s:pt_ud_refuse", self);
	refused(probe, "d", "'d': parameter 'd' (double) is passed in an SSE register (xmm, floating point): a uprobe's fetches read the integer registers and memory, and the kernel gives a uprobe no SSE registers to read (struct pt_regs has none): not fetched");
	refused(probe, "pr", "'pr': parameter 'pr' (struct pt_ud_pair) is a struct or union passed by value: not fetched");
	refused(rprobe, "f", "'f': parameter 'f' (long int) is on the stack, and a uretprobe reads its fetches at the return, where the function may have changed its stack copy and the stack pointer has moved: fetch it with a uprobe");
	refused(rprobe, "ret", "'ret': ret (double) is returned in xmm0 (floating point), not in rax: not fetched");
	refused(probe_fn, "o->bits", "'bits' is a bit field (not fetched)");
	refused(probe_fn, "zz", "'zz': pt_ud_fn has no parameter 'zz' (pea list -v shows them)");
	refused(probe_fn, "ret", "'ret': ret is a uretprobe's");
}

/*
 * Parameters on the stack, from the entry's stack pointer: a long, an
 * int, an unsigned char and a 32-byte struct's array, exact, and
 * --filter on one.
 */
static void test_stack(void)
{
	static const char want[] =
		"f=-7 g=8 n=200 big.v=[10,-20,30,-40]\n";
	char probe[512];
	struct pt_proc pp;
	int rc;

	snprintf(probe, sizeof(probe), "uprobe:%s:pt_ud_stack", self);
	PT_OK(pt_trace_start_self(&pp, probe, (char *[]){ "f", "g", "n",
		"big.v", "--filter", "f < 0", NULL }),
	      "stack: uprobe with four stack parameters and --filter 'f < 0' attached");
	pt_ud_stack(1, 2, 3, 4, 5, 6, -7, 8, 200,
		    (struct pt_ud_big){ { 10, -20, 30, -40 } });
	pt_ud_stack(1, 2, 3, 4, 5, 6, 7, 9, 1,
		    (struct pt_ud_big){ { 0, 0, 0, 0 } });
	kill(pp.pid, SIGINT);
	rc = pt_proc_collect(&pp, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "stack: exit 0");
	PT_OK(strstr(out, want) && !strstr(out, "g=9"),
	      "stack: the f < 0 call's stack values exact, the other filtered");
	if (!strstr(out, want))
		pt_diag("got: %s%s", out, err);
}

/* The C++ program, written out and run as pea trace's -- CMD. */
#define CXX_PATH	"/tmp/pea-udwarf-cxx"

__asm__(".section .rodata\n"
	".globl pt_cxx_start\npt_cxx_start:\n"
	".incbin \"" PT_UDWARF_CXX "\"\n"
	".globl pt_cxx_end\npt_cxx_end:\n"
	".previous\n");
extern const unsigned char pt_cxx_start[], pt_cxx_end[];

/* pea trace ARGS... -- CXX_PATH: exit status, stdout and stderr. */
static int cxx_trace(char **args)
{
	char *argv[40] = { PT_PEA, "trace" };
	int n = 2;

	while (*args && n < 37)
		argv[n++] = *args++;
	argv[n++] = "--";
	argv[n++] = CXX_PATH;
	argv[n] = NULL;
	return pt_run(argv, out, sizeof(out), err, sizeof(err), NULL, NULL);
}

/*
 * C++ globs: uprobe:PATH:pt_ns::* is every function of the namespace with
 * code, by qualified name, the overloads of pt_ns::over each by its
 * symbol; uretprobe:PATH:pt_ns::Counter::a* the method's return. main()
 * calls each once: each probe's one event, exact, named as expanded.
 */
static void test_cxx_glob(void)
{
	static const char *const names[] = {
		"uprobe:" CXX_PATH ":_ZN5pt_ns4overEi",
		"uprobe:" CXX_PATH ":_ZN5pt_ns4overEl",
		"uprobe:" CXX_PATH ":pt_ns::Counter::add",
		"uprobe:" CXX_PATH ":pt_ns::inner::twice",
		"uprobe:" CXX_PATH ":pt_ns::many",
		"uprobe:" CXX_PATH ":pt_ns::scale",
		"uretprobe:" CXX_PATH ":pt_ns::Counter::add",
	};
	int got[7] = { 0 }, other = 0, i, rc, good = 0;
	long long ret = 0;
	char *l, *e;

	rc = cxx_trace((char *[]){ "--json", "uprobe:" CXX_PATH ":pt_ns::*",
		"uretprobe:" CXX_PATH ":pt_ns::Counter::a*", NULL });
	PT_EQ(rc, 0, "c++ globs: pea trace -- the program: exit 0");
	PT_OK(strstr(err, "pea: 'uprobe:" CXX_PATH ":pt_ns::*': 6 C++ functions in its DWARF\n") &&
	      strstr(err, "pea: 'uretprobe:" CXX_PATH ":pt_ns::Counter::a*': 1 C++ functions in its DWARF\n"),
	      "c++ globs: 6 and 1 C++ functions stated");
	for (l = out; *l; l = *e ? e + 1 : e) {
		e = strchr(l, '\n');
		if (!e)
			e = l + strlen(l);
		snprintf(line, sizeof(line), "%.*s", (int)(e - l), l);
		if (!pt_json_streq(line, "type", "event"))
			continue;
		for (i = 0; i < 7 && !pt_json_streq(line, "probe", names[i]);
		     i++)
			;
		if (i == 7) {
			other++;
			continue;
		}
		got[i]++;
		if (i == 6)
			ret = pt_json_num(line, "ret", 0);
	}
	for (i = 0; i < 7; i++) {
		good += got[i] == 1;
		if (got[i] != 1)
			pt_diag("%s: %d events, want 1", names[i], got[i]);
	}
	PT_EQ(good, 7, "c++ globs: each of the 7 probes one event, named as expanded (the overloads by symbol)");
	PT_EQ(other, 0, "c++ globs: no other events");
	PT_EQ(ret, 115, "c++ globs: pt_ns::Counter::add's ret 115 exact");
	if (pt_failed)
		pt_diag("exit %d: %s%s", rc, out, err);
}

/*
 * C++ functions by qualified name (a namespace's, a nested one's, a
 * method's) and by symbol, their parameters from DWARF (this-> fields,
 * stack ones), an overloaded name and a double refused with the reason.
 */
static void test_cxx(void)
{
	static const char twice[] = "uprobe:" CXX_PATH ":pt_ns::inner::twice";
	int fd, rc;

	fd = open(CXX_PATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	PT_OK(fd >= 0 && write(fd, pt_cxx_start, pt_cxx_end - pt_cxx_start) ==
	      pt_cxx_end - pt_cxx_start, "c++: the program written");
	if (fd >= 0)
		close(fd);
	list_is(twice, "uprobe:" CXX_PATH ":pt_ns::inner::twice  (_ZN5pt_ns5inner5twiceEli)\n"
		"    arg0  long int v\n"
		"    arg1  int k\n"
		"    ret   long int\n");
	rc = cxx_trace((char *[]){ (char *)twice, "v", "k",
		"uprobe:" CXX_PATH ":pt_ns::Counter::add", "this->base",
		"this->step", "x",
		"uprobe:" CXX_PATH ":_ZN5pt_ns4manyEllllllli", "a", "h", "s7",
		"s8",
		"uretprobe:" CXX_PATH ":pt_ns::inner::twice", "ret", NULL });
	PT_EQ(rc, 0, "c++: pea trace -- the program: exit 0");
	PT_OK(strstr(out, " v=-41 k=7\n") != NULL,
	      "c++: pt_ns::inner::twice's v and k exact");
	PT_OK(strstr(out, " this->base=100 this->step=3 x=5\n") != NULL,
	      "c++: pt_ns::Counter::add's this->base, this->step and x exact");
	PT_OK(strstr(out, " a=1 h=6 s7=-77 s8=88\n") != NULL,
	      "c++: pt_ns::many by its symbol: registers and the stack exact");
	PT_OK(strstr(out, " ret=-75\n") != NULL,
	      "c++: the uretprobe's ret -75 (long) exact");
	if (pt_failed)
		pt_diag("exit %d: %s%s", rc, out, err);
	refused("uprobe:" CXX_PATH ":pt_ns::over", "x",
		"'pt_ns::over' names 2 functions in " CXX_PATH " (overloads); name one by its symbol:");
	PT_OK(strstr(err, " _ZN5pt_ns4overEi") && strstr(err, " _ZN5pt_ns4overEl"),
	      "c++: the overloads' symbols listed");
	refused("uprobe:" CXX_PATH ":pt_ns::scale", "d",
		"'d': parameter 'd' (double) is passed in an SSE register (xmm, floating point)");
	refused("uprobe:" CXX_PATH ":pt_ns::nope", "x",
		"no function 'pt_ns::nope' with code in the DWARF of " CXX_PATH);
	test_cxx_glob();
	unlink(CXX_PATH);
}

static void test_no_dwarf(void)
{
	char probe[512], want[1024], *note;
	struct pt_proc pp;
	int fd, rc;

	fd = open(SO_PATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	PT_OK(fd >= 0 && write(fd, pt_so_start, pt_so_end - pt_so_start) ==
	      pt_so_end - pt_so_start, "no DWARF: shared object written");
	if (fd >= 0)
		close(fd);
	snprintf(probe, sizeof(probe), "uprobe:%s:pt_so_fn", SO_PATH);
	snprintf(want, sizeof(want),
		 "%s\n    no DWARF in %s (built without -g, or stripped; no debug file by its build-id in /usr/lib/debug/.build-id or by its .gnu_debuglink either)\n",
		 probe, SO_PATH);
	list_is(probe, want);
	refused(probe, "a", "'a': no DWARF in " SO_PATH " (built without -g");
	snprintf(probe, sizeof(probe), "uretprobe:%s:pt_so_fn", SO_PATH);
	PT_OK(pt_trace_start_self(&pp, probe, (char *[]){ NULL }),
	      "no DWARF: uretprobe attached");
	kill(pp.pid, SIGINT);
	rc = pt_proc_collect(&pp, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	snprintf(want, sizeof(want),
		 "pea: note: %s: no DWARF in %s (built without -g, or stripped; no debug file by its build-id in /usr/lib/debug/.build-id or by its .gnu_debuglink either); ret and arguments are raw registers\n",
		 probe, SO_PATH);
	note = strstr(err, want);
	PT_OK(rc == 0 && note && note == strstr(err, "note:") - 5 &&
	      !strstr(note + strlen(want), "note:"),
	      "no DWARF: exit 0, one note: ret and arguments are raw registers");
	if (rc || !strstr(err, want))
		pt_diag("exit %d: %s", rc, err);
	unlink(SO_PATH);
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	snprintf(probe_fn, sizeof(probe_fn), "uprobe:%s:pt_ud_fn", self);
	snprintf(retprobe_fn, sizeof(retprobe_fn), "uretprobe:%s:pt_ud_fn",
		 self);
	test_text();
	test_json();
	test_ret();
	test_filter();
	test_agg();
	test_list();
	test_refused();
	test_stack();
	test_cxx();
	test_no_dwarf();
	return pt_done();
}
