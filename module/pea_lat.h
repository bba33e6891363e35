/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: latency between two probes (pea_lat.c): a start link's pairing
 * table, which its hits fill and end links' tables (pea_agg.c,
 * PEA_AGG_VAL_PAIRED) empty. Nothing here is ABI.
 */
#ifndef _PEA_LAT_H
#define _PEA_LAT_H

#include <linux/types.h>
#include <linux/pea.h>
#include "pea_link.h"

struct pea_lat;
struct pea_agg_sample;

long pea_lat_create(struct pea_link *l, const struct pea_lat_attr *a);
long pea_lat_get_info(struct pea_link *l, struct pea_lat_info *info);
int pea_lat_check_key(struct pea_link *l, const struct pea_lat_key *k);
struct pea_lat *pea_lat_get(struct pea_link *l);
void pea_lat_put(struct pea_lat *lat);
size_t pea_lat_ref_size(void);
bool pea_lat_start(struct pea_lat *lat, const struct pea_agg_sample *s);
bool pea_lat_key(const struct pea_lat_key *k, const struct pea_agg_sample *s,
		 u64 *key);
int pea_lat_take(struct pea_lat *lat, u64 key, u64 *ns);
void pea_lat_retire(struct pea_link *l);
void pea_lat_free(struct pea_link *l);

#endif /* _PEA_LAT_H */
