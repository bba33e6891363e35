// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace uprobe:/uretprobe: through /bin/pea in the guest: functions of
 * this program (symbols from its .symtab) and of a shared object (by its
 * path, and by name through $LD_LIBRARY_PATH; this program by name
 * through $PATH) called with known arguments, exact JSON and human output, --pid,
 * a numeric file offset, usage and lookup errors.
 */
#include <elf.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_tool.h"

/* The shared object the Makefile builds (selftests/pt_uprobe_so.c). */
__asm__(".pushsection .rodata\n"
	".balign 64\n"
	".globl pt_so_start\npt_so_start:\n"
	".incbin \"" PT_UPROBE_SO "\"\n"
	".globl pt_so_end\npt_so_end:\n"
	".popsection\n");
extern const unsigned char pt_so_start[], pt_so_end[];

static char line[65536];
static char self[256];
static char pid[16];

__attribute__((noipa, used)) long pt_tool_fn(const char *s, long n)
{
	__asm__ volatile("" : : "r"(s) : "memory");
	return n * 10;
}

static volatile int block_entered;

/* With @fd >= 0, says it is inside and blocks until a byte arrives. */
__attribute__((noipa, used)) long pt_tool_block(long fd)
{
	char c;

	if (fd < 0)
		return 3;
	block_entered = 1;	/* past the probe at the first instruction */
	return read((int)fd, &c, 1) == 1 ? 3 : -1;
}

static volatile pid_t block_tid;

static void *block_thread(void *arg)
{
	block_tid = (pid_t)syscall(SYS_gettid);
	pt_tool_block((long)arg);
	return NULL;
}

/* Read the events (up to @max) and the summary until the tool exits. */
static int read_json(struct pt_proc *p, char ev[][4096], int max,
		     char *sum)
{
	int n = 0;

	sum[0] = 0;
	while (pt_proc_line(p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_valid(line)) {
			pt_diag("bad JSON: %s", line);
			continue;
		}
		if (pt_json_streq(line, "type", "event") && n < max)
			snprintf(ev[n++], 4096, "%.4000s", line);
		else if (pt_json_streq(line, "type", "summary"))
			snprintf(sum, 4096, "%.4000s", line);
	}
	return n;
}

static void test_uretprobe_json(void)
{
	static char ev[4][4096], sum[4096];
	char probe[512], buf[256];
	struct pt_proc p;
	int n, rc;

	snprintf(probe, sizeof(probe), "uretprobe:%s:pt_tool_fn", self);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", probe, "--str",
					  "ARG0", "--json", "--count", "2",
					  "--pid", pid, NULL }),
	      "pea trace %s attached", probe);
	PT_EQ(pt_tool_fn("alpha", 7), 70, "pt_tool_fn(\"alpha\", 7) is 70");
	PT_EQ(pt_tool_fn("beta", -8), -80, "pt_tool_fn(\"beta\", -8) is -80");
	n = read_json(&p, ev, 4, sum);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(rc, 0, "--count 2: pea trace exits 0");
	PT_EQ(n, 2, "uretprobe --json: 2 events");
	if (n != 2)
		return;
	PT_OK(pt_json_streq(ev[0], "probe", probe) &&
	      pt_json_streq(ev[0], "str", "alpha") &&
	      pt_json_num(ev[0], "ret", 0) == 70 &&
	      pt_json_num(ev[0], "latency_ns", 0) > 0,
	      "uretprobe: probe, the string at entry, ret 70, latency");
	PT_OK(pt_json_streq(ev[1], "str", "beta") &&
	      pt_json_num(ev[1], "ret", 0) == -80,
	      "uretprobe: the second call: \"beta\", ret -80");
	PT_OK(pt_json_num(ev[0], "pid", 0) == getpid() &&
	      pt_json_num(ev[0], "tid", 0) == gettid() &&
	      pt_json_streq(ev[0], "comm", "test_tool_uprob"),
	      "uretprobe: pid, tid and comm of this test");
	PT_OK(pt_json_get(sum, "link", buf, sizeof(buf), NULL),
	      "uretprobe: the summary has the link's counters");
}

/*
 * --maxactive 1 on a uretprobe: one task parked inside the function
 * holds the one pairing slot, another task's return is missed and the
 * summary says so; the parked one's return is written.
 */
