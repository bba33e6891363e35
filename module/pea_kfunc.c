// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the kfuncs BPF programs call to write into pea maps.
 *
 * pea_kf_output() is bpf_perf_event_output() for a pea map: the same
 * flags (the slot index or PEA_F_CURRENT_CPU; PEA_F_CTXLEN_MASK refused
 * with EINVAL, as pea_output() refuses it), the same record and errnos.
 * The program names the map by its BPF handle (pea_map_info.bpf_handle):
 * a random 64-bit value that only maps created with PEA_F_BPF_WRITE have,
 * known only through the map's fd, so a program writes only into maps
 * its loader was given, as in Linux. It is a scalar the program carries
 * in any context: the kfunc finds the map under RCU, and maps are freed
 * after a grace period (pea_map_put()), so a map destroyed while a
 * program runs is never touched after it is freed. Errors a program may
 * ignore are counted: per map by errno, and a global count of calls
 * naming no live map (debugfs "kfunc").
 *
 * A module kfunc needs the module's BTF and resolved BTF ids, and a
 * kernel that lets the program type call module kfuncs. Kbuild builds
 * this file's kfunc part only where the build can give pea.ko BTF
 * (PEA_HAVE_KFUNCS), and registers it for the program types the kernel
 * allows (pea_compat.h). Whether the kfuncs are on, and why not, is in
 * modinfo ("kfuncs"), debugfs ("kfunc") and the kernel log.
 *
 * The output path takes no lock, allocates nothing and never sleeps:
 * callable from every context a BPF program runs in, NMI included.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/bpf.h>
#include "pea_internal.h"
#include "pea_compat.h"

#ifdef PEA_HAVE_KFUNCS
MODULE_INFO(kfuncs, "pea_kf_output for " PEA_KFUNC_PROG_TYPES_NAME);
#else
MODULE_INFO(kfuncs, "off: " PEA_KFUNC_OFF);
#endif

/* "on", or "off: why" */
static const char *pea_kf_state = "off: not registered";
static int pea_kf_errno;
/* Calls that named no live map, per CPU (summed when shown). */
static DEFINE_PER_CPU(u64, pea_kf_bad_handle);

#ifdef PEA_HAVE_KFUNCS
static __always_inline void pea_kf_count(struct pea_map *map, long err)
{
	int i;

	switch (err) {
	case -EINVAL:
		i = PEA_KF_EINVAL;
		break;
	case -E2BIG:
		i = PEA_KF_E2BIG;
		break;
	case -ENOENT:
		i = PEA_KF_ENOENT;
		break;
	case -EOPNOTSUPP:
		i = PEA_KF_EOPNOTSUPP;
		break;
	case -EBUSY:
		i = PEA_KF_EBUSY;
		break;
	case -EFAULT:
		i = PEA_KF_EFAULT;
		break;
	default:
		i = PEA_KF_ENOSPC;
		break;
	}
	this_cpu_inc(map->kf_errors[i]);
}

/**
 * pea_kf_output() - write one PERF_RECORD_SAMPLE into a pea map, from BPF
 * @handle: the map's BPF handle (pea_map_info.bpf_handle)
 * @flags: slot index in the low 32 bits, or PEA_F_CURRENT_CPU
 * @data: payload
 * @data__sz: payload bytes (the verifier checks @data holds as many)
 *
 * bpf_perf_event_output()'s contract on a pea map: the record is byte
 * for byte what that helper writes for the same payload.
 *
 * Context: any a BPF program runs in, NMI included; takes no locks,
 * allocates nothing, never sleeps.
 * Return: 0; -EBADF when no live map has @handle (maps created without
 * PEA_F_BPF_WRITE have none); -EFAULT when @data is NULL and
 * @data__sz is not 0 (a map value the program did not check: 6.12's
 * verifier refuses it, 6.1's does not); else pea_output()'s errors:
 * -EBUSY, -EINVAL (flag bits other than the index, CTXLEN included; not
 * an output event), -E2BIG, -ENOENT, -EOPNOTSUPP, -ENOSPC (dropped and
 * counted lost). Every error is counted (debugfs "kfunc").
 */
