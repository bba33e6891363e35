// SPDX-License-Identifier: GPL-2.0
/*
 * The everyday one-liners engineers reach bpftrace for (issue 21's "Done
 * means"), each as README's table and pea(8) write it, through /bin/pea
 * in the guest on what this test does (--pid its own, children
 * included):
 *   - opensnoop, `pea trace syscall:openat`: four openat(2) calls with
 *     known paths and known results (an fd, ENOENT, ENOTDIR, EISDIR): each
 *     event's filename and ret exact, in JSON and on the text line;
 *   - execsnoop, `pea trace sysenter:execve 'join(argv)'`: a child execs
 *     /bin/true with known arguments; the event shows the path and the
 *     whole argv space-joined (JSON, text, CTF read by babeltrace2, a
 *     Perfetto string annotation);
 *     join(argv,2) shows two; --filter 'argv[1] == "beta"' keeps one exec
 *     of two (1 written, 1 filtered out); syscall:execve, at the
 *     return, sees the new program's cleared registers (why sysenter:);
 *   - join(argv) at a uprobe typed from DWARF: this program's own
 *     pt_1l_main(3, {"prog", "-x", "y z", NULL});
 *   - tcpconnect, `pea trace kprobe:tcp_connect
 *     'ntop(sk->__sk_common.skc_daddr)' 'ntohs(sk->__sk_common.skc_dport)'`
 *     (the fields bpftrace's tcpconnect.bt reads): a connect() to
 *     127.0.0.1:PORT and one to [::1]:PORT6 over lo, the addresses and
 *     ports exact in JSON, text, CTF and Perfetto, --filter on
 *     skc_family; --count-by the ntop() address with --filter on
 *     ntohs() == PORT and ntop() == "127.0.0.1" (another port and [::1]
 *     filtered out);
 *   - a syscall's latency by name, `pea trace syscall:nanosleep --hist
 *     latency`: two sleeps of 36 ms and three of 140 ms land in the log2
 *     buckets [2^25, 2^26) and [2^27, 2^28) ns, exactly 2 and 3 (the
 *     session again, up to 4 times, when the host stretched a sleep past
 *     its bucket as the task itself measured it).
 * Without BTF (the debug kernel) the one-liners are refused with the
 * reason.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_net.h"
#include "pt_pftrace.h"
#include "pt_exec.h"

#define OS_DIR		"/tmp/pea-1l"
#define KNOWN		OS_DIR "/known"
#define MISSING		OS_DIR "/missing"
#define CTF_EXEC	"/tmp/pea-1l-exec-ctf"
#define CTF_TCP		"/tmp/pea-1l-tcp-ctf"
#define PF_EXEC		"/tmp/pea-1l-exec.pftrace"
#define PF_TCP		"/tmp/pea-1l-tcp.pftrace"
#define TRUE_BIN	"/bin/true"

#define SK		"sk->__sk_common."
#define DADDR		"ntop(" SK "skc_daddr)"
#define DADDR6		"ntop(" SK "skc_v6_daddr)"
#define DPORT		"ntohs(" SK "skc_dport)"

static char line[65536];
static char out[1 << 18], err[1 << 16];
static char bt[1 << 16];

static long sys_openat(const char *path, int flags)
{
	long fd = syscall(SYS_openat, AT_FDCWD, path, flags, 0);

	if (fd < 0)
		return -errno;
	close((int)fd);
	return fd;
}

/* The line of @text that holds @a (and @b), into @buf; NULL if none. */
static const char *find_line(const char *text, const char *a, const char *b,
			     char *buf, size_t len)
{
	const char *s = text;

	while ((s = strstr(s, a))) {
		const char *st = s, *e = strchr(s, '\n');

		while (st > text && st[-1] != '\n')
			st--;
		if (!e)
			e = s + strlen(s);
		snprintf(buf, len, "%.*s", (int)(e - st), st);
		if (!b || strstr(buf, b))
			return buf;
		s = e;
	}
	return NULL;
}

