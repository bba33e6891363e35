// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace with fetch expressions after a kprobe or kretprobe (issue
 * 21), resolved from BTF and evaluated in the kernel, on calls the test
 * makes itself (--pid its own):
 *
 *   - kprobe:do_sys_openat2 filename how->flags how->mode how->resolve
 *     dfd on openat2(2) with a chosen struct open_how: the user string,
 *     the u64 fields behind the struct pointer and the int register, in
 *     text (the exact PARAMS part of the line) and JSON ("params");
 *   - a NULL filename: filename=(fault@0), the other values kept;
 *   - str(filename,4): "/tmp"... cut, {"str":...,"truncated":true};
 *   - kretprobe:do_sys_openat2 ret filename: ret=-2 (long) at return;
 *   - kprobe:vfs_read file->f_path.dentry->d_name.name --filter
 *     'count == 3' on a read of a file the test made: its name, through
 *     two pointer reads, and its inline name cut at 5;
 *   - --filter 'how->resolve == 4 || !(filename ~ "*known*") &&
 *     how->flags & 0x200000' on four opens: the two it passes print;
 *   - refusals with clear errors: a fifth pointer read, a ninth fetch,
 *     more than 1024 bytes, a field that is not there, '.' on a register.
 *
 * Without BTF (the debug kernel) a fetch expression is refused with the
 * reason, as parameters by name are.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include "pt_tool.h"

#define OPEN		"kprobe:do_sys_openat2"
#define OPEN_RET	"kretprobe:do_sys_openat2"
#define TMPDIR		"/tmp/pea-fetch"
#define FILE1		TMPDIR "/known-file"

static char line[8192];
static char out[65536], err[65536];
static bool have_btf;

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

static long openat2_how(const char *path, __u64 flags, __u64 resolve)
{
	struct open_how how = { .flags = flags, .mode = 0,
				.resolve = resolve };
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd >= 0)
		close((int)fd);
	return fd;
}

static void test_open_text(void)
{
	__u64 flags = O_PATH | O_CLOEXEC;
	char want[512], want_null[512];
	struct pt_proc p;
	int rc;

	PT_OK(start(&p, OPEN, (char *[]){ "filename", "how->flags",
					  "how->mode", "how->resolve", "dfd",
					  "--count", "2", NULL }),
	      "open text: attached");
	PT_OK(openat2_how(FILE1, flags, RESOLVE_NO_SYMLINKS) >= 0,
	      "openat2 of the known file");
	openat2_how(NULL, flags, RESOLVE_BENEATH);
	rc = finish(&p);
	PT_EQ(rc, 0, "open text: exit 0");
	snprintf(want, sizeof(want),
		 "  filename=\"" FILE1 "\" how->flags=%llu how->mode=0 how->resolve=%u dfd=-100\n",
		 (unsigned long long)flags, RESOLVE_NO_SYMLINKS);
	snprintf(want_null, sizeof(want_null),
		 "  filename=(fault@0) how->flags=%llu how->mode=0 how->resolve=%u dfd=-100\n",
		 (unsigned long long)flags, RESOLVE_BENEATH);
	PT_OK(strstr(out, "  PARAMS\n") != NULL, "open text: a PARAMS column");
	PT_OK(strstr(out, want) != NULL,
	      "open text: the line ends with %s(got:\n%s)", want, out);
	PT_OK(strstr(out, want_null) != NULL,
	      "open text: a NULL filename is marked, the rest kept: %s",
	      want_null);
}

