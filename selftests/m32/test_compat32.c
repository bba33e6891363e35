// SPDX-License-Identifier: GPL-2.0
/*
 * A 32-bit process (built with -m32) uses every pea fd kind: /dev/pea,
 * a map, an output event with its ring, a counter, a probe link and a
 * tracepoint link with a filter program. The
 * ioctls whose number carries a pointer size (PERF_EVENT_IOC_ID: 4 bytes
 * here) are translated as perf_compat_ioctl() translates them; every
 * struct has one layout for 32- and 64-bit callers.
 */
#include <sys/wait.h>
#include "../pea_test.h"

#define MAP "compat32"
#define PAYLOAD 20

int main(void)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW |
						     PERF_SAMPLE_TID);
	struct pea_event_open o = { .cpu = 0, .flags = PEA_FLAG_FD_CLOEXEC };
	struct pea_map_elem e = { 0 };
	struct pea_map_info mi;
	struct pea_event_stats st;
	struct pea_probe_attr pa;
	struct pea_tp_attr ta;
	struct pea_tp_pred terms[1];
	struct pea_pred prog[4];
	struct pea_link_info li;
	unsigned char payload[PAYLOAD], rec[65536];
	__u64 id = 0, vals[4], lost = 7;
	int map, ev, cnt, link, i;
	struct pt_ring r;
	void *p;

	PT_EQ(sizeof(void *), 4, "this is a 32-bit program");
	pt_pin(0);
	pt_setup(1);
	PT_EQ(_IOC_SIZE(PERF_EVENT_IOC_ID), 4,
	      "PERF_EVENT_IOC_ID carries a 4-byte size here");
	PT_EQ(ioctl(pt_dev(), PEA_IOC_VERSION, 0), PEA_ABI_VERSION,
	      "PEA_IOC_VERSION");

	map = pt_map_create(MAP, 1, 0);
	PT_OK(map >= 0, "map create (%d)", map);
	attr.read_format = PERF_FORMAT_ID;
	o.attr = (uintptr_t)&attr;
	ev = ioctl(pt_dev(), PEA_IOC_EVENT_OPEN, &o);
	PT_OK(ev >= 0, "event open (%d)", ev);
	if (map < 0 || ev < 0)
		pt_fatal("map/event");

	PT_EQ(pt_ioctl_errno(ev, PERF_EVENT_IOC_ID, &id), 0,
	      "event: PERF_EVENT_IOC_ID succeeds");
	PT_EQ(read(ev, vals, sizeof(vals)), 16, "event: read with FORMAT_ID");
	PT_OK(id && vals[1] == id, "event: IOC_ID %llu is the read id %llu",
	      (unsigned long long)id, (unsigned long long)vals[1]);

	PT_EQ(pt_map_update(map, 0, ev), 0, "map update");
	e.key = 0;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), 0, "map lookup");
	PT_OK(e.id == id && e.cpu == 0, "map lookup: the event's id and cpu");
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_INFO, &mi), 0, "map info");
	PT_OK(mi.max_entries == 1 && mi.nr_used == 1 && !strcmp(mi.name, MAP),
	      "map info: max_entries 1, 1 used, the name");

	PT_EQ(pt_ring_map(&r, ev, 1, PROT_READ | PROT_WRITE), 0, "ring mmap");
	memset(payload, 0x3c, sizeof(payload));
	PT_EQ(pt_output(MAP, 0, payload, PAYLOAD), 0, "output one record");
	PT_EQ(pt_ring_next(&r, rec), 40, "the record is 40 bytes");
	PT_OK(((__u32 *)rec)[2] == (__u32)getpid() &&
	      ((__u32 *)rec)[3] == (__u32)gettid() &&
	      !memcmp(rec + 20, payload, PAYLOAD),
	      "the record: pid, tid and payload");
	PT_EQ(pt_ioctl_errno(ev, PEA_EVENT_IOC_STATS, &st), 0, "event stats");
	PT_OK(st.records == 1 && st.bytes == 40 && st.data_pages == 1,
	      "event stats: 1 record, 40 bytes, 1 data page");
	PT_EQ(pt_ioctl_errno(ev, PEA_EVENT_IOC_TAKE_LOST, &lost), 0,
	      "event: PEA_EVENT_IOC_TAKE_LOST");
	PT_EQ(lost, 0, "event: nothing lost");
	PT_EQ(ioctl(ev, PERF_EVENT_IOC_PAUSE_OUTPUT, 1), 0, "event: pause");
	PT_EQ(pt_output(MAP, 0, payload, PAYLOAD), -ENOSPC,
	      "paused: output gives ENOSPC");
	PT_EQ(ioctl(ev, PERF_EVENT_IOC_PAUSE_OUTPUT, 0), 0, "event: resume");
	PT_EQ(ioctl(ev, PERF_EVENT_IOC_DISABLE, 0), 0, "event: disable");
	PT_EQ(ioctl(ev, PERF_EVENT_IOC_ENABLE, 0), 0, "event: enable");
	PT_EQ(pt_ioctl_errno(ev, _IOR('$', 7, __u16), &id), ENOTTY,
	      "event: an IOC_ID with a 2-byte size gives ENOTTY");

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.read_format = PERF_FORMAT_ID;
	cnt = ioctl(pt_dev(), PEA_IOC_EVENT_OPEN, &o);
	PT_OK(cnt >= 0, "counter open (%d)", cnt);
	id = 0;
	PT_EQ(pt_ioctl_errno(cnt, PERF_EVENT_IOC_ID, &id), 0,
	      "counter: PERF_EVENT_IOC_ID succeeds");
	PT_EQ(read(cnt, vals, sizeof(vals)), 16, "counter: read with FORMAT_ID");
	PT_OK(id && vals[1] == id, "counter: IOC_ID %llu is the read id %llu",
	      (unsigned long long)id, (unsigned long long)vals[1]);
	p = mmap(NULL, pt_page_size(), PROT_READ, MAP_SHARED, cnt, 0);
	PT_OK(p != MAP_FAILED, "counter: mmap of its page");

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.flags = PEA_PROBE_F_CLOEXEC;
	strcpy(pa.symbol, "ksys_mmap_pgoff");
	pa.filter_cpu = -1;
	pa.filter_tgid = getpid();
	link = ioctl(map, PEA_MAP_IOC_ATTACH_PROBE, &pa);
	PT_OK(link >= 0, "link: attach (%d)", link);
	PT_EQ(pt_ioctl_errno(link, PEA_LINK_IOC_INFO, &li), 0, "link: info");
	PT_OK(li.map_id == mi.id && !strcmp(li.symbol, "ksys_mmap_pgoff"),
	      "link info: the map id and the symbol");
	close(link);

	/*
	 * A tracepoint with a filter program: its user pointers are
	 * __aligned_u64, so one layout (864 bytes, with the fetches) and
	 * one ioctl number.
	 */
	PT_EQ(sizeof(ta), 864, "struct pea_tp_attr: 864 bytes here too");
	memset(&ta, 0, sizeof(ta));
	ta.size = sizeof(ta);
	ta.flags = PEA_TP_F_CLOEXEC;
	ta.filter_cpu = -1;
	ta.filter_tgid = getpid();
	/* Not a syscall event: Linux's skip a compat task's calls. */
	strcpy(ta.name, "sched:sched_process_fork");
	if (!pt_read_file("/sys/kernel/tracing/events/sched/sched_process_fork/id",
			  (char *)rec, 32))
		ta.event_id = atoi((char *)rec);
	/* common_pid == 1 || !(common_pid == 1): every call. */
	memset(terms, 0, sizeof(terms));
	terms[0].offset = 4;
	terms[0].size = 4;
	terms[0].kind = PEA_TP_FIELD_SINT;
	terms[0].op = PEA_TP_OP_EQ;
	terms[0].value = 1;
	memset(prog, 0, sizeof(prog));
	prog[0].op = PEA_PRED_CMP;
	prog[1].op = PEA_PRED_CMP;
	prog[2].op = PEA_PRED_NOT;
	prog[3].op = PEA_PRED_OR;
	ta.terms = (uintptr_t)terms;
	ta.nr_terms = 1;
	ta.prog = (uintptr_t)prog;
	ta.nr_prog = 4;
	link = ioctl(map, PEA_MAP_IOC_ATTACH_TP, &ta);
	PT_OK(link >= 0, "tracepoint link with a program: attach (%d)",
	      link < 0 ? -errno : link);
	for (i = 0; i < 2; i++) {
		pid_t c = fork();

		if (!c)
			_exit(0);
		waitpid(c, NULL, 0);
	}
	memset(&li, 0, sizeof(li));
	PT_EQ(pt_ioctl_errno(link, PEA_LINK_IOC_INFO, &li), 0,
	      "tracepoint link: info");
	PT_OK(li.written == 2 && li.filtered == 0,
	      "tracepoint link: 2 written, 0 filtered (%llu, %llu)",
	      (unsigned long long)li.written,
	      (unsigned long long)li.filtered);
	close(link);
	pt_rings_drain(&r, 1);
	munmap(p, pt_page_size());
	close(cnt);
	pt_ring_unmap(&r);
	close(ev);
	close(map);
	return pt_done();
}
