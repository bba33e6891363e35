// SPDX-License-Identifier: GPL-2.0
/*
 * `pea counters` (to become `pea stat -e`), run as /bin/pea in the guest:
 * per-CPU and total lines like perf stat -a -A, JSON lines, the raw
 * pmu/term=value/ forms and sysfs aliases of a dynamic PMU, scaling shown
 * for a multiplexed event, intervals, the command's exit status, and the
 * clear error for an event no PMU provides (hardware events in this
 * guest): which event, which errno, what to try.
 */
#include "pea_test.h"
#include "pt_counter.h"

#define PEA_BIN	"/bin/pea"

struct run {
	int status;
	char out[16384];
	char err[4096];
};

static void slurp(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += r;
	buf[n] = '\0';
}

/* The sub-command run() runs: "counters", or "stat" (routes -e to it). */
static char *subcmd = "counters";

/* Run /bin/pea SUBCMD ARGS...; NULL-terminated. */
static void run(struct run *r, ...)
{
	char *argv[32];
	int out[2], err[2], n = 0;
	va_list ap;
	pid_t pid;

	argv[n++] = PEA_BIN;
	argv[n++] = subcmd;
	va_start(ap, r);
	while ((argv[n] = va_arg(ap, char *)) != NULL && n < 30)
		n++;
	va_end(ap);
	argv[n] = NULL;

	if (pipe(out) || pipe(err))
		pt_fatal("pipe");
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		execv(PEA_BIN, argv);
		_exit(126);
	}
	close(out[1]);
	close(err[1]);
	/* Small outputs: read stdout fully, then stderr. */
	slurp(out[0], r->out, sizeof(r->out));
	slurp(err[0], r->err, sizeof(r->err));
	close(out[0]);
	close(err[0]);
	waitpid(pid, &r->status, 0);
	r->status = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 255;
}

static int count_lines(const char *s, const char *needle)
{
	const char *line = s;
	int n = 0;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[512];

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (strstr(buf, needle))
			n++;
		line = nl ? nl + 1 : NULL;
	}
	return n;
}

/* The number on the "total" line of @event: digits with commas. */
static long long total_of(const char *out, const char *event)
{
	const char *line = out;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		char buf[512], *p;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		long long v = 0;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (!strncmp(buf, "total", 5) && strstr(buf, event)) {
			for (p = buf + 5; *p == ' '; p++)
				;
			for (; *p && *p != ' ' && *p != '.'; p++)
				if (*p >= '0' && *p <= '9')
					v = v * 10 + *p - '0';
			return v;
		}
		line = nl ? nl + 1 : NULL;
	}
	return -1;
}

