// SPDX-License-Identifier: GPL-2.0
/*
 * pea tool: a set of stacks with weights, merged by identical frame lists
 * (stacks.h).
 *
 * Frame names are interned: each distinct (name, kind) is stored once, so
 * a stack is an array of pointers to interned frames, and two stacks are
 * the same when their arrays are. Both tables are open-addressing hash
 * tables keyed by an FNV-1a hash of the text (never of a pointer), doubled
 * when three quarters full. Outputs are ordered by the frames' text, so
 * they do not depend on the hashes or on the order of the adds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "stacks.h"

struct frame {
	uint64_t hash;
	enum pea_frame_kind kind;
	char name[];
};

struct stack {
	uint64_t hash;
	uint64_t weight;
	unsigned int n;
	const char **names;		/* the interned frames' names */
	enum pea_frame_kind *kinds;
};

struct pea_stack_set {
	struct frame **frames;		/* NULL: a free slot */
	size_t frames_cap, nr_frames;
	struct stack **stacks;		/* NULL: a free slot */
	size_t stacks_cap;
	unsigned int nr_stacks;
	uint64_t total;
};

#define FNV_OFFSET	0xcbf29ce484222325ULL
#define FNV_PRIME	0x100000001b3ULL

static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--) {
		h ^= *c++;
		h *= FNV_PRIME;
	}
	return h;
}

static uint64_t frame_hash(const char *name, enum pea_frame_kind kind)
{
	unsigned char k = (unsigned char)kind;

	return fnv(fnv(FNV_OFFSET, &k, 1), name, strlen(name));
}

struct pea_stack_set *pea_stacks_new(void)
{
	struct pea_stack_set *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->frames_cap = 256;
	set->stacks_cap = 256;
	set->frames = calloc(set->frames_cap, sizeof(*set->frames));
	set->stacks = calloc(set->stacks_cap, sizeof(*set->stacks));
	if (!set->frames || !set->stacks) {
		free(set->frames);
		free(set->stacks);
		free(set);
		return NULL;
	}
	return set;
}

void pea_stacks_free(struct pea_stack_set *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->stacks_cap; i++) {
		if (set->stacks[i]) {
			free(set->stacks[i]->names);
			free(set->stacks[i]->kinds);
			free(set->stacks[i]);
		}
	}
	for (i = 0; i < set->frames_cap; i++)
		free(set->frames[i]);
	free(set->stacks);
	free(set->frames);
	free(set);
}

/* Doubles an open-addressing table of pointers to structs starting with a hash. */
static int grow(void ***tab, size_t *cap)
{
	size_t ncap = *cap * 2, i, j;
	void **nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < *cap; i++) {
		void *e = (*tab)[i];

		if (!e)
			continue;
		j = *(uint64_t *)e & (ncap - 1);
		while (nt[j])
			j = (j + 1) & (ncap - 1);
		nt[j] = e;
	}
	free(*tab);
	*tab = nt;
	*cap = ncap;
	return 0;
}

/* The interned copy of (@name, @kind), added if new; NULL: no memory. */
static const struct frame *intern(struct pea_stack_set *set, const char *name,
				  enum pea_frame_kind kind)
{
	uint64_t h = frame_hash(name, kind);
	size_t j, len;
	struct frame *f;

	if ((set->nr_frames + 1) * 4 > set->frames_cap * 3 &&
	    grow((void ***)&set->frames, &set->frames_cap))
		return NULL;
	j = h & (set->frames_cap - 1);
	while ((f = set->frames[j])) {
		if (f->hash == h && f->kind == kind && !strcmp(f->name, name))
			return f;
		j = (j + 1) & (set->frames_cap - 1);
	}
	len = strlen(name);
	f = malloc(sizeof(*f) + len + 1);
	if (!f)
		return NULL;
	f->hash = h;
	f->kind = kind;
	memcpy(f->name, name, len + 1);
	set->frames[j] = f;
	set->nr_frames++;
	return f;
}

static int valid_kind(enum pea_frame_kind k)
{
	return k == PEA_FRAME_PROCESS || k == PEA_FRAME_USER ||
	       k == PEA_FRAME_KERNEL || k == PEA_FRAME_MODULE;
}

