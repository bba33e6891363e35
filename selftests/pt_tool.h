/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the tests of the pea command-line tool (/bin/pea in the
 * guest): running it with its stdout and stderr on pipes, reading lines
 * with a generous timeout, and a strict little JSON reader for the flat
 * objects the tool prints (any syntax error makes the line count as bad).
 */
#ifndef _PT_TOOL_H
#define _PT_TOOL_H

#include <ctype.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include "pea_test.h"

#define PT_PEA		"/bin/pea"
/* Generous: the guest is emulated (the debug kernel: 3 times this). */
#define PT_TOOL_WAIT_MS	(30000 * pt_time_scale())

/* A running tool: pid and the read ends of its stdout and stderr. */
struct pt_proc {
	pid_t pid;
	int out, err;
	char obuf[65536], ebuf[65536];
	size_t olen, elen;	/* buffered, not yet returned as lines */
	bool oeof, eeof;
	char *err_all;		/* everything read from stderr */
	size_t err_all_len;
};

/*
 * Start @argv (argv[0] a path) with stdin from /dev/null and stdout and
 * stderr on pipes. @setup, if given, runs in the child before exec.
 */
static inline void pt_spawn(struct pt_proc *p, char *const argv[],
			    void (*setup)(void *), void *arg)
{
	int o[2], e[2];

	memset(p, 0, sizeof(*p));
	if (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC))
		pt_fatal("pipe2");
	fflush(stdout);
	p->pid = fork();
	if (p->pid < 0)
		pt_fatal("fork");
	if (!p->pid) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(o[1], 1);
		dup2(e[1], 2);
		if (setup)
			setup(arg);
		execv(argv[0], argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	p->out = o[0];
	p->err = e[0];
}

static inline long long pt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Read what is available from one pipe into its buffer; false at EOF. */
static inline bool pt_proc_fill(struct pt_proc *p, bool err)
{
	char *buf = err ? p->ebuf : p->obuf;
	size_t *len = err ? &p->elen : &p->olen;
	ssize_t n;

	if (err && *len >= sizeof(p->ebuf) - 1) {
		/*
		 * Nobody takes stderr's lines while the test reads stdout:
		 * keep reading, or a tool that writes much there blocks on
		 * a full pipe. err_all keeps them all; the buffer keeps
		 * only the partial last line.
		 */
		char *nl = memrchr(buf, '\n', *len);
		size_t keep = nl ? *len - (size_t)(nl + 1 - buf) : 0;

		memmove(buf, buf + *len - keep, keep);
		*len = keep;
	}
	if (*len >= sizeof(p->obuf) - 1)
		return true;	/* a line this long is a failure anyway */
	n = read(err ? p->err : p->out, buf + *len, sizeof(p->obuf) - 1 - *len);
	if (n <= 0) {
		if (err)
			p->eeof = true;
		else
			p->oeof = true;
		return false;
	}
	if (err) {
		char *all = realloc(p->err_all, p->err_all_len + n + 1);

		if (!all)
			pt_fatal("realloc");
		memcpy(all + p->err_all_len, buf + *len, n);
		p->err_all_len += n;
		all[p->err_all_len] = '\0';
		p->err_all = all;
	}
	*len += n;
	return true;
}

/* Take one line (without '\n') from a buffer into @line, if complete. */
static inline bool pt_take_line(char *buf, size_t *len, char *line,
				size_t max, bool eof)
{
	char *nl = memchr(buf, '\n', *len);
	size_t n;

	if (!nl && !(eof && *len))
		return false;
	n = nl ? (size_t)(nl - buf) : *len;
	if (n >= max)
		n = max - 1;
	memcpy(line, buf, n);
	line[n] = '\0';
	n = nl ? (size_t)(nl - buf) + 1 : *len;
	memmove(buf, buf + n, *len - n);
	*len -= n;
	return true;
}

/*
 * Next line of the tool's stdout (@err false) or stderr (@err true),
 * reading the other pipe meanwhile so the tool never blocks on it.
 * Returns false at EOF or after @timeout_ms.
 */
static inline bool pt_proc_line(struct pt_proc *p, bool err, char *line,
				size_t max, int timeout_ms)
{
	long long end = pt_now_ms() + timeout_ms;

	for (;;) {
		struct pollfd fds[2];
		int n = 0, left;

		if (err ? pt_take_line(p->ebuf, &p->elen, line, max, p->eeof) :
			  pt_take_line(p->obuf, &p->olen, line, max, p->oeof))
			return true;
		if (err ? p->eeof : p->oeof)
			return false;
		if (!p->oeof)
			fds[n++] = (struct pollfd){ .fd = p->out, .events = POLLIN };
		if (!p->eeof)
			fds[n++] = (struct pollfd){ .fd = p->err, .events = POLLIN };
		left = (int)(end - pt_now_ms());
		if (left <= 0 || poll(fds, n, left) <= 0)
			return false;
		while (n--)
			if (fds[n].revents)
				pt_proc_fill(p, fds[n].fd == p->err);
	}
}

