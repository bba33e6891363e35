/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: the address of an lttng-relayd, net://HOST[:CTRL[:DATA]]
 * (net_url.c). HOST is a name, an IPv4 address or [an IPv6 address];
 * CTRL and DATA are its control and data ports, by default relayd's
 * own defaults, 5342 and 5343.
 */
#ifndef _PEA_NET_URL_H
#define _PEA_NET_URL_H

#include <stdbool.h>
#include <stddef.h>

#define NET_URL_PREFIX		"net://"
#define NET_URL_CTRL_PORT	5342
#define NET_URL_DATA_PORT	5343
#define NET_URL_LIVE_PORT	5344	/* relayd's live port, for messages */

/**
 * struct net_url - a parsed net:// address
 * @host: the host, without brackets
 * @ctrl: the control port
 * @data: the data port
 */
struct net_url {
	char host[256];
	unsigned int ctrl, data;
};

/* Whether @s is meant as a net:// address (it starts with "net://"). */
bool net_url_is(const char *s);

/*
 * Parse @s into @u; 0, or -EINVAL with what is wrong in @err.
 */
int net_url_parse(const char *s, struct net_url *u, char *err,
		  size_t err_len);

#endif /* _PEA_NET_URL_H */