/* babeltrace2's text of the CTF trace in @dir into bt; its status. */
static int babeltrace(const char *dir)
{
	char cmd[256];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "/usr/bin/babeltrace2 %s 2>&1", dir);
	f = popen(cmd, "r");
	n = f ? fread(bt, 1, sizeof(bt) - 1, f) : 0;
	bt[n] = 0;
	return f ? pclose(f) : -1;
}

/*
 * The annotation @name of the first track event named @ev in the decoded
 * pftrace (pt_pf_decode()); NULL if none.
 */
static const struct pt_annot *annot(const char *ev, const char *name)
{
	int i, j;

	for (i = 0; i < npk; i++) {
		if (pk[i].kind != 11 || strcmp(pk[i].name, ev))
			continue;
		for (j = 0; j < pk[i].nannot && j < PT_PF_ANNOT; j++)
			if (!strcmp(pk[i].annot[j].name, name))
				return &pk[i].annot[j];
	}
	return NULL;
}

/* ---- opensnoop ---- */

static void test_opensnoop(void)
{
	static const struct {
		const char *path;
		int flags;
		long want;	/* 0: an fd */
	} c[] = {
		{ KNOWN, O_RDONLY, 0 },
		{ MISSING, O_RDONLY, -ENOENT },
		{ KNOWN "/x", O_RDONLY, -ENOTDIR },
		{ OS_DIR, O_WRONLY, -EISDIR },
	};
	char buf[4096], want[512];
	long ret[4];
	struct pt_proc p;
	int rc, i, n = 0;
	const char *s;

	PT_OK(pt_trace_start_self(&p, "syscall:openat",
				  (char *[]){ "--json", NULL }),
	      "opensnoop: pea trace syscall:openat --json attached");
	for (i = 0; i < 4; i++)
		ret[i] = sys_openat(c[i].path, c[i].flags);
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "opensnoop: exit 0");
	for (s = out; (s = strstr(s, "\"type\":\"event\"")); s++)
		n++;
	PT_EQ(n, 4, "opensnoop: 4 events, one per call");
	for (i = 0; i < 4; i++) {
		PT_OK(c[i].want ? ret[i] == c[i].want : ret[i] >= 3,
		      "openat(%s): %ld", c[i].path, ret[i]);
		snprintf(want, sizeof(want), "\"filename\":\"%s\",\"flags\":%d",
			 c[i].path, c[i].flags);
		s = find_line(out, want, NULL, buf, sizeof(buf));
		PT_EQ(pt_json_num(s ? s : "", "ret", -12345), ret[i],
		      "opensnoop JSON: %s ret %ld", c[i].path, ret[i]);
	}

	PT_OK(pt_trace_start_self(&p, "syscall:openat",
				  (char *[]){ "--filter", "filename ~ \"" OS_DIR "/*\"",
					      NULL }),
	      "opensnoop text: attached, filtered on the path");
	for (i = 0; i < 4; i++)
		ret[i] = sys_openat(c[i].path, c[i].flags);
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "opensnoop text: exit 0");
	/* TIME CPU COMM PID TID RET LAT(us) PARAMS */
	for (i = 0; i < 3; i++) {
		long long r = 12345;

		snprintf(want, sizeof(want), "filename=\"%s\" ", c[i].path);
		s = find_line(out, want, NULL, buf, sizeof(buf));
		PT_OK(s && sscanf(s, "%*s %*s %*s %*s %*s %lld", &r) == 1 &&
		      r == ret[i],
		      "opensnoop text: %s RET %ld (%s)", c[i].path, ret[i],
		      s ? s : "no line");
	}
	PT_OK(strstr(err, "probe: 4 hits, 3 written, 1 filtered out"),
	      "opensnoop text: " OS_DIR " itself filtered out (%s)", err);
}

/* ---- execsnoop ---- */