static void test_open_json(void)
{
	char params[1024] = "", want[512];
	struct pt_proc p;
	int n = 0;

	PT_OK(start(&p, OPEN, (char *[]){ "filename", "str(filename,4)",
					  "how->flags", "--count", "1",
					  "--json", NULL }),
	      "open json: attached");
	openat2_how(FILE1, O_PATH, 0);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		if (pt_json_streq(line, "type", "event")) {
			pt_json_get(line, "params", params, sizeof(params),
				    NULL);
			n++;
		}
	finish(&p);
	PT_EQ(n, 1, "open json: 1 event");
	snprintf(want, sizeof(want),
		 "{\"filename\":\"" FILE1 "\",\"str(filename,4)\":{\"str\":\"/tmp\",\"truncated\":true},\"how->flags\":%d}",
		 O_PATH);
	PT_OK(!strcmp(params, want), "open json: \"params\":%s (got %s)", want,
	      params);

	PT_OK(start(&p, OPEN, (char *[]){ "str(filename,4)", "--count", "1",
					  NULL }),
	      "open cut text: attached");
	openat2_how(FILE1, O_PATH, 0);
	finish(&p);
	PT_OK(strstr(out, "  str(filename,4)=\"/tmp\"...\n") != NULL,
	      "open cut text: str(filename,4)=\"/tmp\"... (got %s)", out);
}

static void test_ret(void)
{
	struct pt_proc p;
	int rc;

	PT_OK(start(&p, OPEN_RET, (char *[]){ "ret", "filename", "--count",
					      "1", NULL }),
	      "kretprobe: attached");
	openat2_how(TMPDIR "/missing", O_PATH, 0);
	rc = finish(&p);
	PT_EQ(rc, 0, "kretprobe: exit 0");
	PT_OK(strstr(out, "  ret=-2 filename=\"" TMPDIR "/missing\"\n") !=
	      NULL, "kretprobe: ret=-2 filename=\"" TMPDIR "/missing\" (got %s)",
	      out);
}

/*
 * vfs_read() of 3 bytes: the test's other reads (pea's output) ask for
 * more, and --filter keeps this one only.
 */
static void test_chain(void)
{
	struct pt_proc p;
	char buf[16];
	int fd, rc;

	PT_OK(start(&p, "kprobe:vfs_read",
		    (char *[]){ "file->f_path.dentry->d_name.name",
				"str(file->f_path.dentry->d_iname,5)", "count",
				"--filter", "count == 3", "--count", "1",
				NULL }),
	      "chain: attached");
	fd = open(FILE1, O_RDONLY);
	PT_OK(fd >= 0 && read(fd, buf, 3) == 3, "chain: read 3 bytes of the known file");
	if (fd >= 0)
		close(fd);
	rc = finish(&p);
	PT_EQ(rc, 0, "chain: exit 0");
	PT_OK(strstr(out, "  file->f_path.dentry->d_name.name=\"known-file\" str(file->f_path.dentry->d_iname,5)=\"known\"... count=3\n") != NULL,
	      "chain: the dentry's name and inline name, count=3 (got %s)",
	      out);
}

/*
 * --filter in the kernel: how->resolve is fetched for the filter only;
 * four opens, the second and the fourth filtered out.
 */
static void test_filter(void)
{
	struct pt_proc p;
	int rc;

	PT_OK(start(&p, OPEN, (char *[]){ "filename", "--filter",
		    "how->resolve == 4 || !(filename ~ \"*known*\") && how->flags & 0x200000",
		    "--count", "2", NULL }),
	      "filter: attached");
	openat2_how(FILE1, O_PATH, RESOLVE_NO_SYMLINKS);
	openat2_how(TMPDIR "/known-other", O_PATH, 0);
	openat2_how(TMPDIR "/missing", O_PATH, 0);
	openat2_how(TMPDIR "/missing2", O_RDONLY, 0);
	rc = finish(&p);
	PT_EQ(rc, 0, "filter: exit 0");
	PT_OK(strstr(out, "  filename=\"" FILE1 "\"\n") &&
	      strstr(out, "  filename=\"" TMPDIR "/missing\"\n") &&
	      !strstr(out, "known-other") && !strstr(out, "missing2"),
	      "filter: exactly the first and the third open (got %s)", out);
}

static void expect_usage(char **argv, const char *msg, const char *what);

/* ---- ctx.NAME: the task that hit the probe ---- */

#define CTX_CG		"/tmp/pea-cg2t"
#define CTX_CG_DIR	CTX_CG "/d"
#define CTX_CG_LONG	CTX_CG_DIR "/a-cgroup-name-as-long-as-a-container-runtime-would-make-it-0123456789"

