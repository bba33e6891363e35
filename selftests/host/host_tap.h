/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host tests' TAP: ok() prints one case, named after HOST_TAP_NAME,
 * and host_tap_done() the plan and the exit status.
 */
#ifndef _HOST_TAP_H
#define _HOST_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int n, failed;

static void __attribute__((format(printf, 2, 3))) ok(int cond,
						     const char *fmt, ...)
{
	va_list ap;

	n++;
	if (!cond)
		failed++;
	printf("%sok %d - " HOST_TAP_NAME ": ", cond ? "" : "not ", n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static inline int host_tap_done(void)
{
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}

#endif /* _HOST_TAP_H */
