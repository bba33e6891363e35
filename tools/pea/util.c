// SPDX-License-Identifier: GPL-2.0
/*
 * pea: messages, error explanations and argument parsing shared by the
 * sub-commands.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "pea_tool.h"

void tool_err(const char *fmt, ...)
{
	va_list ap;

	fputs("pea: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int tool_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pea %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'pea %s --help')\n", cmd);
	return PEA_EXIT_USAGE;
}

void tool_explain_dev_error(const char *what, int err)
{
	struct stat st;

	switch (err) {
	case -ENOENT:
	case -ENODEV:
	case -ENXIO:
		if (stat("/sys/module/pea", &st))
			tool_err("%s: %s does not exist: the pea module is not loaded (insmod pea.ko)",
				 what, PEA_DEVICE_PATH);
		else
			tool_err("%s: %s is missing although pea is loaded (is devtmpfs mounted on /dev?)",
				 what, PEA_DEVICE_PATH);
		break;
	case -EACCES:
	case -EPERM:
		tool_err("%s: %s: permission denied (run as root, or load pea with dev_mode=0666 to open it to everyone)",
			 what, PEA_DEVICE_PATH);
		break;
	case -ENOTTY:
		tool_err("%s: %s does not understand this request: the loaded pea module is older than this tool",
			 what, PEA_DEVICE_PATH);
		break;
	case -EMFILE:
	case -ENFILE:
		tool_err("%s: too many open files (raise ulimit -n)", what);
		break;
	case -ENOMEM:
		tool_err("%s: out of memory (try fewer --pages)", what);
		break;
	default:
		tool_err("%s: %s", what, strerror(-err));
		break;
	}
}

int tool_parse_u64(const char *s, unsigned long long *v)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

int tool_parse_uint(const char *s, unsigned int max, unsigned int *v)
{
	unsigned long long x;

	if (tool_parse_u64(s, &x) || x > max)
		return -EINVAL;
	*v = (unsigned int)x;
	return 0;
}

int tool_parse_seconds(const char *s, double *v)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	if (errno || *end || !isfinite(*v) || *v <= 0 || *v > 1e9)
		return -EINVAL;
	return 0;
}

__u64 tool_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A C identifier: what a parameter's name can be (a PROBE has a ':'). */
bool tool_is_ident(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
	      *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}
