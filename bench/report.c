// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench: figures, their statistics, the table and the JSON file.
 *
 * Every figure is a set of repeated measurements of one quantity for one
 * channel at one payload size, reported as median, min and max. The table
 * puts pea, perf and ring side by side with pea's ratio to each (a ratio
 * below 1 is better for costs, above 1 for rates); other channels (the
 * memcpy floor, the baselines) follow in the last column. Figures with
 * an "ordered" channel (ordered.c) go to a table of their own: ordered
 * beside each of its baselines, with the ratio ordered/baseline. Those of
 * icount.c (named "ic-...") are printed by icount_print().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#define MAX_FIGS	512

struct fig {
	char name[56];
	char channel[24];
	unsigned int size;
	double med, min, max;
	int n;
	char unit[16];
};

static struct fig figs[MAX_FIGS];
static int nfigs;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(const double *v, int n)
{
	double *s;
	double m;

	if (n <= 0)
		return 0;
	s = malloc(n * sizeof(*s));
	if (!s)
		die("out of memory");
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

void fig_add(const char *name, const char *channel, unsigned int size,
	     const double *v, int n, const char *unit)
{
	struct fig *f;
	int i;

	if (nfigs == MAX_FIGS || n <= 0)
		return;
	f = &figs[nfigs++];
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->channel, sizeof(f->channel), "%s", channel);
	snprintf(f->unit, sizeof(f->unit), "%s", unit);
	f->size = size;
	f->n = n;
	f->med = median(v, n);
	f->min = f->max = v[0];
	for (i = 1; i < n; i++) {
		if (v[i] < f->min)
			f->min = v[i];
		if (v[i] > f->max)
			f->max = v[i];
	}
}

void fig_add_one(const char *name, const char *channel, unsigned int size,
		 double v, const char *unit)
{
	fig_add(name, channel, size, &v, 1, unit);
}

static const struct fig *fig_find(const char *name, unsigned int size,
				  const char *channel)
{
	int i;

	for (i = 0; i < nfigs; i++)
		if (!strcmp(figs[i].name, name) && figs[i].size == size &&
		    !strcmp(figs[i].channel, channel))
			return &figs[i];
	return NULL;
}

