# shellcheck shell=bash
# Sourced by redis.sh and redis_blocks.sh: a redis-server of their own, the recorder's start,
# CPU time from /proc, and medians.

# redis_start: $REDIS on a port of its own, logging to $tmp/redis.log; sets port and rpid.
redis_start() {
	# Below the ephemeral range (32768-60999), where a client's port may sit.
	port=$((20000 + $$ % 12000))
	"$REDIS" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
		--logfile "$tmp/redis.log" &
	rpid=$!
}

# redis_wait NAME: wait up to 5 s for it to answer; NAME's one-line error and exit 1 if not.
redis_wait() {
	local _
	for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
	local why
	why=$(tail -n 1 "$tmp/redis.log" 2>/dev/null) || true
	echo "$1: redis-server ($REDIS) did not start on port $port: ${why:-it wrote no log}" >&2
	exit 1
}

# cpu_ticks PID: the process's user and system time, all its threads (0 without one).
cpu_ticks() { [[ -n $1 && -r /proc/$1/stat ]] && awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" || echo 0; }

# recorder_up ERRFILE PID: wait up to 60 s for the recorder's "tracing" line; false if it exited.
recorder_up() {
	local _
	for _ in $(seq 600); do
		grep -q '^adaptrace: tracing ' "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
}

# med VALUE...: the median of the numbers among the values (words), or - without any.
med() { tr ' ' '\n' <<<"$*" | { grep -E '^[0-9.]+$' || true; } | sort -g | awk '{a[NR]=$1} END{if(!NR)print "-"; else print NR%2?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }

# now_us: the wall clock in microseconds (whatever the locale's decimal mark).
now_us() { echo "${EPOCHREALTIME//[.,]/}"; }

# budget_warmup ERRFILE: the budget acts after 3 s over it, and again a step or two later: warm
# up under load until its latest "coarse budget:" line in ERRFILE is 3 s old, while the old links
# are released, or for 60 s at most. A cap of 60 runs of 2,000 (stop 67's) ran out 2 s after the
# first plan on a host that serves 140,000 requests/s, and the measured run began with the second
# plan's windows. warm_sets gets the SETs sent (as many GETs).
budget_warmup() {
	local lines=0 n acted=0 now start
	start=$(now_us)
	warm_sets=0
	while now=$(now_us) && ((now - start < 60000000)); do
		n=$(grep -c 'coarse budget: ' "$1") || n=0
		((n > lines)) && { lines=$n; acted=$now; }
		((acted > 0 && now - acted >= 3000000)) && break
		redis-benchmark -h 127.0.0.1 -p "$port" -n 2000 -c "$clients" -t set,get -q >/dev/null 2>&1
		warm_sets=$((warm_sets + 2000))
	done
}

# redis_session NAME: a temporary directory ($tmp) and a redis-server of its own (redis_start),
# both gone at exit, with the recorder ($at_pid) if one runs; NAME's error if it does not answer.
redis_session() {
	tmp=$(mktemp -d /tmp/adaptrace-redis.XXXXXX)
	redis_start
	at_pid=
	trap redis_cleanup EXIT
	redis_wait "$1"
}

redis_cleanup() {
	[[ -n $at_pid ]] && kill -INT "$at_pid" 2>/dev/null && wait "$at_pid" 2>/dev/null
	kill "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
	rm -rf "$tmp"
}