static int ctx_move(const char *procs)
{
	char pid[16];
	int fd = open(procs, O_WRONLY), rc;

	snprintf(pid, sizeof(pid), "%d", getpid());
	rc = fd >= 0 && write(fd, pid, strlen(pid)) > 0 ? 0 : -1;
	if (fd >= 0)
		close(fd);
	return rc;
}

/* A thread named ctxcm-thread, as uid 1234 (its own credentials only). */
static void *ctx_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "ctxcm-thread");
	if (syscall(SYS_setresuid, 1234, 1234, 0))
		return (void *)1;
	openat2_how(FILE1, O_PATH, 0);
	return NULL;
}

/*
 * --filter on ctx.uid and a ctx.comm glob, in the kernel: of the main
 * thread's open and the thread's, only the thread's is printed, with its
 * comm, uid and cgroup; then ctx.cgroup == "PATH" selects by cgroup.
 */
static void test_ctx(void)
{
	char want[256], cg[32];
	struct pt_proc p;
	pthread_t t;
	void *tr = (void *)1;
	int rc;
	__u64 id = 0;

	mkdir(CTX_CG, 0755);
	mount("none", CTX_CG, "cgroup2", 0, NULL);
	mkdir(CTX_CG_DIR, 0755);
	id = pt_cgroup_id(CTX_CG_DIR);
	PT_OK(id && !ctx_move(CTX_CG_DIR "/cgroup.procs"),
	      "ctx: this process in a cgroup v2 directory (id %llu)",
	      (unsigned long long)id);
	PT_OK(start(&p, OPEN, (char *[]){ "ctx.comm", "ctx.uid", "ctx.cgroup",
		    "--filter", "ctx.uid == 1234 && ctx.comm ~ \"ctxcm-*\"",
		    "--count", "1", NULL }),
	      "ctx: attached");
	openat2_how(FILE1, O_PATH, 0);
	if (!pthread_create(&t, NULL, ctx_thread, NULL))
		pthread_join(t, &tr);
	PT_OK(tr == NULL, "ctx: the thread opened the file as uid 1234");
	rc = finish(&p);
	PT_EQ(rc, 0, "ctx: exit 0");
	snprintf(want, sizeof(want),
		 "  ctx.comm=\"ctxcm-thread\" ctx.uid=1234 ctx.cgroup=%llu\n",
		 (unsigned long long)id);
	PT_OK(strstr(out, want) && !strstr(out, "ctx.uid=0"),
	      "ctx: only the thread's open, with its comm, uid and cgroup (got %s)",
	      out);
	snprintf(cg, sizeof(cg), "%llu", (unsigned long long)id);
	PT_OK(start(&p, OPEN, (char *[]){ "ctx.cgroup", "--filter",
		    "ctx.cgroup == \"" CTX_CG_DIR "\"", "--count", "1", NULL }),
	      "ctx: attached with a cgroup path");
	openat2_how(FILE1, O_PATH, 0);
	rc = finish(&p);
	PT_OK(rc == 0 && strstr(out, cg),
	      "ctx.cgroup == \"%s\": the open in it (got %s)", CTX_CG_DIR, out);
	/* A path longer than a string operand: only its id goes down. */
	PT_OK(!mkdir(CTX_CG_LONG, 0755) && !ctx_move(CTX_CG_LONG "/cgroup.procs"),
	      "ctx: a cgroup of an %zu-byte path", strlen(CTX_CG_LONG));
	id = pt_cgroup_id(CTX_CG_LONG);
	snprintf(cg, sizeof(cg), "%llu", (unsigned long long)id);
	PT_OK(start(&p, OPEN, (char *[]){ "ctx.cgroup", "--filter",
		    "ctx.cgroup == \"" CTX_CG_LONG "\"", "--count", "1", NULL }),
	      "ctx: attached with the long cgroup path");
	openat2_how(FILE1, O_PATH, 0);
	rc = finish(&p);
	PT_OK(rc == 0 && strstr(out, cg),
	      "ctx.cgroup == the long path: the open in it (got %s%s)", out, err);
	expect_usage((char *[]){ PT_PEA, "trace", OPEN, "--filter",
		     "ctx.cgroup == \"" CTX_CG_DIR "/cgroup.procs\"", NULL },
		     OPEN ": --filter: '" CTX_CG_DIR "/cgroup.procs' is a file, not a cgroup directory",
		     "ctx.cgroup: a file of a cgroup");
	ctx_move(CTX_CG "/cgroup.procs");
	rmdir(CTX_CG_LONG);
	rmdir(CTX_CG_DIR);
	umount(CTX_CG);
}

