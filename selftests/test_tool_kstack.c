// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace --kstack through /bin/pea in the guest: a child process calls
 * getppid() on request while the tool traces it (--pid), and every event
 * carries its kernel stack, symbolised from /proc/kallsyms:
 *   - --json: "kstack" starts with __x64_sys_getppid+0x... (the probed
 *     address, the event's "addr": +0x4 past an endbr64 with IBT) and
 *     contains do_syscall_64+0x..., "kstack_addr" has as many "0x..."
 *     addresses; a kretprobe's entry stack likewise; a
 *     tracepoint's (raw_syscalls:sys_enter filtered to getppid) reaches
 *     do_syscall_64;
 *   - text: each event line is followed by exactly DEPTH frame lines
 *     ("        ADDR symbol+0xOFF") with --kstack=DEPTH;
 *   - usage errors (exit 2): --kstack=0, =128, =abc, on a uprobe or a
 *     netfilter hook; --help documents --kstack;
 *   - module code (the test module's target, called in NMI) is named
 *     "symbol+0xOFF [pea_selftest]".
 */
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_caller.h"

#define PROBE		"kprobe:__x64_sys_getppid"
#define RETPROBE	"kretprobe:__x64_sys_getppid"
#define N		4

static char line[65536];
static char events[N][65536];

/* The child: N getppid() per byte on @req, a byte on @done after each. */
static void kstack_serve(int req, int done)
{
	char ch;
	int i;

	while (read(req, &ch, 1) == 1 && ch == 'g') {
		for (i = 0; i < N; i++)
			syscall(SYS_getppid);
		if (write(done, &ch, 1) != 1)
			_exit(1);
	}
}

/*
 * The strings of the JSON array member @key of @ev: how many there are
 * (-1 if it is not an array of strings); the first into @first, and
 * whether one starts with @prefix in *@has.
 */
static int json_strings(const char *ev, const char *key, char *first,
			size_t max, const char *prefix, bool *has)
{
	static char arr[65536];
	char s[512];
	const char *p;
	size_t len;
	int n = 0;

	*has = false;
	first[0] = '\0';
	if (!pt_json_get(ev, key, arr, sizeof(arr), NULL) || arr[0] != '[')
		return -1;
	p = arr + 1;
	if (*p == ']')
		return 0;
	for (;;) {
		if (!pt_json_string(&p, s, sizeof(s), &len))
			return -1;
		if (!n)
			snprintf(first, max, "%s", s);
		if (prefix && !strncmp(s, prefix, strlen(prefix)))
			*has = true;
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

static void test_json(struct pt_caller *c, const char *probe, const char *first_pfx,
		      char *const argv[])
{
	char first[512], addr0[64], addr[64];
	int n, i, good = 0, nr, nr_addr;
	bool has, has_addr;

	n = trace_events(argv, c);
	PT_EQ(n, N, "%s --kstack --json: %d events", probe, N);
	for (i = 0; i < n; i++) {
		nr = json_strings(events[i], "kstack", first, sizeof(first),
				  "do_syscall_64+0x", &has);
		nr_addr = json_strings(events[i], "kstack_addr", addr0,
				       sizeof(addr0), "0x", &has_addr);
		if (i == 0)
			pt_diag("%s: %d frames, first %s (%s)", probe, nr, first,
				addr0);
		/* A probe's first frame is the probed address ("addr"). */
		if (nr >= 2 && nr <= PEA_KSTACK_MAX && nr_addr == nr && has &&
		    has_addr && (!first_pfx ||
				 (!strncmp(first, first_pfx, strlen(first_pfx)) &&
				  pt_json_get(events[i], "addr", addr,
					      sizeof(addr), NULL) &&
				  !strcmp(addr, addr0))))
			good++;
	}
	PT_EQ(good, N,
	      "%s: every kstack %s%s%sreaches do_syscall_64; kstack_addr has as many addresses%s",
	      probe, first_pfx ? "starts with " : "", first_pfx ? first_pfx : "",
	      first_pfx ? "... and " : "",
	      first_pfx ? ", the first the event's addr" : "");
}

/*
 * Module code: the test module's target, called in NMI, names its frames
 * "symbol+0xOFF [pea_selftest]".
 */
static void test_module(void)
{
	char *argv[] = { PT_PEA, "trace", "kprobe:pea_st_kstack_target",
			 "--kstack", "--json", "--count", "3", NULL };
	struct pea_st_kstack_nmi c = { .count = 3 };
	char first[512];
	struct pt_proc p;
	int n = 0, good = 0, i, rc;
	bool has;

	pt_st();	/* loaded before the tool reads kallsyms */
	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "kprobe:pea_st_kstack_target --kstack starts");
		pt_proc_close(&p);
		return;
	}
	PT_EQ(pt_ioctl_errno(pt_st(), PEA_ST_IOC_KSTACK_NMI, &c), 0,
	      "3 calls of pea_st_kstack_target() in NMI");
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		if (pt_json_streq(line, "type", "event") && n < N)
			snprintf(events[n++], sizeof(events[0]), "%s", line);
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(rc, 0, "module: exit 0");
	PT_EQ(n, 3, "module: 3 events");
	for (i = 0; i < n; i++) {
		json_strings(events[i], "kstack", first, sizeof(first),
			     "pea_st_kstack_nmi+0x", &has);
		if (!i)
			pt_diag("module: first frame %s", first);
		if (has && !strncmp(first, "pea_st_kstack_target+0x", 23) &&
		    strlen(first) > 15 &&
		    !strcmp(first + strlen(first) - 15, " [pea_selftest]"))
			good++;
	}
	PT_EQ(good, 3,
	      "module: frames are pea_st_kstack_target+0x... [pea_selftest], then pea_st_kstack_nmi+0x... [pea_selftest]");
}

static bool frame_line(const char *l)
{
	int i;

	if (strncmp(l, "        ", 8))
		return false;
	for (i = 8; i < 24; i++)
		if (!isxdigit((unsigned char)l[i]))
			return false;
	return l[24] == ' ' && l[25] && l[25] != ' ';
}

static void test_text(struct pt_caller *c)
{
	char *argv[] = { PT_PEA, "trace", PROBE, "--kstack=2", "--count", "4",
			 "--pid", c->pid_s, NULL };
	int lines = 0, events_seen = 0, frames = 0, bad = 0, since = -1;
	struct pt_proc p;
	int rc;

	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "text: pea trace --kstack=2 starts");
		pt_proc_close(&p);
		return;
	}
	pt_caller_calls(c);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		lines++;
		if (lines == 1)
			continue;	/* the column header */
		if (frame_line(line)) {
			frames++;
			if (since < 0)
				bad++;
			else if (since == 0 &&
				 !strstr(line, " __x64_sys_getppid+0x"))
				bad++;
			else if (since == 1 &&
				 !strstr(line, " do_syscall_64+0x") &&
				 !strstr(line, " x64_sys_call+0x"))
				bad++;
			since++;
		} else {
			if (since >= 0 && since != 2)
				bad++;
			events_seen++;
			since = 0;
			if (events_seen == 1)
				pt_diag("text: %s", line);
		}
		if (lines <= 4 && lines > 1)
			pt_diag("text: %s", line);
	}
	if (since != 2)
		bad++;
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(rc, 0, "text: exit 0");
	PT_EQ(events_seen, 4, "text: 4 event lines");
	PT_EQ(frames, 8, "text: 8 frame lines (2 per event)");
	PT_EQ(bad, 0,
	      "text: each event line is followed by exactly its 2 frames, __x64_sys_getppid+0x... then its caller");
}

