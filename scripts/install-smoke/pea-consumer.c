// SPDX-License-Identifier: GPL-2.0
/*
 * make check-install: a consumer built INSIDE the clean bookworm root
 * against the installed libpea-dev, with
 *   cc -o pea-consumer pea-consumer.c $(pkg-config --cflags --libs pea)
 * It attaches a kprobe on do_sys_openat2 filtered to itself, opens one
 * path, and reads exactly one record through pea_buffer__poll(). Exit 0
 * only if every value is the expected one; the reasons go to stdout as
 * "# " lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <pea/libpea.h>

#define MARKER "/tmp/pea-consumer-marker"

struct seen {
	int records;
	__u32 size;
	struct pea_probe_record rec;
	char str[64];
	__u64 lost;
};

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct seen *s = ctx;
	const struct pea_probe_record *r = data;

	(void)cpu;
	if (s->records++ || size < sizeof(*r))
		return;
	s->size = size;
	memcpy(&s->rec, r, sizeof(*r));
	if (r->capture_len < sizeof(s->str))
		memcpy(s->str, r + 1, r->capture_len);
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)cpu;
	((struct seen *)ctx)->lost += cnt;
}

static int fail(const char *what, long long got, long long want)
{
	printf("# %s: got %lld, want %lld\n", what, got, want);
	return 1;
}

int main(void)
{
	struct pea_probe_attr attr = { .size = sizeof(attr) };
	struct seen s = { 0 };
	char path[sizeof(MARKER)];
	struct pea_buffer *pb;
	int map_fd, link_fd, fd, i, bad = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	__u32 want_size;

	map_fd = pea_map_create(NULL, ncpu, 0);
	if (map_fd < 0)
		return fail("pea_map_create", map_fd, 0);
	pb = pea_buffer__new(map_fd, 8, on_sample, on_lost, &s, NULL);
	if (!pb)
		return fail("pea_buffer__new errno", errno, 0);

	strcpy(attr.symbol, "do_sys_openat2");
	attr.filter_tgid = getpid();
	attr.filter_cpu = -1;
	attr.capture_arg = 1;
	attr.capture_mode = PEA_CAPTURE_STR;
	attr.capture_len = 63;
	attr.capture_flags = PEA_CAPTURE_USER;
	link_fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &attr);
	if (link_fd < 0)
		return fail("PEA_MAP_IOC_ATTACH_PROBE errno", errno, 0);

	/*
	 * The path from a stack copy: the probe reads it with the non-faulting
	 * user copy, which finds a not yet touched .rodata page absent.
	 */
	strcpy(path, MARKER);
	fd = open(path, O_RDONLY);	/* ENOENT: the call is what counts */
	if (fd >= 0)
		close(fd);
	close(link_fd);

	for (i = 0; i < 100 && !s.records; i++)
		pea_buffer__poll(pb, 100);
	pea_buffer__consume(pb);
	pea_buffer__free(pb);
	close(map_fd);

	/* The raw size as Linux records it: 8-byte aligned with its u32. */
	want_size = ((4 + sizeof(s.rec) + strlen(MARKER) + 7) & ~7U) - 4;
	bad |= s.records != 1 ? fail("records", s.records, 1) : 0;
	bad |= s.lost ? fail("lost", s.lost, 0) : 0;
	bad |= s.size != want_size ? fail("raw size", s.size, want_size) : 0;
	bad |= s.rec.tgid != (__u32)getpid() ? fail("tgid", s.rec.tgid, getpid()) : 0;
	bad |= s.rec.pid != (__u32)getpid() ? fail("pid", s.rec.pid, getpid()) : 0;
	bad |= s.rec.capture_len != strlen(MARKER) ?
		fail("capture_len", s.rec.capture_len, strlen(MARKER)) : 0;
	bad |= s.rec.flags != PEA_REC_F_CAPTURE ?
		fail("flags", s.rec.flags, PEA_REC_F_CAPTURE) : 0;
	if (strcmp(s.str, MARKER)) {
		printf("# capture: got '%s', want '%s'\n", s.str, MARKER);
		bad = 1;
	}
	if (strncmp(s.rec.comm, "pea-consumer", sizeof(s.rec.comm))) {
		printf("# comm: got '%.16s', want 'pea-consumer'\n", s.rec.comm);
		bad = 1;
	}
	printf("# record: size %u, pid %u, comm %.16s, capture '%s'\n",
	       s.size, s.rec.pid, s.rec.comm, s.str);
	return bad;
}
