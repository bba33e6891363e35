// SPDX-License-Identifier: GPL-2.0
/*
 * free_ports N: N distinct TCP ports free on 127.0.0.1 now, one per line
 * (each bound to port 0 at the same time, then released), for daemons
 * the host tests start (selftests/host/test_relayd.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1, i;
	int fd[16];

	if (n < 1 || n > 16)
		return 2;
	for (i = 0; i < n; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t len = sizeof(a);

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&a, sizeof(a)) ||
		    getsockname(fd[i], (struct sockaddr *)&a, &len)) {
			perror("free_ports");
			return 1;
		}
		printf("%u\n", ntohs(a.sin_port));
	}
	for (i = 0; i < n; i++)
		close(fd[i]);
	return 0;
}