__bpf_kfunc long pea_kf_output(u64 handle, u64 flags, const void *data,
			       u32 data__sz)
{
	struct pea_map *map;
	long err;

	rcu_read_lock();
	map = pea_map_find_rcu(handle);
	if (unlikely(!map)) {
		rcu_read_unlock();
		this_cpu_inc(pea_kf_bad_handle);
		return -EBADF;
	}
	if (unlikely(!data && data__sz))
		err = -EFAULT;
	else
		err = pea_output(map, flags, data, data__sz);
	if (unlikely(err))
		pea_kf_count(map, err);
	rcu_read_unlock();
	return err;
}

/*
 * KF_TRUSTED_ARGS: 6.12's verifier then refuses a pointer that may be
 * NULL as @data ("Possibly NULL pointer passed to trusted arg2"); it
 * changes nothing else for a memory argument. 6.1's checks no memory
 * argument for NULL, hence the kfunc's own -EFAULT.
 */
PEA_KFUNCS_START(pea_kf_ids)
BTF_ID_FLAGS(func, pea_kf_output, KF_TRUSTED_ARGS)
PEA_KFUNCS_END(pea_kf_ids)

static const struct btf_kfunc_id_set pea_kf_set = {
	.owner = THIS_MODULE,
	.set = &pea_kf_ids,
};

/**
 * pea_kfunc_init() - register the kfuncs for the program types allowed
 *
 * From the module's init only. A module without BTF or with unresolved
 * BTF ids registers nothing and the kernel still answers 0, so both are
 * checked first. A failed registration frees every set of the module: the
 * types are the kernel's (pea_compat.h), never tried one by one.
 */
void pea_kfunc_init(void)
{
	const enum bpf_prog_type *types;
	unsigned int i, n = pea_kfunc_prog_types(&types);
	int err;

	if (!THIS_MODULE->btf_data_size) {
		pea_kf_state = "off: pea.ko has no BTF section";
		goto out;
	}
	if (!pea_kf_ids.cnt) {
		pea_kf_state =
			"off: pea.ko's BTF ids are not resolved (resolve_btfids did not run)";
		goto out;
	}
	for (i = 0; i < n; i++) {
		err = register_btf_kfunc_id_set(types[i], &pea_kf_set);
		if (err) {
			pea_kf_errno = err;
			pea_kf_state = "off: register_btf_kfunc_id_set() failed";
			goto out;
		}
	}
	pea_kf_state = "on";
out:
	pr_info("pea: kfuncs %s\n", pea_kf_state);
}
#else
void pea_kfunc_init(void)
{
	pea_kf_state = "off: " PEA_KFUNC_OFF;
	pr_info("pea: kfuncs %s\n", pea_kf_state);
}
#endif /* PEA_HAVE_KFUNCS */

/**
 * pea_kfunc_show() - the debugfs "kfunc" file
 * @m: the seq_file
 * @v: unused
 *
 * The state ("on" or "off: why"), the program types, the calls that
 * named no live map, then per map the errors of the kfuncs on it.
 *
 * Return: 0.
 */
int pea_kfunc_show(struct seq_file *m, void *v)
{
	u64 bad = 0;
	int cpu;

	seq_printf(m, "state %s\n", pea_kf_state);
	if (pea_kf_errno)
		seq_printf(m, "errno %d\n", pea_kf_errno);
#ifdef PEA_HAVE_KFUNCS
	seq_printf(m, "program_types %s\n", PEA_KFUNC_PROG_TYPES_NAME);
#endif
	for_each_possible_cpu(cpu)
		bad += per_cpu(pea_kf_bad_handle, cpu);
	seq_printf(m, "bad_handle %llu\n", bad);
	pea_maps_kf_show(m);
	return 0;
}