/*
 * Start `pea trace` with @argv and wait until it has attached (its
 * "pea: tracing ..." line on stderr); what it printed before that goes to
 * the diagnostics. False if it ended or was silent for PT_TOOL_WAIT_MS.
 */
static inline bool pt_trace_start(struct pt_proc *p, char *const argv[])
{
	char line[4096];

	pt_spawn(p, argv, NULL, NULL);
	while (pt_proc_line(p, true, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (strstr(line, "pea: tracing "))
			return true;
		pt_diag("pea trace: %s", line);
	}
	return false;
}

/* Read stderr to EOF (after the tool ended or closed it). */
static inline void pt_proc_drain_err(struct pt_proc *p)
{
	char line[4096];

	while (pt_proc_line(p, true, line, sizeof(line), PT_TOOL_WAIT_MS))
		;
}

/* Wait for the tool's exit status (-1 if killed by a signal, -2 stuck). */
static inline int pt_proc_wait(struct pt_proc *p)
{
	long long end = pt_now_ms() + PT_TOOL_WAIT_MS;
	int status;

	for (;;) {
		pid_t r = waitpid(p->pid, &status, WNOHANG);

		if (r == p->pid)
			break;
		if (pt_now_ms() > end) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &status, 0);
			p->pid = 0;
			return -2;
		}
		usleep(10000);
	}
	p->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline void pt_proc_close(struct pt_proc *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	close(p->out);
	close(p->err);
	free(p->err_all);
	p->err_all = NULL;
}

/*
 * Read a started tool to its end: all of stdout into @out (lines of at
 * most @line_sz - 1 bytes, through @line) and of stderr into @err
 * (NUL-terminated, truncated to their sizes); its exit status.
 */
static inline int pt_proc_collect(struct pt_proc *p, char *line,
				  size_t line_sz, char *out, size_t out_sz,
				  char *err, size_t err_sz)
{
	size_t olen = 0;
	int rc;

	out[0] = '\0';
	while (pt_proc_line(p, false, line, line_sz, PT_TOOL_WAIT_MS)) {
		size_t n = strlen(line);

		if (olen + n + 2 < out_sz) {
			memcpy(out + olen, line, n);
			out[olen + n] = '\n';
			olen += n + 1;
			out[olen] = '\0';
		}
	}
	pt_proc_drain_err(p);
	snprintf(err, err_sz, "%s", p->err_all ? p->err_all : "");
	rc = pt_proc_wait(p);
	pt_proc_close(p);
	return rc;
}

/*
 * Run the tool to completion: exit status, all of stdout into @out and of
 * stderr into @err (NUL-terminated, truncated to their sizes).
 */
static inline int pt_run(char *const argv[], char *out, size_t out_sz,
			 char *err, size_t err_sz, void (*setup)(void *),
			 void *arg)
{
	struct pt_proc p;
	char line[4096];

	pt_spawn(&p, argv, setup, arg);
	return pt_proc_collect(&p, line, sizeof(line), out, out_sz, err,
			       err_sz);
}

/*
 * Start `pea trace PROBE --pid <this process> ARGS...` (@args NULL-ended,
 * at most 26 of them) and wait until it has attached.
 */
static inline bool pt_trace_start_self(struct pt_proc *p, const char *probe,
				       char **args)
{
	char *argv[32] = { PT_PEA, "trace", (char *)probe, "--pid" };
	static char pid[16];
	int n = 4;

	snprintf(pid, sizeof(pid), "%d", getpid());
	argv[n++] = pid;
	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	return pt_trace_start(p, argv);
}

/*
 * The first line of @text (lines) that holds @a and @b (or only @a, @b
 * NULL), copied into @buf (@len bytes; longer lines are passed over);
 * NULL if none.
 */
static inline const char *pt_find_line(const char *text, const char *a,
				       const char *b, char *buf, size_t len)
{
	const char *l = text, *e;

	for (; *l; l = *e ? e + 1 : e) {
		e = strchr(l, '\n');
		if (!e)
			e = l + strlen(l);
		if ((size_t)(e - l) >= len)
			continue;
		memcpy(buf, l, e - l);
		buf[e - l] = 0;
		if (strstr(buf, a) && (!b || strstr(buf, b)))
			return buf;
	}
	return NULL;
}

/* ---- JSON ---- */

