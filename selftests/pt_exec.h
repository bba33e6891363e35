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

/*
 * Fork, exec @args[0] with @args, wait: its exit status. The child
 * copies the strings to its stack first, as a shell builds an argv in
 * memory it wrote: fork() does not copy the page table entries of file
 * pages (the strings' .rodata), so the child would not have them mapped
 * at execve's entry, and a probe cannot fault them in (a read that fails
 * there: the fault marked, as bpftrace's probe_read_user() fails).
 */
static inline int pt_exec_copied(char *const args[])
{
	pid_t pid = fork();
	int st;

	if (!pid) {
		char buf[256], *av[8];
		size_t off = 0, n;
		int i;

		for (i = 0; args[i] && i < 7; i++) {
			n = strlen(args[i]) + 1;
			if (off + n > sizeof(buf))
				_exit(126);
			memcpy(buf + off, args[i], n);
			av[i] = buf + off;
			off += n;
		}
		av[i] = NULL;
		execv(av[0], av);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif /* _PT_EXEC_H */
