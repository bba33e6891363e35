// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel lockdown, as Linux applies it to kprobes and kernel-memory reads.
 * Lockdown cannot be lifted at run time, so the guest runs this test
 * last (scripts/guest-init.sh): it raises the level to integrity, then to
 * confidentiality, and leaves it there. Under integrity Linux still
 * registers kprobes and BPF still reads kernel memory, so every attach
 * works; under confidentiality trace_kprobe refuses kprobes
 * (LOCKDOWN_KPROBES: EPERM) and BPF loses bpf_probe_read_kernel()
 * (LOCKDOWN_BPF_READ_KERNEL), so pea refuses kprobes, kretprobes and
 * kernel-pointer captures with EPERM, as perf_event_open() of the kprobe
 * PMU does for the same function. A link attached before keeps working,
 * as an existing kprobe does.
 */
#include <sys/mount.h>
#include "pea_test.h"
#include "pt_perm.h"

#define LOCKDOWN	"/sys/kernel/security/lockdown"
#define SYM		"ksys_mmap_pgoff"

static int map_fd;

static struct pea_probe_attr probe(__u32 flags, int capture, bool user)
{
	struct pea_probe_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags | PEA_PROBE_F_CLOEXEC;
	strcpy(a.symbol, SYM);
	a.filter_cpu = -1;
	if (capture) {
		a.capture_arg = 0;
		a.capture_mode = PEA_CAPTURE_FIXED;
		a.capture_len = 8;
		a.capture_flags = user ? PEA_CAPTURE_USER : 0;
	}
	return a;
}

static int attach_errno(__u32 flags, int capture, bool user)
{
	struct pea_probe_attr a = probe(flags, capture, user);
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* perf_event_open() of the kprobe PMU at SYM: 0 or errno. */
static int perf_kprobe_errno(bool ret)
{
	struct perf_event_attr a;
	long type = pt_perm_read_int("/sys/bus/event_source/devices/kprobe/type");

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = ret;		/* format/retprobe: config:0 */
	a.kprobe_func = (uintptr_t)SYM;
	a.sample_period = 1;
	return pt_perf_open_errno(&a, -1, 0);
}

static int level(char *buf, size_t len)
{
	int err = pt_read_file(LOCKDOWN, buf, len);
	size_t n = err ? 0 : strlen(buf);

	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return err;
}

static void check_all(const char *lvl, int want)
{
	PT_EQ(attach_errno(0, 0, false), want, "%s: kprobe", lvl);
	PT_EQ(attach_errno(PEA_PROBE_F_RETPROBE, 0, false), want,
	      "%s: kretprobe", lvl);
	PT_EQ(attach_errno(0, 1, false), want, "%s: kernel-pointer capture", lvl);
	PT_EQ(attach_errno(0, 1, true), want, "%s: user-pointer capture", lvl);
	PT_EQ(perf_kprobe_errno(false), want, "%s: perf's kprobe PMU says the same",
	      lvl);
	PT_EQ(perf_kprobe_errno(true), want,
	      "%s: perf's kretprobe says the same", lvl);
}

int main(void)
{
	struct pea_probe_attr a = probe(0, 0, false);
	struct pea_link_info before, after;
	char buf[128];
	int link;

	if (access(LOCKDOWN, F_OK))
		mount("securityfs", "/sys/kernel/security", "securityfs", 0,
		      NULL);
	PT_EQ(level(buf, sizeof(buf)), 0, "read " LOCKDOWN);
	PT_OK(!strcmp(buf, "[none] integrity confidentiality"),
	      "lockdown LSM active, not locked: \"%s\"", buf);
	map_fd = pt_map_create(NULL, pt_nr_cpus(), 0);
	PT_OK(map_fd >= 0, "map created");

	check_all("none", 0);
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
	PT_OK(link >= 0, "a link attached before lockdown");

	PT_EQ(pt_write_file(LOCKDOWN, "integrity"), 0, "lockdown=integrity");
	PT_EQ(level(buf, sizeof(buf)), 0, "read " LOCKDOWN);
	PT_OK(!strcmp(buf, "none [integrity] confidentiality"), "now \"%s\"",
	      buf);
	check_all("integrity", 0);

	PT_EQ(pt_write_file(LOCKDOWN, "confidentiality"), 0,
	      "lockdown=confidentiality");
	PT_EQ(level(buf, sizeof(buf)), 0, "read " LOCKDOWN);
	PT_OK(!strcmp(buf, "none integrity [confidentiality]"), "now \"%s\"",
	      buf);
	check_all("confidentiality", EPERM);

	PT_EQ(pt_ioctl_errno(link, PEA_LINK_IOC_INFO, &before), 0, "link info");
	munmap(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
	       4096);
	PT_EQ(pt_ioctl_errno(link, PEA_LINK_IOC_INFO, &after), 0, "link info");
	PT_OK(after.hits > before.hits,
	      "the earlier link still fires under lockdown (%llu -> %llu hits)",
	      (unsigned long long)before.hits, (unsigned long long)after.hits);
	close(link);
	close(map_fd);
	return pt_done();
}
