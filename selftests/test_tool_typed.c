// SPDX-License-Identifier: GPL-2.0
/*
 * Typed values in every output of pea trace (issue 21), on calls the test
 * makes itself (--pid its own), in two sessions of the same four probes:
 * --json on stdout with --output DIR --format ctf, read back by
 * babeltrace2; the text on stdout with --output FILE --format pftrace,
 * whose debug annotations are decoded here (pt_pftrace.h):
 *
 *   - kprobe:do_sys_openat2 dfd filename 'str(filename,4)' how
 *     'how->flags' 'how->resolve' on two openat2(2) calls: an int (-100),
 *     a user string, the same cut at 4 bytes, a pointer (the kernel's
 *     copy of the struct open_how, on a randomized stack: the same in
 *     every output of the event), two u64 behind it (the flags with the
 *     O_LARGEFILE openat2 adds), each exact by type (CTF: _status, _step
 *     and the typed _value; pftrace: int, string, {"str", "truncated"},
 *     pointer, uint); then a NULL filename: both strings a fault at read
 *     0, the rest kept;
 *   - kprobe:security_locked_down what, on ioperm(2): an enum, by its
 *     BTF name LOCKDOWN_IOPORT (a CTF enum, a string annotation);
 *   - kretprobe:capable cap ret --filter 'cap == 17', on the same
 *     ioperm(2): the int 17 and the bool true (a CTF enum of false and
 *     true, a bool annotation), and the CTF _ret of the event typed the
 *     same, with _ret_raw beside it as --json's ret_raw;
 *   - tp:filelock:posix_lock_inode on fcntl(F_SETLKW, F_WRLCK) and
 *     fcntl(F_SETLK, F_UNLCK) of a file the test made: the flags
 *     (__print_flags) FL_POSIX|FL_SLEEP and FL_POSIX, the type
 *     (__print_symbolic) F_WRLCK and F_UNLCK, by name in the text, as
 *     FIELD_name beside the number in JSON and pftrace, a CTF enum for the
 *     type. 6.1 calls the fields fl_flags and fl_type, 6.12 flags and
 *     type.
 *
 * Without BTF (the debug kernel) only the tracepoint is traced, and the
 * fetch is refused with the reason.
 */
#include <fcntl.h>
#include <sys/io.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/openat2.h>
#include "pt_tool.h"
#include "pt_pftrace.h"

#define FETCH		"kprobe:do_sys_openat2"
#define LOCKDOWN	"kprobe:security_locked_down"
#define CAPABLE		"kretprobe:capable"
#define FLOCK		"tp:filelock:posix_lock_inode"
#define CTF_DIR		"/tmp/pea-typed-ctf"
#define PF_FILE		"/tmp/pea-typed.pftrace"
#define LOCK_FILE	"/tmp/pea-typed.lock"
#define MISSING		"/tmp/pea-typed-missing"
/* openat2(2) adds the kernel's O_LARGEFILE (glibc's is 0 on x86-64) */
#define O_LARGEFILE_K	0100000

static char line[8192];
static char out[65536], err[65536];
static bool have_btf, k612;
static const char *f_flags, *f_type;	/* the tracepoint's field names */

/*
 * pea trace --pid us the four probes (the tracepoint alone without BTF)
 * and @extra (NULL-ended), attached.
 */
static bool start(struct pt_proc *p, char **extra)
{
	static char pid[16];
	char *argv[64] = { PT_PEA, "trace", "--pid", pid };
	static char *const probes[] = {
		FETCH, "dfd", "filename", "str(filename,4)", "how",
		"how->flags", "how->resolve",
		LOCKDOWN, "what",
		CAPABLE, "cap", "ret", "--filter", "cap == 17",
		NULL,
	};
	int n = 4, i;

	snprintf(pid, sizeof(pid), "%d", getpid());
	for (i = 0; have_btf && probes[i]; i++)
		argv[n++] = probes[i];
	argv[n++] = FLOCK;
	argv[n++] = "-c";
	argv[n++] = have_btf ? "6" : "2";
	while (*extra && n < 63)
		argv[n++] = *extra++;
	argv[n] = NULL;
	return pt_trace_start(p, argv);
}

