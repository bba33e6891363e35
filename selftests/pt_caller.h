/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A child that makes its calls on request, traced by `pea trace --pid`
 * (test_tool_kstack, test_tool_ustack, test_tool_trace, test_tool_hist).
 * The child runs @serve(req, done): for each request read from req it
 * makes its calls, then writes a reply to done; it exits at the end of
 * req. With pt_caller_calls() a request is the byte 'g' and the reply a
 * byte; the test asks for a round and has it made when the call returns,
 * so every hit of it is in before the test stops the tool.
 */
#ifndef _PT_CALLER_H
#define _PT_CALLER_H

#include <fcntl.h>
#include <sys/wait.h>
#include "pt_tool.h"

struct pt_caller {
	pid_t pid;
	int req, done;
	char pid_s[16];		/* the pid, for --pid */
};

static inline void pt_caller_start(struct pt_caller *c,
				   void (*serve)(int req, int done))
{
	int a[2], b[2];

	/* Not inherited by the tools the test runs: the child sees EOF. */
	if (pipe2(a, O_CLOEXEC) || pipe2(b, O_CLOEXEC))
		pt_fatal("pipe2");
	/* Nothing buffered is written twice if the child exits by exit(). */
	fflush(stdout);
	c->pid = fork();
	if (c->pid < 0)
		pt_fatal("fork");
	if (!c->pid) {
		close(a[1]);
		close(b[0]);
		serve(a[0], b[1]);
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	c->req = a[1];
	c->done = b[0];
	snprintf(c->pid_s, sizeof(c->pid_s), "%d", c->pid);
}

/* One round of the child's calls, made when this returns. */
static inline void pt_caller_calls(struct pt_caller *c)
{
	char ch = 'g';

	if (write(c->req, &ch, 1) != 1 || read(c->done, &ch, 1) != 1)
		pt_fatal("child");
}

static inline void pt_caller_stop(struct pt_caller *c)
{
	close(c->req);
	close(c->done);
	waitpid(c->pid, NULL, 0);
}

/*
 * Start the tool @argv (--json, with --count: it ends by itself), have
 * @c make one round of calls, and keep the tool's first @max event lines
 * in @events (@size bytes each), reading through @line (@len bytes).
 * Returns how many events were kept, -1 if the tool did not start, or
 * -100 - its exit status if it failed.
 */
static inline int pt_caller_trace(char *const argv[], struct pt_caller *c,
				  char *events, size_t size, int max,
				  char *line, size_t len)
{
	struct pt_proc p;
	int n = 0, rc;

	if (!pt_trace_start(&p, argv)) {
		pt_proc_close(&p);
		return -1;
	}
	pt_caller_calls(c);
	while (pt_proc_line(&p, false, line, len, PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "event") && n < max)
			snprintf(events + n++ * size, size, "%s", line);
		else if (!pt_json_streq(line, "type", "summary"))
			pt_diag("unexpected: %.200s", line);
	}
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	return rc ? -100 - rc : n;
}

#endif /* _PT_CALLER_H */
