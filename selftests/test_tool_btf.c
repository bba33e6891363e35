// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace and pea list -v with the kernel's BTF (issue 21's first
 * slice), on kernel functions the test calls itself, --pid its own:
 *
 *   - kretprobe:do_unlinkat (int do_unlinkat(int dfd, struct filename *))
 *     on four unlinks of missing files: ret is -2 (-ENOENT) in the text
 *     column and in JSON, where "ret_raw", if present, is the register
 *     (whose low 32 bits are 0xfffffffe); --hist ret puts all four in
 *     the negative bucket, --count-by ret counts -2, --count-by dfd (the
 *     int parameter, arg0) counts AT_FDCWD (-100) three times and the
 *     directory's fd once;
 *   - kprobe:ksys_lseek (unsigned int fd, off_t offset, unsigned int
 *     whence): --count-by whence and fd (unsigned: fd -1 is 4294967295),
 *     --hist offset (signed: -5 in the negative bucket);
 *   - kretprobe:capable (bool) on iopl(3): ret is true;
 *     kretprobe:do_filp_open (struct file *) on an open that succeeds:
 *     ret is "0xff..." (18 characters) (getname is inlined into the syscalls);
 *   - PARAM names after the probe (kprobe:ksys_lseek fd offset whence):
 *     name=value on each line by type, "params" in JSON;
 *   - pea list -v kprobe:do_unlinkat: its parameters and return type;
 *   - a name that is not a parameter: a usage error naming the probe.
 *
 * Without BTF (the debug kernel: x86_64_defconfig has no
 * CONFIG_DEBUG_INFO_BTF) the same commands show the documented fallback:
 * pea list -v says "no BTF", a parameter's name is refused with that
 * reason, and ret is the raw register (4294967294).
 */
#include <sys/io.h>
#include <sys/stat.h>
#include "pt_tool.h"

#define UNLINK		"kretprobe:do_unlinkat"
#define LSEEK		"kprobe:ksys_lseek"
#define TMPDIR		"/tmp/pea-btf"

static char line[8192];
static char out[65536], err[65536];
static bool have_btf;

/* Four unlinks of missing files: three from AT_FDCWD, one from @dfd. */
static void unlinks(int dfd)
{
	int i;

	for (i = 0; i < 3; i++)
		unlinkat(AT_FDCWD, TMPDIR "/none", 0);
	unlinkat(dfd, "none", 0);
}

/* pea trace PROBE --pid us ARGS... (NULL-ended), attached. */
static bool start(struct pt_proc *p, const char *probe, char **args)
{
	return pt_trace_start_self(p, probe, args);
}

/* Read stdout to the end into out, stderr into err; the exit status. */
static int finish(struct pt_proc *p)
{
	return pt_proc_collect(p, line, sizeof(line), out, sizeof(out), err,
			       sizeof(err));
}

static void test_ret_text(int dfd)
{
	struct pt_proc p;
	char *l, *save;
	int n = 0, rc;

	PT_OK(start(&p, UNLINK, (char *[]){ "--count", "4", NULL }),
	      "ret text: attached");
	unlinks(dfd);
	rc = finish(&p);
	PT_EQ(rc, 0, "ret text: exit 0");
	for (l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char comm[32], ret[32];
		unsigned int cpu, pid, tid;
		double t;

		if (sscanf(l, "%lf %u %31s %u %u %31s", &t, &cpu, comm, &pid,
			   &tid, ret) != 6)
			continue;
		PT_OK(!strcmp(ret, have_btf ? "-2" : "4294967294") ||
		      (!have_btf && !strcmp(ret, "-2")),
		      "ret text: event %d's RET is %s (want %s)", n, ret,
		      have_btf ? "-2" : "the raw register");
		n++;
	}
	PT_EQ(n, 4, "ret text: 4 events");
}

