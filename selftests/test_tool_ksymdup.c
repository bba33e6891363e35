// SPDX-License-Identifier: GPL-2.0
/*
 * A kprobe name that several kernel symbols share (issue 21): Linux's
 * kprobe events refuse it (EADDRNOTAVAIL, number_of_same_symbols() in
 * kernel/trace/trace_kprobe.c); pea's kernel link would take kallsyms'
 * first match, so the tool refuses it itself (tools/pea/ksym_names.c).
 * Through /bin/pea in the guest:
 *   - a real duplicated name of this kernel: a function that tracefs'
 *     available_filter_functions lists more than once (a static function
 *     of one name in several files), not on the kprobes blacklist, which
 *     the kprobe PMU of perf_event_open() refuses with EADDRNOTAVAIL:
 *     kprobe:NAME and kretprobe:NAME exit 1 saying it names N kernel
 *     symbols (N counted here from /proc/kallsyms as Linux counts them)
 *     and why; a glob matching only it matches nothing, saying 1 such
 *     name was left out;
 *   - MODULE:NAME names a module's function, as kprobe_events takes it:
 *     kprobe:pea_selftest:pea_st_fp_5 and kretprobe:pea_selftest:pea_st_fp_5 attach,
 *     each event exact (9 calls, the returns' sum), named as written;
 *   - a malformed MODULE:NAME is a usage error.
 */
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_fprobe.h"

#define ARG	100

static char line[65536];
static char out[1 << 18], err[1 << 16];
static char pid_s[16];
static char dup_name[256];
static int dup_total, dup_vm;

/* Whether @path (one name a line, after the address for @col 1) has @n. */
static bool listed(const char *path, const char *n, int col)
{
	char l[512], name[256];
	bool found = false;
	FILE *f = fopen(path, "r");

	while (f && !found && fgets(l, sizeof(l), f)) {
		if (col ? sscanf(l, "%*s %255s", name) != 1 :
			  sscanf(l, "%255s", name) != 1)
			continue;
		found = !strcmp(name, n);
	}
	if (f)
		fclose(f);
	return found;
}

