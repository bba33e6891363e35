// SPDX-License-Identifier: GPL-2.0
/*
 * `pea stat` against rings the test fills itself through the test module:
 * for a map with a libpea buffer, the numbers of the filled ring (records,
 * bytes, unread bytes, lost, pending, wake-ups, size, event id) in JSON and
 * in the table, before and after the test reads the ring; every other CPU's
 * ring at zero; an event in a slot but not mapped (no ring, its drops
 * counted); a map with no filled slot.
 */
#include "pt_tool.h"
#include "libpea.h"

#define MAP		"tool_stat"
#define MAP_UNMAPPED	"tool_stat_um"
#define MAP_EMPTY	"tool_stat_empty"
#define PAYLOAD		20	/* record: 8 + round_up(4 + 20, 8) = 32 */
#define REC		32
#define PAGES		2

static char out[65536], err[65536];
static int ncpu;
static __u64 delivered, lost_cb;

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	(void)ctx;
	(void)cpu;
	(void)data;
	(void)size;
	delivered++;
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)ctx;
	(void)cpu;
	lost_cb += cnt;
}

static int stat_json(const char *map)
{
	return pt_run((char *[]){ PT_PEA, "stat", "--json", "--map",
				  (char *)map, NULL },
		      out, sizeof(out), err, sizeof(err), NULL, NULL);
}

/* The JSON line of @map's slot @slot (in a copy), or NULL. */
static const char *ring_line(const char *map, long long slot)
{
	static char copy[65536], l[4096];
	char *s, *save = NULL;

	snprintf(copy, sizeof(copy), "%s", out);
	for (s = strtok_r(copy, "\n", &save); s; s = strtok_r(NULL, "\n", &save))
		if (pt_json_streq(s, "type", "ring") &&
		    pt_json_streq(s, "name", map) &&
		    pt_json_num(s, "slot", -1) == slot) {
			snprintf(l, sizeof(l), "%.4000s", s);
			return l;
		}
	return NULL;
}

static int count_lines(const char *type)
{
	char copy[65536], *s, *save = NULL;
	int n = 0;

	snprintf(copy, sizeof(copy), "%s", out);
	for (s = strtok_r(copy, "\n", &save); s; s = strtok_r(NULL, "\n", &save))
		n += pt_json_streq(s, "type", type);
	return n;
}