static void test_ret_json(int dfd)
{
	struct pt_proc p;
	int n = 0, rc;

	PT_OK(start(&p, UNLINK, (char *[]){ "--count", "4", "--json", NULL }),
	      "ret json: attached");
	unlinks(dfd);
	while (n < 4 &&
	       pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		long long ret, raw;

		if (!pt_json_streq(line, "type", "event"))
			continue;
		ret = pt_json_num(line, "ret", 0);
		raw = pt_json_num(line, "ret_raw", ret);
		if (have_btf) {
			PT_EQ(ret, -2, "ret json: event %d: \"ret\":-2", n);
		} else {
			PT_OK(ret == 4294967294LL || ret == -2,
			      "ret json: event %d: \"ret\" is the register (%lld)",
			      n, ret);
			PT_OK(!strstr(line, "ret_raw"),
			      "ret json: event %d: no ret_raw without BTF", n);
		}
		PT_EQ((unsigned long long)raw & 0xffffffffULL, 0xfffffffeULL,
		      "ret json: event %d: ret_raw (or ret) is the register", n);
		n++;
	}
	PT_EQ(n, 4, "ret json: 4 events");
	rc = finish(&p);
	PT_EQ(rc, 0, "ret json: exit 0");
}

/* The ret and parameter aggregations of do_unlinkat. */
static void test_agg(int dfd)
{
	char want[64];
	struct pt_proc p;
	int rc;

	if (!have_btf) {
		rc = pt_run((char *[]){ PT_PEA, "trace", UNLINK, "--count-by",
					"dfd", NULL },
			    out, sizeof(out), err, sizeof(err), NULL, NULL);
		PT_EQ(rc, 2, "no BTF: --count-by dfd is a usage error");
		PT_OK(strstr(err, "--count-by 'dfd': " UNLINK ": no BTF: /sys/kernel/btf/vmlinux"),
		      "no BTF: --count-by dfd says why: %s", err);
		return;
	}
	PT_OK(start(&p, UNLINK, (char *[]){ "--count", "4", "--hist", "ret",
					    "--count-by", "ret", "--count-by",
					    "dfd", NULL }),
	      "agg: attached");
	unlinks(dfd);
	rc = finish(&p);
	PT_EQ(rc, 0, "agg: exit 0");
	PT_OK(strstr(out, UNLINK ": histogram of ret, 4 values\n"
			  "(..., 0)                  4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"),
	      "agg: --hist ret: the four -2 in the negative bucket");
	PT_OK(strstr(out, UNLINK ": count by ret, 4 events, 1 keys\n"
			  "     COUNT  KEY\n"
			  "         4  -2\n"),
	      "agg: --count-by ret: 4 of -2");
	snprintf(want, sizeof(want), "         3  -100\n         1  %d\n", dfd);
	PT_OK(strstr(out, UNLINK ": count by dfd, 4 events, 2 keys\n"
			  "     COUNT  KEY\n") && strstr(out, want),
	      "agg: --count-by dfd: 3 of AT_FDCWD (-100), 1 of %d", dfd);
	if (pt_failed)
		pt_diag("output:\n%s", out);

	PT_OK(start(&p, UNLINK, (char *[]){ "--count", "4", "--count-by",
					    "dfd", "--json", NULL }),
	      "agg json: attached");
	unlinks(dfd);
	rc = finish(&p);
	PT_EQ(rc, 0, "agg json: exit 0");
	snprintf(want, sizeof(want),
		 "\"rows\":[{\"key\":-100,\"count\":3},{\"key\":%d,\"count\":1}]",
		 dfd);
	PT_OK(strstr(out, "\"by\":\"dfd\",\"source\":\"probe\"") &&
	      strstr(out, want),
	      "agg json: dfd keys are the int's values: %s", want);

	rc = pt_run((char *[]){ PT_PEA, "trace", UNLINK, "--count-by",
				"nosuch", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--count-by nosuch: a usage error");
	PT_OK(strstr(err, "--count-by 'nosuch': " UNLINK " has no parameter 'nosuch'"),
	      "--count-by nosuch: says so");
}

static void test_lseek(void)
{
	struct pt_proc p;
	int fd, rc;

	if (!have_btf)
		return;
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	PT_OK(start(&p, LSEEK, (char *[]){ "--count", "4", "--count-by",
					   "whence", "--count-by", "fd",
					   "--hist", "offset", NULL }),
	      "lseek: attached");
	lseek(fd, 0, SEEK_SET);
	lseek(fd, 3, SEEK_SET);
	lseek(fd, -5, SEEK_SET);	/* EINVAL, but ksys_lseek is called */
	lseek(-1, 0, SEEK_END);
	rc = finish(&p);
	PT_EQ(rc, 0, "lseek: exit 0");
	PT_OK(strstr(out, LSEEK ": count by whence, 4 events, 2 keys\n"
			  "     COUNT  KEY\n"
			  "         3  0\n"
			  "         1  2\n"),
	      "lseek: --count-by whence: 3 SEEK_SET, 1 SEEK_END");
	PT_OK(strstr(out, "         1  4294967295\n"),
	      "lseek: --count-by fd: fd -1 as the unsigned int 4294967295");
	PT_OK(strstr(out, LSEEK ": histogram of offset, 4 values\n"
			  "(..., 0)                  1 |@@@@@@@@@@@@@@@@@@@@                    |\n"
			  "[0]                       2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
			  "[1]                       0 |                                        |\n"
			  "[2, 4)                    1 |@@@@@@@@@@@@@@@@@@@@                    |\n"),
	      "lseek: --hist offset: -5 negative (off_t is signed), 0 twice, 3");
	if (fd >= 0)
		close(fd);
}

/* PARAM names after the probe: name=value on each event line. */
static void test_params(void)
{
	struct pt_proc p;
	char params[256] = "";
	int rc, n = 0;

	if (!have_btf) {
		rc = pt_run((char *[]){ PT_PEA, "trace", LSEEK, "fd", NULL },
			    out, sizeof(out), err, sizeof(err), NULL, NULL);
		PT_EQ(rc, 2, "no BTF: a parameter by name is a usage error");
		PT_OK(strstr(err, LSEEK ": parameter 'fd': no BTF: /sys/kernel/btf/vmlinux"),
		      "no BTF: the parameter's refusal says why: %s", err);
		return;
	}
	PT_OK(start(&p, LSEEK, (char *[]){ "fd", "offset", "whence", "--count",
					   "2", NULL }),
	      "params text: attached");
	lseek(-1, -5, SEEK_END);
	lseek(-1, 7, SEEK_CUR);
	rc = finish(&p);
	PT_EQ(rc, 0, "params text: exit 0");
	PT_OK(strstr(out, "  PARAMS\n"), "params text: a PARAMS column");
	PT_OK(strstr(out, "  fd=4294967295 offset=-5 whence=2\n") &&
	      strstr(out, "  fd=4294967295 offset=7 whence=1\n"),
	      "params text: fd=4294967295 offset=-5 whence=2, then offset=7 whence=1:\n%s",
	      out);

	PT_OK(start(&p, LSEEK, (char *[]){ "whence", "offset", "--count", "1",
					   "--json", NULL }),
	      "params json: attached");
	lseek(-1, -5, SEEK_END);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		if (pt_json_streq(line, "type", "event")) {
			pt_json_get(line, "params", params, sizeof(params),
				    NULL);
			n++;
		}
	finish(&p);
	PT_EQ(n, 1, "params json: 1 event");
	PT_OK(!strcmp(params, "{\"whence\":2,\"offset\":-5}"),
	      "params json: \"params\":{\"whence\":2,\"offset\":-5} (got %s)",
	      params);

	PT_OK(start(&p, UNLINK, (char *[]){ "dfd", "name", "--count", "1",
					    "--json", NULL }),
	      "params pointer: attached");
	unlinkat(AT_FDCWD, TMPDIR "/none", 0);
	params[0] = '\0';
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		if (pt_json_streq(line, "type", "event"))
			pt_json_get(line, "params", params, sizeof(params),
				    NULL);
	finish(&p);
	PT_OK(!strncmp(params, "{\"dfd\":-100,\"name\":\"0xff", 24) &&
	      strlen(params) == 24 + 14 + 2,
	      "params pointer: a kretprobe's dfd -100 and name in hex (%s)",
	      params);

	rc = pt_run((char *[]){ PT_PEA, "trace", LSEEK, "nosuch", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "params: a name that is no parameter: exit 2");
	PT_OK(strstr(err, LSEEK ": 'ksys_lseek' has no parameter 'nosuch'"),
	      "params: says so: %s", err);
}

static void test_bool_ptr(void)
{
	struct pt_proc p;
	char ret[64] = "";
	int rc;

	if (!have_btf)
		return;
	PT_OK(start(&p, "kretprobe:capable",
		    (char *[]){ "--count", "1", "--json", NULL }),
	      "bool: attached");
	rc = iopl(3);
	PT_EQ(rc, 0, "bool: iopl(3) as root");
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		if (pt_json_streq(line, "type", "event"))
			pt_json_get(line, "ret", ret, sizeof(ret), NULL);
	PT_OK(!strcmp(ret, "true"), "bool: capable() returned true (\"ret\":%s)",
	      ret);
	finish(&p);
	iopl(0);

	PT_OK(start(&p, "kretprobe:do_filp_open",
		    (char *[]){ "--count", "1", "--json", NULL }),
	      "pointer: attached");
	rc = open(TMPDIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rc >= 0)
		close(rc);
	ret[0] = '\0';
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		if (pt_json_streq(line, "type", "event"))
			pt_json_get(line, "ret", ret, sizeof(ret), NULL);
	PT_OK(!strncmp(ret, "0xff", 4) && strlen(ret) == 18,
	      "pointer: do_filp_open()'s struct file * in hex (\"%s\")", ret);
	finish(&p);
}

static void test_list(void)
{
	int rc;

	rc = pt_run((char *[]){ PT_PEA, "list", "-v", "kprobe:do_unlinkat",
				NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 0, "list -v: exit 0");
	if (have_btf)
		PT_OK(!strcmp(out, "kprobe:do_unlinkat\n"
				   "    arg0  int dfd\n"
				   "    arg1  struct filename *name\n"
				   "    ret   int\n"),
		      "list -v: do_unlinkat's parameters and return type:\n%s",
		      out);
	else
		PT_OK(!strncmp(out, "kprobe:do_unlinkat\n    no BTF: /sys/kernel/btf/vmlinux: ",
			       55),
		      "list -v without BTF: says so:\n%s", out);
}

/*
 * list -v of a tracepoint: its own fields as its tracefs format declares
 * them (read here from the format), and the names its print fmt gives
 * their values.
 */
static void test_list_tp(void)
{
	static char fmt[16384], want[8192];
	char *l, *semi;
	size_t n;
	int rc;

	if (pt_read_file("/sys/kernel/tracing/events/syscalls/sys_enter_openat/format",
			 fmt, sizeof(fmt)) < 0) {
		PT_OK(0, "list -v tracepoint: sys_enter_openat's format");
		return;
	}
	n = (size_t)snprintf(want, sizeof(want),
			     "tracepoint:syscalls:sys_enter_openat\n");
	for (l = strstr(fmt, "field:"); l; l = strstr(l, "field:")) {
		l += 6;
		semi = strchr(l, ';');
		if (!semi)
			break;
		if (strncmp(l, "unsigned short common_", 22) &&
		    strncmp(l, "unsigned char common_", 21) &&
		    strncmp(l, "int common_", 11))
			n += (size_t)snprintf(want + n, sizeof(want) - n,
					      "    %.*s\n", (int)(semi - l), l);
	}
	rc = pt_run((char *[]){ PT_PEA, "list", "-v",
				"tracepoint:syscalls:sys_enter_openat", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 0, "list -v tracepoint: exit 0");
	PT_OK(!strcmp(out, want),
	      "list -v tracepoint: sys_enter_openat's fields as its format declares them:\n%s",
	      out);
	if (strcmp(out, want))
		pt_diag("want:\n%s", want);
	rc = pt_run((char *[]){ PT_PEA, "list", "-v",
				"tracepoint:filelock:posix_lock_inode", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 0, "list -v tracepoint with names: exit 0");
	PT_OK(strstr(out, "(flags: FL_POSIX=0x1 FL_FLOCK=0x2 ") &&
	      strstr(out, "(values: F_RDLCK=0x0 F_WRLCK=0x1 F_UNLCK=0x2)"),
	      "list -v tracepoint: posix_lock_inode's flags and type by the names of its print fmt:\n%s",
	      out);
}

int main(void)
{
	int dfd;

	have_btf = !access("/sys/kernel/btf/vmlinux", R_OK);
	pt_diag("kernel BTF: %s", have_btf ? "yes" : "no (the fallback)");
	mkdir(TMPDIR, 0700);
	dfd = open(TMPDIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		pt_fatal("open " TMPDIR);
	test_list();
	test_list_tp();
	test_ret_text(dfd);
	test_ret_json(dfd);
	test_agg(dfd);
	test_lseek();
	test_params();
	test_bool_ptr();
	close(dfd);
	return pt_done();
}
