#!/usr/bin/env bash
# Soak on real servers: Debian's redis-server and nginx on loopback, each
# under its load generator (redis-benchmark, wrk) in chunks of a bounded
# number of requests, traced with -b over every function of the binary
# (.dynsym) and a detail selection, for SOAK_SECONDS each. Checks: every
# request answered; adaptrace's RSS flat; every sampled call either an event
# in the file or a counted drop; the request handlers' call counts equal to
# the requests sent; exit 0 and no BPF link or program left.
#
# SOAK_SECONDS (60) per server, SOAK_SERVERS (redis,nginx), SOAK_FIGURES=FILE
# appends one line of figures per server (bench/soak.sh runs 600 s).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

SOAK_SECONDS=${SOAK_SECONDS:-60}
SOAK_SERVERS=${SOAK_SERVERS:-redis,nginx}
SOAK_FIGURES=${SOAK_FIGURES:-}
REDIS_CHUNK=${SOAK_REDIS_CHUNK:-2000}  # SETs and GETs per redis-benchmark run
NGINX_CHUNK=${SOAK_NGINX_CHUNK:-2000}  # requests per wrk thread (2 threads)

free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT: until something listens there (a connection, no request).
wait_port()
{
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# rss_sampler PID FILE: VmRSS (KiB) of PID every second, while it lives.
rss_sampler()
{
	while [ -r "/proc/$1/status" ]; do
		awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" >>"$2" 2>/dev/null
		sleep 1
	done
}

# soak_start NAME BINARY DETAIL: attach to every process running BINARY.
soak_start()
{
	local name=$1 bin=$2 detail=$3
	: >"$WORK/$name.rss"
	if ! at_start "$WORK/$name" record -b "$bin" -o "$WORK/$name.data" -q --detail "$detail"; then
		fail "$name: adaptrace attaches to $bin" "$(tail -n 5 "$WORK/$name.err")"
		return 1
	fi
	bpf_ids_of "$AT_PID" >"$WORK/$name.ids"
	rss_sampler "$AT_PID" "$WORK/$name.rss" &
	track $!
}

# soak_stop NAME SECONDS REQUESTS HANDLER COUNT: stop adaptrace, check the
# recording and the figures, append them to SOAK_FIGURES.
soak_stop()
{
	local name=$1 secs=$2 requests=$3 handler=$4 count=$5 hwm j ev dr
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$AT_PID/status")
	stop_pid "$AT_PID" INT 120
	expect_eq "$name: adaptrace exits 0 on SIGINT" "$RC" 0
	expect_eq "$name: no BPF link or program left" "$(bpf_left "$WORK/$name.ids" | wc -l)" 0
	# Flat: after the first third, RSS stays within 10 % + 2 MiB of its first-third peak.
	if python3 - "$WORK/$name.rss" >"$WORK/$name.flat" 2>&1 <<'EOF'; then
import sys
s = [int(x) for x in open(sys.argv[1]) if x.strip()]
n = len(s) // 3
assert n >= 3, "too few samples: %d" % len(s)
first, rest = max(s[:n]), max(s[n:])
print("first third peak %d KiB, then %d KiB, last %d KiB (%d samples)" % (first, rest, s[-1], len(s)))
assert rest <= first * 1.10 + 2048, "grew"
EOF
		ok "$name: adaptrace's RSS stays flat ($(cat "$WORK/$name.flat"))"
	else
		fail "$name: adaptrace's RSS stays flat" "$(cat "$WORK/$name.flat")"
	fi
	report_json "$WORK/$name.data" "$WORK/$name.json" || return
	j=$WORK/$name.json
	expect_eq "$name: $handler called once per request ($count)" "$(fn "$j" "$handler" calls)" "$count"
	# A sampled call still running at the end (a server's event loop) is unfinished.
	expect_eq "$name: every sampled call is an event, a counted drop, or still running at the end" \
		"$(jq '[.functions[] | select(.detail.events + .detail.dropped + .detail.unfinished != .detail.sampled or .detail.unfinished > .calls - .returns)] | length' "$j")" 0
	expect_eq "$name: dropped_events is the sum of the per-function drops" \
		"$(jq '[.functions[] | .detail.dropped // 0] | add' "$j")" "$(jq .dropped_events "$j")"
	ev=$(jq '[.functions[] | .detail.events // 0] | add' "$j")
	dr=$(jq .dropped_events "$j")
	expect_cmp "$name: the detail phase captured events" "$ev" '>' 0
	echo "# $name: ${secs}s, $requests requests, $ev events, $dr dropped, peak RSS $hwm KiB"
	[ -z "$SOAK_FIGURES" ] || echo "server=$name seconds=$secs requests=$requests events=$ev" \
		"dropped=$dr peak_rss_kib=$hwm handler=$handler calls=$(fn "$j" "$handler" calls)" \
		"functions=$(jq '.functions | length' "$j")" >>"$SOAK_FIGURES"
}

soak_redis()
{
	local port sets=0 t0 dir=$WORK/redis-dir
	port=$(free_port)
	mkdir -p "$dir"
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
		>"$WORK/redis.log" 2>&1 &
	track $!
	for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
	soak_start redis /usr/bin/redis-server processCommand || return
	t0=$SECONDS
	while [ $((SECONDS - t0)) -lt "$SOAK_SECONDS" ]; do
		if ! redis-benchmark -h 127.0.0.1 -p "$port" -n "$REDIS_CHUNK" -c 4 -t set,get --csv \
			>"$WORK/bench.out" 2>&1 || ! grep -q '^"GET"' "$WORK/bench.out"; then
			fail "redis: redis-benchmark run $((sets / REDIS_CHUNK + 1)) completes" "$(tail -n 5 "$WORK/bench.out")"
			break
		fi
		sets=$((sets + REDIS_CHUNK))
	done
	local secs=$((SECONDS - t0)) stats
	stats=$(redis-cli -p "$port" info commandstats)
	expect_eq "redis: the server answered every SET" \
		"$(grep -o 'cmdstat_set:calls=[0-9]*' <<<"$stats" | cut -d= -f2)" "$sets"
	expect_eq "redis: the server answered every GET" \
		"$(grep -o 'cmdstat_get:calls=[0-9]*' <<<"$stats" | cut -d= -f2)" "$sets"
	soak_stop redis "$secs" $((2 * sets)) setCommand "$sets"
	expect_eq "redis: getCommand called once per GET ($sets)" "$(fn "$WORK/redis.json" getCommand calls)" "$sets"
}

soak_nginx()
{
	local port served=0 t0 p=$WORK/nginx wpid n
	port=$(free_port)
	mkdir -p "$p/html" "$p/logs" "$p/tmp"
	echo "soak" >"$p/html/index.html"
	cat >"$p/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
error_log $p/logs/error.log;
pid $p/nginx.pid;
events { worker_connections 64; }
http {
	access_log $p/logs/access.log;
	client_body_temp_path $p/tmp;
	proxy_temp_path $p/tmp;
	fastcgi_temp_path $p/tmp;
	uwsgi_temp_path $p/tmp;
	scgi_temp_path $p/tmp;
	server { listen 127.0.0.1:$port; root $p/html; }
}
EOF
	# Each wrk thread stops after exactly WRK_LIMIT responses (one connection each).
	cat >"$p/stop.lua" <<'EOF'
local n, limit = 0, tonumber(os.getenv("WRK_LIMIT"))
function response(status, headers, body)
	n = n + 1
	if n >= limit then wrk.thread:stop() end
end
EOF
	/usr/sbin/nginx -p "$p" -c "$p/nginx.conf" >"$WORK/nginx.out" 2>&1 &
	track $!
	wait_port "$port"
	soak_start nginx /usr/sbin/nginx ngx_http_process_request || return
	t0=$SECONDS
	while [ $((SECONDS - t0)) -lt "$SOAK_SECONDS" ]; do
		: >"$p/logs/access.log"
		WRK_LIMIT=$NGINX_CHUNK wrk -t2 -c2 -d 3600s -s "$p/stop.lua" "http://127.0.0.1:$port/" \
			>"$WORK/wrk.out" 2>&1 &
		wpid=$!
		track "$wpid"
		# wrk's main thread sleeps out -d: interrupt it once both threads are done.
		for _ in $(seq 6000); do
			[ "$(wc -l <"$p/logs/access.log")" -ge $((2 * NGINX_CHUNK)) ] && break
			sleep 0.1
		done
		sleep 0.2
		kill -INT "$wpid"
		wait "$wpid"
		n=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$WORK/wrk.out")
		if [ "$n" != $((2 * NGINX_CHUNK)) ] || grep -qE 'Non-2xx|Socket errors' "$WORK/wrk.out" ||
			[ "$(grep -vc '" 200 ' "$p/logs/access.log")" -ne 0 ] ||
			[ "$(wc -l <"$p/logs/access.log")" -ne $((2 * NGINX_CHUNK)) ]; then
			fail "nginx: wrk run $((served / NGINX_CHUNK / 2 + 1)): $((2 * NGINX_CHUNK)) requests, all 200" \
				"$(cat "$WORK/wrk.out")" "access log: $(wc -l <"$p/logs/access.log") lines"
			break
		fi
		served=$((served + n))
	done
	local secs=$((SECONDS - t0))
	expect_cmp "nginx: every request answered with 200 ($served)" "$served" '>' 0
	soak_stop nginx "$secs" "$served" ngx_http_process_request "$served"
}

for s in ${SOAK_SERVERS//,/ }; do
	case $s in
	redis) soak_redis ;;
	nginx) soak_nginx ;;
	*) fail "unknown server '$s' in SOAK_SERVERS" ;;
	esac
done
