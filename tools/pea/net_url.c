// SPDX-License-Identifier: GPL-2.0
/* pea: net://HOST[:CTRL[:DATA]], the address of an lttng-relayd. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "net_url.h"

bool net_url_is(const char *s)
{
	return !strncmp(s, NET_URL_PREFIX, strlen(NET_URL_PREFIX));
}

/* A port: decimal digits up to @end, 1..65535. */
static int parse_port(const char *s, const char *end, unsigned int *port)
{
	unsigned int v = 0;

	if (s == end)
		return -EINVAL;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (*s - '0');
		if (v > 65535)
			return -EINVAL;
	}
	if (!v)
		return -EINVAL;
	*port = v;
	return 0;
}

int net_url_parse(const char *s, struct net_url *u, char *err,
		  size_t err_len)
{
	const char *h, *hend, *p, *colon;
	size_t n;

	memset(u, 0, sizeof(*u));
	u->ctrl = NET_URL_CTRL_PORT;
	u->data = NET_URL_DATA_PORT;
	if (!net_url_is(s))
		goto bad;
	h = s + strlen(NET_URL_PREFIX);
	if (*h == '[') {
		hend = strchr(h, ']');
		if (!hend)
			goto bad;
		h++;
		p = hend + 1;
	} else {
		hend = h + strcspn(h, ":/");
		p = hend;
	}
	n = hend - h;
	if (!n || n >= sizeof(u->host))
		goto bad;
	memcpy(u->host, h, n);
	if (!*p)
		return 0;
	if (*p != ':')
		goto bad;
	p++;
	colon = strchr(p, ':');
	if (parse_port(p, colon ? colon : p + strlen(p), &u->ctrl))
		goto bad;
	if (!colon)
		return 0;
	if (parse_port(colon + 1, colon + 1 + strlen(colon + 1), &u->data))
		goto bad;
	return 0;
bad:
	snprintf(err, err_len,
		 "'%s': an lttng-relayd address is net://HOST[:CTRL[:DATA]] (ports 1..65535; an IPv6 HOST in brackets)",
		 s);
	return -EINVAL;
}
