#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The one kernel-log scan of every harness (make check, make check-debug,
# make fuzz): find the reports the kernel's checkers print, group each
# report's lines and classify it. Banners such as "RCU lockdep checking is
# enabled." or "KernelAddressSanitizer initialized" are not reports.
#
# Usage:
#   scripts/splat-scan.sh FILE
#       one line per report: LINE<TAB>TYPE<TAB>CONTEXT<TAB>HEADER
#   scripts/splat-scan.sh --records LABEL FILE
#       check-kernel.sh's "C<TAB>..." comment records: each report, then
#       the first one in full; nothing when FILE is clean (leaving out the
#       reports whose TYPE matches the regular expression SPLAT_IGNORE)
#   scripts/splat-scan.sh --full LINE FILE
#       the report that starts at LINE, in full
#
# TYPE is e.g. kasan/slab-out-of-bounds, kcsan/data-race (a race with an
# access in a pea module), kcsan/kernel (one between accesses of the
# kernel proper only), lockdep/circular, rcu/suspicious,
# sleep-in-atomic, ubsan/shift-out-of-bounds, odebug, list/add, list/del,
# refcount, softlockup, hung-task, rcu/stall, panic, kernel-bug, gpf,
# page-fault, warning, bug, stack-dump (docs/checking.md has the table).
# CONTEXT is what the guest was doing, from its /dev/kmsg markers:
# "boot", test_NAME ("pea-guest: running test_NAME"), "unload"
# ("pea-guest: end"), canary:NAME ("pea-canary: begin NAME" ... "end").
#
# A report starts at a header line. A specific header (a checker's own
# headline) opens a new report unless the open report has only generic
# lines so far (a "cut here" or WARNING: CPU line that came first), in
# which case it names that report if it began at most NEAR lines earlier. "cut here" (the first line of every
# WARN) always opens a report. A generic headline (WARNING:, BUG:) belongs to the open report only if that report began
# with a generic line at most NEAR lines earlier (a WARN whose message is
# a checker's headline); otherwise it opens a report of its own. Other
# generic lines (Oops, Call Trace, end trace) within GAP lines of the open
# report's last line belong to it. A marker line closes the open report.
#
# Exit status: 0 (also when reports were found), 2 on usage errors.

set -euo pipefail

usage() { printf 'usage: %s [--records LABEL | --full LINE] FILE\n' "$0" >&2; exit 2; }

