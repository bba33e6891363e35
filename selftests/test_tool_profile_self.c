// SPDX-License-Identifier: GPL-2.0
/*
 * pea profile -p PID of a process that execs its own file (the same
 * inode, the same comm): this program, built as a static PIE (Makefile),
 * so that the exec loads it at another address. Its child spins in
 * pt_ps_before(), then execs this file again, which spins in
 * pt_ps_after(). The tool must see the exec by the new memory layout
 * (/proc/PID/stat's code, stack, heap and argument addresses) and name
 * the frames before it by the first image's maps and those after by the
 * second's, split by the user instruction pointer (both have one comm);
 * counted in the kernel and from records (--records). Before, the maps
 * read again on a frame outside them named both, and every frame before
 * the exec came out "[unknown]".
 */
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_profile.h"

#define FOLDED	"/tmp/pt_profile_self.folded"
#define COMM	"test_tool_profi"

static char self[256];

/*
 * Each image spins a number of instructions, not a time: the rest of
 * the process's samples (the new image's start, the exit) are
 * instructions too, so the spins' share does not depend on how fast the
 * host runs the guest. Under TCG a loaded host stretches the guest's
 * time per instruction: spins of 1.5 s by the clock had about 350
 * samples each in a CI run on the debug kernel, against 730 on an idle
 * host, and the rest 14% of the samples, against 2 to 7%.
 */
#define SPIN_LOOPS	400

static void spin(void)
{
	volatile unsigned long n = 0;

	for (unsigned int j = 0; j < SPIN_LOOPS; j++)
		for (unsigned int i = 0; i < 1000000; i++)
			n++;
}

__attribute__((noinline, used)) void pt_ps_before(void)
{
	spin();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, used)) void pt_ps_after(void)
{
	spin();
	__asm__ volatile("" ::: "memory");
}

/*
 * The share of the samples outside execve() that must be in a spin: the
 * rest are the new image's start (the static PIE relocating itself,
 * libc's set-up, their page faults), the waits before and the exit,
 * which the debug kernel's KASAN and lockdep make about five times
 * longer.
 */
static unsigned long named_pct(void)
{
	return pt_time_scale() > 1 ? 90 : 95;
}

struct self_count {
	unsigned long all, pre, post, exec;
};

/* One folded line of count(). */
static void count_line(void *arg, char *line, unsigned long w)
{
	struct self_count *c = arg;

	if (strncmp(line, COMM ";", strlen(COMM) + 1))
		return;
	c->all += w;
	if (strstr(line, ";pt_ps_before"))
		c->pre += w;
	else if (strstr(line, ";pt_ps_after"))
		c->post += w;
	else if (strstr(line, ";__x64_sys_execve_[k]"))
		c->exec += w;
	else
		pt_diag("other: %.200s", line);
}

/*
 * The weights of the folded lines of COMM: @all of them; @pre and @post
 * those of each image's spin; @exec those inside the execve(), the
 * kernel loading the second image, which is not a matter of which maps
 * name the samples. The rest is printed.
 */
static bool count(unsigned long *all, unsigned long *pre, unsigned long *post,
		  unsigned long *exec)
{
	struct self_count c = { 0 };
	unsigned long lines, total;
	bool bad;

	pt_read_folded(FOLDED, &lines, &total, &bad, count_line, &c);
	*all = c.all;
	*pre = c.pre;
	*post = c.post;
	*exec = c.exec;
	return !bad;
}

/* The held child: spins in this image, then execs its own file. */
static void self_child(void)
{
	char *again[] = { self, "--after", NULL };

	pt_ps_before();
	execv(self, again);
}

static void test_self_exec(bool records)
{
	const char *how = records ? "records" : "in-kernel";
	char pid_s[16];
	char *argv[] = { PT_PEA, "profile", "-F", "499", "-p", pid_s,
			 "-d", "60", "--folded", FOLDED,
			 records ? "--records" : NULL, NULL };
	unsigned long all, pre, post, exec;
	int status = 0;
	char what[32];
	pid_t pid, tool;

	snprintf(what, sizeof(what), "self exec (%s)", how);
	if (!pt_profile_held(what, self_child, pid_s, sizeof(pid_s), argv,
			     FOLDED, &pid, &tool))
		return;
	waitpid(pid, &status, 0);
	PT_OK(WIFEXITED(status) && !WEXITSTATUS(status),
	      "self exec (%s): the process exec'd its own file and exited 0 (0x%x)",
	      how, status);
	waitpid(tool, &status, 0);
	PT_OK(WIFEXITED(status) && !WEXITSTATUS(status),
	      "self exec (%s): profile -p PID exits 0 when the process is gone (0x%x)",
	      how, status);
	PT_OK(count(&all, &pre, &post, &exec),
	      "self exec (%s): the folded stacks read", how);
	pt_diag("self exec (%s): %lu samples, %lu in pt_ps_before, %lu in pt_ps_after, %lu in execve()",
		how, all, pre, post, exec);
	PT_OK(pre >= 20 && post >= 20,
	      "self exec (%s): at least 20 samples named in each image's spin (%lu, %lu)",
	      how, pre, post);
	PT_OK(pre + post >= (all - exec) * named_pct() / 100,
	      "self exec (%s): %lu of the %lu samples outside execve() named pt_ps_before or pt_ps_after (at least %lu%%)",
	      how, pre + post, all - exec, named_pct());
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc == 2 && !strcmp(argv[1], "--after")) {
		pt_ps_after();
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	pt_dev();
	test_self_exec(false);
	test_self_exec(true);
	return pt_done();
}
