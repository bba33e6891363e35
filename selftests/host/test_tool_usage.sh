#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test (no kernel): the pea tool's help and the usage errors it finds
# in its command line alone. Help exits 0 with the text on stdout and
# nothing on stderr; every bad command line exits 2, with nothing on
# stdout and the reason on stderr, before the tool touches /dev/pea, the
# module, tracefs or BTF: it runs as nobody (who may open none of them in
# the guest), and none of these cases names a probe or field whose answer
# depends on the kernel. The guests' tests keep what needs one
# (test_tool_errors' runtime errors, a tracepoint's fields, a function's
# parameters). TAP on stdout.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TAP_NAME='pea usage'
. "$ROOT/selftests/host/host_tap.sh"
TMP=$(mktemp -d /tmp/pea-usage.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# nobody must reach the binary whatever the clone's directory allows.
chmod 755 "$TMP"
cp "$ROOT/build/tools/pea" "$TMP/pea"
PEA=$TMP/pea

# run [--root] ARGS...: the tool as nobody (as root with --root); its
# status in RC, stdout in $TMP/out, stderr in $TMP/err.
run() {
	local as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	if [ "$1" = --root ]; then
		as=()
		shift
	fi
	"${as[@]}" "$PEA" "$@" > "$TMP/out" 2> "$TMP/err" < /dev/null
	RC=$?
}

# has FILE TEXT...: FILE holds every TEXT.
has() {
	local f=$1 t
	shift
	for t in "$@"; do
		grep -qF -- "$t" "$f" || return 1
	done
}

# --- help (was test_tool_errors' test_help) ---
run --root --help
ok "$([ "$RC" = 0 ]; echo $?)" "pea --help exits 0" "exit $RC"
has "$TMP/out" "usage: pea COMMAND" "  trace " "  stat " "Exit status"
ok $? "pea --help lists the commands and the exit statuses" "$(cat "$TMP/out")"
ok "$([ ! -s "$TMP/err" ]; echo $?)" "pea --help writes nothing on stderr" "$(cat "$TMP/err")"
run --root -h
ok "$([ "$RC" = 0 ]; echo $?)" "pea -h exits 0" "exit $RC"
run --root
ok "$([ "$RC" = 2 ]; echo $?)" "pea without a command exits 2" "exit $RC"
has "$TMP/out" "usage: pea COMMAND"
ok $? "... and shows the usage" "$(cat "$TMP/out")"
run --root trace --help
ok "$([ "$RC" = 0 ]; echo $?)" "pea trace --help exits 0" "exit $RC"
has "$TMP/out" "usage: pea trace [OPTIONS] PROBE" "kprobe:SYMBOL[+OFFSET]" \
	"kretprobe:SYMBOL" "--args" "--str ARGn" "--bytes ARGn:LEN" "--user" \
	"--kernel" "--pid" "--cpu" "--duration" "--count" "--pages" "--json" \
	"--flight-recorder" "--unordered" "--no-children" "--no-fprobe" '"type":"summary"' \
	"Exit status"
ok $? "pea trace --help describes every option, the JSON lines and the exit statuses" \
	"$(head -c 2000 "$TMP/out")"
run --root help trace
[ "$RC" = 0 ] && has "$TMP/out" "usage: pea trace"
ok $? "pea help trace shows the trace help" "exit $RC"
run --root stat --help
ok "$([ "$RC" = 0 ]; echo $?)" "pea stat --help exits 0" "exit $RC"
has "$TMP/out" "usage: pea stat" "--map" "--json" "-e, --event" "mount -t debugfs"
ok $? "pea stat --help describes the options, -e and the debugfs mount" \
	"$(cat "$TMP/out")"

# usage MSG ARGS...: as nobody, exit 2, MSG on stderr (which starts with
# "pea"), nothing on stdout.
usage() {
	local msg=$1
	shift
	run "$@"
	[ "$RC" = 2 ] && has "$TMP/err" "$msg" && [ ! -s "$TMP/out" ] &&
		[ "$(head -c 3 "$TMP/err")" = pea ]
	ok $? "usage error 'pea $*': exit 2, \"$msg\", nothing on stdout" \
		"exit $RC, stderr: $(cat "$TMP/err")"
}

# --- the command line (was test_tool_errors' test_usage) ---
usage "unknown command 'nosuchcmd'" nosuchcmd
usage "no command 'nosuchcmd'" help nosuchcmd
usage "which probe?" trace
usage "is not a probe" trace do_sys_openat2
usage "names no function" trace kprobe:
usage "is not a function name" trace kprobe:a-b
usage "bad offset" trace kprobe:do_sys_openat2+x1
usage "a kretprobe takes no +OFFSET" trace kretprobe:do_sys_openat2+8
usage "kprobe:a: --maxactive is for kretprobes and uretprobes" trace kprobe:a --maxactive 4 kretprobe:b
usage "name an argument ARG0..ARG5" trace kprobe:a --str ARG6
usage "must be 1..256" trace kprobe:a --str ARG1:0
usage "must be 1..256" trace kprobe:a --str ARG1:257
usage "--bytes needs a length" trace kprobe:a --bytes ARG1
usage "only one of --str and --bytes" trace kprobe:a --str ARG1 --bytes ARG2:4
usage "go with --str or --bytes" trace kprobe:a --kernel
usage "not both" trace kprobe:a --str 1 --user --kernel
usage "a power of two" trace kprobe:a --pages 3
usage "a power of two" trace kprobe:a --pages 0
usage "--count '0'" trace kprobe:a --count 0
usage "--duration '-1'" trace kprobe:a --duration -1
usage "--pid 'x'" trace kprobe:a --pid x
usage "--no-children goes with --pid or -- CMD" trace kprobe:a --no-children
usage "--no-children goes with --pid or -- CMD" trace --off-cpu --no-children
usage "this machine has CPUs 0.." trace kprobe:a --cpu 100000
usage "--maxactive is for kretprobes and uretprobes" trace kprobe:a --maxactive 4
usage "uprobe:/bin/x:fn: --maxactive is for kretprobes and uretprobes" trace uprobe:/bin/x:fn --maxactive 4
usage "unknown option '--frobnicate'" trace kprobe:a --frobnicate
usage "needs a value" trace kprobe:a --count
usage "--count does not go with --flight-recorder" trace kprobe:a -F --count 3
usage "--unordered does not go with --flight-recorder" trace kprobe:a -F --unordered
usage "unknown option '--frobnicate'" stat --frobnicate
usage "unexpected argument 'extra'" stat extra
usage "needs a value" stat --map
has "$TMP/err" "see 'pea stat --help'"
ok $? "usage errors point at the command's --help" "$(cat "$TMP/err")"

# --- --hist, --count-by, --interval (was test_tool_hist's test_usage;
# its cases on a tracepoint's fields and a function's parameters stay) ---
usage "only a kretprobe or uretprobe has a latency" trace kprobe:do_sys_openat2 --hist latency
usage "only a kretprobe or uretprobe has a return value" trace kprobe:do_sys_openat2 --hist ret
usage "has no kernel stacks" trace netfilter:ipv4:LOCAL_IN --count-by kstack
usage "go with --hist or --count-by" trace kprobe:do_sys_openat2 --interval 1
usage "--interval '0'" trace kprobe:do_sys_openat2 --hist arg0 --interval 0
usage "--top '0'" trace kprobe:do_sys_openat2 --count-by comm --top 0
usage "--max-keys '2000000': 1..1048576" trace kprobe:do_sys_openat2 --count-by comm --max-keys 2000000
usage "go with --count-by" trace kprobe:do_sys_openat2 --hist arg0 --top 3
usage "--interval does not go with --flight-recorder" trace kprobe:do_sys_openat2 --hist arg0 -F --interval 1
usage "contradict" trace kprobe:do_sys_openat2 --hist arg0 --events -q
# A default must suit every probe; after a PROBE only that one.
usage "kprobe:do_sys_openat2 is not one" trace --hist latency kretprobe:__x64_sys_getppid kprobe:do_sys_openat2
usage "only a kretprobe or uretprobe has a return value" trace kretprobe:__x64_sys_getppid kprobe:do_sys_openat2 --hist ret

# --- --count-by lists and --lhist (were test_tool_kagg's) ---
usage "--lhist MIN,MAX,STEP: integers, MIN below MAX, STEP at least 1" trace --lhist 0,10,0 kretprobe:pea_st_kstack_target --hist latency
usage "MIN below MAX" trace --lhist 10,0,1 kretprobe:pea_st_kstack_target --hist latency
usage "MIN below MAX" trace --lhist 0,10 kretprobe:pea_st_kstack_target --hist latency
usage "--lhist: 2000 buckets from MIN to MAX by STEP; at most 1024" trace --lhist 0,2000,1 kretprobe:pea_st_kstack_target --hist latency
usage "--lhist goes with --hist" trace --lhist 0,10,1 kretprobe:pea_st_kstack_target
usage "comm twice" trace kprobe:pea_st_kstack_target --count-by comm,comm
usage "a list of keys takes comm, pid, tid and cpu" trace kprobe:pea_st_kstack_target --count-by comm,ret
usage "at most 4 words" trace kprobe:pea_st_kstack_target --count-by comm,pid,tid,cpu
usage "a key after the last ','" trace kprobe:pea_st_kstack_target --count-by comm,
usage "fetches ('join(argv)') are for kprobes, kretprobes (their types from BTF), tracepoints (from their fields), uprobes and uretprobes" trace netfilter:ipv4:LOCAL_IN 'join(argv)'
usage "write sysenter:NAME, e.g. sysenter:openat" trace sysenter:
usage "or sysenter:NAME" trace execve

printf '1..%d\n' "$N"
[ "$FAILED" = 0 ]
