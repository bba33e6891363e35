// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the uprobe PROBE arguments (uprobe:PATH:SYMBOL[+OFFSET],
 * uretprobe:PATH:SYMBOL) and attaching them with
 * PEA_MAP_IOC_ATTACH_UPROBE. SYMBOL is looked up in the file's .symtab or
 * .dynsym (elfsym.c); a C++ name with its scopes (ns::func) is first
 * turned into its symbol from the file's DWARF (udwarf.c); a number
 * instead of SYMBOL is a file offset; a
 * PATH without '/' is looked for as a command or a library (upath.c).
 * Fetch expressions after it (ufetch.c) are read in the kernel at each
 * hit, and --filter is a predicate on them (kfilter.c), as for kprobes.
 * Where the file has DWARF, the function's parameters and return value
 * are named and typed from it (udwarf.c): fetches by name, ret printed by
 * its type; without, they are raw registers, and a note says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "kfilter.h"
#include "probe_kind.h"
#include "udwarf.h"
#include "ufetch.h"
#include "upath.h"

#define UPROBE_PFX	"uprobe:"
#define URETPROBE_PFX	"uretprobe:"

/*
 * A uprobe's PATH (struct probe_spec.data); @numeric when SYMBOL was a
 * file offset; @file_offset what is attached.
 */
struct uprobe_arg {
	char path[4096];
	bool numeric;
	__u64 file_offset;
};

/*
 * SYMBOL written as a C++ qualified name (ns::func, ns::Class::method):
 * the function's symbol from the file's DWARF in its place. 0 or -EINVAL
 * (usage message printed).
 */
static int uprobe_qualified(const char *text, struct probe_spec *spec,
			    const struct uprobe_arg *u)
{
	char why[1024], sym[PEA_SYM_LEN];

	if (!strstr(spec->symbol, "::"))
		return 0;
	if (usig_linkage_name(u->path, spec->symbol, sym, sizeof(sym), why,
			      sizeof(why))) {
		tool_usage("trace", "'%s': %s", text, why);
		return -EINVAL;
	}
	snprintf(spec->symbol, sizeof(spec->symbol), "%s", sym);
	return 0;
}

/**
 * uprobe_parse() - parse "uprobe:PATH:SYMBOL[+OFF]" or "uretprobe:PATH:SYMBOL"
 * @text: the PROBE argument (one of uprobe_kind's prefixes)
 * @spec: filled; @spec->text is set by the caller
 *
 * Return: 0 or -EINVAL (usage message printed).
 */
static int uprobe_parse(const char *text, struct probe_spec *spec)
{
	const char *rest, *colon, *sym, *plus;
	struct uprobe_arg *u = PROBE_SPEC_ARG(spec, struct uprobe_arg);
	unsigned long long v;
	size_t lp, ls;

	spec->retprobe = !strncmp(text, URETPROBE_PFX, strlen(URETPROBE_PFX));
	rest = text + strlen(spec->retprobe ? URETPROBE_PFX : UPROBE_PFX);
	colon = upath_sym_colon(rest);
	if (!colon || colon == rest || !colon[1]) {
		tool_usage("trace", "'%s': write %s:PATH:SYMBOL%s", text,
			   spec->retprobe ? "uretprobe" : "uprobe",
			   spec->retprobe ? "" : "[+OFFSET]");
		return -EINVAL;
	}
	lp = colon - rest;
	if (lp >= sizeof(u->path)) {
		tool_usage("trace", "path longer than %zu characters",
			   sizeof(u->path) - 1);
		return -EINVAL;
	}
	memcpy(u->path, rest, lp);
	/* A name without '/': as a command or a library (upath.c). */
	if (!strchr(u->path, '/')) {
		char name[sizeof(u->path)];

		memcpy(name, u->path, sizeof(name));
		if (upath_resolve(name, u->path, sizeof(u->path))) {
			tool_usage("trace", "'%s': no executable '%s' in $PATH, nor a library lib%s.so* in $LD_LIBRARY_PATH or the system's library directories (give its path)",
				   text, name, name);
			return -EINVAL;
		}
	}
	sym = colon + 1;
	plus = strchr(sym, '+');
	ls = plus ? (size_t)(plus - sym) : strlen(sym);
	if (!ls || ls >= sizeof(spec->symbol)) {
		tool_usage("trace", "'%s': the function name must be 1..%d characters",
			   text, PEA_SYM_LEN - 1);
		return -EINVAL;
	}
	memcpy(spec->symbol, sym, ls);
	if (plus) {
		if (spec->retprobe) {
			tool_usage("trace", "a uretprobe takes no +OFFSET ('%s')",
				   text);
			return -EINVAL;
		}
		if (tool_parse_u64(plus + 1, &v)) {
			tool_usage("trace", "bad offset '%s' (a number, e.g. +0x10)",
				   plus + 1);
			return -EINVAL;
		}
		spec->offset = v;
	}
	/* A number instead of a name: the file offset itself. */
	if (spec->symbol[0] >= '0' && spec->symbol[0] <= '9') {
		if (tool_parse_u64(spec->symbol, &v)) {
			tool_usage("trace", "'%s' is neither a function name nor a file offset",
				   spec->symbol);
			return -EINVAL;
		}
		u->file_offset = v;
		u->numeric = true;
	}
	return uprobe_qualified(text, spec, u);
}

