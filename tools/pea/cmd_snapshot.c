// SPDX-License-Identifier: GPL-2.0
/*
 * pea snapshot TARGET: ask a running `pea trace --flight-recorder` for a
 * snapshot now (SIGUSR1; cmd_trace.c prints and writes it). TARGET is
 * its pid, its map's name (trace_PID, as pea stat lists it) or the
 * --session name it streams to an lttng-relayd under. The process must
 * be a pea trace flight recorder (its command line says so); sending the
 * signal takes what kill(2) takes (the same user, or CAP_KILL).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pea_tool.h"

static const char snapshot_help[] =
"usage: pea snapshot PID|trace_PID|SESSION\n"
"\n"
"Ask a running 'pea trace --flight-recorder' for a snapshot now: it\n"
"prints the rings' ordered snapshot (and writes it to PATH.N with\n"
"--output PATH) and goes on recording, as on SIGUSR1. The trace is named\n"
"by its pid, its map (trace_PID, see 'pea stat') or the --session it\n"
"streams to an lttng-relayd under. Sending the signal takes what kill(2)\n"
"takes: the same user, or CAP_KILL.\n"
"Exit status: 0 when asked, 1 if there is no such flight recorder or it\n"
"may not be signalled, 2 on a usage error.\n";

#define CMDLINE_MAX	8192

/* /proc/@pid/cmdline as argv (in @buf); the argument count, 0 if none. */
static int proc_argv(pid_t pid, char *buf, size_t len, char **argv, int max)
{
	char path[64];
	size_t n = 0, i;
	FILE *f;
	int argc = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	for (i = 0; i < n && argc < max; i += strlen(buf + i) + 1)
		argv[argc++] = buf + i;
	return argc;
}

/* A short-option cluster of pea trace's flags holding F: -F, -qF, ... */
static bool flight_flag(const char *a)
{
	return a[0] == '-' && a[1] != '-' && strchr(a, 'F') &&
	       strspn(a + 1, "ajqFh") == strlen(a + 1);
}

/*
 * Whether @pid runs pea trace (argv[0] named pea, then "trace"), whether
 * as a flight recorder (*@flight), and under which --session (@session,
 * "" if none).
 */
static bool is_pea_trace(pid_t pid, bool *flight, char *session, size_t len)
{
	static char buf[CMDLINE_MAX];
	char *argv[512];
	const char *base;
	int argc = proc_argv(pid, buf, sizeof(buf), argv, 512), i;

	*flight = false;
	session[0] = 0;
	if (argc < 2)
		return false;
	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (strcmp(base, "pea") || strcmp(argv[1], "trace"))
		return false;
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--flight-recorder") || flight_flag(argv[i]))
			*flight = true;
		else if (!strcmp(argv[i], "--session") && i + 1 < argc)
			snprintf(session, len, "%s", argv[++i]);
		else if (!strncmp(argv[i], "--session=", 10))
			snprintf(session, len, "%s", argv[i] + 10);
	}
	return true;
}

/* The pea trace streaming as --session @name; 0 if none, -1 if several. */
static pid_t find_session(const char *name)
{
	char session[256];
	struct dirent *e;
	pid_t found = 0;
	bool flight;
	DIR *d = opendir("/proc");

	while (d && (e = readdir(d))) {
		pid_t pid;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = atoi(e->d_name);
		if (pid == getpid() ||
		    !is_pea_trace(pid, &flight, session, sizeof(session)) ||
		    strcmp(session, name))
			continue;
		found = found ? -1 : pid;
	}
	if (d)
		closedir(d);
	return found;
}

int cmd_snapshot(int argc, char **argv)
{
	const char *t = argc == 2 ? argv[1] : NULL;
	char session[256];
	bool flight;
	pid_t pid;

	if (t && (!strcmp(t, "--help") || !strcmp(t, "-h"))) {
		fputs(snapshot_help, stdout);
		return PEA_EXIT_OK;
	}
	if (!t || !*t || t[0] == '-')
		return tool_usage("snapshot", "which trace? a PID, trace_PID or a --session name");
	if (strspn(t, "0123456789") == strlen(t))
		pid = atoi(t);
	else if (!strncmp(t, "trace_", 6) && t[6] &&
		 strspn(t + 6, "0123456789") == strlen(t + 6))
		pid = atoi(t + 6);
	else
		pid = find_session(t);
	if (pid < 0) {
		tool_err("several pea traces stream as session '%s': name one by its pid", t);
		return PEA_EXIT_ERR;
	}
	if (pid <= 0 || !is_pea_trace(pid, &flight, session, sizeof(session))) {
		tool_err("no pea trace is %s", t);
		return PEA_EXIT_ERR;
	}
	if (!flight) {
		tool_err("pea trace %d is not a flight recorder (--flight-recorder): it has no snapshots to take",
			 (int)pid);
		return PEA_EXIT_ERR;
	}
	if (kill(pid, SIGUSR1)) {
		tool_err("cannot signal pea trace %d: %s%s", (int)pid,
			 strerror(errno),
			 errno == EPERM ? " (it runs as another user: that takes CAP_KILL)" : "");
		return PEA_EXIT_ERR;
	}
	fprintf(stderr, "pea: asked pea trace %d for a snapshot\n", (int)pid);
	return PEA_EXIT_OK;
}
