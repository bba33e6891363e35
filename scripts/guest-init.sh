#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the pea test guest: runs as PID 1 under busybox sh.
#
# Kernel command line:
#   pea.mode=check|demo|shell|bench|canary   (default check)
#   pea.tests=test_a,test_b     run only these test programs (the test_
#                               prefix may be left out); default: all,
#                               test_lockdown last (lockdown is one-way)
#   pea.skip=test_a,test_b      without pea.tests, run every test program
#                               but these (scripts/test-kernels)
#   pea.timeout=SECS            per-test timeout (default 300)
#   pea.demo=WHAT               demo mode: argument of /bin/pea-demo
#                               (trace, the default, or storm)
#   pea.bench=-q,-r,3           bench mode: pea-bench's arguments
#   pea.load=modprobe           load pea with `modprobe pea` from
#                               /lib/modules/$(uname -r) (the DKMS-built
#                               module of make check-install) instead of
#                               insmod $MODDIR/pea.ko
#   pea.time_scale=N            exported to the tests as PEA_TIME_SCALE:
#                               how many times slower than a production
#                               kernel this one runs (the debug kernel: 3)
#   pea.tcg=single|multi        exported to the tests as PEA_TCG: QEMU runs
#                               the vCPUs on one host thread, or each on
#                               its own (test_tcg_threads asserts which)
#
# canary mode (make check-debug, scripts/check-canary.sh) loads
# pea_canary.ko instead of pea.ko and commits each of its bugs in turn
# between "pea-canary: begin NAME" and "pea-canary: end NAME" kernel log
# markers, reporting "# canary NAME: RC" on the results channel.
#
# The kernel console is ttyS0. Results go to the second serial port,
# /dev/ttyS1, which the host writes to a file (scripts/vm-run.sh); the host
# (scripts/check-kernel.sh) parses this protocol:
#
#   # pea-guest: begin ...
#   # insmod pea: RC
#   # === test_NAME ===
#   ...everything test_NAME writes to stdout and stderr...
#   # timeout test_NAME after SECSs     (only if it was killed)
#   # exit test_NAME RC
#   # rmmod pea: RC
#   # --- dmesg begin ---
#   ...
#   # --- dmesg end ---
#   # pea-guest: end
#
# PID 1 must never exit, so no `set -e` here.

export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export HOME=/root TERM=linux

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug
# Trace event ids and formats, for the tracepoint producers.
mount -t tracefs tracefs /sys/kernel/tracing
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs tmpfs /run
exec </dev/console >/dev/console 2>&1

hostname pea-vm
chown 65534:65534 /home/nobody 2>/dev/null
ulimit -c 0