static struct open_how how = { .flags = O_RDONLY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS };
static int lock_fd = -1;	/* opened before the sessions */

/*
 * The calls: two openat2(2) (a missing file, a NULL name), ioperm once,
 * a lock and an unlock. Nothing else of ours opens a file meanwhile.
 */
static void workload(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 10 };

	if (have_btf) {
		errno = 0;
		PT_OK(syscall(SYS_openat2, AT_FDCWD, MISSING, &how,
			      sizeof(how)) < 0 && errno == ENOENT,
		      "openat2(" MISSING "): ENOENT");
		errno = 0;
		PT_OK(syscall(SYS_openat2, AT_FDCWD, NULL, &how,
			      sizeof(how)) < 0 && errno == EFAULT,
		      "openat2(NULL): EFAULT");
		PT_EQ(ioperm(0x80, 1, 1), 0, "ioperm(0x80, 1, 1)");
	}
	PT_EQ(fcntl(lock_fd, F_SETLKW, &fl), 0, "fcntl(F_SETLKW, F_WRLCK)");
	fl.l_type = F_UNLCK;
	PT_EQ(fcntl(lock_fd, F_SETLK, &fl), 0, "fcntl(F_SETLK, F_UNLCK)");
}

/*
 * The value of "how" in line @l (JSON "how":"0x..." or text how=0x...):
 * the kernel's copy of struct open_how, on a stack whose offset is
 * randomized at each syscall, so that each output is compared with the
 * other of the same event. 0 if none.
 */
static unsigned long long how_of(const char *l)
{
	const char *p = l ? strstr(l, "\"how\":\"0x") : NULL;

	if (p)
		return strtoull(p + 9, NULL, 16);
	p = l ? strstr(l, " how=0x") : NULL;
	return p ? strtoull(p + 7, NULL, 16) : 0;
}

/* @text holds @want; say what it holds if not. */
static void has(const char *text, const char *want, const char *what)
{
	bool ok = text && strstr(text, want);

	PT_OK(ok, "%s", what);
	if (!ok)
		pt_diag("want %s in: %.1500s", want, text ? text : "(none)");
}

/* ---- session 1: --json and CTF ---- */