static void test_execsnoop(void)
{
	char *const alpha[] = { TRUE_BIN, "alpha", "-b", "--gamma=3", NULL };
	char *const beta[] = { TRUE_BIN, "beta", NULL };
	const struct pt_annot *a;
	char buf[4096];
	struct pt_proc p;
	const char *s;
	int rc;

	PT_OK(access(TRUE_BIN, X_OK) == 0, TRUE_BIN " is there");
	if (system("rm -rf " CTF_EXEC))
		pt_diag("rm -rf " CTF_EXEC);
	PT_OK(pt_trace_start_self(&p, "sysenter:execve",
				  (char *[]){ "join(argv)", "--json",
					      "--output", CTF_EXEC, "--format",
					      "ctf", NULL }),
	      "execsnoop: pea trace sysenter:execve 'join(argv)' attached");
	PT_EQ(pt_exec_copied(alpha), 0, "execsnoop: /bin/true alpha -b --gamma=3 ran");
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "execsnoop: exit 0");
	s = find_line(out, "\"join(argv)\"", NULL, buf, sizeof(buf));
	PT_OK(s && strstr(s, "\"filename\":\"" TRUE_BIN "\"") &&
	      strstr(s, "\"join(argv)\":\"" TRUE_BIN " alpha -b --gamma=3\""),
	      "execsnoop JSON: filename and the whole argv (%s)",
	      s ? s : out);
	PT_EQ(babeltrace(CTF_EXEC), 0, "execsnoop CTF: babeltrace2 reads it");
	s = find_line(bt, "value = \"" TRUE_BIN " alpha -b --gamma=3\"", NULL,
		      buf, sizeof(buf));
	PT_OK(s && strstr(s, "value = \"" TRUE_BIN "\""),
	      "execsnoop CTF: the joined argv a string, the path too (%s)",
	      s ? s : bt);

	PT_OK(pt_trace_start_self(&p, "sysenter:execve",
				  (char *[]){ "join(argv,2)", "--output",
					      PF_EXEC, "--format", "pftrace",
					      NULL }),
	      "execsnoop: join(argv,2) attached");
	PT_EQ(pt_exec_copied(alpha), 0, "execsnoop: ran again");
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "execsnoop join(argv,2): exit 0");
	PT_OK(strstr(out, " join(argv,2)=\"" TRUE_BIN " alpha\"\n") &&
	      strstr(out, "filename=\"" TRUE_BIN "\""),
	      "execsnoop text: join(argv,2) is the first two (%s)", out);
	PT_EQ(pt_pf_decode(PF_EXEC), 0, "execsnoop pftrace: it decodes");
	a = annot("sysenter:execve", "join(argv,2)");
	PT_OK(a && a->field == 6 && !strcmp(a->s, TRUE_BIN " alpha"),
	      "execsnoop pftrace: join(argv,2) a string annotation (%s)",
	      a ? a->s : "none");

	PT_OK(pt_trace_start_self(&p, "sysenter:execve",
				  (char *[]){ "join(argv)", "--filter",
					      "argv[1] == \"beta\"", NULL }),
	      "execsnoop: --filter 'argv[1] == \"beta\"' attached");
	PT_EQ(pt_exec_copied(alpha), 0, "execsnoop: alpha ran");
	PT_EQ(pt_exec_copied(beta), 0, "execsnoop: beta ran");
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "execsnoop --filter: exit 0");
	PT_OK(strstr(out, " join(argv)=\"" TRUE_BIN " beta\"\n") &&
	      !strstr(out, "alpha"),
	      "execsnoop --filter: beta's exec only (%s)", out);
	PT_OK(strstr(err, "probe: 2 hits, 1 written, 1 filtered out"),
	      "execsnoop --filter: 2 hits, 1 written, 1 filtered out (%s)",
	      err);

	/* Why the entry: at syscall:'s return the registers are the new
	 * program's (cleared by the ELF loader), the old argv gone. */
	PT_OK(pt_trace_start_self(&p, "syscall:execve",
				  (char *[]){ "--json", NULL }),
	      "syscall:execve (at the return) attached");
	PT_EQ(pt_exec_copied(beta), 0, "execsnoop: beta ran");
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "syscall:execve: exit 0");
	s = find_line(out, "\"probe\":\"syscall:execve\"", NULL, buf,
		      sizeof(buf));
	PT_OK(s && strstr(s, "\"params\":{\"filename\":{\"fault\":1},\"argv\":\"0x0\",\"envp\":\"0x0\"}") &&
	      pt_json_num(s, "ret", -1) == 0,
	      "syscall:execve at the return: ret 0, the registers the new program's, argv 0 (%s)",
	      s ? s : out);

	rc = pt_run((char *[]){ PT_PEA, "trace", "sysenter:execve",
				"join(argv,6)", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 &&
	      strstr(err, "'join(argv,6)': 6 strings, one fetch each, and the probe's other fetches are more than 8 (write join(EXPR,N) with N at most 5)"),
	      "join(argv,6) after execve's 3 arguments: exit 2, the bound said (%d %s)",
	      rc, err);
}

