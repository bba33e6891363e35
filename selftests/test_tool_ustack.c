// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace --ustack through /bin/pea in the guest: a child of this
 * program (built with frame pointers) runs pt_tu_outer() -> pt_tu_inner(),
 * which makes getppid() with a syscall instruction of its own, on request,
 * while the tool traces it (--pid); every event carries its user stack,
 * named from the child's maps and this program's ELF symbols:
 *   - kprobe:__x64_sys_getppid and tracepoint:syscalls:sys_enter_getppid
 *     --json: "ustack" is pt_tu_inner, pt_tu_outer, pt_tu_child, ... and
 *     "ustack_addr" has as many addresses; the kprobe with --kstack too:
 *     both stacks in one event;
 *   - uprobe on pt_tu_inner: at its first instruction (push %rbp) the
 *     frame is still the caller's, so the direct caller comes from the
 *     stack pointer, as perf's walk reads it: pt_tu_inner (the probed
 *     instruction), pt_tu_outer, pt_tu_child;
 *   - text: each event line is followed by exactly DEPTH lines
 *     "        ADDR name [u]" with --ustack=DEPTH;
 *   - CTF (--output DIR --format ctf with --json): babeltrace2 reads the
 *     user stacks back as "ustack" (the names --json gives) and
 *     "ustack_addr", every field of every event the JSON event's, for the
 *     kprobe with --kstack, the tracepoint and the uprobe;
 *   - usage errors (exit 2): --ustack=0, =128, on netfilter; --help.
 */
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_caller.h"
#include "pt_ctf.h"

#define KPROBE		"kprobe:__x64_sys_getppid"
#define TP		"tracepoint:syscalls:sys_enter_getppid"
#define N		3

static char line[65536];
static char events[N][65536];
static char uprobe[512];

/*
 * A local on the stack (volatile): gcc gives a leaf function that touches
 * no stack no frame of its own, and pt_tu_outer would then be missing
 * from every stack.
 */
