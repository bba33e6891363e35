/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the netfilter selftests: the loopback device, UDP, TCP and
 * ICMP traffic over it, and the checksums to check captured headers with.
 * Include after pea_test.h.
 */
#ifndef _PT_NET_H
#define _PT_NET_H

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

/*
 * Whether the kernel has netfilter: its /proc/net/netfilter directory
 * (CONFIG_NETFILTER with procfs; a kernel without networking has no
 * /proc/net at all).
 */
static inline bool pt_have_netfilter(void)
{
	struct stat st;

	return stat("/proc/net/netfilter", &st) == 0;
}

/* Bring lo up (the guest's init does not); its ifindex, or -errno. */
static inline int pt_lo_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int idx;

	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		goto err;
	if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr))
			goto err;
	}
	close(s);
	idx = if_nametoindex("lo");
	return idx ? idx : -ENODEV;
err:
	idx = -errno;
	close(s);
	return idx;
}

/* The Internet checksum of @len bytes (RFC 1071), folded, not inverted. */
static inline __u16 pt_csum_fold(const void *p, size_t len, __u32 sum)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (__u32)b[i] << 8 | b[i + 1];
	if (len & 1)
		sum += (__u32)b[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* Receives on @s give up after 5 s: a lost packet fails, never hangs. */
static inline void pt_rcvtimeo(int s)
{
	struct timeval tv = { .tv_sec = 5 };

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* A UDP socket bound to @addr (127.0.0.1 or ::1) port @port, or -errno. */
static inline int pt_udp_bound(int family, __u16 port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	int s = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int err;

	if (s < 0)
		return -errno;
	if (family == AF_INET) {
		a4.sin_port = htons(port);
		a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		err = bind(s, (struct sockaddr *)&a4, sizeof(a4));
	} else {
		a6.sin6_port = htons(port);
		a6.sin6_addr = in6addr_loopback;
		err = bind(s, (struct sockaddr *)&a6, sizeof(a6));
	}
	if (err) {
		err = -errno;
		close(s);
		return err;
	}
	pt_rcvtimeo(s);
	return s;
}

/* Send @len bytes from socket @s to the loopback address, port @port. */
static inline ssize_t pt_udp_send(int s, int family, __u16 port,
				  const void *buf, size_t len)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };

	if (family == AF_INET) {
		a4.sin_port = htons(port);
		a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sendto(s, buf, len, 0, (struct sockaddr *)&a4,
			      sizeof(a4));
	}
	a6.sin6_port = htons(port);
	a6.sin6_addr = in6addr_loopback;
	return sendto(s, buf, len, 0, (struct sockaddr *)&a6, sizeof(a6));
}

#endif /* _PT_NET_H */