/*
 * A user function with an argv, for a uprobe's join(argv) typed from
 * this program's DWARF (it is built with -g).
 */
__attribute__((noinline)) int pt_1l_main(int argc, char **argv)
{
	__asm__ volatile("" : : "r"(argv) : "memory");
	return argc;
}

static void test_uprobe_join(void)
{
	char probe[512], exe[256], buf[64], *av[4];
	struct pt_proc p;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int rc;

	PT_OK(n > 0, "this program's path");
	exe[n > 0 ? n : 0] = '\0';
	snprintf(probe, sizeof(probe), "uprobe:%s:pt_1l_main", exe);
	PT_OK(pt_trace_start_self(&p, probe,
				  (char *[]){ "argc", "join(argv)", NULL }),
	      "uprobe 'join(argv)' from DWARF attached");
	/* The strings in memory this task wrote (see pt_exec_copied()). */
	memcpy(buf, "prog\0-x\0y z", 12);
	av[0] = buf;
	av[1] = buf + 5;
	av[2] = buf + 8;
	av[3] = NULL;
	PT_EQ(pt_1l_main(3, av), 3, "pt_1l_main called");
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "uprobe join: exit 0");
	PT_OK(strstr(out, " argc=3 join(argv)=\"prog -x y z\"\n"),
	      "uprobe join: argc=3 join(argv)=\"prog -x y z\" (%s)", out);
}

/* ---- tcpconnect ---- */

/* Listen on @family's loopback, port chosen by the kernel: fd, *@port. */
static int listener(int family, __u16 *port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr *sa = family == AF_INET ? (void *)&a4 : (void *)&a6;
	socklen_t len = family == AF_INET ? sizeof(a4) : sizeof(a6);
	int s = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0 || bind(s, sa, len) || listen(s, 4) ||
	    getsockname(s, sa, &len)) {
		pt_diag("listener %d: %s", family, strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	*port = ntohs(family == AF_INET ? a4.sin_port : a6.sin6_port);
	return s;
}

/* connect() to the loopback's @port: 0 or -errno. */
static int connect_lo(int family, __u16 port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT,
				   .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				  .sin_port = htons(port) };
	int s = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (s < 0)
		return -errno;
	rc = family == AF_INET ? connect(s, (void *)&a4, sizeof(a4)) :
				 connect(s, (void *)&a6, sizeof(a6));
	rc = rc ? -errno : 0;
	close(s);
	return rc;
}

