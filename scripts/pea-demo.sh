#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /bin/pea-demo in the test guest: what `make demo` shows (busybox sh).
#
# Usage: pea-demo [trace]            the pea tool on the file-open path:
#                                    a kprobe with the file name captured
#                                    while a small workload opens files, the
#                                    rings as `pea stat` sees them, a
#                                    kretprobe (fd and latency), typed
#                                    arguments with a predicate on one
#                                    and execsnoop's argv, a
#                                    uretprobe on user code, a
#                                    tracepoint with a filter, packets at
#                                    a netfilter hook, a latency
#                                    histogram and a count per process
#                                    (--hist, --count-by), a complete
#                                    in-kernel histogram under a ring
#                                    overflow (checked: exit 1 if not),
#                                    off-CPU time by kernel stack,
#                                    JSON lines, kernel stacks
#        pea-demo kfunc              only the last part of trace: a BPF
#                                    program and pea's own kretprobe
#                                    writing into one pea map
#        pea-demo storm [SECONDS]    the all-context storm (pea-storm)
#
# The guest (scripts/guest-init.sh) has loaded pea.ko and mounted debugfs.

PEA=${PEA:-/bin/pea}
DIR=/tmp/pea-demo

MODE=${1:-trace}
case "$MODE" in
trace|kfunc)	;;
storm)	exec /bin/pea-storm "${2:-2}" ;;
*)	echo "usage: pea-demo [trace | kfunc | storm [SECONDS]]" >&2; exit 2 ;;
esac

say() { printf '\n### %s\n' "$*"; }
show() { printf '\n$ %s\n' "$*"; }

# The workload: cat a few files, now and then one that does not exist.
workload() {
	i=0
	while [ "$i" -lt "$1" ]; do
		cat /etc/hostname "$DIR/greeting.txt" /proc/version > /dev/null
		cat "$DIR/no-such-file" 2> /dev/null
		i=$((i + 1))
		sleep 0.3
	done
}

# Real execs: run the pea tool's help now and then.
exec_workload() {
	i=0
	while [ "$i" -lt "$1" ]; do
		"$PEA" help > /dev/null
		i=$((i + 1))
		sleep 0.3
	done
}

# A BPF program (examples/bpf/opensnoop, fentry on do_sys_openat2 calling
# pea_kf_output()) and pea's own kretprobe on the same function, writing
# into one pea map, read as one time-ordered stream.
kfunc_demo() {
	say "a BPF program and pea's own probe in one map, one ordered stream"
	if ! [ -x /usr/bin/opensnoop ] ||
	   ! grep -q '^state on' /sys/kernel/debug/pea/kfunc 2>/dev/null; then
		echo "(no opensnoop here, or pea's kfuncs are off:"
		echo " $(grep '^state' /sys/kernel/debug/pea/kfunc 2>/dev/null))"
		return 0
	fi
	echo "opensnoop's fentry program writes each open's entry (its file name)"
	echo "with pea_kf_output(); -r attaches pea's own kretprobe producer to the"
	echo "same map, which writes its return (the fd, or -errno, and the latency)."
	echo "libpea merges the CPUs' rings by time: each entry, then its return."
	show "opensnoop -r -d 3 (a shell loop of 'cat' opens files)"
	(sleep 1; workload 2) &
	wl=$!
	/usr/bin/opensnoop -r -d 3 | grep -e ready -e ' cat '
	wait "$wl"
}

mkdir -p "$DIR"
echo "hello from pea" > "$DIR/greeting.txt"
if [ "$MODE" = kfunc ]; then
	kfunc_demo
	exit 0
fi

say "pea demo on $(uname -r), $(nproc) CPUs: tracing file opens through a pea map"
echo "Every call of do_sys_openat2() hits a kprobe; its handler writes one record"
echo "with the caller and the file name (ARG1, a user string) into the ring of"
echo "its CPU, and 'pea trace' reads the rings with libpea. A shell loop of"
echo "'cat' opens files in the background."

