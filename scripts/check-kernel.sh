#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# One kernel of `make check` (scripts/check.sh runs this once per kernel):
# set the machine up, build pea, boot the test guest and
# report every test case as kselftest-style TAP on stdout. Progress and
# build output go to stderr. The last line is "N passed, M failed"; the exit
# status is non-zero when anything failed. Skipped cases count as failed.
#
# Environment (all optional):
#   KVER          kernel to build for and boot (see scripts/setup.sh);
#                 "debug" is the debug kernel (scripts/debug-kernel.sh,
#                 docs/checking.md): built once and cached, booted with
#                 kasan_multi_shot and TIME_SCALE=3; "kcsan" its KCSAN
#                 variant (scripts/debug-kernel.sh --variant kcsan);
#                 "mt-K" is kernel K (mt-6.1 = the default one) under
#                 multi-threaded TCG, running only the tests listed in
#                 scripts/mt-tests (those of TESTS if TESTS is set);
#                 "kcsan" without TESTS runs every other test
#   VMLINUZ, KDIR a locally built kernel: its image and its kbuild tree
#                 (KVER is then its release); only packages are set up
#   TIME_SCALE    how much slower than production the kernel runs, passed
#                 to the tests as PEA_TIME_SCALE (default 1; debug: 3);
#                 VM_TIMEOUT and TEST_TIMEOUT default to 1800 and 300
#                 seconds times TIME_SCALE
#   TESTS         run only these test programs (comma or space separated,
#                 test_ prefix optional); without it every test that
#                 scripts/test-kernels gives this kernel
#   SMP, MEM, VM_TIMEOUT, TEST_TIMEOUT, APPEND_EXTRA, VERBOSE
#                 passed on to scripts/vm-run.sh
#   OUT           where the VM output goes (default build/vm)
#   SKIP_BUILD=1  do not run `make all`
#   PEA_FILES     what to put into the initramfs instead of the repo layout
#                 (space separated, see scripts/mkinitramfs.sh)

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

T0=$(date +%s)
OUT=${OUT:-$ROOT/build/vm}
export OUT
MAKE=${MAKE:-make}

log() { printf 'check: %s\n' "$*" >&2; }

# The report also goes to $OUT/check.tap (.ci/run repeats its last line).
mkdir -p "$OUT" "$ROOT/build"
TAPFILE=$OUT/check.tap
rm -f "$TAPFILE"

# Print a TAP report for a failure before the guest could even start.
early_fail() {
	local what=$1
	{
		printf 'TAP version 13\n'
		printf 'not ok 1 - %s\n' "$what"
		printf '1..1\n'
		printf '# took %ss\n' "$(( $(date +%s) - T0 ))"
		printf '0 passed, 1 failed\n'
	} | tee "$TAPFILE"
	exit 1
}

# --- multi-threaded TCG --------------------------------------------------
# mt-K: kernel K with a host thread per vCPU, only the tests of
# scripts/mt-tests (none of them patches kernel text; docs/checking.md).
MT=0
case "${KVER:-}" in
mt-*)
	MT=1
	KVER=${KVER#mt-}
	case "$KVER" in 6.1|default) KVER= ;; esac
	export TCG_OPTS=thread=multi
	# Boot on one CPU and bring the others up from the guest's init
	# (pea.online=all, scripts/guest-init.sh): the kernel patches its
	# own text late in boot (static keys flipped by late initcalls), and
	# a vCPU that runs through a site while another patches it can
	# execute a stale int3 (6.12: an Oops in sched_clock_tick() when
	# "sched_clock: Marking stable" flipped __sched_clock_stable with
	# four CPUs up). noreplace-smp keeps the SMP alternatives (a kernel
	# booted with maxcpus=1 would patch them to UP and back at the first
	# CPU up); tsc=unstable keeps the sched clock unstable for good, so
	# that no CPU coming up (6.1 finds the TSCs unsynchronized then) or
	# clocksource watchdog flips its static key later (docs/checking.md).
	APPEND_EXTRA="maxcpus=1 noreplace-smp tsc=unstable pea.online=all${APPEND_EXTRA:+ $APPEND_EXTRA}"
	mapfile -t MT_TESTS < <(grep -v -e '^#' -e '^$' "$ROOT/scripts/mt-tests")
	if [ -n "${TESTS:-}" ]; then
		keep=()
		for t in $(printf '%s' "$TESTS" | tr ',' ' '); do
			case "$t" in test_*) ;; *) t=test_$t ;; esac
			for m in "${MT_TESTS[@]}"; do
				[ "$t" = "$m" ] && keep+=("$t")
			done
		done
		[ "${#keep[@]}" -gt 0 ] ||
			early_fail "multi-threaded TCG: none of TESTS ($TESTS) is in scripts/mt-tests"
		TESTS="${keep[*]}"
	else
		TESTS="${MT_TESTS[*]}"
	fi
	log "multi-threaded TCG (-accel tcg,thread=multi): $TESTS"
	;;
