// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: kprobes and kretprobes (kprobe:SYMBOL[+OFFSET],
 * kretprobe:SYMBOL): parsing the PROBE argument and attaching it to a map
 * with PEA_MAP_IOC_ATTACH_PROBE, with an explanation for every error the
 * module gives. The function's signature comes from BTF (ktypes.c) when
 * the kernel has it: ret prints by its type, parameters are keys by name.
 * syscall:NAME is a kretprobe on the syscall's entry point with its
 * arguments fetched by name (syscall.c); sysenter:NAME the kprobe there,
 * its arguments read as the call begins (execve's argv, which the new
 * program has replaced by its return). A kprobe:GLOB's matches may
 * share one fprobe link (PEA_MAP_IOC_ATTACH_FPROBE, kprobe_attach_multi()).
 * kprobe:MODULE:SYMBOL is a module's function; a SYMBOL that several
 * kernel symbols share is refused before attaching (ksym_names.c), as
 * Linux's kprobe events refuse it, since the link would take the first.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "kfetch.h"
#include "kfilter.h"
#include "ksym_names.h"
#include "ktypes.h"
#include "probe_kind.h"
#include "syscall.h"

#define KPROBE_PFX	"kprobe:"
#define KRETPROBE_PFX	"kretprobe:"

static bool symbol_char_ok(char c)
{
	/* What kallsyms names are made of (GCC adds .isra.0, .cold, ...). */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
}

/* syscall:NAME: the kretprobe on its entry point (struct probe_spec.data) */
struct kprobe_arg {
	bool syscall;
};

/*
 * "syscall:NAME": a kretprobe on SYSCALL_ENTRY_PFX NAME; "sysenter:NAME"
 * the kprobe there.
 */
static int syscall_parse(const char *text, struct probe_spec *spec)
{
	bool entry = !strncmp(text, SYSENTER_PFX, strlen(SYSENTER_PFX));
	const char *name = text + strlen(entry ? SYSENTER_PFX : SYSCALL_PFX);
	size_t len = strlen(name), i;

#ifndef __x86_64__
	tool_usage("trace", "'%s': syscall: is for x86-64 (its argument registers)",
		   text);
	return -EINVAL;
#endif
	for (i = 0; i < len; i++)
		if (!symbol_char_ok(name[i]) || name[i] == '.')
			break;
	if (!len || i < len ||
	    len + strlen(SYSCALL_ENTRY_PFX) >= sizeof(spec->symbol)) {
		tool_usage("trace", "'%s': write %sNAME, e.g. %sopenat",
			   text, entry ? SYSENTER_PFX : SYSCALL_PFX,
			   entry ? SYSENTER_PFX : SYSCALL_PFX);
		return -EINVAL;
	}
	snprintf(spec->symbol, sizeof(spec->symbol), "%s%s",
		 SYSCALL_ENTRY_PFX, name);
	spec->retprobe = !entry;
	PROBE_SPEC_ARG(spec, struct kprobe_arg)->syscall = true;
	return 0;
}

