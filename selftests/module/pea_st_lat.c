// SPDX-License-Identifier: GPL-2.0
/*
 * pea_selftest: PEA_ST_IOC_LAT calls pea_st_lat_begin(key) and, a known
 * sleep later, pea_st_lat_end(key) for a set of keys, so that test_lat
 * can pair a kprobe on each by the key (an argument) or by the thread
 * and check the elapsed times' buckets exactly; begins or ends alone
 * give starts that overflow the pairing table and ends without a start.
 */
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include "pea_selftest.h"
#include "pea_st_lat.h"

/**
 * pea_st_lat_begin() - the start test_lat probes
 * @key: what pairs it with its end
 *
 * Return: @key.
 */
noinline u64 pea_st_lat_begin(u64 key)
{
	asm volatile("" : : "r"(key) : "memory");
	return key;
}

/**
 * pea_st_lat_end() - the end test_lat probes
 * @key: the key of the start it ends
 *
 * Return: @key.
 */
noinline u64 pea_st_lat_end(u64 key)
{
	asm volatile("" : : "r"(key) : "memory");
	return key;
}

/**
 * st_lat() - PEA_ST_IOC_LAT
 * @uarg: struct pea_st_lat
 *
 * Return: 0, -EFAULT, -EINVAL (no flag, a delay past a second) or -EINTR.
 */
long st_lat(void __user *uarg)
{
	struct pea_st_lat a;
	u32 r, k;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (!(a.flags & (PEA_ST_LAT_BEGIN | PEA_ST_LAT_END)) ||
	    a.flags & ~(PEA_ST_LAT_BEGIN | PEA_ST_LAT_END) ||
	    a.delay_us > USEC_PER_SEC)
		return -EINVAL;
	for (r = 0; r < a.rounds; r++) {
		if (a.flags & PEA_ST_LAT_BEGIN)
			for (k = 0; k < a.nkeys; k++)
				pea_st_lat_begin(a.key_base + k);
		if ((a.flags & PEA_ST_LAT_BEGIN) && (a.flags & PEA_ST_LAT_END) &&
		    a.delay_us)
			usleep_range(a.delay_us, a.delay_us + a.delay_us / 16);
		if (a.flags & PEA_ST_LAT_END)
			for (k = 0; k < a.nkeys; k++)
				pea_st_lat_end(a.key_base + k);
		if (signal_pending(current))
			return -EINTR;
	}
	return 0;
}
