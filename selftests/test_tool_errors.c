// SPDX-License-Identifier: GPL-2.0
/*
 * The pea tool's runtime errors: exit status 1, each with a message that
 * says what to do: no permission on /dev/pea or debugfs, debugfs not
 * mounted, /dev/pea or the module missing (shown in a private mount
 * namespace that hides them). Its help (exit 0) and usage errors (exit 2,
 * before touching the module, nothing on stdout) need no kernel: the
 * host tests them (selftests/host/test_tool_usage.sh).
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
	test_runtime();
	return pt_done();
}