MODE=check
TESTS=
SKIP=
TT=300
DEMO=
LOAD=insmod
ONLINE=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	pea.mode=*)	MODE=${arg#pea.mode=} ;;
	pea.tests=*)	TESTS=$(echo "${arg#pea.tests=}" | tr ',' ' ') ;;
	pea.skip=*)	SKIP=" $(echo "${arg#pea.skip=}" | tr ',' ' ') " ;;
	pea.timeout=*)	TT=${arg#pea.timeout=} ;;
	pea.demo=*)	DEMO=${arg#pea.demo=} ;;
	pea.load=*)	LOAD=${arg#pea.load=} ;;
	pea.bench=*)	BENCH_ARGS=$(echo "${arg#pea.bench=}" | tr ',' ' ') ;;
	pea.time_scale=*) export PEA_TIME_SCALE=${arg#pea.time_scale=} ;;
	pea.tcg=*)	export PEA_TCG=${arg#pea.tcg=} ;;
	pea.online=*)	ONLINE=${arg#pea.online=} ;;
	esac
done

# Results channel: ttyS1 if the second UART is there, else the console.
RES=/dev/console
if grep -q '^1: uart:16550' /proc/tty/driver/serial 2>/dev/null &&
   [ -c /dev/ttyS1 ] && ( : > /dev/ttyS1 ) 2>/dev/null; then
	RES=/dev/ttyS1
	stty -F "$RES" raw -echo 2>/dev/null
fi
exec 3>"$RES"

out() { printf '%s\n' "$*" >&3; }
say() { printf 'pea-guest: %s\n' "$*"; }
kmsg() { printf 'pea-guest: %s\n' "$*" > /dev/kmsg 2>/dev/null; }

MODDIR=/lib/modules/pea
export PEA_MODDIR=$MODDIR

# pea.online=all: the kernel booted on one CPU (maxcpus=1, the mt-*
# kernels of scripts/check-kernel.sh); bring up every other CPU now,
# before pea is loaded, once the boot's own text patching is over.
if [ "$ONLINE" = all ]; then
	up=0
	for f in /sys/devices/system/cpu/cpu[0-9]*/online; do
		[ "$(cat "$f")" = 1 ] && continue
		if echo 1 > "$f"; then
			up=$((up + 1))
		else
			out "# pea-guest: could not bring ${f%/online} up"
		fi
	done
	out "# pea-guest: brought $up CPUs up (pea.online=all)"
fi

out "# pea-guest: begin mode=$MODE kernel=$(uname -r) cpus=$(nproc) timeout=$TT"
say "begin mode=$MODE results=$RES"
kmsg "begin mode=$MODE"

# --- load the module ----------------------------------------------------
if [ "$MODE" = canary ]; then
	rc=skipped
elif [ "$LOAD" = modprobe ]; then
	modprobe pea > /tmp/insmod.out 2>&1
	rc=$?
	out "# insmod: modprobe pea: $(modinfo -n pea 2>&1)"
	sed 's/^/# insmod: /' /tmp/insmod.out >&3
elif [ -f "$MODDIR/pea.ko" ]; then
	insmod "$MODDIR/pea.ko" > /tmp/insmod.out 2>&1
	rc=$?
	sed 's/^/# insmod: /' /tmp/insmod.out >&3
else
	out "# insmod: $MODDIR/pea.ko is not in the initramfs"
	rc=missing
fi
out "# insmod pea: $rc"
say "insmod pea: $rc"

# --- tests ----------------------------------------------------------------
run_test() {
	name=$1
	# A newline first: a partial line left by anything before must not
	# swallow the marker.
	printf '\n' >&3
	out "# === $name ==="
	say "running $name"
	kmsg "running $name"
	if [ ! -x "/bin/$name" ]; then
		out "# no such test program: /bin/$name"
		out "# exit $name 127"
		return
	fi
	start=$(date +%s)
	(cd /tmp && exec timeout -s TERM -k 10 "$TT" "/bin/$name") \
		</dev/null >&3 2>&3
	rc=$?
	el=$(( $(date +%s) - start ))
	# A last line without a newline must not swallow the markers.
	printf '\n' >&3
	if { [ "$rc" -eq 143 ] || [ "$rc" -eq 137 ]; } && [ "$el" -ge "$TT" ]; then
		out "# timeout $name after ${el}s"
	fi
	out "# exit $name $rc"
	out "# time $name ${el}s"
	say "finished $name: exit $rc after ${el}s"
	kmsg "finished $name rc=$rc"
}

case "$MODE" in
check)
	if [ -n "$TESTS" ]; then
		for t in $TESTS; do
			case "$t" in
			test_*) run_test "$t" ;;
			*)      run_test "test_$t" ;;
			esac
		done
	else
		# test_lockdown locks the kernel down for good: it runs last.
		found=0
		for p in /bin/test_*; do
			[ -x "$p" ] || continue
			found=1
			case "$SKIP" in *" ${p##*/} "*) continue ;; esac
			[ "${p##*/}" = test_lockdown ] || run_test "${p##*/}"
		done
		case "$SKIP" in
		*" test_lockdown "*) ;;
		*) [ ! -x /bin/test_lockdown ] || run_test test_lockdown ;;
		esac
		[ "$found" -eq 1 ] || out "# no test programs in /bin"
	fi
	;;
