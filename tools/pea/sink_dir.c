// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the directory sink of the CTF writer (pea trace --output DIR
 * --format ctf): DIR/metadata, and DIR/stream_CPU created with a CPU's
 * first packet, each packet appended as it comes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "trace_sink.h"

struct dir_stream {
	int cpu;
	int fd;
};

struct dir_sink {
	struct trace_sink s;
	char *dir;
	struct dir_stream *st;	/* in order of their first packet */
	int nst;
};

static int dir_fail(struct dir_sink *d, int err, const char *what)
{
	if (!d->s.msg[0])
		snprintf(d->s.msg, sizeof(d->s.msg), "%s %s: %s", what,
			 d->dir, strerror(-err));
	return err;
}

static int write_all(int fd, const void *p, size_t n)
{
	const unsigned char *q = p;

	while (n) {
		ssize_t k = write(fd, q, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		q += k;
		n -= k;
	}
	return 0;
}

static int dir_metadata(struct trace_sink *s, const char *text, size_t len)
{
	struct dir_sink *d = (struct dir_sink *)s;
	char path[4096];
	int fd, err;

	snprintf(path, sizeof(path), "%s/metadata", d->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return dir_fail(d, -errno, "cannot write the metadata of");
	err = write_all(fd, text, len);
	if (close(fd) && !err)
		err = -errno;
	return err ? dir_fail(d, err, "cannot write the metadata of") : 0;
}

/* The file of CPU @cpu's stream, opened with its first packet. */
static int dir_stream_fd(struct dir_sink *d, int cpu)
{
	struct dir_stream *st;
	char path[4096];
	int i;

	for (i = 0; i < d->nst; i++)
		if (d->st[i].cpu == cpu)
			return d->st[i].fd;
	st = realloc(d->st, (d->nst + 1) * sizeof(*st));
	if (!st)
		return -ENOMEM;
	d->st = st;
	snprintf(path, sizeof(path), "%s/stream_%d", d->dir, cpu);
	st[d->nst].cpu = cpu;
	st[d->nst].fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			     0644);
	if (st[d->nst].fd < 0)
		return -errno;
	return st[d->nst++].fd;
}

static int dir_packet(struct trace_sink *s, const struct ctf_packet *p)
{
	struct dir_sink *d = (struct dir_sink *)s;
	int fd = dir_stream_fd(d, p->cpu);
	int err;

	if (fd < 0)
		return dir_fail(d, fd, "cannot write a stream file in");
	err = write_all(fd, p->head, p->head_len);
	if (!err && p->body_len)
		err = write_all(fd, p->body, p->body_len);
	return err ? dir_fail(d, err, "cannot write a stream file in") : 0;
}

static int dir_close(struct trace_sink *s, char *msg, size_t msg_len)
{
	struct dir_sink *d = (struct dir_sink *)s;
	int i, err = 0;

	for (i = 0; i < d->nst; i++)
		if (close(d->st[i].fd) && !err)
			err = dir_fail(d, -errno, "cannot write a stream file in");
	if (msg_len)
		snprintf(msg, msg_len, "%s", d->s.msg);
	free(d->st);
	free(d->dir);
	free(d);
	return err;
}

static const struct trace_sink_ops dir_ops = {
	.metadata = dir_metadata,
	.packet = dir_packet,
	.close = dir_close,
};

struct trace_sink *sink_dir_open(const char *dir, char *err, size_t err_len)
{
	struct dir_sink *d = calloc(1, sizeof(*d));
	struct stat st;

	if (d)
		d->dir = strdup(dir);
	if (!d || !d->dir) {
		snprintf(err, err_len, "out of memory");
		free(d);
		return NULL;
	}
	d->s.ops = &dir_ops;
	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, err_len, "cannot create the directory %s: %s",
			 dir, strerror(errno));
		goto fail;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "%s is not a directory", dir);
		goto fail;
	}
	return &d->s;
fail:
	free(d->dir);
	free(d);
	return NULL;
}