static void test_json_ctf(void)
{
	char buf[8192], want[1024], cmd[256];
	unsigned long long how1 = 0, how2 = 0;
	static char bt[65536];
	const char *l;
	struct pt_proc p;
	size_t n;
	FILE *f;
	int rc;

	if (system("rm -rf " CTF_DIR))
		pt_diag("rm -rf " CTF_DIR);
	PT_OK(start(&p, (char *[]){ "--json", "--output", CTF_DIR, "--format",
				    "ctf", NULL }),
	      "json+ctf: the probes attach");
	workload();
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "json+ctf: pea trace exits 0");

	/* JSON: the tracepoint's numbers, and their names beside them. */
	snprintf(want, sizeof(want),
		 "\"%s\":129,\"%s_name\":\"FL_POSIX|FL_SLEEP\",\"%s\":1,\"%s_name\":\"F_WRLCK\"",
		 f_flags, f_flags, f_type, f_type);
	l = pt_find_line(out, "posix_lock_inode", "F_WRLCK", buf, sizeof(buf));
	has(l, want, "json: the lock's flags and type, numbers and names");
	snprintf(want, sizeof(want),
		 "\"%s\":1,\"%s_name\":\"FL_POSIX\",\"%s\":2,\"%s_name\":\"F_UNLCK\"",
		 f_flags, f_flags, f_type, f_type);
	l = pt_find_line(out, "posix_lock_inode", "F_UNLCK", buf, sizeof(buf));
	has(l, want, "json: the unlock's flags and type, numbers and names");

	if (have_btf) {
		how1 = how_of(pt_find_line(out, MISSING, NULL, buf,
					   sizeof(buf)));
		how2 = how_of(pt_find_line(out, "{\"fault\":0}", NULL, buf,
					sizeof(buf)));
		/* The kernel half: 0xff00... with 5-level paging (LA57). */
		PT_OK(how1 >= 0xff00000000000000ULL &&
		      how2 >= 0xff00000000000000ULL,
		      "json: how is the kernel's copy (0x%llx, 0x%llx)", how1,
		      how2);
	}

	/* CTF, read by babeltrace2. */
	snprintf(cmd, sizeof(cmd), "/usr/bin/babeltrace2 %s 2>&1", CTF_DIR);
	f = popen(cmd, "r");
	n = f ? fread(bt, 1, sizeof(bt) - 1, f) : 0;
	bt[n] = 0;
	rc = f ? pclose(f) : -1;
	PT_EQ(rc, 0, "ctf: babeltrace2 reads the trace");
	snprintf(want, sizeof(want),
		 "%s = 129, %s = ( \"F_WRLCK\" : container = 1 )", f_flags,
		 f_type);
	has(pt_find_line(bt, "posix_lock_inode", "F_WRLCK", buf, sizeof(buf)),
	    want, "ctf: the lock's type is a CTF enum: F_WRLCK");
	snprintf(want, sizeof(want),
		 "%s = 1, %s = ( \"F_UNLCK\" : container = 2 )", f_flags,
		 f_type);
	has(pt_find_line(bt, "posix_lock_inode", "F_UNLCK", buf, sizeof(buf)),
	    want, "ctf: the unlock's type: F_UNLCK");
	if (!have_btf)
		return;
	snprintf(want, sizeof(want),
		 "fetch = { dfd = { status = ( \"ok\" : container = 0 ), step = 0, value = -100 }, "
		 "filename = { status = ( \"ok\" : container = 0 ), step = 0, value = \"" MISSING "\" }, "
		 "str_filename_4 = { status = ( \"truncated\" : container = 2 ), step = 0, value = \"/tmp\" }, "
		 "how = { status = ( \"ok\" : container = 0 ), step = 0, value = 0x%llX }, "
		 "how_flags = { status = ( \"ok\" : container = 0 ), step = 0, value = %llu }, "
		 "how_resolve = { status = ( \"ok\" : container = 0 ), step = 0, value = 4 } }",
		 how1, (unsigned long long)how.flags | O_LARGEFILE_K);
	has(pt_find_line(bt, FETCH ":", "value = \"/tmp\"", buf, sizeof(buf)),
	    want, "ctf: openat2's six fetches, each typed, exact");
	snprintf(want, sizeof(want),
		 "fetch = { dfd = { status = ( \"ok\" : container = 0 ), step = 0, value = -100 }, "
		 "filename = { status = ( \"fault\" : container = 1 ), step = 0, value = \"\" }, "
		 "str_filename_4 = { status = ( \"fault\" : container = 1 ), step = 0, value = \"\" }, "
		 "how = { status = ( \"ok\" : container = 0 ), step = 0, value = 0x%llX }, ",
		 how2);
	has(pt_find_line(bt, FETCH ":", "\"fault\"", buf, sizeof(buf)),
	    want, "ctf: a NULL filename: both strings fault at read 0, the rest kept");
	pt_diag("babeltrace2: %s", pt_find_line(bt, LOCKDOWN ":", NULL, buf,
						 sizeof(buf)) ? buf : "");
	has(pt_find_line(bt, LOCKDOWN ":", NULL, buf, sizeof(buf)),
	    "fetch = { what = { status = ( \"ok\" : container = 0 ), step = 0, value = ( \"LOCKDOWN_IOPORT\" : container = ",
	    "ctf: security_locked_down's what is a CTF enum: LOCKDOWN_IOPORT");
	has(pt_find_line(bt, CAPABLE ":", NULL, buf, sizeof(buf)),
	    "ret = ( \"true\" : container = 1 ), ret_raw = 1, latency_ns = ",
	    "ctf: capable's own _ret is typed: a bool, the register beside it");
	has(pt_find_line(bt, CAPABLE ":", NULL, buf, sizeof(buf)),
	    "fetch = { cap = { status = ( \"ok\" : container = 0 ), step = 0, value = 17 }, "
	    "ret = { status = ( \"ok\" : container = 0 ), step = 0, value = ( \"true\" : container = 1 ) } }",
	    "ctf: capable's cap 17 and its bool ret true");
}

