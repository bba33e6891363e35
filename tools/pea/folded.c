// SPDX-License-Identifier: GPL-2.0
/*
 * pea tool: folded stacks, written and read (stacks.h).
 *
 * One line a stack: its frames root first, joined by ';', then one space
 * and the weight in decimal, as flamegraph.pl, speedscope, inferno and
 * Perfetto read it. The weight is the line's last field, so names may hold
 * spaces. The format has no escapes: a ';' in a name would split it, so
 * it is written as ':', and a line break in a name as a space. Kernel and
 * module frames end in flamegraph.pl's "_[k]"; the first frame of a line
 * is the process unless it is so marked.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "stacks.h"

#define KMARK		"_[k]"
#define KMARK_LEN	4

static void put_name(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == ';')
			fputc(':', out);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
}

int pea_stacks_write_folded(const struct pea_stack_set *set, FILE *out)
{
	struct pea_stack_view *v;
	unsigned int n, i, j;

	v = pea_stacks_by_frames(set, &n);
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		for (j = 0; j < v[i].nframes; j++) {
			if (j)
				fputc(';', out);
			put_name(out, v[i].frames[j]);
			if (v[i].kinds[j] == PEA_FRAME_KERNEL ||
			    v[i].kinds[j] == PEA_FRAME_MODULE)
				fputs(KMARK, out);
		}
		fprintf(out, " %" PRIu64 "\n", v[i].weight);
	}
	free(v);
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}

/* "func [module]": a kernel name naming its module. */
static int names_module(const char *s, size_t len)
{
	const char *open;

	if (len < 4 || s[len - 1] != ']')
		return 0;
	open = memchr(s, '[', len);
	while (open) {
		const char *next = memchr(open + 1, '[', len - (open + 1 - s));

		if (!next)
			break;
		open = next;
	}
	return open && open > s && open[-1] == ' ' && open + 2 < s + len;
}

static enum pea_frame_kind frame_kind(char *f, unsigned int idx)
{
	size_t len = strlen(f);

	if (len > KMARK_LEN && !strcmp(f + len - KMARK_LEN, KMARK)) {
		len -= KMARK_LEN;
		f[len] = '\0';
		return names_module(f, len) ? PEA_FRAME_MODULE :
					      PEA_FRAME_KERNEL;
	}
	return idx ? PEA_FRAME_USER : PEA_FRAME_PROCESS;
}

/*
 * Parses one line (its end of line removed) into @set; returns 0 or
 * -EINVAL with the reason in @why, or another -errno.
 */
static int parse_line(struct pea_stack_set *set, char *line, const char **why)
{
	const char *frames[PEA_STACKS_MAX_FRAMES];
	enum pea_frame_kind kinds[PEA_STACKS_MAX_FRAMES];
	char *end = line + strlen(line), *num = end, *p;
	uint64_t w = 0;
	unsigned int n = 0;

	while (num > line && num[-1] >= '0' && num[-1] <= '9')
		num--;
	if (num == end) {
		*why = "no weight at the end of the line";
		return -EINVAL;
	}
	if (num > line && num[-1] == '.') {
		*why = "fractional weights are not supported";
		return -EINVAL;
	}
	if (num == line || (num[-1] != ' ' && num[-1] != '\t')) {
		*why = "the weight is not separated from the stack by a space";
		return -EINVAL;
	}
	for (p = num; p < end; p++) {
		unsigned int d = *p - '0';

		if (w > (UINT64_MAX - d) / 10) {
			*why = "the weight does not fit in 64 bits";
			return -EINVAL;
		}
		w = w * 10 + d;
	}
	num[-1] = '\0';		/* the separator: one blank, as flamegraph.pl */
	if (!*line) {
		*why = "no frames before the weight";
		return -EINVAL;
	}
	for (p = line; ; ) {
		char *semi = strchr(p, ';');

		if (semi)
			*semi = '\0';
		if (!*p) {
			*why = "an empty frame";
			return -EINVAL;
		}
		if (n == PEA_STACKS_MAX_FRAMES) {
			*why = "more frames than PEA_STACKS_MAX_FRAMES (512)";
			return -EINVAL;
		}
		kinds[n] = frame_kind(p, n);
		frames[n++] = p;
		if (!semi)
			break;
		p = semi + 1;
	}
	switch (pea_stacks_add(set, frames, kinds, n, w)) {
	case 0:
		return 0;
	case -EOVERFLOW:
		*why = "the weights' sum does not fit in 64 bits";
		return -EINVAL;
	case -EINVAL:
		*why = "a frame the set refuses";
		return -EINVAL;
	default:
		return -ENOMEM;
	}
}

int pea_stacks_read_folded(struct pea_stack_set *set, FILE *in,
			   char *err, size_t errlen)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	ssize_t len;
	int ret = 0;

	while ((len = getline(&line, &cap, in)) >= 0) {
		const char *why = NULL;

		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		if (strlen(line) != (size_t)len) {
			why = "a NUL byte in the line";
			ret = -EINVAL;
		} else {
			ret = parse_line(set, line, &why);
		}
		if (ret) {
			snprintf(err, errlen, "line %lu: %s", lineno,
				 ret == -EINVAL ? why : strerror(-ret));
			break;
		}
	}
	if (!ret && ferror(in)) {
		ret = -EIO;
		snprintf(err, errlen, "line %lu: %s", lineno + 1,
			 strerror(EIO));
	}
	free(line);
	return ret;
}