static void test_tcpconnect(void)
{
	char buf[4096], want[512];
	__u16 port = 0, port2 = 0, port6 = 0;
	const struct pt_annot *a;
	int l4, l4b, l6, rc;
	char flt[256];
	struct pt_proc p;
	const char *s;

	PT_OK(pt_lo_up() > 0, "lo is up");
	l4 = listener(AF_INET, &port);
	l6 = listener(AF_INET6, &port6);
	PT_OK(l4 >= 0 && l6 >= 0, "listening on 127.0.0.1:%u and [::1]:%u",
	      port, port6);
	if (system("rm -rf " CTF_TCP))
		pt_diag("rm -rf " CTF_TCP);
	PT_OK(pt_trace_start_self(&p, "kprobe:tcp_connect",
				  (char *[]){ DADDR, DPORT, "--json",
					      "--filter",
					      SK "skc_family == 2",
					      "--output", CTF_TCP, "--format",
					      "ctf", NULL }),
	      "tcpconnect: kprobe:tcp_connect with ntop() and ntohs() of struct sock's fields attached");
	PT_EQ(connect_lo(AF_INET, port), 0, "connect(127.0.0.1:%u)", port);
	PT_EQ(connect_lo(AF_INET6, port6), 0, "connect([::1]:%u)", port6);
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "tcpconnect: exit 0");
	snprintf(want, sizeof(want), "\"params\":{\"" DADDR "\":\"127.0.0.1\",\"" DPORT "\":%u}",
		 port);
	s = find_line(out, "\"type\":\"event\"", NULL, buf, sizeof(buf));
	PT_OK(s && strstr(s, want), "tcpconnect JSON: %s (%s)", want,
	      s ? s : out);
	PT_OK(strstr(out, "\"type\":\"event\"") &&
	      !strstr(strstr(out, "\"type\":\"event\"") + 1,
		      "\"type\":\"event\""),
	      "tcpconnect: one event, the IPv6 connect filtered out by skc_family");
	PT_EQ(babeltrace(CTF_TCP), 0, "tcpconnect CTF: babeltrace2 reads it");
	snprintf(want, sizeof(want), "value = %u }", port);
	s = find_line(bt, "value = \"127.0.0.1\"", want, buf, sizeof(buf));
	PT_OK(s, "tcpconnect CTF: the address a string, the port %u (%s)",
	      port, bt);

	PT_OK(pt_trace_start_self(&p, "kprobe:tcp_connect",
				  (char *[]){ DADDR6, DPORT, "--filter",
					      SK "skc_family == 10", "--output",
					      PF_TCP, "--format", "pftrace",
					      NULL }),
	      "tcpconnect IPv6: attached");
	PT_EQ(connect_lo(AF_INET, port), 0, "connect(127.0.0.1:%u)", port);
	PT_EQ(connect_lo(AF_INET6, port6), 0, "connect([::1]:%u)", port6);
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "tcpconnect IPv6: exit 0");
	snprintf(want, sizeof(want), "  " DADDR6 "=::1 " DPORT "=%u\n",
		 port6);
	PT_OK(strstr(out, want), "tcpconnect IPv6 text: %s(%s)", want, out);
	PT_OK(strstr(err, "probe: 2 hits, 1 written, 1 filtered out"),
	      "tcpconnect IPv6: the IPv4 connect filtered out (%s)", err);
	PT_EQ(pt_pf_decode(PF_TCP), 0, "tcpconnect pftrace: it decodes");
	a = annot("kprobe:tcp_connect", DADDR6);
	PT_OK(a && a->field == 6 && !strcmp(a->s, "::1"),
	      "tcpconnect pftrace: the address a string annotation ::1 (%s)",
	      a ? a->s : "none");
	a = annot("kprobe:tcp_connect", DPORT);
	PT_OK(a && a->field == 3 && a->v == port6,
	      "tcpconnect pftrace: the port an unsigned annotation %u (%llu)",
	      port6, a ? (unsigned long long)a->v : 0ULL);

	/*
	 * Connections per destination, counted in the kernel, filtered on
	 * the port and the address as they print (the kernel compares the
	 * bytes it reads: the operands are converted).
	 */
	l4b = listener(AF_INET, &port2);
	PT_OK(l4b >= 0, "listening on 127.0.0.1:%u too", port2);
	snprintf(flt, sizeof(flt), DPORT " == %u && " DADDR " == \"127.0.0.1\"",
		 port);
	PT_OK(pt_trace_start_self(&p, "kprobe:tcp_connect",
				  (char *[]){ DADDR, DPORT, "--count-by",
					      DADDR, "--json", "--filter", flt,
					      NULL }),
	      "tcpconnect --count-by ntop(), --filter '%s': attached", flt);
	PT_EQ(connect_lo(AF_INET, port), 0, "connect(127.0.0.1:%u)", port);
	PT_EQ(connect_lo(AF_INET, port2), 0, "connect(127.0.0.1:%u)", port2);
	PT_EQ(connect_lo(AF_INET, port), 0, "connect(127.0.0.1:%u)", port);
	PT_EQ(connect_lo(AF_INET, port), 0, "connect(127.0.0.1:%u)", port);
	PT_EQ(connect_lo(AF_INET6, port6), 0, "connect([::1]:%u)", port6);
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "tcpconnect --count-by: exit 0");
	PT_OK(strstr(out, "\"rows\":[{\"key\":\"127.0.0.1\",\"count\":3}]"),
	      "tcpconnect --count-by ntop(): 127.0.0.1 3 times, port %u and [::1] filtered out (%s)",
	      port2, out);
	close(l4b);
	close(l4);
	close(l6);
}