static void test_uretprobe_maxactive(void)
{
	static char ev[4][4096], sum[4096];
	char probe[512], buf[256] = "";
	struct pt_proc p;
	pthread_t th;
	int fds[2], n, rc;

	snprintf(probe, sizeof(probe), "uretprobe:%s:pt_tool_block", self);
	if (pipe(fds))
		pt_fatal("pipe");
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", probe,
					  "--maxactive", "1", "--json",
					  "--count", "1", "--pid", pid, NULL }),
	      "pea trace %s --maxactive 1 attached", probe);
	if (pthread_create(&th, NULL, block_thread, (void *)(long)fds[0]))
		pt_fatal("pthread_create");
	while (!block_entered)
		usleep(1000);
	PT_EQ(pt_tool_block(-1), 3, "pt_tool_block(-1) returns while a thread is parked");
	if (write(fds[1], "x", 1) != 1)
		pt_fatal("write");
	pthread_join(th, NULL);
	n = read_json(&p, ev, 4, sum);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(rc, 0, "--maxactive 1: pea trace exits 0");
	PT_OK(n == 1 && pt_json_num(ev[0], "tid", -1) == block_tid &&
	      pt_json_num(ev[0], "ret", 0) == 3,
	      "--maxactive 1: the parked thread's return is the one event (%d)",
	      n);
	PT_OK(pt_json_get(sum, "link", buf, sizeof(buf), NULL) &&
	      pt_json_num(buf, "missed", -1) == 1 &&
	      pt_json_num(buf, "written", -1) == 1,
	      "--maxactive 1: the summary counts the other return as missed (%s)",
	      buf);
	close(fds[0]);
	close(fds[1]);
}

static void test_uprobe_human(void)
{
	char probe[512], want[600];
	static char out[65536], err[8192];
	struct pt_proc p;
	size_t olen = 0;
	int rc;

	snprintf(probe, sizeof(probe), "uprobe:%s:pt_tool_fn", self);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", probe, "--args",
					  "--str", "ARG0:4", "--count", "1",
					  "--pid", pid, NULL }),
	      "pea trace %s --args attached", probe);
	pt_tool_fn("gamma-ray", 0x1234);
	out[0] = 0;
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		olen += snprintf(out + olen, sizeof(out) - olen, "%s\n", line);
	pt_proc_drain_err(&p);
	snprintf(err, sizeof(err), "%s", p.err_all ? p.err_all : "");
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(rc, 0, "uprobe --count 1: exits 0");
	snprintf(want, sizeof(want), "%-16s %7d %7d", "test_tool_uprob", getpid(),
		 gettid());
	PT_OK(strstr(out, want) && strstr(out, " 0x1234 0x") &&
	      strstr(out, "\"gamm\"..."),
	      "uprobe human: comm, pid, tid, ARG1 0x1234 and the cut string (%s)",
	      out);
	snprintf(want, sizeof(want), "pea: %s: 1 events in", probe);
	PT_OK(strstr(err, want) != NULL, "uprobe human: the summary line");
	PT_OK(strstr(err, "probe: 1 hits, 1 written, 0 filtered out, 0 errors, 0 missed by pairing returns, 0 dropped (ring full)\n"),
	      "uprobe human: the link's counters");
}

/* By a file offset, and a shared object by its path. */
static void test_offset_and_library(void)
{
	static char ev[4][4096], sum[4096];
	/* A versioned library name, found by name below too. */
	const char *so = "/tmp/pea-libs/libpeatest.so.1";
	const Elf64_Ehdr *eh = (const void *)pt_so_start;
	const Elf64_Phdr *ph = (const void *)(pt_so_start + eh->e_phoff);
	char probe[512], addr[32];
	long (*fn)(long, long);
	struct pt_proc p;
	__u64 off = 0, moff = 0;
	size_t len = 0;
	char *base;
	int fd, i, n;

	mkdir("/tmp/pea-libs", 0755);
	fd = open(so, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	PT_OK(fd >= 0 && write(fd, pt_so_start, pt_so_end - pt_so_start) ==
	      pt_so_end - pt_so_start, "shared object written");
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			off = eh->e_entry - ph[i].p_vaddr + ph[i].p_offset;
			moff = ph[i].p_offset & ~(__u64)4095;
			len = ph[i].p_offset + ph[i].p_filesz - moff;
		}
	base = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, moff);
	close(fd);
	if (base == MAP_FAILED)
		return;
	fn = (long (*)(long, long))(base + (off - moff));

	snprintf(probe, sizeof(probe), "uretprobe:%s:pt_so_fn", so);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", probe, "--args",
					  "--json", "--count", "1", "--pid",
					  pid, NULL }),
	      "pea trace %s attached", probe);
	PT_EQ(fn(4, 2), 14, "pt_so_fn(4, 2) is 14");
	n = read_json(&p, ev, 4, sum);
	pt_proc_drain_err(&p);
	pt_proc_wait(&p);
	pt_proc_close(&p);
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)off);
	PT_OK(n == 1 && pt_json_num(ev[0], "ret", 0) == 14 &&
	      pt_json_streq(ev[0], "addr", addr) &&
	      strstr(ev[0], "\"args\":[\"0x4\",\"0x2\","),
	      "shared object by path: ret 14, args 4 and 2, addr %s", addr);

	snprintf(probe, sizeof(probe), "uprobe:%s:0x%llx", so,
		 (unsigned long long)off);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", probe, "--args",
					  "--json", "--count", "1", "--pid",
					  pid, NULL }),
	      "pea trace %s (a file offset) attached", probe);
	fn(5, 6);
	n = read_json(&p, ev, 4, sum);
	pt_proc_drain_err(&p);
	pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_OK(n == 1 && pt_json_streq(ev[0], "addr", addr) &&
	      strstr(ev[0], "\"args\":[\"0x5\",\"0x6\",") &&
	      !strstr(ev[0], "\"ret\""),
	      "uprobe by file offset: args 5 and 6, no ret");

	/* By name: libpeatest.so.1 in $LD_LIBRARY_PATH (upath.c). */
	setenv("LD_LIBRARY_PATH", "/tmp/pea-libs", 1);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace",
					  "uretprobe:peatest:pt_so_fn", "--json",
					  "--count", "1", "--pid", pid, NULL }),
	      "pea trace uretprobe:peatest:pt_so_fn (a library by name) attached");
	fn(4, 2);
	n = read_json(&p, ev, 4, sum);
	pt_proc_drain_err(&p);
	pt_proc_wait(&p);
	pt_proc_close(&p);
	unsetenv("LD_LIBRARY_PATH");
	PT_OK(n == 1 && pt_json_num(ev[0], "ret", 0) == 14 &&
	      pt_json_streq(ev[0], "addr", addr),
	      "a library by name: found in $LD_LIBRARY_PATH, ret 14, addr %s",
	      addr);
	munmap(base, len);
	unlink(so);
}