esac

# --- setup ---------------------------------------------------------------
if [ "${KVER:-}" = debug ] || [ "${KVER:-}" = kcsan ]; then
	variant=$KVER
	log "$variant kernel (scripts/debug-kernel.sh --variant $variant)"
	if ! DK=$("$ROOT/scripts/debug-kernel.sh" --variant "$variant" | tail -n1) ||
	   [ ! -f "$DK/done" ]; then
		log "$variant kernel build failed"
		early_fail "$variant kernel build (scripts/debug-kernel.sh --variant $variant)"
	fi
	VMLINUZ=$DK/vmlinuz
	KDIR=$DK/build
	KVER=$(cat "$DK/kernelrelease")
	TIME_SCALE=${TIME_SCALE:-3}
	# no5lvl: see docs/checking.md (a false KASAN report at boot).
	if [ "$variant" = debug ]; then
		APPEND_EXTRA="kasan_multi_shot no5lvl${APPEND_EXTRA:+ $APPEND_EXTRA}"
	else
		# KCSAN's watchpoints may be interrupted: races with hardirq,
		# softirq and NMI writers on the same CPU show too.
		APPEND_EXTRA="no5lvl kcsan.interrupt_watcher=1${APPEND_EXTRA:+ $APPEND_EXTRA}"
	fi
fi

# scripts/check.sh may test several kernels at once: the set-up, the build
# and the packing share the tree (module objects, apt) and take turns; the
# guests run side by side, and so does the debug kernel's own build above
# (its apt-get takes the same lock). Released once the initramfs is packed.
exec 8>> "$ROOT/build/.prepare.lock"
flock 8
if [ -n "${VMLINUZ:-}" ]; then
	# A locally built kernel: only the packages.
	[ -n "${KDIR:-}" ] && [ -f "$KDIR/Makefile" ] ||
		{ log "VMLINUZ is set but KDIR (${KDIR:-unset}) is no kbuild tree"; early_fail "setup"; }
	[ -n "${KVER:-}" ] || KVER=$(make -s -C "$KDIR" kernelrelease 2>/dev/null || true)
	log "setting up packages (scripts/setup.sh --packages)"
	if ! "$ROOT/scripts/setup.sh" --packages; then
		log "setup failed"
		early_fail "setup"
	fi
	KARGS=(KVER="$KVER" KDIR="$KDIR")