static void test_usage(void)
{
	static char out[65536], err[4096];
	const char *bad[] = { "--kstack=0", "--kstack=128", "--kstack=abc",
			      "--kstack=" };
	unsigned int i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = pt_run((char *[]){ PT_PEA, "trace", PROBE, (char *)bad[i],
					NULL }, out, sizeof(out), err,
			    sizeof(err), NULL, NULL);
		PT_EQ(rc, 2, "%s: usage error, exit 2", bad[i]);
		PT_OK(strstr(err, "--kstack") != NULL,
		      "%s: the message names --kstack", bad[i]);
	}
	rc = pt_run((char *[]){ PT_PEA, "trace", "uprobe:/bin/pea:main",
				"--kstack", NULL }, out, sizeof(out), err,
		    sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--kstack on a uprobe: usage error, exit 2");
	rc = pt_run((char *[]){ PT_PEA, "trace", "netfilter:ipv4:LOCAL_IN",
				"--kstack", NULL }, out, sizeof(out), err,
		    sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--kstack on netfilter: usage error, exit 2");
	rc = pt_run((char *[]){ PT_PEA, "trace", "--help", NULL }, out,
		    sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && strstr(out, "--kstack[=DEPTH]"),
	      "pea trace --help documents --kstack[=DEPTH]");
}

int main(void)
{
	char filter[64];
	struct pt_caller c;

	pt_dev();
	pt_caller_start(&c, kstack_serve);
	test_json(&c, PROBE, "__x64_sys_getppid+0x",
		  (char *[]){ PT_PEA, "trace", PROBE, "--kstack", "--json",
			      "--count", "4", "--pid", c.pid_s, NULL });
	test_json(&c, RETPROBE, "__x64_sys_getppid+0x",
		  (char *[]){ PT_PEA, "trace", RETPROBE, "--kstack", "--json",
			      "--count", "4", "--pid", c.pid_s, NULL });
	snprintf(filter, sizeof(filter), "id == %d", SYS_getppid);
	test_json(&c, "tracepoint:raw_syscalls:sys_enter", NULL,
		  (char *[]){ PT_PEA, "trace",
			      "tracepoint:raw_syscalls:sys_enter", "--filter",
			      filter, "--kstack=64", "--json", "--count", "4",
			      "--pid", c.pid_s, NULL });
	test_text(&c);
	pt_caller_stop(&c);
	test_module();
	test_usage();
	return pt_done();
}
