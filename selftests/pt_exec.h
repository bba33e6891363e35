/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tests whose workload is an exec: the program runs itself (or a link to
 * itself) with "--exit", which returns at once, so the exec's path, pid
 * and comm are known to the test.
 */
#ifndef _PT_EXEC_H
#define _PT_EXEC_H

#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "pea_test.h"

/*
 * Call first in main(): exits at once when run as the workload, else
 * stores the program's own path in @buf.
 */
static inline void pt_exec_init(int argc, char **argv, char *buf, size_t len)
{
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "--exit"))
		exit(0);
	n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	buf[n] = 0;
}

/* Fork, exec @path with "--exit" and wait for it; returns its pid. */
static inline pid_t pt_exec_exit(const char *path)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		execl(path, path, "--exit", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return pid;
}

#endif /* _PT_EXEC_H */