else
	log "setting up (scripts/setup.sh ${KVER:-})"
	if ! VMLINUZ=$("$ROOT/scripts/setup.sh" ${KVER:+"$KVER"} | tail -n1); then
		log "setup failed"
		early_fail "setup"
	fi
	KVER=${VMLINUZ##*/vmlinuz-}
	KARGS=(KVER="$KVER")
fi
export KVER VMLINUZ
if [ -n "${TIME_SCALE:-}" ]; then
	# The guest's own time limits stretch with the kernel's slowness.
	export TIME_SCALE
	export VM_TIMEOUT=${VM_TIMEOUT:-$(( 1800 * TIME_SCALE ))}
	export TEST_TIMEOUT=${TEST_TIMEOUT:-$(( 300 * TIME_SCALE ))}
fi
[ -n "${APPEND_EXTRA:-}" ] && export APPEND_EXTRA
log "kernel $KVER: $VMLINUZ"

# --- build ---------------------------------------------------------------
if [ "${SKIP_BUILD:-0}" != 1 ]; then
	log "building ($MAKE all ${KARGS[*]})"
	if ! "$MAKE" -C "$ROOT" --no-print-directory -j"$(nproc)" all "${KARGS[@]}" >&2; then
		log "build failed"
		early_fail "build"
	fi
fi

# --- initramfs -----------------------------------------------------------
read -r -a FILES <<< "${PEA_FILES:-}"
INITRAMFS=$OUT/initramfs.cpio.gz
export INITRAMFS
log "packing $INITRAMFS"
if ! "$ROOT/scripts/mkinitramfs.sh" "$INITRAMFS" "${FILES[@]}" >/dev/null; then
	log "mkinitramfs failed"
	early_fail "initramfs"
fi
flock -u 8
exec 8>&-

# The KCSAN kernel without TESTS: every test but those of scripts/mt-tests,
# which mt-kcsan runs with a host thread per vCPU (make check-kcsan runs
# both); test_lockdown last, as the guest does.
if [ "${variant:-}" = kcsan ] && [ "$MT" = 0 ] && [ -z "${TESTS:-}" ]; then
	list=()
	for f in "$ROOT"/build/selftests/test_*; do
		n=$(basename "$f")
		[ -x "$f" ] && [ "$n" != test_lockdown ] || continue
		grep -qx -- "$n" "$ROOT/scripts/mt-tests" || list+=("$n")
	done
	[ -x "$ROOT/build/selftests/test_lockdown" ] && list+=(test_lockdown)
	TESTS="${list[*]}"
	log "KCSAN under one TCG thread: every test not in scripts/mt-tests"
fi

# Every test (no TESTS): leave out those that scripts/test-kernels does
# not give to this kernel, named there by its version and flavour (6.1,
# 6.12, 6.1-rt, 6.12-rt) or as the debug kernel; a kernel of no such
# name runs them all. The guest skips them (pea.skip=, vm-run.sh).
SKIP=()
if [ -z "${TESTS:-}" ] && [ "$MT" = 0 ]; then
	case "${variant:-}:$KVER" in
	debug:*|kcsan:*) lane=$variant ;;
	:6.1.*-rt-*)	lane=6.1-rt ;;
	:6.12.*-rt-*)	lane=6.12-rt ;;
	:6.1.*)		lane=6.1 ;;
	:6.12.*)	lane=6.12 ;;
	*)		lane= ;;
	esac
	if [ -n "$lane" ]; then
		while read -r t kernels; do
			case "$t" in ''|'#'*) continue ;; esac
			case " $kernels " in
			*" $lane "*) ;;
			*) SKIP+=("$t") ;;
			esac
		done < "$ROOT/scripts/test-kernels"
	fi
	if [ "${#SKIP[@]}" -gt 0 ]; then
		log "not on this kernel ($lane, scripts/test-kernels): ${SKIP[*]}"
		SKIP_TESTS=$(IFS=,; printf '%s' "${SKIP[*]}")
		export SKIP_TESTS
	fi
fi

# The test programs the guest should run, in its order.
EXPECTED=()
if [ -n "${TESTS:-}" ]; then
	for t in $(printf '%s' "$TESTS" | tr ',' ' '); do
		case "$t" in
		test_*) EXPECTED+=("$t") ;;
		*)      EXPECTED+=("test_$t") ;;
		esac
	done
else
	ALL=()
	if [ "${#FILES[@]}" -gt 0 ]; then
		for f in "${FILES[@]}"; do
			n=$(basename "${f#*:/}")
			case "$n" in test_*) ALL+=("$n") ;; esac
		done
	else
		for f in "$ROOT"/build/selftests/test_*; do
			[ -x "$f" ] && ALL+=("$(basename "$f")")
		done
	fi
	# Less those this kernel leaves out.
	for n in "${ALL[@]}"; do
		[[ " ${SKIP[*]:-} " != *" $n "* ]] && EXPECTED+=("$n")
	done
	if [ "${#EXPECTED[@]}" -gt 0 ]; then
		mapfile -t EXPECTED < <(printf '%s\n' "${EXPECTED[@]}" | LC_ALL=C sort -u)
	fi