MODE=list
ARG=
case "${1:-}" in
--records) MODE=records; ARG=${2:-}; shift 2 || usage ;;
--full)    MODE=full; ARG=${2:-}; shift 2 || usage ;;
-*|"")     usage ;;
esac
[ $# -eq 1 ] || usage
FILE=$1
[ -e "$FILE" ] || { printf 'splat-scan: %s: no such file\n' "$FILE" >&2; exit 2; }

tr -d '\r' < "$FILE" | awk -v mode="$MODE" -v arg="$ARG" -v ignore="${SPLAT_IGNORE:-}" '
# specific(s): the type of a checker headline, or "".
function specific(s,    k) {
	if (match(s, /BUG: KASAN: [a-z-]+/)) {
		k = substr(s, RSTART + 12, RLENGTH - 12)
		return "kasan/" k
	}
	# KCSAN: "data-race in A / B", "assert: race in A / B".
	if (s ~ /BUG: KCSAN: data-race/)
		return "kcsan/data-race"
	if (s ~ /BUG: KCSAN: assert: race/)
		return "kcsan/assert"
	if (s ~ /BUG: KCSAN: /)
		return "kcsan/other"
	if (s ~ /WARNING: possible circular locking dependency detected/)
		return "lockdep/circular"
	if (s ~ /WARNING: possible recursive locking detected/)
		return "lockdep/recursive"
	if (s ~ /WARNING: inconsistent lock state/)
		return "lockdep/inconsistent"
	if (s ~ /WARNING: possible irq lock inversion dependency detected/)
		return "lockdep/irq-inversion"
	if (s ~ /WARNING: [A-Z]+-safe -> [A-Z]+-unsafe lock order detected/)
		return "lockdep/lock-order"
	if (s ~ /WARNING: bad unlock balance detected/)
		return "lockdep/unlock-balance"
	if (s ~ /WARNING: (held lock freed|lock held when returning to user space|lock held at task exit time|Nested lock was not taken|bad contention detected)/)
		return "lockdep/other"
	if (s ~ /INFO: trying to register non-static key/)
		return "lockdep/non-static-key"
	if (s ~ /BUG: (MAX_LOCKDEP|MAX_STACK_TRACE|looking up invalid subclass|Invalid wait context|key [0-9a-f]+ has not been registered)/)
		return "lockdep/other"
	if (s ~ /DEBUG_LOCKS_WARN_ON\(/)
		return "lockdep/debug-locks-warn"
	if (s ~ /WARNING: suspicious RCU usage/)
		return "rcu/suspicious"
	if (s ~ /BUG: sleeping function called from invalid context/)
		return "sleep-in-atomic"
	if (s ~ /BUG: scheduling while atomic/)
		return "scheduling-while-atomic"
	if (s ~ /BUG: using [a-z_]+\(\) in preemptible/)
		return "preempt"
	if (s ~ /BUG: workqueue leaked lock or atomic/)
		return "workqueue-leak"
	if (match(s, /UBSAN: [a-z-]+ in /)) {
		k = substr(s, RSTART + 7, RLENGTH - 11)
		return "ubsan/" k
	}
	if (s ~ /ODEBUG: .*object type: /)
		return "odebug"
	if (s ~ /ODEBUG: Out of memory/)
		return "odebug/oom"
	if (s ~ /list_add corruption/)
		return "list/add"
	if (s ~ /list_del corruption/)
		return "list/del"
	if (s ~ /refcount_t: /)
		return "refcount"
	if (s ~ /watchdog: BUG: soft lockup/)
		return "softlockup"
	if (s ~ /Watchdog detected hard LOCKUP/)
		return "hardlockup"
	if (s ~ /INFO: task .* blocked for more than [0-9]+ seconds/)
		return "hung-task"
	if (s ~ /rcu: INFO: rcu_[a-z]+ (self-detected stall|detected stalls|detected expedited stalls)/ ||
	    s ~ /rcu_[a-z]+ detected stalls on CPUs/ || s ~ /INFO: rcu_[a-z]+ (self-)?detected stall/)
		return "rcu/stall"
	if (s ~ /BUG: KFENCE: /)
		return "kfence"
	if (s ~ /stack-protector: Kernel stack is corrupted/)
		return "stack-protector"
	if (s ~ /corrupted stack end detected inside scheduler/)
		return "stack-end"
	if (s ~ /usercopy: Kernel memory (exposure|overwrite) attempt/)
		return "usercopy"
	if (s ~ /detected buffer overflow in /)
		return "fortify"
	if (s ~ /BUG: (Bad page state|Bad page map|Bad rss-counter)/)
		return "bad-page"
	if (s ~ /BUG [^ ]+ \((Not tainted|Tainted: [^)]*)\): /)
		return "slub"
	if (s ~ /general protection fault/)
		return "gpf"
	if (s ~ /BUG: (unable to handle page fault|kernel NULL pointer dereference|unable to handle kernel)/)
		return "page-fault"
	if (s ~ /kernel BUG at /)
		return "kernel-bug"
	if (s ~ /Kernel panic - not syncing/)
		return "panic"
	if (s ~ /turning off the locking correctness validator/)
		return "lockdep/off"
	return ""
}
# strong(s): a generic headline (see above).
function strong(s) {
	return s ~ /-+\[ cut here \]-+/ || s ~ /(^|[^A-Za-z0-9_])(WARNING|BUG):/
}
# generic(s): a line that belongs to some report, or "".
function generic(s) {
	if (s ~ /-+\[ cut here \]-+/)
		return "warning"
	if (s ~ /(^|[^A-Za-z0-9_])WARNING:/)
		return "warning"
	if (s ~ /(^|[^A-Za-z0-9_])BUG:/)
		return "bug"
	if (s ~ /(^|[^A-Za-z0-9_])Oops:/)
		return "oops"
	if (s ~ /Call Trace:/)
		return "stack-dump"
	if (s ~ /---\[ end (trace|Kernel panic)/)
		return "stack-dump"
	return ""
}
function close_report() { open = 0 }
function new_report(type, isspec) {
	n++
	rline[n] = NR
	rtype[n] = type
	rspec[n] = isspec
	rgen[n] = !isspec
	rctx[n] = ctx
	rhead[n] = $0
	open = 1
	last = NR
}
BEGIN { GAP = 100; NEAR = 5; ctx = "boot"; open = 0; n = 0 }
{ text[NR] = $0 }
/pea-guest: running test_/ {
	c = $0
	sub(/.*pea-guest: running /, "", c)
	sub(/[ \t].*$/, "", c)
	ctx = c
	close_report()
	next
}
/pea-guest: finished / { ctx = "boot"; close_report(); next }
/pea-guest: end/ { ctx = "unload"; close_report(); next }
/pea-canary: begin / {
	c = $0
	sub(/.*pea-canary: begin /, "", c)
	sub(/[ \t].*$/, "", c)
	ctx = "canary:" c
	close_report()
	next
}
/pea-canary: end / { ctx = "boot"; close_report(); next }
# A KCSAN report: the line after each access ("read to 0x... of 8 bytes
# by task 1 on cpu 0:") is the frame of the access; its module decides
# who races (END).
open && rtype[n] ~ /^kcsan\// {
	if (kframe) {
		kframe = 0
		kseen[n] = 1
		if ($0 ~ /\[pea[a-z0-9_]*\]/)
			kpea[n] = 1
	}
	if ($0 ~ /(read|write|read-write)( \([a-z]+\))* to 0x[0-9a-f]+ of [0-9]+ bytes by /)
		kframe = 1
}
{
	s = specific($0)
	if (s != "") {
		if (open && !rspec[n] && NR - rline[n] <= NEAR) {
			rtype[n] = s
			rspec[n] = 1
			rhead[n] = $0
			last = NR
		} else
			new_report(s, 1)
		next
	}
	g = generic($0)
	if (g != "") {
		if ($0 ~ /-+\[ cut here \]-+/)
			new_report(g, 0)
		else if (strong($0) ? (open && rgen[n] && NR - rline[n] <= NEAR) : (open && NR - last <= GAP)) {
			last = NR
			if (strong($0) && !rspec[n] && rhead[n] ~ /cut here/)
				rhead[n] = $0
		}		else
			new_report(g, 0)
	}
}
END {
	# A data race whose accesses are all in the kernel proper (no frame
	# of a pea module, pea_* included, at either access) is one of the
	# kernel proper: kcsan/kernel (docs/checking.md).
	for (i = 1; i <= n; i++)
		if (rtype[i] == "kcsan/data-race" && kseen[i] && !kpea[i])
			rtype[i] = "kcsan/kernel"
	if (mode == "list") {
		for (i = 1; i <= n; i++)
			printf "%d\t%s\t%s\t%s\n", rline[i], rtype[i], rctx[i], rhead[i]
		exit
	}
	if (mode == "full") {
		for (i = 1; i <= n; i++)
			if (rline[i] == arg + 0)
				break
		if (i > n)
			exit
		to = (i < n) ? rline[i + 1] - 1 : NR
		if (to > rline[i] + 80)
			to = rline[i] + 80
		for (j = rline[i] - 2; j <= to; j++)
			if (j >= 1)
				print text[j]
		exit
	}
	# --records: the reports not of the types SPLAT_IGNORE matches.
	k = 0
	for (i = 1; i <= n; i++)
		if (ignore == "" || rtype[i] !~ ignore)
			keep[++k] = i
	if (k == 0)
		exit
	printf "C\t%s: %d kernel report(s):\n", arg, k
	for (i = 1; i <= k && i <= 200; i++)
		printf "C\t[%s] %s: %s\n", rctx[keep[i]], rtype[keep[i]], rhead[keep[i]]
	printf "C\t%s: first report in full:\n", arg
	f = keep[1]
	to = (f < n) ? rline[f + 1] - 1 : NR
	if (to > rline[f] + 80)
		to = rline[f] + 80
	for (j = rline[f] - 2; j <= to; j++)
		if (j >= 1)
			printf "C\t| %s\n", text[j]
}'