__attribute__((noinline, used)) long pt_tu_inner(void)
{
	volatile long x = SYS_getppid;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"((long)x)
			 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline, used)) long pt_tu_outer(void)
{
	long r = pt_tu_inner();

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

/* The child: N calls per byte on @req, a byte on @done after each. */
__attribute__((noinline, used)) void pt_tu_child(int req, int done)
{
	char ch;
	int i;

	while (read(req, &ch, 1) == 1 && ch == 'g') {
		for (i = 0; i < N; i++)
			pt_tu_outer();
		if (write(done, &ch, 1) != 1)
			_exit(1);
	}
	_exit(0);
}


/* The strings of JSON array @key of @ev into @s (at most @max), or -1. */
static int json_strings(const char *ev, const char *key, char s[][512],
			int max)
{
	static char arr[65536];
	const char *p;
	size_t len;
	int n = 0;

	if (!pt_json_get(ev, key, arr, sizeof(arr), NULL) || arr[0] != '[')
		return -1;
	p = arr + 1;
	if (*p == ']')
		return 0;
	for (;;) {
		char tmp[512];

		if (!pt_json_string(&p, tmp, sizeof(tmp), &len))
			return -1;
		if (n < max)
			snprintf(s[n], 512, "%s", tmp);
		n++;
		if (*p == ']')
			return n;
		if (*p++ != ',')
			return -1;
	}
}

/* Trace @argv (--json, --count N) while the child makes N calls. */
static int trace_events(char *const argv[], struct pt_caller *c)
{
	return pt_caller_trace(argv, c, events[0], sizeof(events[0]), N, line,
			       sizeof(line));
}

/*
 * Every event's "ustack" starts with the names in @want (@nwant of them),
 * "ustack_addr" has as many entries, and with @kstack a "kstack" too.
 */
static void test_json(struct pt_caller *c, const char *what,
		      const char *const *want, int nwant, bool kstack,
		      char *const argv[])
{
	static char names[8][512], addrs[8][512], kn[8][512];
	int n, i, j, good = 0, nr, nra;

	n = trace_events(argv, c);
	PT_EQ(n, N, "%s --ustack --json: %d events", what, N);
	for (i = 0; i < n; i++) {
		bool ok;

		nr = json_strings(events[i], "ustack", names, 8);
		nra = json_strings(events[i], "ustack_addr", addrs, 8);
		ok = nr >= nwant && nr == nra;
		for (j = 0; ok && j < nwant; j++)
			ok = !strcmp(names[j], want[j]);
		if (kstack)
			ok = ok && json_strings(events[i], "kstack", kn, 8) >= 2;
		if (i == 0 || !ok)
			pt_diag("%s: %d user entries: %s %s %s %s", what, nr,
				nr > 0 ? names[0] : "", nr > 1 ? names[1] : "",
				nr > 2 ? names[2] : "", nr > 3 ? names[3] : "");
		good += ok;
	}
	PT_EQ(good, N, "%s: every ustack starts %s, %s%s%s", what, want[0],
	      want[1], nwant > 2 ? ", " : "", nwant > 2 ? want[2] : "");
}

/*
 * @argv (--json --count N --output @dir --format ctf) while the child
 * makes N calls: the CTF trace, read by babeltrace2, has the JSON events,
 * every field the same, the user stack's names and addresses included.
 */
static void test_ctf(struct pt_caller *c, const char *what, const char *probe,
		     const char *dir, char *const argv[])
{
	static char json[PT_CTF_MAXEV][PT_CTF_EVLEN];
	static char names[8][512];
	int n, i, good = 0;

	n = trace_events(argv, c);
	PT_EQ(n, N, "ctf, %s: %d JSON events", what, N);
	for (i = 0; i < n; i++) {
		snprintf(json[i], PT_CTF_EVLEN, "%.4000s", events[i]);
		if (json_strings(events[i], "ustack", names, 8) >= 2 &&
		    !strcmp(names[0], "pt_tu_inner") &&
		    !strcmp(names[1], "pt_tu_outer"))
			good++;
	}
	PT_EQ(good, N, "ctf, %s: every JSON event's ustack starts pt_tu_inner, pt_tu_outer",
	      what);
	PT_EQ(pt_ctf_compare(dir, probe, what, json, n < 0 ? 0 : n), N,
	      "ctf, %s: babeltrace2 gives the %d events", what, N);
	PT_OK(strstr(bt_out, "ustack = [ [0] = \"pt_tu_inner\", [1] = \"pt_tu_outer\"") &&
	      strstr(bt_out, "ustack_addr = [ [0] = 0x"),
	      "ctf, %s: babeltrace2 prints ustack = [ \"pt_tu_inner\", \"pt_tu_outer\", ... ] and ustack_addr",
	      what);
}

static bool frame_line(const char *l)
{
	int i;

	if (strncmp(l, "        ", 8))
		return false;
	for (i = 8; i < 24; i++)
		if (!isxdigit((unsigned char)l[i]))
			return false;
	return l[24] == ' ' && strstr(l, " [u]");
}

static void test_text(struct pt_caller *c)
{
	char *argv[] = { PT_PEA, "trace", KPROBE, "--ustack=2", "--count",
			 "3", "--pid", c->pid_s, NULL };
	int lines = 0, evs = 0, frames = 0, bad = 0, since = -1, rc;
	struct pt_proc p;

	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "text: pea trace --ustack=2 starts");
		pt_proc_close(&p);
		return;
	}
	pt_caller_calls(c);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (++lines == 1)
			continue;	/* the column header */
		if (frame_line(line)) {
			frames++;
			if (since < 0 || (since == 0 &&
					  !strstr(line, " pt_tu_inner [u]")) ||
			    (since == 1 && !strstr(line, " pt_tu_outer [u]")))
				bad++;
			since++;
		} else {
			if (since >= 0 && since != 2)
				bad++;
			evs++;
			since = 0;
		}
		if (lines <= 4)
			pt_diag("text: %s", line);
	}
	if (since != 2)
		bad++;
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(rc, 0, "text: exit 0");
	PT_EQ(evs, 3, "text: 3 event lines");
	PT_EQ(frames, 6, "text: 6 frame lines (2 per event)");
	PT_EQ(bad, 0,
	      "text: each event line is followed by pt_tu_inner [u], then pt_tu_outer [u]");
}