/* ---- a syscall's latency by name ---- */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Sleep @ms by nanosleep(2): whether the call took less than @hi ns as
 * this task saw it. The kernel's latency lies between @ms and that, so
 * when both are in one log2 bucket, so is the kernel's.
 */
static bool nap(long ms, unsigned long long hi)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000 };
	long long t0 = now_ns(), t;

	syscall(SYS_nanosleep, &ts, NULL);
	t = now_ns() - t0;
	if ((unsigned long long)t >= hi)
		pt_diag("a sleep of %ld ms took %lld ns, past %llu", ms, t, hi);
	return (unsigned long long)t < hi;
}

static void test_latency(void)
{
	struct pt_proc p;
	char want[256];
	int rc, tries;
	bool sure = false;

	snprintf(want, sizeof(want),
		 "\"buckets\":[{\"lo\":%llu,\"hi\":%llu,\"count\":2},{\"lo\":%llu,\"hi\":%llu,\"count\":3}]",
		 1ULL << 25, 1ULL << 26, 1ULL << 27, 1ULL << 28);
	/* A loaded host may stretch a sleep past its bucket: try again. */
	for (tries = 0; tries < 4 && !sure; tries++) {
		PT_OK(pt_trace_start_self(&p, "syscall:nanosleep",
					  (char *[]){ "--hist", "latency",
						      "--json", NULL }),
		      "latency: pea trace syscall:nanosleep --hist latency attached");
		sure = nap(36, 1ULL << 26);
		sure &= nap(140, 1ULL << 28);
		sure &= nap(36, 1ULL << 26);
		sure &= nap(140, 1ULL << 28);
		sure &= nap(140, 1ULL << 28);
		kill(p.pid, SIGINT);
		rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out),
				     err, sizeof(err));
		PT_EQ(rc, 0, "latency: exit 0");
	}
	PT_OK(sure, "latency: every sleep within its bucket as the task saw it (try %d)",
	      tries);
	PT_OK(strstr(out, want) && strstr(out, "\"count\":5,"),
	      "latency: 2 sleeps of 36 ms in [2^25, 2^26) ns, 3 of 140 ms in [2^27, 2^28) (%s)",
	      out);
}

int main(void)
{
	mkdir(OS_DIR, 0755);
	close(open(KNOWN, O_WRONLY | O_CREAT, 0644));
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		/* The debug kernel: no BTF, and the reason said. */
		int rc = pt_run((char *[]){ PT_PEA, "trace", "sysenter:execve",
					    "join(argv)", NULL }, out,
				sizeof(out), err, sizeof(err), NULL, NULL);

		PT_OK(rc == 2 && strstr(err, "no BTF"),
		      "no BTF: sysenter:execve refused with the reason (%s)",
		      err);
		rc = pt_run((char *[]){ PT_PEA, "trace", "kprobe:tcp_connect",
					DADDR, NULL }, out, sizeof(out), err,
			    sizeof(err), NULL, NULL);
		PT_OK(rc == 2 && strstr(err, "no BTF"),
		      "no BTF: " DADDR " refused with the reason (%s)", err);
		return pt_done();
	}
	test_opensnoop();
	test_execsnoop();
	test_uprobe_join();
	test_tcpconnect();
	test_latency();
	return pt_done();
}