/* A program by name: this one, in $PATH (its directory). */
static void test_by_name(void)
{
	static char ev[4][4096], sum[4096];
	char dir[256], *slash, name[256], probe[512];
	const char *old = getenv("PATH");
	char saved[4096];
	struct pt_proc p;
	int n;

	snprintf(saved, sizeof(saved), "%s", old ? old : "");
	snprintf(dir, sizeof(dir), "%s", self);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = 0;
	snprintf(name, sizeof(name), "%s", slash + 1);
	setenv("PATH", dir, 1);
	snprintf(probe, sizeof(probe), "uretprobe:%s:pt_tool_fn", name);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", probe, "--json",
					  "--count", "1", "--pid", pid, NULL }),
	      "pea trace %s (a program by name, PATH=%s) attached", probe, dir);
	setenv("PATH", saved, 1);
	pt_tool_fn("gamma", 3);
	n = read_json(&p, ev, 4, sum);
	pt_proc_drain_err(&p);
	pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_OK(n == 1 && pt_json_num(ev[0], "ret", 0) == 30,
	      "a program by name: found in $PATH, ret 30");
}

static void test_errors(void)
{
	static char out[65536], err[4096];
	char probe[512];
	int rc;

	snprintf(probe, sizeof(probe), "uprobe:%s:pt_no_such_fn", self);
	rc = pt_run((char *[]){ PT_PEA, "trace", probe, NULL }, out,
		    sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 1 && strstr(err, "no function 'pt_no_such_fn'"),
	      "an unknown function: exit 1 and why (%d: %s)", rc, err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "uprobe:/tmp/no/such:main",
				NULL }, out, sizeof(out), err, sizeof(err),
		    NULL, NULL);
	PT_OK(rc == 1 && strstr(err, "no file '/tmp/no/such'"),
	      "a missing file: exit 1 and why (%d: %s)", rc, err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "uprobe:/proc/version:main",
				NULL }, out, sizeof(out), err, sizeof(err),
		    NULL, NULL);
	PT_OK(rc == 1 && strstr(err, "not a 64-bit ELF"),
	      "not an ELF file: exit 1 and why (%d: %s)", rc, err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "uprobe:/bin/x", NULL }, out,
		    sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "write uprobe:PATH:SYMBOL"),
	      "uprobe without a symbol: usage error 2 (%d)", rc);
	snprintf(probe, sizeof(probe), "uretprobe:%s:pt_tool_fn+4", self);
	rc = pt_run((char *[]){ PT_PEA, "trace", probe, NULL }, out,
		    sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "a uretprobe takes no +OFFSET"),
	      "uretprobe with +OFFSET: usage error 2 (%d)", rc);
	snprintf(probe, sizeof(probe), "uprobe:%s:pt_tool_fn", self);
	rc = pt_run((char *[]){ PT_PEA, "trace", probe, "--cpu", "0", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "not for uprobes"),
	      "uprobe with --cpu: usage error 2 (%d)", rc);
	rc = pt_run((char *[]){ PT_PEA, "trace", "--help", NULL }, out,
		    sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && strstr(out, "uprobe:PATH:SYMBOL[+OFFSET]") &&
	      strstr(out, "uretprobe:PATH:SYMBOL"),
	      "pea trace --help documents uprobe: and uretprobe:");
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	snprintf(pid, sizeof(pid), "%d", getpid());
	pt_pin(0);
	test_uretprobe_json();
	test_uretprobe_maxactive();
	test_uprobe_human();
	test_offset_and_library();
	test_by_name();
	test_errors();
	return pt_done();
}