/*
 * The signature from DWARF (or why none), the fetches and the predicate
 * (struct probe_spec.priv).
 */
struct uprobe_priv {
	struct ksig *sig;
	char why[512];
	struct kfetch fetches[PROBE_MAX_PARAMS];
	struct pea_fetch f[PROBE_MAX_PARAMS];
	unsigned int nfetches;	/* printed ones first, then --filter's */
	struct pea_pred preds[PEA_PRED_MAX];
	unsigned int npreds;
};

static unsigned int fetch_bytes(const struct uprobe_priv *up, unsigned int i)
{
	return (kfetch_bytes(&up->fetches[i]) + 7) & ~7U;
}

/*
 * The function's signature from DWARF: 0 (with or without one: a note
 * when its values print raw for want of it), or -ENOMEM.
 */
static int uprobe_sig(struct probe_spec *spec, const struct probe_opts *o,
		      struct uprobe_priv *up)
{
	static char noted[4096];	/* the file last noted */
	const struct uprobe_arg *u = PROBE_SPEC_ARG(spec, struct uprobe_arg);
	int err;

	if (u->numeric || spec->offset) {
		snprintf(up->why, sizeof(up->why),
			 "at a file offset the argument registers are not known to be the parameters");
		return 0;
	}
	err = usig_load(u->path, spec->symbol, &up->sig, up->why,
			sizeof(up->why));
	if (err == -ENOMEM)
		return err;
	/* One line per file: a glob may name many of its functions. */
	if ((err == -ENODATA || err == -ENOENT) &&
	    (spec->retprobe || !o->nparams) && strcmp(noted, u->path)) {
		fprintf(stderr, "pea: note: %s: %s; ret and arguments are raw registers\n",
			spec->text, up->why);
		snprintf(noted, sizeof(noted), "%s", u->path);
	}
	return 0;
}

/*
 * The function's signature from DWARF, the fetch expressions after the
 * probe (ufetch.c) and --filter on them (kfilter.c): what the kernel
 * evaluates at each hit.
 */
static int uprobe_prepare(struct probe_spec *spec, const struct probe_opts *o,
			  struct trace_fmt *fmt)
{
	struct uprobe_priv *up;
	unsigned int i, bytes = 0;
	char why[512];
	int err;

	up = calloc(1, sizeof(*up));
	if (!up || uprobe_sig(spec, o, up)) {
		free(up);
		tool_err("out of memory");
		return PEA_EXIT_ERR;
	}
	spec->priv = up;
	fmt->sig = up->sig;
	fmt->sig_why = up->sig ? NULL : up->why;
	for (i = 0; i < o->nparams; i++) {
		struct kfetch *k = &up->fetches[up->nfetches];
		unsigned int n = 1, j;

		if (up->sig && !strncmp(o->params[i], "join(", 5))
			/* Strings of an argv typed from DWARF (kfetch.c). */
			err = kfetch_parse_n(up->sig, o->params[i],
					     spec->retprobe, k,
					     PROBE_MAX_PARAMS - up->nfetches,
					     &n, why, sizeof(why));
		else if (up->nfetches == PROBE_MAX_PARAMS)
			return probe_usage(spec->text, "'%s': more than %d fetches",
					   o->params[i], PROBE_MAX_PARAMS);
		else
			err = ufetch_resolve(up->sig, up->why, o->params[i],
					     spec->retprobe, k, why,
					     sizeof(why));
		if (err)
			return probe_usage(spec->text, "%s", why);
		for (j = 0; j < n; j++)
			bytes += fetch_bytes(up, up->nfetches++);
		if (bytes > PEA_FETCH_DATA_MAX)
			return probe_usage(spec->text, "the fetches up to '%s' take more than %d bytes per event (each rounded up to 8)",
					   o->params[i], PEA_FETCH_DATA_MAX);
	}
	fmt->fetches = up->fetches;
	fmt->nfetches = up->nfetches;
	if (o->filter) {
		struct kfilter_ctx c = {
			.sig = up->sig, .ret = spec->retprobe, .uprobe = true,
			.fetches = up->fetches, .nfetches = up->nfetches,
			.max = PROBE_MAX_PARAMS, .preds = up->preds,
		};

		err = kfilter_compile(&c, o->filter, why, sizeof(why));
		for (i = up->nfetches; i < c.nfetches; i++)
			bytes += fetch_bytes(up, i);
		up->nfetches = c.nfetches;	/* released with the others */
		if (err)
			return probe_usage(spec->text, "--filter: %s", why);
		if (bytes > PEA_FETCH_DATA_MAX)
			return probe_usage(spec->text, "--filter: its fetches and the printed ones take more than %d bytes per event",
					   PEA_FETCH_DATA_MAX);
		up->npreds = c.npreds;
	}
	return 0;
}