/* Append code point @cp as UTF-8. */
static inline size_t pt_utf8_put(char *o, unsigned int cp)
{
	if (cp < 0x80) {
		o[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = 0xc0 | (cp >> 6);
		o[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	o[0] = 0xe0 | (cp >> 12);
	o[1] = 0x80 | ((cp >> 6) & 0x3f);
	o[2] = 0x80 | (cp & 0x3f);
	return 3;
}

/* Parse a JSON string at *@s into @out (bytes, @len set). */
static inline bool pt_json_string(const char **s, char *out, size_t max,
				  size_t *len)
{
	const char *p = *s;
	size_t n = 0;

	if (*p++ != '"')
		return false;
	while (*p != '"') {
		char tmp[4];
		size_t k = 1;
		unsigned int cp;

		if (!*p || (unsigned char)*p < 0x20)
			return false;
		if (*p != '\\') {
			tmp[0] = *p++;
		} else {
			p++;
			switch (*p) {
			case '"': tmp[0] = '"'; break;
			case '\\': tmp[0] = '\\'; break;
			case '/': tmp[0] = '/'; break;
			case 'b': tmp[0] = '\b'; break;
			case 'f': tmp[0] = '\f'; break;
			case 'n': tmp[0] = '\n'; break;
			case 'r': tmp[0] = '\r'; break;
			case 't': tmp[0] = '\t'; break;
			case 'u':
				if (sscanf(p + 1, "%4x", &cp) != 1 ||
				    !isxdigit((unsigned char)p[1]) ||
				    !isxdigit((unsigned char)p[2]) ||
				    !isxdigit((unsigned char)p[3]) ||
				    !isxdigit((unsigned char)p[4]))
					return false;
				k = pt_utf8_put(tmp, cp);
				p += 4;
				break;
			default:
				return false;
			}
			p++;
		}
		if (n + k < max)
			memcpy(out + n, tmp, k);
		n += k;
	}
	*s = p + 1;
	if (n >= max)
		return false;
	out[n] = '\0';
	*len = n;
	return true;
}

/* Skip one JSON value (nested arrays and objects included). */
static inline bool pt_json_skip(const char **s)
{
	static char scratch[8192];
	const char *p = *s;
	size_t len;

	if (*p == '"')
		return pt_json_string(s, scratch, sizeof(scratch), &len);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p++;
		if (*p == close) {
			*s = p + 1;
			return true;
		}
		for (;;) {
			if (close == '}') {
				if (!pt_json_string(&p, scratch, sizeof(scratch), &len) ||
				    *p++ != ':')
					return false;
			}
			if (!pt_json_skip(&p))
				return false;
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p++ != close)
				return false;
			*s = p;
			return true;
		}
	}
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4)) {
		*s = p + 4;
		return true;
	}
	if (!strncmp(p, "false", 5)) {
		*s = p + 5;
		return true;
	}
	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' ||
	       *p == 'E' || *p == '+' || *p == '-')
		p++;
	*s = p;
	return true;
}

/* Whether @line is exactly one JSON object. */
static inline bool pt_json_valid(const char *line)
{
	const char *p = line;

	return *p == '{' && pt_json_skip(&p) && !*p;
}

/*
 * The top-level member @key of the object @line: a string value is
 * decoded into @out (its byte length in *@len if non-NULL), anything else
 * is copied raw. Returns false if absent or if @line is not valid.
 */
static inline bool pt_json_get(const char *line, const char *key, char *out,
			       size_t max, size_t *len)
{
	char name[256];
	const char *p = line, *v;
	size_t n;

	if (!pt_json_valid(line) || *p++ != '{')
		return false;
	while (*p != '}') {
		if (!pt_json_string(&p, name, sizeof(name), &n) || *p++ != ':')
			return false;
		v = p;
		if (!strcmp(name, key)) {
			if (*v == '"')
				return pt_json_string(&v, out, max, len ? len : &n);
			if (!pt_json_skip(&p) || (size_t)(p - v) >= max)
				return false;
			memcpy(out, v, p - v);
			out[p - v] = '\0';
			if (len)
				*len = p - v;
			return true;
		}
		if (!pt_json_skip(&p))
			return false;
		if (*p == ',')
			p++;
	}
	return false;
}

/* A numeric member, or @def. */
static inline long long pt_json_num(const char *line, const char *key,
				    long long def)
{
	char buf[64];

	if (!pt_json_get(line, key, buf, sizeof(buf), NULL))
		return def;
	return strtoll(buf, NULL, 10);
}

/* Whether the string member @key equals @want. */
static inline bool pt_json_streq(const char *line, const char *key,
				 const char *want)
{
	char buf[1024];

	return pt_json_get(line, key, buf, sizeof(buf), NULL) &&
	       !strcmp(buf, want);
}

/*
 * Stop a started tool (SIGINT, 200 ms after the workload) and keep its
 * stdout lines whose "type" is @type (all if NULL): the first @max of
 * them, each into @objs + i * @obj_sz (truncated), read through @line
 * (@line_sz bytes). Asserts it exited 0; returns how many were kept.
 */
static inline int pt_trace_stop_lines(struct pt_proc *p, const char *type,
				      char *line, size_t line_sz, char *objs,
				      size_t obj_sz, int max)
{
	int n = 0, rc;

	usleep(200000);
	kill(p->pid, SIGINT);
	while (pt_proc_line(p, false, line, line_sz, PT_TOOL_WAIT_MS)) {
		if (type && !pt_json_streq(line, "type", type))
			continue;
		if (n < max)
			snprintf(objs + (size_t)n++ * obj_sz, obj_sz, "%.*s",
				 (int)obj_sz - 1, line);
	}
	pt_proc_drain_err(p);
	if (!n)
		pt_diag("no %s line; stderr: %s", type ? type : "stdout",
			p->err_all ? p->err_all : "");
	rc = pt_proc_wait(p);
	pt_proc_close(p);
	PT_EQ(rc, 0, "pea trace exits 0");
	return n;
}

#endif /* _PT_TOOL_H */