/* The table row of @map's slot @slot, split into columns. */
static int table_row(const char *map, int slot, char cols[][32], int max)
{
	char copy[65536], *s, *save = NULL, *tok, *tsave;
	char slotstr[16];
	int n;

	snprintf(slotstr, sizeof(slotstr), "%d", slot);
	snprintf(copy, sizeof(copy), "%s", out);
	for (s = strtok_r(copy, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
		n = 0;
		for (tok = strtok_r(s, " ", &tsave); tok && n < max;
		     tok = strtok_r(NULL, " ", &tsave))
			snprintf(cols[n++], 32, "%s", tok);
		if (n >= 3 && !strcmp(cols[1], map) && !strcmp(cols[2], slotstr))
			return n;
	}
	return 0;
}

static void test_filled(void)
{
	unsigned char payload[PAYLOAD] = { 1, 2, 3 };
	struct pea_map_info info;
	struct pea_buffer *pb;
	__u64 ev_id = 0;
	const char *l;
	char cols[16][32], fill[16];
	int map, idx, cpu, rc, i, zero = 1, n;
	__u32 ok = 0;
	size_t size = PAGES * pt_page_size();

	map = pea_map_create(MAP, ncpu, 0);
	if (map < 0)
		pt_fatal("pea_map_create");
	pea_map_get_info(map, &info);
	pb = pea_buffer__new(map, PAGES, on_sample, on_lost, NULL, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new");
	idx = pea_buffer__buffer_cnt(pb) - 1;
	cpu = pea_buffer__buffer_cpu(pb, idx);
	ioctl(pea_buffer__buffer_fd(pb, idx), PERF_EVENT_IOC_ID, &ev_id);

	pt_pin(cpu);
	PT_EQ(pt_output_n(MAP, PEA_F_CURRENT_CPU, payload, PAYLOAD, 7, &ok), 0,
	      "7 records on CPU %d", cpu);
	PT_EQ(pea_buffer__pause(pb, idx, true), 0, "pause the ring");
	PT_EQ(pt_output_n(MAP, PEA_F_CURRENT_CPU, payload, PAYLOAD, 3, NULL),
	      -ENOSPC, "3 drops while paused");
	PT_EQ(pea_buffer__pause(pb, idx, false), 0, "resume the ring");

	rc = stat_json(MAP);
	PT_EQ(rc, 0, "pea stat --json --map %s exits 0", MAP);
	PT_EQ(count_lines("ring"), ncpu, "one ring line per CPU");
	l = ring_line(MAP, cpu);
	PT_OK(l != NULL, "the line of slot %d", cpu);
	if (!l) {
		pt_diag("stdout: %s stderr: %s", out, err);
		l = "{}";
	}
	PT_EQ(pt_json_num(l, "map_id", -1), info.id, "map_id is the map's id");
	PT_EQ(pt_json_num(l, "max_entries", -1), ncpu, "max_entries %d", ncpu);
	PT_EQ(pt_json_num(l, "cpu", -1), cpu, "cpu %d", cpu);
	PT_EQ(pt_json_num(l, "event_id", -1), ev_id, "event_id is PERF_EVENT_IOC_ID's");
	PT_EQ(pt_json_num(l, "data_pages", -1), PAGES, "data_pages %d", PAGES);
	PT_EQ(pt_json_num(l, "size", -1), size, "size %zu", size);
	PT_EQ(pt_json_num(l, "records", -1), 7, "records 7");
	PT_EQ(pt_json_num(l, "bytes", -1), 7 * REC, "bytes %d", 7 * REC);
	PT_EQ(pt_json_num(l, "used", -1), 7 * REC, "used %d (nothing read yet)", 7 * REC);
	PT_EQ(pt_json_num(l, "lost", -1), 3, "lost 3");
	PT_EQ(pt_json_num(l, "lost_pending", -1), 3, "lost_pending 3");
	PT_EQ(pt_json_num(l, "wakeups", -1), 7, "wakeups 7 (one per record)");
	for (i = 0; i < (int)pea_buffer__buffer_cnt(pb); i++) {
		int c = pea_buffer__buffer_cpu(pb, i);

		if (c == cpu)
			continue;
		l = ring_line(MAP, c);
		zero &= l && pt_json_num(l, "records", -1) == 0 &&
			pt_json_num(l, "used", -1) == 0 &&
			pt_json_num(l, "lost", -1) == 0 &&
			pt_json_num(l, "data_pages", -1) == PAGES;
	}
	PT_OK(zero, "every other CPU's ring: mapped, records 0, used 0, lost 0");

	rc = pt_run((char *[]){ PT_PEA, "stat", "--map", MAP, NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 0, "pea stat --map %s exits 0", MAP);
	n = table_row(MAP, cpu, cols, 16);
	snprintf(fill, sizeof(fill), "%.1f%%", 100.0 * 7 * REC / size);
	PT_OK(n == 12 && !strcmp(cols[3], cols[2]) && !strcmp(cols[4], "8K") &&
	      atoi(cols[5]) == 7 * REC && !strcmp(cols[6], fill) &&
	      !strcmp(cols[7], "7") && atoi(cols[8]) == 7 * REC &&
	      !strcmp(cols[9], "3") && !strcmp(cols[10], "3") &&
	      !strcmp(cols[11], "7"),
	      "table: ring 8K, used %d, fill %s, records 7, bytes %d, lost 3, pending 3, wakeups 7",
	      7 * REC, fill, 7 * REC);
	if (n != 12)
		pt_diag("table: %s", out);
	PT_OK(strstr(out, "RECORDS") && strstr(out, "WAKEUPS") &&
	      strstr(out, "FILL"), "table: header names the columns");

	/* Read the ring: nothing unread, the drops taken. */
	PT_EQ(pea_buffer__consume(pb), 0, "consume");
	PT_EQ(delivered, 7, "7 records delivered");
	PT_EQ(lost_cb, 3, "3 drops reported");
	stat_json(MAP);
	l = ring_line(MAP, cpu);
	if (!l)
		l = "{}";
	PT_EQ(pt_json_num(l, "used", -1), 0, "after reading: used 0");
	PT_EQ(pt_json_num(l, "lost_pending", -1), 0, "after reading: lost_pending 0");
	PT_EQ(pt_json_num(l, "lost", -1), 3, "after reading: lost still 3");
	PT_EQ(pt_json_num(l, "records", -1), 7, "after reading: records still 7");

	pea_buffer__free(pb);
	close(map);
	stat_json(MAP);
	PT_EQ(count_lines("ring") + count_lines("map"), 0,
	      "after closing the map, pea stat no longer lists it");
}

static void test_unmapped_and_empty(void)
{
	unsigned char payload[8] = { 0 };
	const char *l;
	char cols[16][32], *s, *save = NULL, copy[65536], slot[16];
	int map, empty, ev, rc, n, maps = 0;

	map = pea_map_create(MAP_UNMAPPED, 2, 0);
	empty = pea_map_create(MAP_EMPTY, 4, 0);
	ev = pt_event_open(0, PERF_SAMPLE_RAW);
	if (map < 0 || empty < 0 || ev < 0)
		pt_fatal("set-up");
	PT_EQ(pt_map_update(map, 0, ev), 0, "an unmapped event in slot 0");
	pt_pin(0);
	PT_EQ(pt_output(MAP_UNMAPPED, 0, payload, sizeof(payload)), -ENOSPC,
	      "output into it is dropped");

	rc = stat_json(MAP_UNMAPPED);
	PT_EQ(rc, 0, "pea stat --json --map %s", MAP_UNMAPPED);
	PT_EQ(count_lines("ring"), 1, "one ring line: slot 1 is empty");
	l = ring_line(MAP_UNMAPPED, 0);
	PT_OK(l && pt_json_num(l, "data_pages", -1) == 0 &&
	      pt_json_num(l, "size", -1) == 0 && pt_json_num(l, "used", -1) == 0 &&
	      pt_json_num(l, "lost", -1) == 1 && pt_json_num(l, "records", -1) == 0,
	      "unmapped: data_pages 0, size 0, used 0, records 0, lost 1");

	rc = pt_run((char *[]){ PT_PEA, "stat", "--map", MAP_UNMAPPED, NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	n = table_row(MAP_UNMAPPED, 0, cols, 16);
	PT_OK(rc == 0 && n == 12 && !strcmp(cols[4], "-") &&
	      !strcmp(cols[5], "-") && !strcmp(cols[6], "-") &&
	      !strcmp(cols[9], "1"),
	      "table: unmapped ring shows RING, USED, FILL as '-', LOST 1");

	rc = stat_json(MAP_EMPTY);
	PT_EQ(rc, 0, "pea stat --json --map %s", MAP_EMPTY);
	snprintf(copy, sizeof(copy), "%s", out);
	for (s = strtok_r(copy, "\n", &save); s; s = strtok_r(NULL, "\n", &save))
		if (pt_json_streq(s, "type", "map") &&
		    pt_json_streq(s, "name", MAP_EMPTY) &&
		    pt_json_num(s, "rings", -1) == 0 &&
		    pt_json_num(s, "max_entries", -1) == 4 &&
		    pt_json_get(s, "slot", slot, sizeof(slot), NULL) &&
		    !strcmp(slot, "null"))
			maps++;
	PT_EQ(maps, 1, "a map with no filled slot: one \"map\" line, rings 0, slot null");

	rc = pt_run((char *[]){ PT_PEA, "stat", NULL }, out, sizeof(out), err,
		    sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && strstr(out, MAP_UNMAPPED) && strstr(out, MAP_EMPTY),
	      "pea stat without --map lists both maps");
	close(ev);
	close(map);
	close(empty);
}

int main(void)
{
	ncpu = pt_nr_cpus();
	pt_dev();
	pt_st();
	test_filled();
	test_unmapped_and_empty();
	return pt_done();
}
