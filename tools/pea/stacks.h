/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea tool: a set of symbolised stacks with weights (samples, or
 * nanoseconds of blocked time), merged by identical frame lists, and its
 * two outputs: folded stacks (one line a stack, "root;...;leaf WEIGHT",
 * the text flamegraph.pl, speedscope, inferno and Perfetto import) and an
 * SVG flame graph a browser opens. `pea profile` and `pea trace --off-cpu`
 * fill a set; docs/flamegraphs.md describes both outputs.
 *
 * A frame's kind travels in the folded text as flamegraph.pl marks it:
 * kernel frames (a module's included, named "func [module]") end in
 * "_[k]", the process frame at the root is the first frame of a line,
 * user frames carry no mark. So a stack without a process frame whose
 * root is a user frame reads back with that frame as the process.
 */
#ifndef _PEA_STACKS_H
#define _PEA_STACKS_H

#include <stdint.h>
#include <stdio.h>

/**
 * enum pea_frame_kind - where a frame runs, for the colours and the marks
 * @PEA_FRAME_PROCESS: the root frame naming the process ("comm" or
 *                     "comm-pid"); at most one, first
 * @PEA_FRAME_USER:    a user-space function ("func" or "func+0x1f" or
 *                     "[lib.so+0x1234]" when it has no symbol)
 * @PEA_FRAME_KERNEL:  a kernel function of vmlinux
 * @PEA_FRAME_MODULE:  a kernel function of a module ("func [module]")
 */
enum pea_frame_kind {
	PEA_FRAME_PROCESS,
	PEA_FRAME_USER,
	PEA_FRAME_KERNEL,
	PEA_FRAME_MODULE,
};

struct pea_stack_set;

/**
 * struct pea_stack_view - one merged stack, as pea_stacks_sorted() gives it
 * @frames:  frame names, root first, @nframes of them
 * @kinds:   each frame's kind
 * @weight:  the summed weight
 */
struct pea_stack_view {
	const char *const *frames;
	const enum pea_frame_kind *kinds;
	unsigned int nframes;
	uint64_t weight;
};

struct pea_stack_set *pea_stacks_new(void);
void pea_stacks_free(struct pea_stack_set *set);

/*
 * Adds @weight to the stack @frames[0..n) (root first; the names are
 * copied; a frame is its name and its kind). Returns 0 or -ENOMEM /
 * -EINVAL (n == 0, more than PEA_STACKS_MAX_FRAMES frames, an empty name
 * or an unknown kind) / -EOVERFLOW (the set's total would pass 2^64 - 1).
 */
#define PEA_STACKS_MAX_FRAMES	512
int pea_stacks_add(struct pea_stack_set *set, const char *const *frames,
		   const enum pea_frame_kind *kinds, unsigned int n,
		   uint64_t weight);

uint64_t pea_stacks_total(const struct pea_stack_set *set);
unsigned int pea_stacks_count(const struct pea_stack_set *set);

/*
 * The merged stacks, heaviest first (ties: by frames, so the order is
 * stable); *n receives the count. The views live until the set changes
 * or is freed; the array is the caller's to free().
 */
struct pea_stack_view *pea_stacks_sorted(const struct pea_stack_set *set,
					 unsigned int *n);

/*
 * The same views ordered by their frames (names as strcmp() orders them,
 * then kinds; a stack before the stacks it is a prefix of), the order of
 * the folded text and of the flame graph's frames.
 */
struct pea_stack_view *pea_stacks_by_frames(const struct pea_stack_set *set,
					    unsigned int *n);

/*
 * Folded text, one line a stack, sorted by frames; a ';' in a name is
 * written as ':', a line break as a space (the format has no escapes).
 * Returns 0 or -errno.
 */
int pea_stacks_write_folded(const struct pea_stack_set *set, FILE *out);

/*
 * Reads folded text (its own or flamegraph.pl's) into @set; a line that
 * does not parse is an error naming its line number in @err (size
 * @errlen). Blank lines are skipped, equal stacks summed; weights are
 * decimal integers (fractional ones are refused). On an error the set
 * keeps the lines before it. Returns 0 or -EINVAL / -ENOMEM / -EIO.
 */
int pea_stacks_read_folded(struct pea_stack_set *set, FILE *in,
			   char *err, size_t errlen);

/*
 * An SVG flame graph of @set: frame widths proportional to weight, hover
 * titles with weight and share, click to zoom, a search box, colours by
 * kind. @title heads it; @unit names the weight ("samples", "ns").
 * Returns 0 or -errno.
 */
int pea_stacks_write_svg(const struct pea_stack_set *set, FILE *out,
			 const char *title, const char *unit);

#endif /* _PEA_STACKS_H */