int main(void)
{
	struct run *r = calloc(1, sizeof(*r));
	long long faults;

	pt_st();	/* the test PMU, pea_st */

	run(r, "-e", "page-faults,cpu-clock", "-C", "1", "--", "/bin/true",
	    NULL);
	PT_EQ(r->status, 0, "page-faults,cpu-clock on CPU 1 around true: exit 0");
	PT_OK(strstr(r->out, "Performance counter stats for 'system wide'") != NULL,
	      "the perf stat header");
	PT_EQ(count_lines(r->out, "CPU1 "), 2, "one CPU1 line per event");
	PT_EQ(count_lines(r->out, "total "), 2, "one total line per event");
	PT_OK(count_lines(r->out, "msec  cpu-clock") == 2,
	      "cpu-clock shown in msec");
	PT_EQ(count_lines(r->out, "seconds time elapsed"), 1, "the elapsed time");
	pt_diag("%s", r->out);

	run(r, "-e", "page-faults", "-a", "--", "/bin/dd", "if=/dev/zero",
	    "of=/dev/null", "bs=1M", "count=4", NULL);
	faults = total_of(r->out, "page-faults");
	PT_OK(r->status == 0 && faults >= 256,
	      "dd with a 1 MiB buffer on any CPU: total page-faults %lld >= 256",
	      faults);
	PT_EQ(count_lines(r->out, "page-faults"), pt_nr_cpus() + 1,
	      "-a without -C: one line per online CPU, and the total");

	run(r, "--json", "-e", "page-faults", "-C", "0-1", "--", "/bin/true",
	    NULL);
	PT_EQ(r->status, 0, "--json: exit 0");
	PT_EQ(count_lines(r->out, "{"), 4, "--json: 2 CPUs + total + elapsed");
	PT_EQ(count_lines(r->out, "\"cpu\": \"0\", \"event\": \"page-faults\""),
	      1, "--json: CPU 0's object");
	PT_EQ(count_lines(r->out, "\"cpu\": \"all\""), 1, "--json: the total");
	PT_EQ(count_lines(r->out, "\"time-enabled\""), 3,
	      "--json: times in every count");
	PT_EQ(count_lines(r->out, "\"elapsed-ns\""), 1, "--json: the elapsed time");

	run(r, "-e", "cycles", "-C", "0", "--", "/bin/true", NULL);
	PT_EQ(r->status, 1, "cycles alone: exit 1");
	PT_OK(strstr(r->err, "'cycles'") && strstr(r->err, "ENOENT") &&
	      strstr(r->err, "software event") && strstr(r->err, "cpu-clock"),
	      "cycles: the error names the event, ENOENT and what to try");
	pt_diag("%s", r->err);

	run(r, "-e", "cycles,page-faults", "-C", "0", "--", "/bin/true", NULL);
	PT_EQ(r->status, 0, "cycles,page-faults: exit 0 (one event counts)");
	PT_EQ(count_lines(r->out, "<not supported>"), 1,
	      "cycles shown <not supported>");

	run(r, "-e", "software/config=0x2/,software/config=0x0,name=x/k", "-C",
	    "0", "--", "/bin/true", NULL);
	PT_EQ(r->status, 0, "pmu/config=0x.../ forms: exit 0");
	PT_EQ(count_lines(r->out, "software/config=0x2/"), 2,
	      "software/config=0x2/ counted (CPU0 and total)");

	run(r, "-e", "pea_st/ns/,pea_st/event=0/", "-C", "1", "--",
	    "/bin/sleep", "0.3", NULL);
	PT_EQ(r->status, 0, "two events on the one-slot test PMU: exit 0");
	PT_EQ(count_lines(r->out, "scaled from"), 4,
	      "both multiplexed: every line shows its running share and raw count");
	pt_diag("%s", r->out);

	run(r, "-e", "pea_st/config=1/", "-C", "1", "--", "/bin/true", NULL);
	PT_OK(r->status == 1 && strstr(r->err, "EOPNOTSUPP"),
	      "pea_st/config=1/: exit 1, EOPNOTSUPP reported");
	run(r, "-e", "nosuchpmu/config=1/", NULL);
	PT_OK(r->status == 2 && strstr(r->err, "no PMU named 'nosuchpmu'"),
	      "an unknown PMU: exit 2, named");
	run(r, "-e", "bogus", NULL);
	PT_OK(r->status == 2 && strstr(r->err, "unknown event 'bogus'"),
	      "an unknown event: exit 2, named");
	run(r, "-e", "page-faults:x", NULL);
	PT_OK(r->status == 2 && strstr(r->err, "unknown modifier 'x'"),
	      "an unknown modifier: exit 2");

	run(r, "-e", "page-faults:u", "-I", "50", "--interval-count", "3",
	    "-C", "0", NULL);
	PT_EQ(r->status, 0, "-I 50 --interval-count 3: exit 0");
	PT_EQ(count_lines(r->out, "total"), 3, "three intervals printed");

	run(r, "-e", "page-faults", "-C", "0", "--", "/bin/sh", "-c", "exit 7",
	    NULL);
	PT_EQ(r->status, 7, "the command's exit status is pea's");

	subcmd = "stat";
	run(r, "-e", "page-faults,task-clock", "-C", "2", "--", "/bin/true",
	    NULL);
	PT_OK(r->status == 0 && count_lines(r->out, "CPU2 ") == 2 &&
	      count_lines(r->out, "task-clock") == 2,
	      "pea stat -e hands over to the counters: the same output");

	free(r);
	return pt_done();
}