static void expect_usage(char **argv, const char *msg, const char *what)
{
	int rc = pt_run(argv, out, sizeof(out), err, sizeof(err), NULL, NULL);

	PT_EQ(rc, 2, "%s: a usage error", what);
	PT_OK(strstr(err, msg) != NULL, "%s: says '%s' (got %s)", what, msg,
	      err);
}

static void test_refusals(void)
{
	expect_usage((char *[]){ PT_PEA, "trace", "kprobe:vfs_read",
		     "file->f_path.dentry->d_parent->d_parent->d_parent->d_parent->d_iname",
		     NULL },
		     "kprobe:vfs_read: 'file->f_path.dentry->d_parent->d_parent->d_parent->d_parent->d_iname': more than 4 pointer reads in one expression",
		     "a fifth pointer read");
	expect_usage((char *[]){ PT_PEA, "trace", "kprobe:vfs_read", "count",
		     "count", "count", "count", "count", "count", "count",
		     "count", "pos", NULL },
		     "kprobe:vfs_read: at most 8 fetches per probe ('pos' is one more)",
		     "a ninth fetch");
	expect_usage((char *[]){ PT_PEA, "trace", OPEN, "str(filename,1024)",
		     "dfd", NULL },
		     OPEN ": the fetches up to 'dfd' take more than 1024 bytes per event",
		     "more than 1024 bytes");
	expect_usage((char *[]){ PT_PEA, "trace", OPEN, "how->nosuch", NULL },
		     OPEN ": struct open_how has no field 'nosuch'",
		     "a field that is not there");
	expect_usage((char *[]){ PT_PEA, "trace", OPEN, "how.flags", NULL },
		     OPEN ": '.flags': struct open_how * is in a register, not in memory (use -> on a pointer)",
		     "'.' on a register");
	expect_usage((char *[]){ PT_PEA, "trace", OPEN, "--filter",
		     "filename < \"x\"", NULL },
		     OPEN ": --filter: strings take == != and ~ only",
		     "--filter: < on a string");
	expect_usage((char *[]){ PT_PEA, "trace", OPEN, "ctx.euid", NULL },
		     OPEN ": 'ctx.euid': no such context value (ctx.comm, ctx.tid, ctx.pid, ctx.uid, ctx.gid, ctx.cgroup, ctx.cpu)",
		     "an unknown ctx. name");
	expect_usage((char *[]){ PT_PEA, "trace", OPEN, "--filter",
		     "ctx.cgroup == \"/tmp\"", NULL },
		     OPEN ": --filter: '/tmp' is not in a cgroup v2 file system",
		     "ctx.cgroup: a path outside cgroup v2");
	expect_usage((char *[]){ PT_PEA, "trace", OPEN, "--filter",
		     "(dfd == 1", NULL },
		     OPEN ": --filter: a ')' expected at ''",
		     "--filter: an unclosed parenthesis");
}

int main(void)
{
	int fd;

	have_btf = !access("/sys/kernel/btf/vmlinux", R_OK);
	pt_diag("kernel BTF: %s", have_btf ? "yes" : "no (the fallback)");
	mkdir(TMPDIR, 0755);
	fd = open(FILE1, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, "abcdef", 6) != 6)
			pt_diag("short write");
		close(fd);
	}
	if (!have_btf) {
		expect_usage((char *[]){ PT_PEA, "trace", OPEN, "how->flags",
			     NULL },
			     OPEN ": fetch 'how->flags': no BTF: /sys/kernel/btf/vmlinux",
			     "no BTF: a fetch expression");
		return pt_done();
	}
	test_open_text();
	test_open_json();
	test_ret();
	test_chain();
	test_filter();
	test_ctx();
	test_refusals();
	unlink(FILE1);
	rmdir(TMPDIR);
	return pt_done();
}