/* ---- session 2: text and pftrace ---- */

/* The annotation @name of the first event named @ev; NULL if none. */
static const struct pt_annot *annot(const char *ev, const char *name,
				    const char *other)
{
	int i, j;

	for (i = 0; i < npk; i++) {
		bool match = !other;

		if (pk[i].kind != 11 || strcmp(pk[i].name, ev))
			continue;
		for (j = 0; other && j < pk[i].nannot && j < PT_PF_ANNOT; j++)
			if (pk[i].annot[j].field == 6 &&
			    !strcmp(pk[i].annot[j].s, other))
				match = true;
		if (!match)
			continue;
		for (j = 0; j < pk[i].nannot && j < PT_PF_ANNOT; j++)
			if (!strcmp(pk[i].annot[j].name, name))
				return &pk[i].annot[j];
	}
	return NULL;
}

/* Whether event @k has a string annotation @s; its annotation @name. */
static bool annot_in(const struct pkt *k, const char *s)
{
	int j;

	for (j = 0; j < k->nannot && j < PT_PF_ANNOT; j++)
		if (k->annot[j].field == 6 && !strcmp(k->annot[j].s, s))
			return true;
	return false;
}

static const struct pt_annot *annot_of(const struct pkt *k, const char *name)
{
	int j;

	for (j = 0; j < k->nannot && j < PT_PF_ANNOT; j++)
		if (!strcmp(k->annot[j].name, name))
			return &k->annot[j];
	return NULL;
}

static void expect_annot(const char *ev, const char *name, const char *other,
			 __u32 field, __u64 v, const char *s)
{
	const struct pt_annot *a = annot(ev, name, other);
	char val[160];

	if (s)
		snprintf(val, sizeof(val), "\"%s\"", s);
	else
		snprintf(val, sizeof(val), "%lld", (long long)v);
	PT_OK(a && a->field == field && (s ? !strcmp(a->s, s) : a->v == v),
	      "pftrace: %s %s%s%s: field %u, %s", ev, name,
	      other ? " of " : "", other ? other : "", field, val);
	if (a && !(a->field == field && (s ? !strcmp(a->s, s) : a->v == v)))
		pt_diag("got field %u, %s %llu", a->field, a->s,
			(unsigned long long)a->v);
}