show "pea trace kprobe:do_sys_openat2 --str ARG1 --duration 4"
(sleep 1; workload 5) &
wl=$!
(sleep 2.5; "$PEA" stat > "$DIR/stat.txt" 2>&1) &
st=$!
"$PEA" trace kprobe:do_sys_openat2 --str ARG1 --duration 4
rc=$?
wait "$wl" "$st"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"

say "'pea stat', taken while that trace ran: one ring per CPU, and the probe"
show "pea stat"
cat "$DIR/stat.txt"

say "the same function at its return: the fd (or -errno) and the latency"
show "pea trace kretprobe:do_sys_openat2 --str ARG1 --count 8"
(sleep 1; workload 4) &
wl=$!
"$PEA" trace kretprobe:do_sys_openat2 --str ARG1 --count 8
rc=$?
wait "$wl"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"

say "typed arguments by name from BTF, and a predicate on one in the kernel"
echo "Fetch expressions after the probe name the function's parameters and"
echo "fields behind them (the kernel's BTF gives names, types and offsets);"
echo "the kernel reads them at each hit and --filter tests them before"
echo "anything is written: only the opens under /etc are recorded, the"
echo "others count as filtered out."
show "pea trace kprobe:do_sys_openat2 filename 'how->flags' --filter 'filename ~ \"/etc/*\"' --count 4"
(sleep 1; workload 4) &
wl=$!
"$PEA" trace kprobe:do_sys_openat2 filename 'how->flags' --filter 'filename ~ "/etc/*"' --count 4
rc=$?
wait "$wl"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"
echo
echo "execsnoop: each exec's arguments, from the syscall's entry (argv is an"
echo "array of strings in the caller's memory: join() reads one a fetch)."
show "pea trace sysenter:execve 'join(argv)' --filter 'argv[1] == \"help\"' --count 2"
(sleep 1; exec_workload 3) &
wl=$!
"$PEA" trace sysenter:execve 'join(argv)' --filter 'argv[1] == "help"' --count 2
rc=$?
wait "$wl"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"

say "user space: a uretprobe beside the kretprobe, on the pea tool itself"
echo "uretprobe:PATH:SYMBOL finds the function in the file's .symtab or"
echo ".dynsym (libraries such as libc too) and probes it in every process that"
echo "runs it: here probe_parse() of /bin/pea, which the workload runs with a"
echo "good and a bad PROBE argument: the string at entry, the return value"
echo "and the latency. RET is the whole return register: probe_parse()"
echo "returns an int, so its -EINVAL (-22) shows in the low 32 bits, as"
echo "4294967274."
show "pea trace uretprobe:/bin/pea:probe_parse --str ARG0 --count 4"
(sleep 1; i=0; while [ "$i" -lt 3 ]; do
	"$PEA" trace kprobe:no_such_function_here > /dev/null 2>&1
	"$PEA" trace not-a-probe > /dev/null 2>&1
	i=$((i + 1)); sleep 0.3; done) &
wl=$!
"$PEA" trace uretprobe:/bin/pea:probe_parse --str ARG0 --count 4
rc=$?
wait "$wl"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"

say "a kernel tracepoint: each exec, with the fields of its tracefs format"
echo "The in-kernel filter drops the execs of other programs before anything"
echo "is written. Busybox runs its applets without exec, so the workload runs"
echo "the pea tool itself."
show "pea trace tp:sched:sched_process_exec --filter 'filename ~ \"*/pea\"' --count 3"
(sleep 1; exec_workload 4) &
wl=$!
"$PEA" trace tp:sched:sched_process_exec --filter 'filename ~ "*/pea"' --count 3
rc=$?
wait "$wl"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"

say "packets: a netfilter hook, each packet decoded on one line"
echo "The hook (LOCAL_IN, IPv4) accepts every packet unchanged and writes its"
echo "first bytes, from the IP header, into the ring of its CPU. Two pings"
echo "of 127.0.0.1 give two echo requests and two replies."
ip link set lo up 2> /dev/null || ifconfig lo up
show "pea trace netfilter:ipv4:LOCAL_IN --packet 64 --count 4"
(sleep 1; ping -c 2 -i 0.3 127.0.0.1 > /dev/null) &
wl=$!
"$PEA" trace netfilter:ipv4:LOCAL_IN --packet 64 --count 4
rc=$?
wait "$wl"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"

