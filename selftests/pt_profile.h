/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea profile -p PID of a child held until the tool has attached
 * (test_tool_profile, test_tool_profile_self): the child waits on a
 * pipe, the tool starts with its output to /dev/null, and the child is
 * released once the tool has had time to attach.
 */
#ifndef _PT_PROFILE_H
#define _PT_PROFILE_H

#include <fcntl.h>
#include <sys/wait.h>
#include "pt_tool.h"

/*
 * Fork a child that runs @child (which execs, or exits) once released,
 * write its pid into @pid_s (@len bytes: the tool's -p argument in
 * @argv), unlink @folded, start the tool @argv, and release the child
 * 1.5 s later (the tool attaches within a second or so under TCG). The
 * child's pid in *@kid and the tool's in *@tool; false if the pipe could
 * not be made (case "@what: pipe"). A failed release is the case
 * "@what: released the child".
 */
static inline bool pt_profile_held(const char *what, void (*child)(void),
				   char *pid_s, size_t len,
				   char *const argv[], const char *folded,
				   pid_t *kid, pid_t *tool)
{
	int go[2];
	char c;

	if (pipe(go)) {
		PT_OK(0, "%s: pipe", what);
		return false;
	}
	*kid = fork();
	if (*kid == 0) {
		close(go[1]);
		/* Started once the tool has attached (it prints nothing). */
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		child();
		_exit(127);
	}
	close(go[0]);
	snprintf(pid_s, len, "%d", *kid);
	unlink(folded);
	*tool = fork();
	if (*tool == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	usleep(1500000);
	if (write(go[1], "g", 1) != 1)
		PT_OK(0, "%s: released the child", what);
	close(go[1]);
	return true;
}

#endif /* _PT_PROFILE_H */