int pea_stacks_add(struct pea_stack_set *set, const char *const *frames,
		   const enum pea_frame_kind *kinds, unsigned int n,
		   uint64_t weight)
{
	const char *names[PEA_STACKS_MAX_FRAMES];
	uint64_t h = FNV_OFFSET;
	struct stack *s;
	unsigned int i;
	size_t j;

	if (!n || n > PEA_STACKS_MAX_FRAMES)
		return -EINVAL;
	if (weight > UINT64_MAX - set->total)
		return -EOVERFLOW;
	for (i = 0; i < n; i++) {
		const struct frame *f;

		if (!frames[i] || !frames[i][0] || !valid_kind(kinds[i]))
			return -EINVAL;
		f = intern(set, frames[i], kinds[i]);
		if (!f)
			return -ENOMEM;
		names[i] = f->name;
		h = fnv(h, &f->hash, sizeof(f->hash));
	}
	if ((set->nr_stacks + 1ULL) * 4 > set->stacks_cap * 3 &&
	    grow((void ***)&set->stacks, &set->stacks_cap))
		return -ENOMEM;
	j = h & (set->stacks_cap - 1);
	while ((s = set->stacks[j])) {
		/* interned: equal frames are equal pointers */
		if (s->hash == h && s->n == n &&
		    !memcmp(s->names, names, n * sizeof(*names)) &&
		    !memcmp(s->kinds, kinds, n * sizeof(*kinds))) {
			s->weight += weight;
			set->total += weight;
			return 0;
		}
		j = (j + 1) & (set->stacks_cap - 1);
	}
	if (set->nr_stacks == UINT32_MAX)
		return -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->names = malloc(n * sizeof(*s->names));
	s->kinds = malloc(n * sizeof(*s->kinds));
	if (!s->names || !s->kinds) {
		free(s->names);
		free(s->kinds);
		free(s);
		return -ENOMEM;
	}
	memcpy(s->names, names, n * sizeof(*names));
	memcpy(s->kinds, kinds, n * sizeof(*kinds));
	s->n = n;
	s->hash = h;
	s->weight = weight;
	set->stacks[j] = s;
	set->nr_stacks++;
	set->total += weight;
	return 0;
}

uint64_t pea_stacks_total(const struct pea_stack_set *set)
{
	return set->total;
}

unsigned int pea_stacks_count(const struct pea_stack_set *set)
{
	return set->nr_stacks;
}

static int view_cmp_frames(const struct pea_stack_view *a,
			   const struct pea_stack_view *b)
{
	unsigned int i, n = a->nframes < b->nframes ? a->nframes : b->nframes;
	int c;

	for (i = 0; i < n; i++) {
		if (a->frames[i] != b->frames[i]) {
			c = strcmp(a->frames[i], b->frames[i]);
			if (c)
				return c;
		}
		if (a->kinds[i] != b->kinds[i])
			return a->kinds[i] < b->kinds[i] ? -1 : 1;
	}
	if (a->nframes != b->nframes)
		return a->nframes < b->nframes ? -1 : 1;
	return 0;
}

static int cmp_frames(const void *pa, const void *pb)
{
	return view_cmp_frames(pa, pb);
}

static int cmp_weight(const void *pa, const void *pb)
{
	const struct pea_stack_view *a = pa, *b = pb;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return view_cmp_frames(a, b);
}

static struct pea_stack_view *views(const struct pea_stack_set *set,
				    unsigned int *n)
{
	struct pea_stack_view *v;
	unsigned int k = 0;
	size_t i;

	*n = 0;
	v = malloc((set->nr_stacks ? set->nr_stacks : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < set->stacks_cap; i++) {
		const struct stack *s = set->stacks[i];

		if (!s)
			continue;
		v[k].frames = s->names;
		v[k].kinds = s->kinds;
		v[k].nframes = s->n;
		v[k].weight = s->weight;
		k++;
	}
	*n = k;
	return v;
}

struct pea_stack_view *pea_stacks_sorted(const struct pea_stack_set *set,
					 unsigned int *n)
{
	struct pea_stack_view *v = views(set, n);

	if (v)
		qsort(v, *n, sizeof(*v), cmp_weight);
	return v;
}

struct pea_stack_view *pea_stacks_by_frames(const struct pea_stack_set *set,
					    unsigned int *n)
{
	struct pea_stack_view *v = views(set, n);

	if (v)
		qsort(v, *n, sizeof(*v), cmp_frames);
	return v;
}
