// SPDX-License-Identifier: GPL-2.0
/*
 * The pea tool's help, usage errors and runtime errors: exit status 0 for
 * help, 2 for every bad command line (before touching the module, and
 * with nothing on stdout), 1 for runtime errors, each with a message that
 * says what to do: no permission on /dev/pea or debugfs, debugfs not
 * mounted, /dev/pea or the module missing (shown in a private mount
 * namespace that hides them).
 */
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include "pt_tool.h"

static char out[65536], err[65536];

#define ARGV(...) ((char *const[]){ PT_PEA, __VA_ARGS__, NULL })

static int run(char *const argv[], void (*setup)(void *))
{
	return pt_run(argv, out, sizeof(out), err, sizeof(err), setup, NULL);
}

static void as_nobody(void *arg)
{
	(void)arg;
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		_exit(126);
}

/* A private mount namespace where @what is hidden under an empty tmpfs. */
static void hide(const char *what)
{
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("none", what, "tmpfs", 0, NULL))
		_exit(125);
}

static void no_debugfs(void *arg)
{
	(void)arg;
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    umount2("/sys/kernel/debug", MNT_DETACH))
		_exit(125);
}

static void no_dev(void *arg)
{
	(void)arg;
	hide("/dev");
}

static void no_module(void *arg)
{
	(void)arg;
	hide("/dev");
	if (mount("none", "/sys/module", "tmpfs", 0, NULL))
		_exit(125);
}

static void test_help(void)
{
	int rc;

	rc = run(ARGV("--help"), NULL);
	PT_EQ(rc, 0, "pea --help exits 0");
	PT_OK(strstr(out, "usage: pea COMMAND") && strstr(out, "  trace ") &&
	      strstr(out, "  stat ") && strstr(out, "Exit status"),
	      "pea --help lists the commands and the exit statuses");
	PT_EQ(strlen(err), 0, "pea --help writes nothing on stderr");

	rc = run(ARGV("-h"), NULL);
	PT_EQ(rc, 0, "pea -h exits 0");

	rc = run((char *const[]){ PT_PEA, NULL }, NULL);
	PT_EQ(rc, 2, "pea without a command exits 2");
	PT_OK(strstr(out, "usage: pea COMMAND"), "... and shows the usage");

	rc = run(ARGV("trace", "--help"), NULL);
	PT_EQ(rc, 0, "pea trace --help exits 0");
	PT_OK(strstr(out, "usage: pea trace [OPTIONS] PROBE") &&
	      strstr(out, "kprobe:SYMBOL[+OFFSET]") &&
	      strstr(out, "kretprobe:SYMBOL") && strstr(out, "--args") &&
	      strstr(out, "--str ARGn") && strstr(out, "--bytes ARGn:LEN") &&
	      strstr(out, "--user") && strstr(out, "--kernel") &&
	      strstr(out, "--pid") && strstr(out, "--cpu") &&
	      strstr(out, "--duration") && strstr(out, "--count") &&
	      strstr(out, "--pages") && strstr(out, "--json") &&
	      strstr(out, "--flight-recorder") && strstr(out, "--unordered") &&
	      strstr(out, "\"type\":\"summary\"") &&
	      strstr(out, "Exit status"),
	      "pea trace --help describes every option, the JSON lines and the exit statuses");

	rc = run(ARGV("help", "trace"), NULL);
	PT_OK(rc == 0 && strstr(out, "usage: pea trace"),
	      "pea help trace shows the trace help");

	rc = run(ARGV("stat", "--help"), NULL);
	PT_EQ(rc, 0, "pea stat --help exits 0");
	PT_OK(strstr(out, "usage: pea stat") && strstr(out, "--map") &&
	      strstr(out, "--json") && strstr(out, "-e, --event") &&
	      strstr(out, "mount -t debugfs"),
	      "pea stat --help describes the options, -e and the debugfs mount");
}

struct usage_case {
	char *const *argv;
	const char *msg;	/* in stderr */
};

