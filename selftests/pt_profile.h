/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests of pea profile share (test_tool_profile, _profile_self,
 * _profile_wide, test_tool_dwunw): a child held until the tool has
 * attached, the folded output read back line by line, the workload's
 * spin stacks told apart, and the tool's counts line.
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

static inline bool pt_ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

/*
 * The folded file @path ("FRAME;FRAME;... WEIGHT" a line, pea profile
 * --folded): @fn(@arg, stack, weight) for each line, the stack
 * NUL-terminated where its weight began. *@lines and *@total count the
 * lines and their weights; a missing file or a line without a weight
 * sets *@bad (and is not passed on). The counters are zeroed first.
 */
static inline void pt_read_folded(const char *path, unsigned long *lines,
				  unsigned long *total, bool *bad,
				  void (*fn)(void *arg, char *stack,
					     unsigned long w),
				  void *arg)
{
	static char line[1 << 16];
	FILE *in = fopen(path, "r");

	*lines = *total = 0;
	*bad = !in;
	while (in && fgets(line, sizeof(line), in)) {
		char *sp = strrchr(line, ' '), *end;
		unsigned long w;

		if (!sp) {
			*bad = true;
			continue;
		}
		*sp = '\0';
		w = strtoul(sp + 1, &end, 10);
		if (end == sp + 1 || (*end && *end != '\n')) {
			*bad = true;
			continue;
		}
		(*lines)++;
		*total += w;
		fn(arg, line, w);
	}
	if (in)
		fclose(in);
}

/*
 * The workload's spin() samples (test_sample --work 0 and test_tool_dwunw:
 * main() calls a() and b(), each calling spin()): @w goes to *@a or *@b
 * if @stack ends main;a;spin or main;b;spin exactly, to *@other (and is
 * printed when @show) if it ends anywhere else in spin.
 */
static inline void pt_fold_spin(const char *stack, unsigned long w,
				unsigned long *a, unsigned long *b,
				unsigned long *other, bool show)
{
	if (pt_ends_with(stack, ";main;a;spin")) {
		*a += w;
	} else if (pt_ends_with(stack, ";main;b;spin")) {
		*b += w;
	} else if (pt_ends_with(stack, ";spin")) {
		*other += w;
		if (show)
			pt_diag("spin stack: %.300s %lu", stack, w);
	}
}

/* "pea profile: N samples, M lost, overflows K ..." in the tool's @err. */
static inline bool pt_profile_counts(const char *err, unsigned long long *n,
				     unsigned long long *lost,
				     unsigned long long *ovf)
{
	const char *s = strstr(err, "pea profile: ");

	return s && sscanf(s, "pea profile: %llu samples, %llu lost, overflows %llu",
			   n, lost, ovf) == 3;
}

#endif /* _PT_PROFILE_H */
