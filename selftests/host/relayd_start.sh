# SPDX-License-Identifier: GPL-2.0
# Sourced by the host scripts that need an lttng-relayd on 127.0.0.1
# (BIN: build/host, for free_ports).
#
#   start_relayd OUT [RELAYD-OPTION...]
# starts one with its output in OUT and its log in OUT.log, on three free
# ports (three tries), and returns once all three take connections; sets
# CTRL, DATA, LIVE and RELAYD (its pid) and appends the pid to PIDS, which
# the caller kills when it ends. Returns 1 if none started.

listens() { (exec 3<> "/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A TAP test without relayd, babeltrace2 or the host helpers fails at
# once, saying which (TAP_NAME: host_tap.sh's).
relayd_tools() {
	local t
	for t in lttng-relayd babeltrace2 "$BIN/ctf_feed" "$BIN/free_ports"; do
		if ! command -v "$t" >/dev/null; then
			echo "not ok 1 - $TAP_NAME: $t is missing (scripts/setup.sh, make host-tests)"
			echo "1..1"
			exit 1
		fi
	done
}

start_relayd() {
	local out=$1 try ports
	shift
	for try in 1 2 3; do
		mapfile -t ports < <("$BIN/free_ports" 3)
		CTRL=${ports[0]} DATA=${ports[1]} LIVE=${ports[2]}
		lttng-relayd "$@" -C "tcp://127.0.0.1:$CTRL" \
			-D "tcp://127.0.0.1:$DATA" -L "tcp://127.0.0.1:$LIVE" \
			-o "$out" > "$out.log" 2>&1 &
		RELAYD=$!
		PIDS+=("$RELAYD")
		for _ in $(seq 100); do
			if listens "$LIVE" && listens "$CTRL" && listens "$DATA"; then
				return 0
			fi
			kill -0 "$RELAYD" 2>/dev/null || break
			sleep 0.05
		done
		kill -KILL "$RELAYD" 2>/dev/null
	done
	return 1
}