static void test_text_pftrace(void)
{
	const struct pt_annot *a;
	char buf[8192], want[256];
	struct pt_proc p;
	int rc, i;

	unlink(PF_FILE);
	PT_OK(start(&p, (char *[]){ "--output", PF_FILE, "--format", "pftrace",
				    NULL }),
	      "text+pftrace: the probes attach");
	workload();
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "text+pftrace: pea trace exits 0");
	snprintf(want, sizeof(want), "%s=FL_POSIX|FL_SLEEP %s=F_WRLCK",
		 f_flags, f_type);
	/* One probe alone (no BTF) has no PROBE column: find by value. */
	has(pt_find_line(out, "=F_WRLCK", NULL, buf, sizeof(buf)),
	    want, "text: the lock's flags and type by name");
	snprintf(want, sizeof(want), "%s=FL_POSIX %s=F_UNLCK", f_flags,
		 f_type);
	has(pt_find_line(out, "=F_UNLCK", NULL, buf, sizeof(buf)),
	    want, "text: the unlock's flags and type by name");
	if (have_btf) {
		has(pt_find_line(out, LOCKDOWN, NULL, buf, sizeof(buf)),
		    "what=LOCKDOWN_IOPORT", "text: what=LOCKDOWN_IOPORT");
		has(pt_find_line(out, CAPABLE, NULL, buf, sizeof(buf)),
		    "cap=17 ret=true", "text: cap=17 ret=true");
	}

	PT_EQ(pt_pf_decode(PF_FILE), 0, "pftrace: the trace decodes");
	snprintf(want, sizeof(want), "%s_name", f_flags);
	expect_annot(FLOCK, f_flags, "F_WRLCK", 3, 129, NULL);
	expect_annot(FLOCK, want, "F_WRLCK", 6, 0, "FL_POSIX|FL_SLEEP");
	expect_annot(FLOCK, f_type, "F_WRLCK", 3, 1, NULL);
	expect_annot(FLOCK, f_flags, "F_UNLCK", 3, 1, NULL);
	expect_annot(FLOCK, want, "F_UNLCK", 6, 0, "FL_POSIX");
	expect_annot(FLOCK, k612 ? "pid" : "fl_pid", "F_UNLCK", 3, getpid(),
		     NULL);
	if (!have_btf)
		return;
	expect_annot(FETCH, "dfd", MISSING, 4, (__u64)-100LL, NULL);
	expect_annot(FETCH, "filename", MISSING, 6, 0, MISSING);
	expect_annot(FETCH, "how", MISSING, 7,
		     how_of(pt_find_line(out, MISSING, NULL, buf, sizeof(buf))),
		     NULL);
	expect_annot(FETCH, "how->flags", MISSING, 3,
		     how.flags | O_LARGEFILE_K, NULL);
	expect_annot(FETCH, "how->resolve", MISSING, 3, 4, NULL);
	a = annot(FETCH, "str(filename,4)", MISSING);
	PT_OK(a && a->field == 11 && a->ndict == 2 &&
	      !strcmp(a->dict[0].name, "str") && !strcmp(a->dict[0].s, "/tmp") &&
	      !strcmp(a->dict[1].name, "truncated") && a->dict[1].field == 2 &&
	      a->dict[1].v == 1,
	      "pftrace: str(filename,4) is {\"str\": \"/tmp\", \"truncated\": true}");
	a = annot(FETCH, "filename", NULL);
	for (i = 0; i < npk; i++)
		if (pk[i].kind == 11 && !strcmp(pk[i].name, FETCH) &&
		    !annot_in(&pk[i], MISSING))
			a = annot_of(&pk[i], "filename");
	PT_OK(a && a->field == 11 && a->ndict == 1 &&
	      !strcmp(a->dict[0].name, "fault") && a->dict[0].field == 3 &&
	      a->dict[0].v == 0,
	      "pftrace: a NULL filename is {\"fault\": 0}");
	expect_annot(LOCKDOWN, "what", NULL, 6, 0, "LOCKDOWN_IOPORT");
	expect_annot(CAPABLE, "cap", NULL, 4, 17, NULL);
	expect_annot(CAPABLE, "ret", NULL, 2, 1, NULL);
}

int main(void)
{
	struct utsname u;

	have_btf = !access("/sys/kernel/btf/vmlinux", R_OK);
	pt_diag("kernel BTF: %s", have_btf ? "yes" : "no (the tracepoint only)");
	uname(&u);
	/* 6.9 renamed the fields with struct file_lock_core. */
	k612 = !system("grep -q 'field:unsigned int flags;' "
		       "/sys/kernel/tracing/events/filelock/posix_lock_inode/format");
	f_flags = k612 ? "flags" : "fl_flags";
	f_type = k612 ? "type" : "fl_type";
	pt_diag("%s: fields %s and %s", u.release, f_flags, f_type);
	lock_fd = open(LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	PT_OK(lock_fd >= 0, "open " LOCK_FILE);
	if (!have_btf)
		PT_OK(pt_run((char *[]){ PT_PEA, "trace", FETCH, "how->flags",
				       NULL }, out, sizeof(out), err,
			     sizeof(err), NULL, NULL) != 0 &&
		      strstr(err, "no BTF"),
		      "no BTF: a fetch expression is refused (%.200s)", err);
	test_json_ctf();
	test_text_pftrace();
	close(lock_fd);
	unlink(LOCK_FILE);
	return pt_done();
}