/* "kprobe:SYMBOL[+OFFSET]" or "kretprobe:SYMBOL" */
static int kprobe_parse(const char *text, struct probe_spec *spec)
{
	const char *sym, *plus, *colon;
	size_t len, i;

	if (!strncmp(text, SYSCALL_PFX, strlen(SYSCALL_PFX)) ||
	    !strncmp(text, SYSENTER_PFX, strlen(SYSENTER_PFX)))
		return syscall_parse(text, spec);
	spec->retprobe = !strncmp(text, KRETPROBE_PFX, strlen(KRETPROBE_PFX));
	sym = text + strlen(spec->retprobe ? KRETPROBE_PFX : KPROBE_PFX);
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
	/* MODULE:NAME, as kprobe_events: that module's function. */
	colon = memchr(sym, ':', len);
	for (i = 0; i < len; i++)
		if (colon && sym + i < colon ?
		    !symbol_char_ok(sym[i]) && sym[i] != '-' :
		    !symbol_char_ok(sym[i]) && sym + i != colon) {
			tool_usage("trace", "'%.*s' is not a function name (NAME, or MODULE:NAME for a module's)",
				   (int)len, sym);
			return -EINVAL;
		}
	if (colon && (colon == sym || colon + 1 == sym + len)) {
		tool_usage("trace", "'%.*s': write MODULE:NAME for a module's function",
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

static void fill_attr(const struct probe_spec *spec,
		      const struct probe_opts *o, __u64 id,
		      struct pea_probe_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->flags = PEA_PROBE_F_CLOEXEC;
	if (spec->retprobe)
		a->flags |= PEA_PROBE_F_RETPROBE;
	memcpy(a->symbol, spec->symbol, sizeof(a->symbol));
	a->offset = spec->offset;
	a->id = id;
	a->filter_tgid = (__s32)o->pid;
	if (o->pid)
		a->flags |= o->tree;
	a->filter_cpu = o->cpu;
	a->capture_mode = o->capture_mode;
	if (o->capture_mode) {
		a->capture_arg = o->capture_arg;
		a->capture_len = o->capture_len;
		a->capture_flags = o->kernel ? 0 : PEA_CAPTURE_USER;
	}
	a->maxactive = o->maxactive;
	a->kstack_depth = o->kstack;
	a->ustack_depth = o->ustack;
}

struct kprobe_priv {
	struct ksig *sig;
	struct ksig *scsig;	/* a syscall's arguments by name (syscall.c) */
	char why[512];
	struct kfetch fetches[PROBE_MAX_PARAMS];
	struct pea_fetch f[PROBE_MAX_PARAMS];
	unsigned int nfetches;	/* printed ones first, then --filter's */
	struct pea_pred preds[PEA_PRED_MAX];
	unsigned int npreds;
};

/* The fetch expressions after the probe, as the kernel evaluates them. */
static void fill_fetches(const struct probe_spec *spec,
			 struct pea_probe_attr *a)
{
	struct kprobe_priv *kp = spec->priv;
	unsigned int i;

	if (!kp || !kp->nfetches)
		return;
	for (i = 0; i < kp->nfetches; i++)
		kp->f[i] = kp->fetches[i].f;
	a->fetches = (uintptr_t)kp->f;
	a->nr_fetches = kp->nfetches;
	if (kp->npreds) {
		a->preds = (uintptr_t)kp->preds;
		a->nr_preds = kp->npreds;
	}
}

static int kprobe_attach(int map_fd, struct probe_spec *spec,
			 const struct probe_opts *o, __u64 id)
{
	struct pea_probe_attr attr;
	char why[1024];
	int fd, err;

	if (ksym_name_shared(spec->symbol, why, sizeof(why))) {
		tool_err("cannot attach %s: %s", spec->text, why);
		return -EADDRNOTAVAIL;
	}
	fill_attr(spec, o, id, &attr);
	fill_fetches(spec, &attr);
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &attr);
	err = errno;

	if (fd >= 0)
		return fd;
	switch (err) {
	case ENOENT:
		tool_err("cannot attach %s: no kernel function '%s' (see /proc/kallsyms; static and inlined functions may have other names or none)",
			 spec->text, spec->symbol);
		break;
	case EPERM:
		if (attr.capture_mode) {
			tool_err("cannot attach %s: capturing memory needs CAP_BPF and CAP_PERFMON, and kernel memory no kernel lockdown (run as root)",
				 spec->text);
			break;
		}
		if (attr.nr_fetches) {
			tool_err("cannot attach %s: fetches that read memory need CAP_BPF and CAP_PERFMON, and kernel memory no kernel lockdown (run as root)",
				 spec->text);
			break;
		}
		/* fall through */
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

/*
 * Whether the fetches and predicate of @b are those of @a (their BTF
 * signatures may place a parameter of one name differently).
 */
static bool same_fetches(const struct kprobe_priv *a,
			 const struct kprobe_priv *b)
{
	unsigned int i;

	if (!a || !b)
		return a == b;
	if (a->nfetches != b->nfetches || a->npreds != b->npreds)
		return false;
	for (i = 0; i < a->nfetches; i++)
		if (memcmp(&a->fetches[i].f, &b->fetches[i].f,
			   sizeof(a->fetches[i].f)))
			return false;
	return !memcmp(a->preds, b->preds, a->npreds * sizeof(a->preds[0]));
}

/*
 * A glob's @n kprobes (or kretprobes) as one fprobe link: one ftrace
 * update for all of them, records carrying @id + i for @specs[i] as @n
 * kprobe links would. They must share what the link carries once:
 * fetches, predicate; none a syscall: or an offset (a sysenter:GLOB's
 * syscalls may: their entry points' kprobes). A kretprobe's
 * --maxactive is per function, so the link takes @n times it.
 */
static int kprobe_attach_multi(int map_fd, struct probe_spec *const *specs,
			       unsigned int n, const struct probe_opts *o,
			       __u64 id, char *why, size_t len)
{
	struct kprobe_priv *kp0 = specs[0]->priv;
	struct pea_fprobe_attr fa;
	struct pea_probe_attr a;
	char (*names)[PEA_SYM_LEN];
	unsigned int i;
	int fd, err;

	for (i = 0; i < n; i++) {
		const struct probe_spec *s = specs[i];

		/* syscall:'s arguments are read at the entry of its kretprobe */
		if ((PROBE_SPEC_ARG(s, struct kprobe_arg)->syscall &&
		     s->retprobe) ||
		    s->offset || s->retprobe != specs[0]->retprobe) {
			snprintf(why, len, "'%s' cannot share an fprobe link",
				 s->text);
			return -EXDEV;
		}
		if (!same_fetches(kp0, s->priv)) {
			snprintf(why, len, "the fetches of '%s' differ from those of '%s' (their BTF signatures)",
				 s->text, specs[0]->text);
			return -EXDEV;
		}
	}
	names = calloc(n, sizeof(*names));
	if (!names) {
		snprintf(why, len, "out of memory");
		return -EXDEV;
	}
	for (i = 0; i < n; i++)
		memcpy(names[i], specs[i]->symbol, PEA_SYM_LEN);
	fill_attr(specs[0], o, id, &a);
	fill_fetches(specs[0], &a);
	memset(&fa, 0, sizeof(fa));
	fa.size = sizeof(fa);
	fa.flags = a.flags & (PEA_FPROBE_F_RETURN | PEA_FPROBE_F_CLOEXEC |
			      PEA_FPROBE_F_DESCENDANTS |
			      PEA_FPROBE_F_DESC_ONLY);
	fa.syms = (uintptr_t)names;
	fa.nr_syms = n;
	if (a.maxactive)
		fa.maxactive = (unsigned long long)a.maxactive * n >
			       PEA_FPROBE_MAXACTIVE_MAX ?
			       PEA_FPROBE_MAXACTIVE_MAX : a.maxactive * n;
	fa.id = id;
	fa.filter_tgid = a.filter_tgid;
	fa.filter_cpu = a.filter_cpu;
	fa.capture_arg = a.capture_arg;
	fa.capture_mode = a.capture_mode;
	fa.capture_len = a.capture_len;
	fa.capture_flags = a.capture_flags;
	fa.kstack_depth = a.kstack_depth;
	fa.ustack_depth = a.ustack_depth;
	fa.fetches = a.fetches;
	fa.nr_fetches = a.nr_fetches;
	fa.preds = a.preds;
	fa.nr_preds = a.nr_preds;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_FPROBE, &fa);
	err = errno;
	free(names);
	if (fd >= 0)
		return fd;
	if (err == EOPNOTSUPP || err == ENOTTY)
		return -err;
	if (err == E2BIG)
		snprintf(why, len, "%u functions are more than the module's max_fprobe_funcs (/sys/module/pea/parameters/)",
			 n);
	else
		snprintf(why, len, "the kernel refused the fprobe link: %s",
			 strerror(err));
	return -EXDEV;
}

/*
 * The function's types, when BTF has them (at +OFFSET the argument
 * registers are no longer the parameters: none). Without BTF the probe
 * prints and aggregates raw registers, as it always did; a parameter
 * named as a key then gets the reason (ktypes.c's message).
 */
/*
 * --filter: a predicate on fetch expressions (kfilter.c), in the kernel;
 * an expression it names that the probe does not print is fetched after
 * the printed ones. @bytes: what the printed ones take.
 */
static int kprobe_filter(const struct probe_spec *spec,
			 const struct probe_opts *o, unsigned int bytes)
{
	struct kprobe_priv *kp = spec->priv;
	struct kfilter_ctx c = {
		.sig = kp->scsig ? kp->scsig : kp->sig, .ret = spec->retprobe,
		.fetches = kp->fetches, .nfetches = kp->nfetches,
		.max = PROBE_MAX_PARAMS, .preds = kp->preds,
	};
	unsigned int i;
	char msg[512];
	int err;

	if (!kp->sig)
		return probe_usage(spec->text, "--filter: %s", kp->why);
	err = kfilter_compile(&c, o->filter, msg, sizeof(msg));
	for (i = kp->nfetches; i < c.nfetches; i++)
		bytes += (kfetch_bytes(&kp->fetches[i]) + 7) & ~7U;
	kp->nfetches = c.nfetches;	/* released with the others */
	if (err)
		return probe_usage(spec->text, "--filter: %s", msg);
	if (bytes > PEA_FETCH_DATA_MAX)
		return probe_usage(spec->text, "--filter: its fetches and the printed ones take more than %d bytes per event",
				   PEA_FETCH_DATA_MAX);
	kp->npreds = c.npreds;
	return 0;
}

/*
 * The fetch expressions given after the probe (a parameter's name, a
 * field behind it: kfetch.c), resolved against its BTF; the kernel
 * evaluates them at each hit and they print from the record.
 */
static int kprobe_params(const struct probe_spec *spec,
			 const struct probe_opts *o, struct trace_fmt *fmt)
{
	struct kprobe_priv *kp = spec->priv;
	unsigned int i, bytes = 0;
	char why[512];

	for (i = 0; i < kp->nfetches; i++)	/* a syscall's arguments */
		bytes += (kfetch_bytes(&kp->fetches[i]) + 7) & ~7U;
	for (i = 0; i < o->nparams; i++) {
		const char *expr = o->params[i];
		unsigned int n, j;

		if (!fmt->sig)
			return probe_usage(spec->text, "%s '%s': %s",
					   tool_is_ident(expr) ? "parameter" :
					   "fetch", expr, fmt->sig_why);
		if (kfetch_parse_n(kp->scsig ? kp->scsig : fmt->sig, expr,
				   spec->retprobe, &kp->fetches[kp->nfetches],
				   PROBE_MAX_PARAMS - kp->nfetches, &n, why,
				   sizeof(why)))
			return probe_usage(spec->text, "%s", why);
		for (j = 0; j < n; j++)
			bytes += (kfetch_bytes(&kp->fetches[kp->nfetches++]) +
				  7) & ~7U;
		if (bytes > PEA_FETCH_DATA_MAX)
			return probe_usage(spec->text, "the fetches up to '%s' take more than %d bytes per event (each rounded up to 8; str(EXPR,N) takes N)",
					   expr, PEA_FETCH_DATA_MAX);
	}
	fmt->fetches = kp->fetches;
	fmt->nfetches = kp->nfetches;
	return o->filter ? kprobe_filter(spec, o, bytes) : 0;
}

static int kprobe_prepare(struct probe_spec *spec, const struct probe_opts *o,
			  struct trace_fmt *fmt)
{
	struct kprobe_priv *kp = calloc(1, sizeof(*kp));

	if (!kp ||
	    (!spec->offset && ksig_load(spec->symbol, &kp->sig, kp->why,
					sizeof(kp->why)) == -ENOMEM)) {
		free(kp);
		tool_err("out of memory");
		return PEA_EXIT_ERR;
	}
	if (spec->offset)
		snprintf(kp->why, sizeof(kp->why),
			 "at +%llu the argument registers are not the parameters",
			 (unsigned long long)spec->offset);
	spec->priv = kp;
	fmt->sig = kp->sig;
	fmt->sig_why = kp->sig ? NULL : kp->why;
	if (PROBE_SPEC_ARG(spec, struct kprobe_arg)->syscall) {
		char why[512];
		int err = syscall_fetches(spec->text +
					  strlen(strncmp(spec->text, SYSENTER_PFX,
							 strlen(SYSENTER_PFX)) ?
						 SYSCALL_PFX : SYSENTER_PFX),
					  kp->sig, kp->fetches, &kp->nfetches,
					  why, sizeof(why));

		if (err == -ENOMEM) {
			tool_err("out of memory");
			return PEA_EXIT_ERR;
		}
		if (err)
			return probe_usage(spec->text, "%s%s%s", why,
					   kp->sig ? "" : ": ",
					   kp->sig ? "" : kp->why);
		if (kp->nfetches + o->nparams > PROBE_MAX_PARAMS)
			return probe_usage(spec->text, "its %u arguments and %u fetches are more than %d",
					   kp->nfetches, o->nparams,
					   PROBE_MAX_PARAMS);
		err = syscall_sig(spec->text + strlen(strncmp(spec->text,
							      SYSENTER_PFX,
							      strlen(SYSENTER_PFX)) ?
						      SYSCALL_PFX : SYSENTER_PFX),
				  kp->sig, &kp->scsig, why, sizeof(why));
		if (err == -ENOMEM) {
			tool_err("out of memory");
			return PEA_EXIT_ERR;
		}
		if (err)
			return probe_usage(spec->text, "%s", why);
	}
	return kprobe_params(spec, o, fmt);
}

static void kprobe_release(struct probe_spec *spec)
{
	struct kprobe_priv *kp = spec->priv;
	unsigned int i;

	if (kp) {
		for (i = 0; i < kp->nfetches; i++)
			kfetch_release(&kp->fetches[i]);
		ksig_free(kp->scsig);
		ksig_free(kp->sig);
	}
	free(kp);
	spec->priv = NULL;
}

static const char *const kprobe_prefixes[] = {
	KPROBE_PFX, KRETPROBE_PFX, SYSCALL_PFX, SYSENTER_PFX, NULL
};

const struct probe_kind kprobe_kind = {
	.prefixes = kprobe_prefixes,
	.parse = kprobe_parse,
	.prepare = kprobe_prepare,
	.attach = kprobe_attach,
	.attach_multi = kprobe_attach_multi,
	.release = kprobe_release,
	.opts = PO_KSTACK | PO_USTACK | PO_PARAMS | PO_FILTER,
	.decode = decode_probe_record,
	.args = true,
};