static void test_usage(void)
{
	const struct usage_case cases[] = {
		{ ARGV("nosuchcmd"), "unknown command 'nosuchcmd'" },
		{ ARGV("help", "nosuchcmd"), "no command 'nosuchcmd'" },
		{ ARGV("trace"), "which probe?" },
		{ ARGV("trace", "do_sys_openat2"), "is not a probe" },
		{ ARGV("trace", "kprobe:"), "names no function" },
		{ ARGV("trace", "kprobe:a-b"), "is not a function name" },
		{ ARGV("trace", "kprobe:do_sys_openat2+x1"), "bad offset" },
		{ ARGV("trace", "kretprobe:do_sys_openat2+8"), "a kretprobe takes no +OFFSET" },
		{ ARGV("trace", "kprobe:a", "--maxactive", "4", "kretprobe:b"), "kprobe:a: --maxactive is for kretprobes and uretprobes" },
		{ ARGV("trace", "kprobe:a", "--str", "ARG6"), "name an argument ARG0..ARG5" },
		{ ARGV("trace", "kprobe:a", "--str", "ARG1:0"), "must be 1..256" },
		{ ARGV("trace", "kprobe:a", "--str", "ARG1:257"), "must be 1..256" },
		{ ARGV("trace", "kprobe:a", "--bytes", "ARG1"), "--bytes needs a length" },
		{ ARGV("trace", "kprobe:a", "--str", "ARG1", "--bytes", "ARG2:4"), "only one of --str and --bytes" },
		{ ARGV("trace", "kprobe:a", "--kernel"), "go with --str or --bytes" },
		{ ARGV("trace", "kprobe:a", "--str", "1", "--user", "--kernel"), "not both" },
		{ ARGV("trace", "kprobe:a", "--pages", "3"), "a power of two" },
		{ ARGV("trace", "kprobe:a", "--pages", "0"), "a power of two" },
		{ ARGV("trace", "kprobe:a", "--count", "0"), "--count '0'" },
		{ ARGV("trace", "kprobe:a", "--duration", "-1"), "--duration '-1'" },
		{ ARGV("trace", "kprobe:a", "--pid", "x"), "--pid 'x'" },
		{ ARGV("trace", "kprobe:a", "--cpu", "100000"), "this machine has CPUs 0.." },
		{ ARGV("trace", "kprobe:a", "--maxactive", "4"), "--maxactive is for kretprobes and uretprobes" },
		{ ARGV("trace", "uprobe:/bin/x:fn", "--maxactive", "4"), "uprobe:/bin/x:fn: --maxactive is for kretprobes and uretprobes" },
		{ ARGV("trace", "kprobe:a", "--frobnicate"), "unknown option '--frobnicate'" },
		{ ARGV("trace", "kprobe:a", "--count"), "needs a value" },
		{ ARGV("trace", "kprobe:a", "-F", "--count", "3"), "--count does not go with --flight-recorder" },
		{ ARGV("trace", "kprobe:a", "-F", "--unordered"), "--unordered does not go with --flight-recorder" },
		{ ARGV("stat", "--frobnicate"), "unknown option '--frobnicate'" },
		{ ARGV("stat", "extra"), "unexpected argument 'extra'" },
		{ ARGV("stat", "--map"), "needs a value" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct usage_case *c = &cases[i];
		char desc[256];
		int rc, k, n = 0;

		for (k = 1; c->argv[k]; k++)
			n += snprintf(desc + n, sizeof(desc) - n, " %s",
				      c->argv[k]);
		/* As nobody: a usage error comes before the device. */
		rc = run(c->argv, as_nobody);
		PT_OK(rc == 2 && strstr(err, c->msg) && !out[0] &&
		      (!strncmp(err, "pea", 3)),
		      "usage error 'pea%s': exit 2, \"%s\", nothing on stdout",
		      desc, c->msg);
		if (rc != 2 || !strstr(err, c->msg))
			pt_diag("exit %d, stderr: %s", rc, err);
	}
	PT_OK(strstr(err, "see 'pea stat --help'") != NULL,
	      "usage errors point at the command's --help");
}

static void test_runtime(void)
{
	int rc;

	rc = run(ARGV("trace", "kprobe:do_sys_openat2"), as_nobody);
	PT_EQ(rc, 1, "trace as nobody: exit 1");
	PT_OK(strstr(err, "/dev/pea: permission denied") &&
	      strstr(err, "run as root"),
	      "trace as nobody: says /dev/pea is denied and to run as root");
	if (rc != 1)
		pt_diag("stderr: %s", err);

	rc = run(ARGV("stat"), as_nobody);
	PT_EQ(rc, 1, "stat as nobody: exit 1");
	PT_OK(strstr(err, "permission denied") && strstr(err, "run as root"),
	      "stat as nobody: says permission denied, run as root");

	rc = run(ARGV("stat"), no_debugfs);
	PT_EQ(rc, 1, "stat without debugfs: exit 1");
	PT_OK(strstr(err, "debugfs is not mounted") &&
	      strstr(err, "mount -t debugfs none /sys/kernel/debug"),
	      "stat without debugfs: says to mount it, and how");
	if (rc != 1)
		pt_diag("stderr: %s", err);

	rc = run(ARGV("trace", "kprobe:do_sys_openat2"), no_dev);
	PT_EQ(rc, 1, "trace with no /dev/pea: exit 1");
	PT_OK(strstr(err, "/dev/pea is missing although pea is loaded"),
	      "trace with no /dev/pea (module loaded): says so");

	rc = run(ARGV("trace", "kprobe:do_sys_openat2"), no_module);
	PT_EQ(rc, 1, "trace with no module: exit 1");
	PT_OK(strstr(err, "the pea module is not loaded (insmod pea.ko)"),
	      "trace with no module: says insmod pea.ko");
	if (rc != 1)
		pt_diag("stderr: %s", err);

	rc = run(ARGV("stat", "--map", "no_such_map_here"), NULL);
	PT_EQ(rc, 1, "stat --map of an unknown map: exit 1");
	PT_OK(strstr(err, "no map 'no_such_map_here'"),
	      "stat --map of an unknown map: says so");
}

int main(void)
{
	test_help();
	test_usage();
	test_runtime();
	return pt_done();
}