fi

# --- boot ----------------------------------------------------------------
log "booting the guest (tests: ${EXPECTED[*]:-none})"
VMRC=0
"$ROOT/scripts/vm-run.sh" check "${TESTS:-}" || VMRC=$?

RESULTS=$OUT/results.txt
CONSOLE=$OUT/console.log
# If the second serial port did not work the guest fell back to ttyS0.
if ! grep -q '^# pea-guest: begin' "$RESULTS" 2>/dev/null &&
   grep -q '^# pea-guest: begin' "$CONSOLE" 2>/dev/null; then
	RESULTS=$CONSOLE
fi

# --- parse ---------------------------------------------------------------
# Records: "P<TAB>description", "F<TAB>description", "C<TAB>comment".
RECORDS=$(mktemp)
trap 'rm -f "$RECORDS"' EXIT

# Each test program's section of the results channel becomes its TAP cases
# plus "test_NAME exited 0"; module load and unload become cases too.
tr -d '\r' < "$RESULTS" | awk -v expected="${EXPECTED[*]:-}" '
function rec(kind, text) { printf "%s\t%s\n", kind, text }
function tapline(name, line,    st, rest, up, p, desc, dir) {
	st = (line ~ /^not ok/) ? "F" : "P"
	rest = line
	sub(/^(not )?ok/, "", rest)
	sub(/^[ \t]*[0-9]*[ \t]*/, "", rest)
	sub(/^-[ \t]*/, "", rest)
	desc = rest
	dir = ""
	up = toupper(rest)
	p = match(up, /#[ \t]*(SKIP|TODO)/)
	if (p > 0) {
		desc = substr(rest, 1, p - 1)
		dir = substr(rest, p + 1)
		sub(/^[ \t]*/, "", dir)
		if (toupper(substr(dir, 1, 4)) == "SKIP")
			st = "F"
	}
	sub(/[ \t]+$/, "", desc)
	gsub(/#/, "\\#", desc)
	gsub(/#/, "\\#", dir)
	ncase[name]++
	if (desc == "")
		desc = "case " ncase[name]
	if (dir != "")
		desc = desc " [" dir "]"
	cst[name, ncase[name]] = st
	cdesc[name, ncase[name]] = name ": " desc
	if (st == "P")
		nok[name]++
}
BEGIN {
	nexp = split(expected, exp_list, " ")
	cur = ""
	indmesg = 0
}
indmesg {
	if ($0 == "# --- dmesg end ---") {
		indmesg = 0
		dmesg_end = 1
	}
	next
}
cur != "" {
	if (index($0, "# exit " cur " ") == 1) {
		rc[cur] = substr($0, length("# exit " cur " ") + 1)
		finished[cur] = 1
		cur = ""
		next
	}
	if (index($0, "# timeout " cur " ") == 1) {
		timedout[cur] = $0
		next
	}
	if (index($0, "# time " cur " ") == 1)
		next
	if ($0 ~ /# === test_[^ ]* ===$/ || $0 == "# --- dmesg begin ---") {
		# The previous program never reported its exit.
		cur = ""
	} else {
		if ($0 != "")
			outl[cur, ++nout[cur]] = $0
		if ($0 ~ /^(not )?ok([ \t]|$)/)
			tapline(cur, $0)
		else if ($0 ~ /^1\.\.[0-9]+/) {
			plan[cur] = $0
			sub(/^1\.\./, "", plan[cur])
			sub(/[^0-9].*$/, "", plan[cur])
		} else if ($0 ~ /^Bail out!/) {
			ncase[cur]++
			cst[cur, ncase[cur]] = "F"
			cdesc[cur, ncase[cur]] = cur ": " $0
		}
		next
	}
}
# A start marker after a partial line (something wrote to the results
# channel without a newline between two programs) still starts its
# program; what came before it on the line is reported.
/# === test_[^ ]* ===$/ {
	p = match($0, /# === test_[^ ]* ===$/)
	cur = substr($0, p + 6, RLENGTH - 10)
	if (p > 1)
		stray[++nstray] = "the start marker of " cur \
			" came after \"" substr($0, 1, p - 1) "\" on its line"
	if (!(cur in seen)) {
		seen[cur] = 1
		order[++nprog] = cur
	}
	next
}
/^# --- dmesg begin ---$/ { indmesg = 1; next }
/^# insmod pea: / { insmod = substr($0, 15); next }
/^# insmod: / { insmod_out[++ninsmod] = $0; next }
/^# rmmod pea: / { rmmod = substr($0, 14); next }
/^# rmmod pea_selftest: / { rmmod_st = substr($0, 23); next }
/^# rmmod: / { rmmod_out[++nrmmod] = $0; next }
# Anything else between programs: no program should write there.
$0 != "" && $0 !~ /^# (time|exit|pea-guest:) / {
	if (nstray < 20)
		stray[++nstray] = "outside any program: " $0
}
END {
	if (insmod == "0")
		rec("P", "module loaded")
	else {
		rec("F", "module loaded")
		rec("C", "insmod pea: " (insmod == "" ? "never reported" : insmod))
	}
	for (i = 1; i <= ninsmod; i++)
		rec("C", substr(insmod_out[i], 3))
	for (i = 1; i <= nstray; i++)
		rec("C", stray[i])

	for (i = 1; i <= nexp; i++)
		if (!(exp_list[i] in seen))
			order[++nprog] = exp_list[i]

	for (i = 1; i <= nprog; i++) {
		n = order[i]
		for (k = 1; k <= ncase[n]; k++)
			rec(cst[n, k], cdesc[n, k])
		why = ""
		if (!(n in seen))
			why = "never ran (the guest did not get to it)"
		else if (!(n in finished))
			why = "did not finish (the guest died while it ran)"
		else if (n in timedout)
			why = substr(timedout[n], 3)
		else if (rc[n] != "0")
			why = "exited with status " rc[n]
		else if (nok[n] + 0 == 0)
			why = "printed no ok line"
		else if ((n in plan) && plan[n] + 0 != ncase[n] + 0)
			why = "planned " plan[n] " cases but reported " ncase[n] + 0
		rec(why == "" ? "P" : "F", n " exited 0")
		if (why != "")
			rec("C", n ": " why)
		failed = (why != "")
		for (k = 1; k <= ncase[n]; k++)
			if (cst[n, k] == "F")
				failed = 1
		if (failed && nout[n] > 0) {
			rec("C", "---- output of " n " ----")
			for (k = 1; k <= nout[n] && k <= 2000; k++)
				rec("C", outl[n, k])
			if (nout[n] > 2000)
				rec("C", "(" nout[n] - 2000 " more lines cut)")
			rec("C", "---- end of output of " n " ----")
		}
	}

	if (rmmod_st != "") {
		rec(rmmod_st == "0" ? "P" : "F", "rmmod pea_selftest")
		if (rmmod_st != "0")
			rec("C", "rmmod pea_selftest: " rmmod_st)
	}
	if (rmmod == "0")
		rec("P", "rmmod pea")
	else {
		rec("F", "rmmod pea")
		rec("C", "rmmod pea: " (rmmod == "" ? "never reported" : rmmod))
		for (i = 1; i <= nrmmod; i++)
			rec("C", substr(rmmod_out[i], 3))
	}
	if (dmesg_end)
		print "DMESG_END" > "/dev/stderr"
}
' > "$RECORDS" 2> "$RECORDS.flags" ||
	printf 'F\tparse the results channel (awk exited %s)\n' "$?" >> "$RECORDS"
DMESG_END=0
grep -q DMESG_END "$RECORDS.flags" 2>/dev/null && DMESG_END=1
rm -f "$RECORDS.flags"

# --- kernel log ----------------------------------------------------------
# scripts/splat-scan.sh finds and classifies the reports (docs/checking.md).
splats() {
	[ -s "$1" ] || return 0
	"$ROOT/scripts/splat-scan.sh" --records "$2" "$1"
}

DMESG_FILE=$(mktemp)
trap 'rm -f "$RECORDS" "$DMESG_FILE"' EXIT
tr -d '\r' < "$RESULTS" | sed -n '/^# --- dmesg begin ---$/,/^# --- dmesg end ---$/p' |
	sed '1d;$d' > "$DMESG_FILE" || true
if [ "$RESULTS" = "$CONSOLE" ]; then
	: > "$DMESG_FILE"	# same text as the console: do not report twice
fi
# The console has every message the dmesg section has (loglevel=7), so the
# dmesg section is only reported when the console shows nothing.
# On the KCSAN kernel a data race between accesses of the kernel proper
# only (kcsan/kernel: no pea module at either access) is the kernel's,
# listed below; every other report fails the run (docs/checking.md).
if [ "${variant:-}" = kcsan ]; then
	export SPLAT_IGNORE='^kcsan/kernel$'
fi
SPLATS=$(splats "$CONSOLE" console.log)
[ -n "$SPLATS" ] || SPLATS=$(splats "$DMESG_FILE" dmesg)
if [ -z "$SPLATS" ]; then
	printf 'P\tkernel log clean\n' >> "$RECORDS"
else
	printf 'F\tkernel log clean\n' >> "$RECORDS"
	printf '%s\n' "$SPLATS" >> "$RECORDS"
fi
if [ "${variant:-}" = kcsan ]; then
	unset SPLAT_IGNORE
	KRACES=$("$ROOT/scripts/splat-scan.sh" "$CONSOLE" | awk -F '\t' '$2 == "kcsan/kernel"')
	printf 'C\tKCSAN: %s data race(s) of the kernel proper (no pea module at either access), not counted:\n' \
		"$(printf '%s' "$KRACES" | grep -c . || true)" >> "$RECORDS"
	printf '%s\n' "$KRACES" | awk -F '\t' 'NF >= 4 {
		h = $4; sub(/^\[ *[0-9.]+\] /, "", h)
		printf "C\t[%s] %s\n", $3, h }' >> "$RECORDS"
fi

# --- did the guest finish? -----------------------------------------------
if [ "$VMRC" -eq 0 ] && [ "$DMESG_END" -eq 1 ]; then
	printf 'P\tguest finished\n' >> "$RECORDS"
else
	printf 'F\tguest finished\n' >> "$RECORDS"
	case "$VMRC" in
	0)   printf 'C\tthe guest powered off without the dmesg end marker\n' ;;
	124) printf 'C\tthe guest was killed after VM_TIMEOUT=%ss\n' "${VM_TIMEOUT:-1800}" ;;
	*)   printf 'C\tqemu exited with status %s\n' "$VMRC" ;;
	esac >> "$RECORDS"
	printf 'C\tlast lines of %s:\n' "$CONSOLE" >> "$RECORDS"
	tail -n 40 "$CONSOLE" 2>/dev/null | tr -d '\r' | sed 's/^/C\t| /' >> "$RECORDS"
fi

# --- report --------------------------------------------------------------
VMSECS=$(awk '/^seconds/ { print $2 }' "$OUT/status" 2>/dev/null || true)
RC=0
{
printf 'TAP version 13\n'
printf '# kernel %s, %s guest CPUs, results in %s\n' "$KVER" "${SMP:-4}" "$OUT"
[ -s "$OUT/qemu.cmdline" ] && printf '# qemu: %s\n' "$(cat "$OUT/qemu.cmdline")"
awk -F '\t' -v took="$(( $(date +%s) - T0 ))" -v vmsecs="${VMSECS:-?}" '
$1 == "P" { n++; pass++; printf "ok %d - %s\n", n, $2; next }
$1 == "F" { n++; fail++; printf "not ok %d - %s\n", n, $2; next }
$1 == "C" { s = $0; sub(/^C\t/, "", s); printf "# %s\n", s; next }
END {
	printf "1..%d\n", n
	printf "# took %ss (guest %ss)\n", took, vmsecs
	printf "%d passed, %d failed\n", pass, fail
	exit (fail > 0 ? 1 : 0)
}' "$RECORDS" || RC=$?
} > "$TAPFILE"
cat "$TAPFILE"
exit "$RC"