/* perf_event_open() of the kprobe PMU at @sym: 0 or its errno. */
static int perf_kprobe_errno(const char *sym)
{
	struct perf_event_attr pa;
	char buf[64];
	int fd;

	if (pt_read_file("/sys/bus/event_source/devices/kprobe/type", buf,
			 sizeof(buf)))
		return -1;
	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = atoi(buf);
	pa.config1 = (__u64)(uintptr_t)sym;
	fd = syscall(SYS_perf_event_open, &pa, -1, 0, -1, 0);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * /proc/kallsyms' lines named @n, as Linux counts them: vmlinux's and the
 * modules', any type; not "[bpf]" programs nor "[__builtin__...]" pages.
 */
static void kallsyms_count(const char *n, int *total, int *vm)
{
	char l[512], name[256], mod[128];
	FILE *f = fopen("/proc/kallsyms", "r");
	int k;

	*total = *vm = 0;
	while (f && fgets(l, sizeof(l), f)) {
		k = sscanf(l, "%*s %*s %255s %127s", name, mod);
		if (k < 1 || strcmp(name, n))
			continue;
		if (k == 2 && (!strcmp(mod, "[bpf]") ||
			       !strncmp(mod, "[__builtin__", 12)))
			continue;
		(*total)++;
		*vm += k == 1;
	}
	if (f)
		fclose(f);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The first function (by name) available_filter_functions lists twice
 * without a module, not on the kprobes blacklist, that the kprobe PMU
 * refuses as ambiguous: false if none among the first 20 tried.
 */
static bool find_dup(void)
{
	char l[512], name[256], mod[128], **v = NULL;
	size_t n = 0, cap = 0, i;
	int tried = 0, e;
	FILE *f = fopen("/sys/kernel/tracing/available_filter_functions", "r");

	if (!f)
		f = fopen("/sys/kernel/debug/tracing/available_filter_functions",
			  "r");
	if (!f)
		pt_diag("available_filter_functions: %s", strerror(errno));

	while (f && fgets(l, sizeof(l), f)) {
		if (sscanf(l, "%255s %127s", name, mod) != 1 ||
		    !strncmp(name, "__ftrace_invalid_address__", 26))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				pt_fatal("realloc");
		}
		v[n] = strdup(name);
		if (!v[n++])
			pt_fatal("strdup");
	}
	if (f)
		fclose(f);
	if (n)
		qsort(v, n, sizeof(*v), name_cmp);
	for (i = 1; i < n && tried < 20; i++) {
		/* ftrace's placeholders for addresses it cannot name */
		if (strcmp(v[i], v[i - 1]) ||
		    (i > 1 && !strcmp(v[i], v[i - 2])) ||
		    !strncmp(v[i], "__ftrace_invalid_address__", 26) ||
		    listed("/sys/kernel/debug/kprobes/blacklist", v[i], 1))
			continue;
		tried++;
		e = perf_kprobe_errno(v[i]);
		if (e != EADDRNOTAVAIL) {
			pt_diag("%s: listed twice, the kprobe PMU answers %d",
				v[i], e);
			continue;
		}
		snprintf(dup_name, sizeof(dup_name), "%s", v[i]);
		break;
	}
	pt_diag("%zu functions listed, %d listed twice tried", n, tried);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return dup_name[0];
}

static void test_dup(void)
{
	char probe[300], want[1024], glob[300];
	int rc, i;

	PT_OK(find_dup(), "a function available_filter_functions lists twice, which the kprobe PMU refuses (EADDRNOTAVAIL): %s",
	      dup_name);
	if (!dup_name[0])
		return;
	kallsyms_count(dup_name, &dup_total, &dup_vm);
	pt_diag("%s: %d symbols, %d in vmlinux", dup_name, dup_total, dup_vm);
	PT_OK(dup_total >= 2 && dup_vm >= 2,
	      "%s: %d symbols in /proc/kallsyms, %d of them vmlinux's",
	      dup_name, dup_total, dup_vm);
	for (i = 0; i < 2; i++) {
		snprintf(probe, sizeof(probe), "%s:%s",
			 i ? "kretprobe" : "kprobe", dup_name);
		rc = pt_run((char *[]){ PT_PEA, "trace", probe, NULL }, out,
			    sizeof(out), err, sizeof(err), NULL, NULL);
		snprintf(want, sizeof(want),
			 "cannot attach %s: '%s' names %d kernel symbols (/proc/kallsyms: %d in vmlinux",
			 probe, dup_name, dup_total, dup_vm);
		PT_OK(rc == 1 && strstr(err, want),
		      "%s: exit 1, %d kernel symbols named", probe, dup_total);
		PT_OK(strstr(err, "); Linux's kprobes refuse such a name (EADDRNOTAVAIL) and pea's kprobe link would take the first: ") != NULL,
		      "%s: and why, how to name one", probe);
		if (rc != 1 || !strstr(err, want))
			pt_diag("exit %d: %s", rc, err);
	}
	/* "[x]rest": a glob matching only the name. */
	snprintf(glob, sizeof(glob), "kprobe:[%c]%s", dup_name[0],
		 dup_name + 1);
	rc = pt_run((char *[]){ PT_PEA, "trace", glob, NULL }, out,
		    sizeof(out), err, sizeof(err), NULL, NULL);
	snprintf(want, sizeof(want),
		 "'%s' matches no functions kprobes can probe (0 on the kprobes blacklist, which the kernel refuses; 1 names that several kernel symbols share, which kprobes refuse: EADDRNOTAVAIL)",
		 glob);
	PT_OK(rc == 2 && strstr(err, want),
	      "%s: exit 2, the shared name left out and said", glob);
	if (rc != 2 || !strstr(err, want))
		pt_diag("exit %d: %s", rc, err);
}

/* kprobe:pea_selftest:pea_st_fp_5, kretprobe the same: 9 calls each. */
static void test_module_name(void)
{
	static const char kp[] = "kprobe:pea_selftest:pea_st_fp_5",
			  krp[] = "kretprobe:pea_selftest:pea_st_fp_5";
	char *argv[] = { PT_PEA, "trace", "--json", "--pid", pid_s,
			 (char *)kp, (char *)krp, NULL };
	struct pea_st_fprobe f;
	long long sum = 0;
	int entries = 0, rets = 0, other = 0, rc;
	struct pt_proc p;

	PT_OK(pt_trace_start(&p, argv), "%s, %s: attached", kp, krp);
	memset(&f, 0, sizeof(f));
	f.counts[5] = 9;
	f.arg = ARG;
	if (ioctl(pt_st(), PEA_ST_IOC_FPROBE, &f))
		pt_fatal("PEA_ST_IOC_FPROBE");
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "event"))
			continue;
		if (pt_json_streq(line, "probe", kp)) {
			entries++;
		} else if (pt_json_streq(line, "probe", krp)) {
			rets++;
			sum += pt_json_num(line, "ret", 0);
		} else {
			other++;
		}
	}
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	if (rc)
		pt_diag("stderr: %s", p.err_all ? p.err_all : "");
	pt_proc_close(&p);
	PT_EQ(rc, 0, "MODULE:NAME: exit 0");
	PT_EQ(entries, 9, "%s: 9 events", kp);
	PT_EQ(rets, 9, "%s: 9 events", krp);
	/* pea_st_fp_5(ARG + k, 5) returns 5000 - (ARG + k) - 5, k 0..8 */
	PT_EQ(sum, 9 * (5000 - ARG - 5) - 36, "%s: the returns' sum exact",
	      krp);
	PT_EQ(other, 0, "MODULE:NAME: no other events");
}

static void test_usage(void)
{
	static const char *const bad[] = {
		"kprobe::pea_st_fp_5", "kprobe:pea_st:", "kprobe:pea st:x",
	};
	unsigned int i;
	int rc;

	for (i = 0; i < 3; i++) {
		rc = pt_run((char *[]){ PT_PEA, "trace", (char *)bad[i], NULL },
			    out, sizeof(out), err, sizeof(err), NULL, NULL);
		PT_OK(rc == 2 && (strstr(err, "write MODULE:NAME for a module's function") ||
				  strstr(err, "is not a function name (NAME, or MODULE:NAME for a module's)")),
		      "%s: exit 2, the form said", bad[i]);
		if (rc != 2)
			pt_diag("exit %d: %s", rc, err);
	}
}

int main(void)
{
	pt_st();
	snprintf(pid_s, sizeof(pid_s), "%d", getpid());
	test_dup();
	test_module_name();
	test_usage();
	return pt_done();
}
