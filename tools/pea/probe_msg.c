// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: the messages every kind of probe shares: a usage error about
 * a probe's options, and the attach errors every ioctl answers alike.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "probe_kind.h"

int probe_usage(const char *probe, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!probe)
		return tool_usage("trace", "%s", msg);
	return tool_usage("trace", "%s: %s", probe, msg);
}

void probe_explain_common(const struct probe_spec *spec, int err,
			  const char *what)
{
	if (err == EMLINK)
		tool_err("cannot attach %s: too many probes attached (at most %d for all maps; end other traces)",
			 spec->text, PEA_MAX_LINKS);
	else if (err == ENOTTY)
		tool_err("cannot attach %s: the loaded pea module has no %s support (older than this tool)",
			 spec->text, what);
	else
		tool_err("cannot attach %s: %s", spec->text, strerror(err));
}