demo)
	if [ -x /bin/pea-demo ]; then
		out "# === pea-demo ==="
		(cd /tmp && exec timeout -s TERM -k 10 "$TT" /bin/pea-demo $DEMO) \
			</dev/null >&3 2>&3
		out "# exit pea-demo $?"
	else
		{
			echo "# no /bin/pea-demo in the initramfs; module state:"
			ls -l /dev/pea
			grep '^pea' /proc/modules
			ls /sys/module/pea 2>/dev/null
		} >&3 2>&3
	fi
	;;
bench)
	# `make bench` (scripts/bench.sh): pea-bench prints its table and
	# JSON between markers on the results channel.
	insmod "$MODDIR/pea_bench.ko" > /tmp/insmod.out 2>&1
	rc=$?
	sed 's/^/# insmod: /' /tmp/insmod.out >&3
	out "# insmod pea_bench: $rc"
	out "# === pea-bench ==="
	kmsg "running pea-bench"
	(cd /tmp && exec timeout -s TERM -k 10 "$TT" /bin/pea-bench ${BENCH_ARGS:-}) \
		</dev/null >&3 2>&3
	rc=$?
	printf '\n' >&3
	out "# exit pea-bench $rc"
	kmsg "finished pea-bench rc=$rc"
	rmmod pea_bench 2>&3
	;;
canary)
	insmod "$MODDIR/pea_canary.ko" > /tmp/insmod.out 2>&1
	rc=$?
	sed 's/^/# insmod: /' /tmp/insmod.out >&3
	out "# insmod pea_canary: $rc"
	for bug in $(cat /sys/kernel/debug/pea_canary/bugs 2>/dev/null); do
		printf 'pea-canary: begin %s\n' "$bug" > /dev/kmsg
		echo "$bug" > /sys/kernel/debug/pea_canary/trigger 2>&3
		rc=$?
		# Let the report reach the log before the end marker.
		sleep 1
		printf 'pea-canary: end %s\n' "$bug" > /dev/kmsg
		out "# canary $bug: $rc"
	done
	rmmod pea_canary > /tmp/rmmod.out 2>&1
	rc=$?
	sed 's/^/# rmmod: /' /tmp/rmmod.out >&3
	out "# rmmod pea_canary: $rc"
	;;
shell)
	say "interactive shell; exit it to shut down"
	setsid cttyhack sh -l
	;;
*)
	out "# unknown pea.mode=$MODE"
	;;
esac

# --- unload -------------------------------------------------------------
# Leftover processes (children of killed tests) would pin the module.
if kill -KILL -1 2>/dev/null; then
	sleep 1
fi

if grep -q '^pea_selftest ' /proc/modules; then
	rmmod pea_selftest > /tmp/rmmod.out 2>&1
	rc=$?
	sed 's/^/# rmmod: /' /tmp/rmmod.out >&3
	out "# rmmod pea_selftest: $rc"
fi
if grep -q '^pea ' /proc/modules; then
	# File releases may be deferred briefly: retry a few times.
	for attempt in 1 2 3 4 5; do
		rmmod pea > /tmp/rmmod.out 2>&1
		rc=$?
		[ "$rc" -eq 0 ] && break
		sed "s/^/# rmmod: (attempt $attempt) /" /tmp/rmmod.out >&3
		sleep 1
	done
else
	out "# rmmod: pea is not loaded"
	rc=notloaded
fi
out "# rmmod pea: $rc"
say "rmmod pea: $rc"
kmsg "end"

# Give the kernel a moment to print anything the unload triggered.
sleep 1
out "# --- dmesg begin ---"
if [ "$MODE" = check ] || [ "$MODE" = canary ]; then
	dmesg >&3 2>&3
else
	# Outside check mode, only what happened since the guest started.
	dmesg 2>&3 | sed -n '/pea-guest: begin/,$p' >&3
fi
out "# --- dmesg end ---"
out "# pea-guest: end"
say "end, powering off"

# Closing the tty waits until everything has left the UART.
exec 3>&-
sync
poweroff -f
sleep 5
echo o > /proc/sysrq-trigger
while :; do sleep 60; done
