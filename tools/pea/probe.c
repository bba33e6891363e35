// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the PROBE argument (kprobe:SYMBOL[+OFFSET], kretprobe:SYMBOL) and
 * attaching it to a map with PEA_MAP_IOC_ATTACH_PROBE, with an explanation
 * for every error the module gives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "pea_tool.h"

#define KPROBE_PFX	"kprobe:"
#define KRETPROBE_PFX	"kretprobe:"

static bool symbol_char_ok(char c)
{
	/* What kallsyms names are made of (GCC adds .isra.0, .cold, ...). */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
}

static bool tp_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

/* "tracepoint:SUBSYS:NAME" or "tp:SUBSYS:NAME" */
static int tp_parse(const char *text, struct probe_spec *spec)
{
	const char *sys = strchr(text, ':') + 1, *name = strchr(sys, ':');
	size_t i, ls;

	spec->tp = true;
	ls = name ? (size_t)(name - sys) : 0;
	if (!name || !ls || !name[1] || ls >= sizeof(spec->tp_sys) ||
	    strlen(name + 1) >= sizeof(spec->tp_name)) {
		tool_usage("trace", "'%s': write tracepoint:SUBSYS:NAME (see 'pea list')",
			   text);
		return -EINVAL;
	}
	memcpy(spec->tp_sys, sys, ls);
	strcpy(spec->tp_name, name + 1);
	for (i = 0; spec->tp_sys[i]; i++)
		if (!tp_char_ok(spec->tp_sys[i]))
			goto bad;
	for (i = 0; spec->tp_name[i]; i++)
		if (!tp_char_ok(spec->tp_name[i]))
			goto bad;
	snprintf(spec->symbol, sizeof(spec->symbol), "%s:%s", spec->tp_sys,
		 spec->tp_name);
	return 0;
bad:
	tool_usage("trace", "'%s' is not a tracepoint name", text);
	return -EINVAL;
}

int probe_parse(const char *text, struct probe_spec *spec)
{
	const char *sym, *plus;
	size_t len, i;

	memset(spec, 0, sizeof(*spec));
	spec->text = text;
	if (!strncmp(text, "tracepoint:", 11) || !strncmp(text, "tp:", 3))
		return tp_parse(text, spec);
	if (uprobe_is_spec(text))
		return uprobe_parse(text, spec);
	if (!strncmp(text, "netfilter:", 10))
		return nf_parse(text, spec);
	if (!strncmp(text, KPROBE_PFX, strlen(KPROBE_PFX))) {
		sym = text + strlen(KPROBE_PFX);
	} else if (!strncmp(text, KRETPROBE_PFX, strlen(KRETPROBE_PFX))) {
		sym = text + strlen(KRETPROBE_PFX);
		spec->retprobe = true;
	} else {
		tool_usage("trace", "'%s' is not a probe: write kprobe:SYMBOL[+OFFSET], kretprobe:SYMBOL, uprobe:PATH:SYMBOL or tracepoint:SUBSYS:NAME",
			   text);
		return -EINVAL;
	}

	plus = strchr(sym, '+');
	len = plus ? (size_t)(plus - sym) : strlen(sym);
	if (!len) {
		tool_usage("trace", "'%s' names no function", text);
		return -EINVAL;
	}
	if (len >= sizeof(spec->symbol)) {
		tool_usage("trace", "function name longer than %d characters",
			   PEA_SYM_LEN - 1);
		return -EINVAL;
	}
	for (i = 0; i < len; i++)
		if (!symbol_char_ok(sym[i])) {
			tool_usage("trace", "'%.*s' is not a function name",
				   (int)len, sym);
			return -EINVAL;
		}
	memcpy(spec->symbol, sym, len);

	if (plus) {
		unsigned long long off;

		if (spec->retprobe) {
			tool_usage("trace", "a kretprobe takes no +OFFSET ('%s')",
				   text);
			return -EINVAL;
		}
		if (tool_parse_u64(plus + 1, &off)) {
			tool_usage("trace", "bad offset '%s' (a number, e.g. +0x10)",
				   plus + 1);
			return -EINVAL;
		}
		spec->offset = off;
	}
	return 0;
}

/*
 * What every attach ioctl answers alike: too many links, a module without
 * this kind of producer (@what: "probe", "tracepoint", ...), and any other
 * errno, by its name.
 */
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

int probe_attach(int map_fd, const struct pea_probe_attr *attr,
		 const struct probe_spec *spec)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, attr);
	int err = errno;

	if (fd >= 0)
		return fd;
	switch (err) {
	case ENOENT:
		tool_err("cannot attach %s: no kernel function '%s' (see /proc/kallsyms; static and inlined functions may have other names or none)",
			 spec->text, spec->symbol);
		break;
	case EPERM:
	case EACCES:
		tool_err("cannot attach %s: attaching probes needs CAP_PERFMON, or CAP_SYS_ADMIN at kernel.perf_event_paranoid 3 (run as root)",
			 spec->text);
		break;
	case EILSEQ:
		tool_err("cannot attach %s: offset +%llu is not an instruction boundary in '%s' (see objdump -d, or use +0)",
			 spec->text, (unsigned long long)spec->offset,
			 spec->symbol);
		break;
	case EINVAL:
		tool_err("cannot attach %s: the kernel refuses to probe '%s'%s (kprobes blacklist, notrace or __kprobes code, or an offset past its end)",
			 spec->text, spec->symbol,
			 spec->retprobe ? " with a kretprobe" : "");
		break;
	case EBUSY:
		tool_err("cannot attach %s: '%s' is already probed in a way that excludes this one",
			 spec->text, spec->symbol);
		break;
	default:
		probe_explain_common(spec, err, "probe");
		break;
	}
	return -err;
}

int tp_attach(int map_fd, const struct pea_tp_attr *attr,
	      const struct probe_spec *spec)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, attr);
	int err = errno;

	if (fd >= 0)
		return fd;
	switch (err) {
	case EPERM:
	case EACCES:
		tool_err("cannot attach %s: attaching tracepoints needs CAP_PERFMON, or CAP_SYS_ADMIN at kernel.perf_event_paranoid 3 (run as root)",
			 spec->text);
		break;
	case EINVAL:
		tool_err("cannot attach %s: the kernel refuses event id %u (gone since the format was read, or not traceable through perf)",
			 spec->text, attr->event_id);
		break;
	default:
		probe_explain_common(spec, err, "tracepoint");
		break;
	}
	return -err;
}