static void uprobe_release(struct probe_spec *spec)
{
	struct uprobe_priv *up = spec->priv;
	unsigned int i;

	for (i = 0; up && i < up->nfetches; i++)
		kfetch_release(&up->fetches[i]);
	if (up)
		ksig_free(up->sig);
	free(up);
	spec->priv = NULL;
}

static int explain(const struct probe_spec *spec, int err)
{
	const struct uprobe_arg *u = PROBE_SPEC_ARG(spec, struct uprobe_arg);

	switch (err) {
	case ENOENT:
		tool_err("cannot attach %s: no file '%s'", spec->text,
			 u->path);
		break;
	case EPERM:
	case EACCES:
		tool_err("cannot attach %s: attaching uprobes needs CAP_SYS_ADMIN (run as root)",
			 spec->text);
		break;
	case E2BIG:
		tool_err("cannot attach %s: its fetches or its --filter are more than the kernel takes",
			 spec->text);
		break;
	case EINVAL:
		tool_err("cannot attach %s: the kernel refuses offset 0x%llx of '%s' (not a regular file, past its end, or not an instruction uprobes can step over), or its fetches or --filter",
			 spec->text, (unsigned long long)u->file_offset,
			 u->path);
		break;
	default:
		probe_explain_common(spec, err, "uprobe");
		break;
	}
	return -err;
}

/**
 * uprobe_attach() - resolve a uprobe spec and attach it to @map_fd
 * @map_fd: the map
 * @spec: from uprobe_parse(); gets file_offset
 * @o: the options in effect: --pid (0: any process), the capture,
 *     --maxactive (uretprobes)
 * @id: the producer id its records carry (0: the link's)
 *
 * Return: the link fd, or -errno after printing what went wrong.
 */
static int uprobe_attach(int map_fd, struct probe_spec *spec,
			 const struct probe_opts *o, __u64 id)
{
	int pid = (int)o->pid, capture_mode = o->capture_mode;
	unsigned int capture_arg = o->capture_arg;
	unsigned int capture_len = o->capture_len;
	struct uprobe_arg *u = PROBE_SPEC_ARG(spec, struct uprobe_arg);
	struct pea_uprobe_attr a;
	const char *base;
	__u64 off;
	int fd, err;

	if (!u->numeric) {
		err = elf_sym_offset(u->path, spec->symbol, &off);
		if (err == -ENOENT && access(u->path, F_OK) == 0) {
			tool_err("cannot attach %s: no function '%s' in %s (its .symtab and .dynsym)",
				 spec->text, spec->symbol, u->path);
			return err;
		}
		if (err == -ENOEXEC) {
			tool_err("cannot attach %s: %s is not a 64-bit ELF executable or library, or '%s' is not in its code",
				 spec->text, u->path, spec->symbol);
			return err;
		}
		if (err)
			return explain(spec, -err);
		u->file_offset = off;
	}
	u->file_offset += spec->offset;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_UPROBE_F_CLOEXEC |
		  (spec->retprobe ? PEA_UPROBE_F_RETPROBE : 0);
	a.path = (uintptr_t)u->path;
	a.path_fd = -1;
	a.offset = u->file_offset;
	a.filter_tgid = pid;
	if (pid)
		a.flags |= o->tree;
	a.maxactive = o->maxactive;	/* a uprobe's is refused before */
	a.ustack_depth = o->ustack;
	a.id = id;
	a.capture_mode = capture_mode;
	if (capture_mode) {
		a.capture_arg = capture_arg;
		a.capture_len = capture_len;
	}
	if (spec->priv && ((struct uprobe_priv *)spec->priv)->nfetches) {
		struct uprobe_priv *up = spec->priv;
		unsigned int i;

		for (i = 0; i < up->nfetches; i++)
			up->f[i] = up->fetches[i].f;
		a.fetches = (uintptr_t)up->f;
		a.nr_fetches = up->nfetches;
		if (up->npreds) {
			a.preds = (uintptr_t)up->preds;
			a.nr_preds = up->npreds;
		}
	}
	base = strrchr(u->path, '/');
	base = base ? base + 1 : u->path;
	if (spec->offset)
		snprintf(a.name, sizeof(a.name), "%.40s:%.60s+0x%llx", base,
			 spec->symbol, (unsigned long long)spec->offset);
	else
		snprintf(a.name, sizeof(a.name), "%.40s:%.80s", base, spec->symbol);
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &a);
	if (fd < 0)
		return explain(spec, errno);
	return fd;
}

static const char *uprobe_check_opts(const struct probe_opts *o)
{
	if (o->kernel || o->cpu >= 0)
		return "--kernel and --cpu are not for uprobes";
	return NULL;
}

static const char *const uprobe_prefixes[] = {
	UPROBE_PFX, URETPROBE_PFX, NULL
};

const struct probe_kind uprobe_kind = {
	.prefixes = uprobe_prefixes,
	.parse = uprobe_parse,
	.prepare = uprobe_prepare,
	.attach = uprobe_attach,
	.release = uprobe_release,
	.opts = PO_PARAMS | PO_FILTER | PO_USTACK,
	.check_opts = uprobe_check_opts,
	.missed_by = "pairing returns",
	.decode = decode_probe_record,
	.args = true,
};
