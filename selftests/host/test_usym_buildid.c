// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): the build-ids pea profile --build-ids writes
 * (tools/pea/usym.c). Programs built here with known build-ids
 * (cc -Wl,--build-id=0x...: 20 bytes, 8 bytes, 24 bytes, which perf cuts
 * to its 20, and none) run until killed; each one's maps are read
 * (usyms_snap()), one of its functions named (usyms_name()), and the
 * listing must be exactly "HEX PATH" for the program, as perf
 * buildid-list prints it, or empty without a build-id; and empty for a
 * process none of whose frames was named. TAP on stdout.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "usym.h"

#define HOST_TAP_NAME "usym_buildid"
#include "host_tap.h"

static char dir[64];

static const char prog[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"__attribute__((noinline)) void pt_bid_func(void)\n"
	"{\n"
	"	__asm__ volatile(\"\" ::: \"memory\");\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"	pt_bid_func();\n"
	"	printf(\"%p\\n\", (void *)pt_bid_func);\n"
	"	fflush(stdout);\n"
	"	pause();\n"
	"	return 0;\n"
	"}\n";

/* Build @name with @opt; 0 or -1. */
static int build(const char *name, const char *opt)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cc -O1 -o %s/%s %s/prog.c %s", dir, name,
		 dir, opt);
	return system(cmd) ? -1 : 0;
}

/* Run @name; its pid, the address of its pt_bid_func in *@addr. */
static pid_t run(const char *name, unsigned long long *addr)
{
	char path[128], line[64];
	int fds[2];
	pid_t pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (pipe(fds))
		return -1;
	pid = fork();
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "%llx", addr) != 1) {
		if (pid > 0)
			kill(pid, SIGKILL);
		pid = -1;
	}
	if (f)
		fclose(f);
	return pid;
}

/* The listing after naming pt_bid_func (if @name_it) of program @name. */
static void expect(const char *name, const char *hex, bool name_it)
{
	char want[256], sym[128] = "", *buf = NULL;
	unsigned long long addr = 0;
	struct usyms *u = usyms_new();
	size_t len = 0;
	int err = -1, lines = -1, nerr = -1;
	pid_t pid = run(name, &addr);
	FILE *m;

	if (pid > 0 && u) {
		err = usyms_snap(u, pid);
		if (name_it)
			nerr = usyms_name(u, pid, addr, sym, sizeof(sym));
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	m = open_memstream(&buf, &len);
	if (m && u) {
		lines = usyms_write_build_ids(u, m);
		fclose(m);
	}
	if (hex)
		snprintf(want, sizeof(want), "%s %s/%s\n", hex, dir, name);
	else
		want[0] = '\0';
	ok(pid > 0 && !err, "%s: ran and its maps were read (pid %d, %d)",
	   name, (int)pid, err);
	if (name_it)
		ok(!nerr && !strcmp(sym, "pt_bid_func"),
		   "%s: %#llx is pt_bid_func (%d '%s')", name, addr, nerr, sym);
	ok(buf && lines == (hex ? 1 : 0) && !strcmp(buf, want),
	   "%s: the listing is '%.*s' (%d lines: '%.*s')", name,
	   (int)strcspn(want, "\n"), want, lines,
	   buf ? (int)strcspn(buf, "\n") : 0, buf ? buf : "");
	free(buf);
	usyms_free(u);
}

int main(void)
{
	char p[128];
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/pea-usym-bid-%d", (int)getpid());
	if (mkdir(dir, 0755) && errno != EEXIST)
		return 1;
	snprintf(p, sizeof(p), "%s/prog.c", dir);
	f = fopen(p, "w");
	if (!f || fputs(prog, f) < 0 || fclose(f)) {
		ok(0, "writing %s", p);
		return host_tap_done();
	}
	ok(!build("p20", "-Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567") &&
	   !build("p8", "-Wl,--build-id=0x00112233deadbeef") &&
	   !build("p24", "-Wl,--build-id=0xa1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8") &&
	   !build("pnone", "-Wl,--build-id=none"),
	   "four programs built with known build-ids");
	expect("p20", "0123456789abcdef0123456789abcdef01234567", true);
	expect("p8", "00112233deadbeef", true);
	expect("p24", "a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4", true);
	expect("pnone", NULL, true);
	/* No frame named in it: not listed, as perf lists files with hits. */
	expect("p20", NULL, false);
	snprintf(p, sizeof(p), "rm -rf %s", dir);
	if (system(p))
		ok(0, "removing %s", dir);
	return host_tap_done();
}
