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

/* Spin @ms with few clock reads (on 6.1's HPET each is a syscall). */
static void spin_ms(unsigned int ms)
{
	struct timespec t0, t;
	volatile unsigned long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000000; i++)
			n++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

__attribute__((noinline, used)) void pt_ps_before(unsigned int ms)
{
	spin_ms(ms);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, used)) void pt_ps_after(unsigned int ms)
{
	spin_ms(ms);
	__asm__ volatile("" ::: "memory");
}

/*
 * The share of each image's samples that must have its spin function:
 * the rest are in the kernel's exec and the new image's start, or in the
 * kernel (faults, the clock read, the tick), which the debug kernel's
 * KASAN and lockdep make about five times longer.
 */
static unsigned long named_pct(void)
{
	return pt_time_scale() > 1 ? 90 : 95;
}

/* The weights of the folded lines of COMM: all, and with each spin. */
static bool count(unsigned long *all, unsigned long *pre, unsigned long *post)
{
	static char line[1 << 16];
	FILE *in = fopen(FOLDED, "r");
	bool ok = in != NULL;

	*all = *pre = *post = 0;
	while (in && fgets(line, sizeof(line), in)) {
		char *sp = strrchr(line, ' ');
		unsigned long w;

		if (!sp) {
			ok = false;
			continue;
		}
		w = strtoul(sp + 1, NULL, 10);
		if (strncmp(line, COMM ";", strlen(COMM) + 1))
			continue;
		*all += w;
		if (strstr(line, ";pt_ps_before"))
			*pre += w;
		else if (strstr(line, ";pt_ps_after"))
			*post += w;
		else if (strstr(line, "[unknown]") ||
			 strstr(line, "[test_tool_profile_self+"))
			pt_diag("unnamed: %.300s %lu", line, w);
	}
	if (in)
		fclose(in);
	return ok;
}

/* The held child: spins in this image, then execs its own file. */
static void self_child(void)
{
	char *again[] = { self, "--after", NULL };

	pt_ps_before(1500);
	execv(self, again);
}

static void test_self_exec(bool records)
{
	const char *how = records ? "records" : "in-kernel";
	char pid_s[16];
	char *argv[] = { PT_PEA, "profile", "-F", "499", "-p", pid_s,
			 "-d", "60", "--folded", FOLDED,
			 records ? "--records" : NULL, NULL };
	unsigned long all, pre, post;
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
	PT_OK(count(&all, &pre, &post), "self exec (%s): the folded stacks read",
	      how);
	pt_diag("self exec (%s): %lu samples, %lu in pt_ps_before, %lu in pt_ps_after",
		how, all, pre, post);
	PT_OK(pre >= 20 && post >= 20,
	      "self exec (%s): at least 20 samples named in each image's spin (%lu, %lu)",
	      how, pre, post);
	PT_OK(pre + post >= all * named_pct() / 100,
	      "self exec (%s): %lu of the %lu samples named pt_ps_before or pt_ps_after (at least %lu%%)",
	      how, pre + post, all, named_pct());
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc == 2 && !strcmp(argv[1], "--after")) {
		pt_ps_after(1500);
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
