// SPDX-License-Identifier: GPL-2.0
/*
 * fake_trace: stands in for a running `pea trace` in the host tests of
 * `pea snapshot` (selftests/host/test_snapshot_cmd.sh), which start it
 * with argv[0] "pea" and a pea trace command line: it prints
 * "SIGUSR1 N" on stdout at each SIGUSR1 and ends on SIGTERM or after
 * 30 s.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t got, stop;

static void on_usr1(int sig)
{
	(void)sig;
	got++;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	int seen = 0, i;

	signal(SIGUSR1, on_usr1);
	signal(SIGTERM, on_term);
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	for (i = 0; i < 3000 && !stop; i++) {
		while (seen < got)
			printf("SIGUSR1 %d\n", ++seen);
		usleep(10000);
	}
	return 0;
}