say "aggregations in the tool: a latency histogram and a count per process"
echo "--hist latency sorts every return's latency into log2 buckets and"
echo "--count-by comm counts the hits per process name; they print at the end"
echo "(every SECONDS with --interval) instead of one line per event."
show "pea trace kretprobe:do_sys_openat2 --hist latency --count-by comm --duration 3"
(sleep 1; workload 5) &
wl=$!
"$PEA" trace kretprobe:do_sys_openat2 --hist latency --count-by comm \
	--duration 3
rc=$?
wait "$wl"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"

# A burst that overflows a 1-page ring: dd writes /dev/null one byte at
# a time, so write_null() (drivers/char/mem.c) runs exactly BURST times.
BURST=20000
burst_trace() {
	"$PEA" trace kretprobe:write_null --hist latency --pages 1 "$@" -- \
		dd if=/dev/zero of=/dev/null bs=1 count="$BURST" 2>&1 |
		grep -v -e '^[0-9]* bytes' -e 'records in$' -e 'records out$'
}

say "aggregations in the kernel: a complete histogram under a ring overflow"
echo "dd writes /dev/null one byte at a time: write_null() returns $BURST"
echo "times in a burst, and each probe's ring is one page. With --count the"
echo "tool must see every event, so the histogram is made from the records"
echo "that arrived, and the table says how many were lost:"
show "pea trace kretprobe:write_null --hist latency --pages 1 --count $BURST -- dd if=/dev/zero of=/dev/null bs=1 count=$BURST"
burst_trace --count "$BURST" > "$DIR/hist-rec.txt"
cat "$DIR/hist-rec.txt"
echo
echo "Without --count, the kernel counts every return in a table on the link,"
echo "per CPU and lock-free, and only the table crosses to user space. Here the"
echo "records are also written (--output to a Perfetto file), so the ring"
echo "overflows as much as before, and the header still says \"complete"
echo "(in-kernel)\": every return is in the table, whatever the ring loses."
show "pea trace kretprobe:write_null --hist latency --pages 1 --output $DIR/burst.json --format perfetto -- dd if=/dev/zero of=/dev/null bs=1 count=$BURST"
burst_trace --output "$DIR/burst.json" --format perfetto > "$DIR/hist-kern.txt"
cat "$DIR/hist-kern.txt"
# The claim, checked: BURST values, BURST in the buckets, complete.
vals=$(sed -n 's/.*histogram of latency (ns), \([0-9]*\) values, complete (in-kernel)$/\1/p' \
	"$DIR/hist-kern.txt")