static void fmt_val(char *buf, size_t len, double v)
{
	if (v == 0)
		snprintf(buf, len, "0");
	else if (v >= 100000)
		snprintf(buf, len, "%.3g", v);
	else if (v >= 100)
		snprintf(buf, len, "%.0f", v);
	else if (v >= 10)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

static void print_cell(const struct fig *f)
{
	char m[24], lo[24], hi[24], cell[80];

	if (!f) {
		printf(" %-24s|", "-");
		return;
	}
	fmt_val(m, sizeof(m), f->med);
	if (f->n == 1) {
		printf(" %-24s|", m);
		return;
	}
	fmt_val(lo, sizeof(lo), f->min);
	fmt_val(hi, sizeof(hi), f->max);
	snprintf(cell, sizeof(cell), "%s [%s-%s]", m, lo, hi);
	printf(" %-24s|", cell);
}

static void print_ratio(const struct fig *a, const struct fig *b)
{
	if (a && b && b->med != 0)
		printf(" %7.2f |", a->med / b->med);
	else
		printf(" %7s |", "-");
}

static bool is_main(const char *ch)
{
	return !strcmp(ch, "pea") || !strcmp(ch, "perf") || !strcmp(ch, "ring");
}

static void print_table(void)
{
	int i, j;

	for (i = 0; i < nfigs; i++)
		if (strncmp(figs[i].name, "ic-", 3) &&
		    strncmp(figs[i].name, "agg ", 4) &&
		    strncmp(figs[i].name, "fprobe ", 7))
			break;
	if (i == nfigs)
		return;		/* only icount's, agg's or fprobe's figures */
	printf("%-40s %5s %-6s| %-24s| %-24s| %-24s| %7s | %7s | %s\n",
	       "figure", "size", "unit", "pea med [min-max]",
	       "perf med [min-max]", "ring med [min-max]", "pea/prf",
	       "pea/rng", "other channels (median)");
	for (i = 0; i < nfigs; i++) {
		const struct fig *f = &figs[i], *p, *q, *r;
		bool first = true;

		/* One row per (name, size): print it at its first figure. */
		for (j = 0; j < i; j++)
			if (!strcmp(figs[j].name, f->name) &&
			    figs[j].size == f->size)
				break;
		if (j < i || fig_find(f->name, f->size, "ordered"))
			continue;
		/* bench_icount()'s, _agg()'s, _fprobe()'s: tables of their own. */
		if (!strncmp(f->name, "ic-", 3) || !strncmp(f->name, "agg ", 4) ||
		    !strncmp(f->name, "fprobe ", 7))
			continue;
		p = fig_find(f->name, f->size, "pea");
		q = fig_find(f->name, f->size, "perf");
		r = fig_find(f->name, f->size, "ring");
		printf("%-40s %5u %-6s|", f->name, f->size, f->unit);
		print_cell(p);
		print_cell(q);
		print_cell(r);
		print_ratio(p, q);
		print_ratio(p, r);
		for (j = i; j < nfigs; j++) {
			char m[24];

			if (strcmp(figs[j].name, f->name) ||
			    figs[j].size != f->size || is_main(figs[j].channel))
				continue;
			fmt_val(m, sizeof(m), figs[j].med);
			printf("%s%s=%s", first ? " " : ", ", figs[j].channel, m);
			first = false;
		}
		printf("\n");
	}
}

/*
 * In-kernel aggregation per hit (agg.c): pea's table against the BPF
 * program doing the same with BPF maps, and against writing a record.
 */
static void print_agg_table(void)
{
	bool header = false;
	int i;

	for (i = 0; i < nfigs; i++) {
		const struct fig *f = &figs[i], *b, *r;

		if (strncmp(f->name, "agg ", 4) || strcmp(f->channel, "pea"))
			continue;
		if (!header) {
			printf("\n%-40s %-6s| %-24s| %-24s| %-24s| %7s | %7s\n",
			       "figure (per hit, above no probe)", "unit",
			       "pea table med [min-max]",
			       "BPF map med [min-max]", "pea record med [min-max]",
			       "pea/bpf", "pea/rec");
			header = true;
		}
		b = fig_find(f->name, f->size, "bpf");
		r = fig_find(f->name, f->size, "record");
		printf("%-40s %-6s|", f->name, f->unit);
		print_cell(f);
		print_cell(b);
		print_cell(r);
		print_ratio(f, b);
		print_ratio(f, r);
		printf("\n");
	}
}

/* One fprobe link against N kprobes: kprobes/fprobe per row. */
static void print_fprobe_table(void)
{
	bool header = false;
	int i, j;

	for (i = 0; i < nfigs; i++) {
		const struct fig *f = &figs[i], *fp, *kp;

		if (strncmp(f->name, "fprobe ", 7))
			continue;
		for (j = 0; j < i; j++)
			if (!strcmp(figs[j].name, f->name))
				break;
		if (j < i)
			continue;	/* its row is printed */
		if (!header) {
			printf("\n%-40s %-6s| %-24s| %-24s| %7s\n",
			       "figure (one fprobe vs N kprobes)", "unit",
			       "fprobe med [min-max]", "kprobes med [min-max]",
			       "kp/fp");
			header = true;
		}
		fp = fig_find(f->name, f->size, "fprobe");
		kp = fig_find(f->name, f->size, "kprobes");
		printf("%-40s %-6s|", f->name, f->unit);
		print_cell(fp);
		print_cell(kp);
		print_ratio(kp, fp);
		printf("\n");
	}
}

/* Ordered delivery: "ordered" against each other channel of its row. */
static void print_ordered_table(void)
{
	bool header = false;
	int i, j;

	for (i = 0; i < nfigs; i++) {
		const struct fig *f = &figs[i], *o;

		if (strcmp(f->channel, "ordered") || !strncmp(f->name, "ic-", 3))
			continue;
		if (!header) {
			printf("\n%-40s %5s %-7s| %-24s| %s\n", "figure (ordered)",
			       "size", "unit", "ordered med [min-max]",
			       "baseline med [min-max] (ordered/baseline)");
			header = true;
		}
		o = f;
		printf("%-40s %5u %-7s|", f->name, f->size, f->unit);
		print_cell(o);
		for (j = 0; j < nfigs; j++) {
			const struct fig *b = &figs[j];

			if (strcmp(b->name, f->name) || b->size != f->size ||
			    !strcmp(b->channel, "ordered"))
				continue;
			printf(" %s", b->channel);
			print_cell(b);
			if (b->med != 0)
				printf(" (%.2f)", o->med / b->med);
		}
		printf("\n");
	}
}

static void write_json(FILE *out)
{
	int i;

	fprintf(out, "[\n");
	for (i = 0; i < nfigs; i++) {
		const struct fig *f = &figs[i];

		fprintf(out, "  {\"name\": \"%s\", \"channel\": \"%s\", "
			"\"payload_size\": %u, \"median\": %.6g, \"min\": %.6g, "
			"\"max\": %.6g, \"runs\": %d, \"unit\": \"%s\"}%s\n",
			f->name, f->channel, f->size, f->med, f->min, f->max,
			f->n, f->unit, i + 1 < nfigs ? "," : "");
	}
	fprintf(out, "]\n");
}

/**
 * report_print() - print the table and the JSON, and write the JSON file
 * @json_path: where to write the JSON (in the guest)
 * @title:     a line printed above the table
 *
 * The results channel carries the table between "# --- bench table
 * begin/end ---" and the JSON between "# --- bench json begin/end ---",
 * for scripts/bench.sh to cut out.
 */
void report_print(const char *json_path, const char *title)
{
	FILE *f;

	printf("# --- bench table begin ---\n");
	printf("%s\n", title);
	print_table();
	print_ordered_table();
	print_agg_table();
	print_fprobe_table();
	icount_print();
	printf("# --- bench table end ---\n");
	printf("# --- bench json begin ---\n");
	write_json(stdout);
	printf("# --- bench json end ---\n");
	fflush(stdout);
	f = fopen(json_path, "w");
	if (f) {
		write_json(f);
		fclose(f);
	}
}