static void test_usage(void)
{
	static char out[65536], err[4096];
	const char *bad[] = { "--ustack=0", "--ustack=128", "--ustack=x" };
	unsigned int i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = pt_run((char *[]){ PT_PEA, "trace", KPROBE,
					(char *)bad[i], NULL }, out,
			    sizeof(out), err, sizeof(err), NULL, NULL);
		PT_EQ(rc, 2, "%s: usage error, exit 2", bad[i]);
		PT_OK(strstr(err, "--ustack") != NULL,
		      "%s: the message names --ustack", bad[i]);
	}
	rc = pt_run((char *[]){ PT_PEA, "trace", "netfilter:ipv4:LOCAL_IN",
				"--ustack", NULL }, out, sizeof(out), err,
		    sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--ustack on netfilter: usage error, exit 2");
	rc = pt_run((char *[]){ PT_PEA, "trace", "--help", NULL }, out,
		    sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && strstr(out, "--ustack[=DEPTH]"),
	      "pea trace --help documents --ustack[=DEPTH]");
}

int main(void)
{
	static const char *const sys[] = { "pt_tu_inner", "pt_tu_outer",
					   "pt_tu_child" };
	static const char *const entry[] = { "pt_tu_inner", "pt_tu_outer",
					     "pt_tu_child" };
	char self[256];
	ssize_t len;
	struct pt_caller c;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		pt_fatal("readlink");
	self[len] = 0;
	snprintf(uprobe, sizeof(uprobe), "uprobe:%s:pt_tu_inner", self);
	pt_dev();
	pt_caller_start(&c, pt_tu_child);
	test_json(&c, KPROBE, sys, 3, false,
		  (char *[]){ PT_PEA, "trace", KPROBE, "--ustack", "--json",
			      "--count", "3", "--pid", c.pid_s, NULL });
	test_json(&c, "kprobe with --kstack", sys, 3, true,
		  (char *[]){ PT_PEA, "trace", KPROBE, "--kstack=8",
			      "--ustack=8", "--json", "--count", "3", "--pid",
			      c.pid_s, NULL });
	test_json(&c, TP, sys, 3, false,
		  (char *[]){ PT_PEA, "trace", TP, "--ustack", "--json",
			      "--count", "3", "--pid", c.pid_s, NULL });
	test_json(&c, "uprobe:pt_tu_inner", entry, 3, false,
		  (char *[]){ PT_PEA, "trace", uprobe, "--ustack", "--json",
			      "--count", "3", "--pid", c.pid_s, NULL });
	test_ctf(&c, "kprobe with --kstack", KPROBE, "/tmp/pea-ctf-ustack-k",
		 (char *[]){ PT_PEA, "trace", KPROBE, "--kstack=8",
			     "--ustack=8", "--json", "--count", "3", "--pid",
			     c.pid_s, "--output", "/tmp/pea-ctf-ustack-k",
			     "--format", "ctf", NULL });
	test_ctf(&c, "tracepoint", TP, "/tmp/pea-ctf-ustack-tp",
		 (char *[]){ PT_PEA, "trace", TP, "--ustack", "--json",
			     "--count", "3", "--pid", c.pid_s, "--output",
			     "/tmp/pea-ctf-ustack-tp", "--format", "ctf", NULL });
	test_ctf(&c, "uprobe", "pt_tu_inner", "/tmp/pea-ctf-ustack-u",
		 (char *[]){ PT_PEA, "trace", uprobe, "--ustack", "--json",
			     "--count", "3", "--pid", c.pid_s, "--output",
			     "/tmp/pea-ctf-ustack-u", "--format", "ctf", NULL });
	test_text(&c);
	pt_caller_stop(&c);
	test_usage();
	return pt_done();
}