inb=$(awk '/ \|[@ ]*\|$/ { sub(/ \|[@ ]*\|$/, ""); n += $NF }
	END { print n + 0 }' "$DIR/hist-kern.txt")
if [ "$vals" = "$BURST" ] && [ "$inb" = "$BURST" ]; then
	echo "(checked: $vals values, $inb in the buckets, for $BURST calls of write_null)"
else
	echo "DEMO FAILED: the in-kernel histogram has '${vals:-no}' values and $inb in its buckets, for $BURST calls"
	demo_failed=1
fi

say "off-CPU time by kernel stack, summed in the kernel (offcputime)"
echo "Each blocked switch-out keeps its time (sched_switch); the task's next"
echo "switch-in, in finish_task_switch() on the task's own stack, adds the"
echo "time blocked to its (pid, comm, kernel stack) in a table on the link."
echo "The command starts a child that sleeps 0.4 s and waits for it (busybox"
echo "sh waits in sigsuspend() until SIGCHLD), then"
echo "sleeps 0.3 s itself (busybox sh execs its last command in place: the"
echo "same pid, as sleep); the child is another process, not traced."
show "pea trace --off-cpu --count-by kstack -- sh -c 'sleep 0.4 & wait; sleep 0.3'"
"$PEA" trace --off-cpu --count-by kstack -- sh -c 'sleep 0.4 & wait; sleep 0.3'
rc=$?
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"

say "JSON lines, for jq and log shippers"
show "pea trace kprobe:do_sys_openat2 --str ARG1 --json --count 3"
(sleep 1; workload 3) &
wl=$!
"$PEA" trace kprobe:do_sys_openat2 --str ARG1 --json --count 3
rc=$?
wait "$wl"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"

say "kernel stacks: which kernel paths reach the function (--kstack)"
echo "The probe handler unwinds the kernel stack of each hit (NMI-safe, into"
echo "the record) and the tool names the frames from /proc/kallsyms, at"
echo "most 6 here: the probed function, then its callers down to the system"
echo "call entry."
show "pea trace kprobe:do_sys_openat2 --str ARG1 --kstack=6 --count 2"
(sleep 1; workload 2) &
wl=$!
"$PEA" trace kprobe:do_sys_openat2 --str ARG1 --kstack=6 --count 2
rc=$?
wait "$wl"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"

# --- trace files for viewers (docs/trace-formats.md) ---
say "a CTF trace for babeltrace2 and Trace Compass (--output DIR --format ctf)"
echo "The same events also go to a CTF 1.8 trace directory: TSDL metadata and"
echo "one stream per CPU; babeltrace2 reads it back."
show "pea trace kretprobe:do_sys_openat2 --str ARG1 --count 4 -q --output $DIR/ctf --format ctf"
(sleep 1; workload 3) &
wl=$!
"$PEA" trace kretprobe:do_sys_openat2 --str ARG1 --count 4 -q \
	--output "$DIR/ctf" --format ctf 2>/dev/null
rc=$?
wait "$wl"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"
show "ls $DIR/ctf"
ls "$DIR/ctf"
if command -v babeltrace2 >/dev/null; then
	show "babeltrace2 $DIR/ctf"
	babeltrace2 "$DIR/ctf"
else
	echo "(babeltrace2 is not in this guest: scripts/setup.sh installs it)"
fi

say "several probes in one session, each line tagged with its probe"
echo "One map and one set of rings for all: the return of every open with its"
echo "file name, and the execs of the pea tool, in one time order. Options"
echo "after a probe are its own (the string, the filter); the summary has a"
echo "row per probe."
show "pea trace kretprobe:do_sys_openat2 --str ARG1 tp:sched:sched_process_exec --filter 'filename ~ \"*/pea\"' --duration 3"
(sleep 1; workload 2; exec_workload 2) &
wl=$!
"$PEA" trace kretprobe:do_sys_openat2 --str ARG1 \
	tp:sched:sched_process_exec --filter 'filename ~ "*/pea"' --duration 3
rc=$?
wait "$wl"
[ "$rc" -eq 0 ] || echo "pea trace exited with $rc"

kfunc_demo

say "a flame graph: pea profile"
echo "Sampling at 199 Hz with kernel and user stacks, per task with"
echo "inheritance (as perf record -g -- CMD): a test program that spends three"
echo "quarters of its time in a() and a quarter in b(), both calling spin()."
echo "The heaviest stacks, then an SVG flame graph (click to zoom, search),"
echo "which this demo hands to the host: make demo says where it is."
WORK=/bin/test_sample
[ -x "$WORK" ] || WORK=
if [ -n "$WORK" ]; then
	show "pea profile -F 199 --top 2 --svg $DIR/flamegraph.svg -- $WORK --work 0 2"
	"$PEA" profile -F 199 --top 2 --svg "$DIR/flamegraph.svg" -- \
		"$WORK" --work 0 2
else
	show "pea profile -F 199 -d 2 --top 2 --svg $DIR/flamegraph.svg"
	(workload 6) &
	wl=$!
	"$PEA" profile -F 199 -d 2 --top 2 --svg "$DIR/flamegraph.svg"
	wait "$wl"
fi
# The SVG, between markers that scripts/demo.sh cuts it out at.
if [ -s "$DIR/flamegraph.svg" ]; then
	echo "#### pea-demo file flamegraph.svg"
	cat "$DIR/flamegraph.svg"
	echo
	echo "#### pea-demo end flamegraph.svg"
fi

say "errors say what to do"
show "pea trace kprobe:no_such_function_here"
"$PEA" trace kprobe:no_such_function_here
echo "(exit status $?)"

say "end of the demo"
exit "${demo_failed:-0}"
