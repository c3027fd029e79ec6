#!/usr/bin/env bash
# Probe placement: on a -fcf-protection build (endbr64; push %rbp) list shows
# moved sites, and record gives the same counts and latencies with placement
# as with --no-site-opt; over every .dynsym function of Debian's python3.11
# running a script, every function's count is the same both ways.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

CET=$TARGETS/mt_cet

# list: the site, its kind and the reason, in JSON.
at_run "$WORK/list" list -b "$CET" --json
expect_eq "list --json exits 0" "$RC" 0
site()
{
	jq -r --arg n "$2" --arg f "$3" \
		'first(.binaries[].functions[] | select(.name == $n) | .[$f]) // "missing"' "$1"
}
expect_eq "nap_1ms: site moved past endbr64" "$(site "$WORK/list.out" nap_1ms site)" 4
expect_eq "nap_1ms: site is emulated" "$(site "$WORK/list.out" nap_1ms entry)" emulated
expect_eq "nap_1ms: reason" "$(site "$WORK/list.out" nap_1ms site_reason)" moved
expect_eq "nap_1ms: offset minus site is the function's (st_value = file offset here)" \
	"$(jq -r '.binaries[].functions[] | select(.name == "nap_1ms") | .offset - .site' \
		"$WORK/list.out")" \
	"$((16#$(objdump -d "$CET" | awk '/<nap_1ms>:$/ { print $1; exit }')))"
# maybe_fail computes on %edi before its first emulated instruction: the
# coarse site moves past that, the detail site (arguments intact) does not.
expect_cmp "maybe_fail: coarse site moved past argument writes" \
	"$(site "$WORK/list.out" maybe_fail site)" -gt 4
expect_eq "maybe_fail: detail site is the first instruction" \
	"$(site "$WORK/list.out" maybe_fail args_site)" 0
at_run "$WORK/list0" list -b "$CET" --json --no-site-opt
expect_eq "--no-site-opt: nap_1ms site is the first instruction" \
	"$(site "$WORK/list0.out" nap_1ms site)" 0
expect_eq "--no-site-opt: nap_1ms entry is single-stepped" \
	"$(site "$WORK/list0.out" nap_1ms entry)" single-step
at_run "$WORK/listp" list -b "$CET"
expect_match "list says how many sites moved" "$(cat "$WORK/listp.err")" \
	'14 probe sites moved to avoid single-stepping'

# record_as MODE PREFIX CMD...: record -- CMD with placement (MODE placed)
# or without (first) into PREFIX.data, then its report into PREFIX.json.
record_as()
{
	local mode=$1 prefix=$2 opt=()
	shift 2
	[ "$mode" = first ] && opt=(--no-site-opt)
	AT_RUN_TIMEOUT=300 at_run "$prefix" record -q -o "$prefix.data" "${opt[@]}" -- "$@"
	expect_eq "$(basename "$prefix"): record exits 0" "$RC" 0 ||
		sed 's/^/#   /' "$prefix.err" | head -5
	report_json "$prefix.data" "$prefix.json"
}

# record both ways: the same counts, exactly, and the target's own figures.
for mode in placed first; do
	record_as "$mode" "$WORK/$mode" "$CET"
	counts_match "$mode" "$WORK/$mode.json" "$WORK/$mode.out"
	expect_eq "$mode: errors of maybe_fail" "$(fn "$WORK/$mode.json" maybe_fail errors)" \
		"$(kv "$WORK/$mode.out" maybe_fail:errors)"
	for f in nap_1ms nap_10ms; do
		expect_near "$mode: p50 of $f" "$(fn "$WORK/$mode.json" "$f" p50_ns)" \
			"$(kv "$WORK/$mode.out" "$f:p50_ns")" 15
	done
	expect_near "$mode: rec total (recursion once)" "$(fn "$WORK/$mode.json" rec total_ns)" \
		"$(kv "$WORK/$mode.out" rec:outer_total_ns)" 10
done
# same NAME A B: the two multi-line texts are equal.
same()
{
	if [ "$2" = "$3" ]; then
		ok "$1 ($(printf '%s\n' "$2" | wc -l) rows)"
	else
		fail "$1" "$(diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | head -n 10)"
	fi
}
# NAME CALLS of every function. Not errors: the return values they count
# are data (hashes of addresses, durations). Not cmp_u64: qsort's comparator,
# called a data-dependent number of times on measured durations.
counts()
{
	jq -r '.functions[] | select(.name != "cmp_u64") | "\(.name) \(.calls)"' "$1" | sort
}
same "every function: the same calls with and without placement" \
	"$(counts "$WORK/placed.json")" "$(counts "$WORK/first.json")"

# python3.11, every .dynsym function, a deterministic script.
PY=/usr/bin/python3.11
if [ -x "$PY" ]; then
	cat >"$WORK/work.py" <<'EOF'
import json
def f(n):
    return n if n < 2 else f(n - 1) + f(n - 2)
d = {str(i): [i, i * 2.5, "x" * (i % 7)] for i in range(3000)}
s = json.dumps(d)
assert json.loads(s) == d
print(f(15), len(s), sorted(d)[:3])
EOF
	at_run "$WORK/pylist" list -b "$PY"
	expect_match "python3.11: some sites move" "$(cat "$WORK/pylist.err")" \
		'[1-9][0-9]* probe sites moved'
	for mode in placed first; do
		PYTHONHASHSEED=0 record_as "$mode" "$WORK/py$mode" "$PY" -I -S "$WORK/work.py"
	done
	expect_cmp "python3.11: hundreds of functions were called" \
		"$(jq '[.functions[] | select(.calls > 0)] | length' "$WORK/pyplaced.json")" -ge 200
	same "python3.11: every function's calls the same with and without placement" \
		"$(counts "$WORK/pyplaced.json")" "$(counts "$WORK/pyfirst.json")"
else
	fail "python3.11 is installed (scripts/deps.sh installs it)"
fi

# redis-server, every function, under redis-benchmark on a unix socket: the
# request-driven functions are called the same number of times both ways
# (timer-driven ones, such as serverCron, depend on the run's length).
REDIS=/usr/bin/redis-server
N=2000
if [ -x "$REDIS" ] && command -v redis-benchmark >/dev/null; then
	for mode in placed first; do
		opt=()
		[ "$mode" = first ] && opt=(--no-site-opt)
		sock=$WORK/redis-$mode.sock
		if at_start "$WORK/rd$mode" record -q -o "$WORK/rd$mode.data" "${opt[@]}" -- \
			"$REDIS" --port 0 --unixsocket "$sock" --save '' --appendonly no \
			--daemonize no --logfile "$WORK/redis-$mode.log"; then
			for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
			timeout 120 redis-benchmark -s "$sock" -n "$N" -c 1 -t set,get -q \
				>"$WORK/rb$mode.out" 2>&1
			expect_eq "redis $mode: redis-benchmark exits 0" "$?" 0
			timeout 20 redis-cli -s "$sock" shutdown nosave >/dev/null 2>&1
			wait_exit "$AT_PID" 60 || stop_pid "$AT_PID" INT
			report_json "$WORK/rd$mode.data" "$WORK/rd$mode.json"
			expect_eq "redis $mode: setCommand calls" \
				"$(fn "$WORK/rd$mode.json" setCommand calls)" "$N"
			expect_eq "redis $mode: getCommand calls" \
				"$(fn "$WORK/rd$mode.json" getCommand calls)" "$N"
		else
			fail "redis $mode: tracing starts" "$(tail -n 5 "$WORK/rd$mode.err")"
		fi
	done
	req()
	{
		jq -r '.functions[] | select(.name | test("^(setCommand|getCommand|processCommand|call|lookupCommand|processInputBuffer|processInlineBuffer|processMultibulkBuffer|addReply|addReplyBulk|setKey|lookupKeyRead|createStringObject|dbAdd|resetClient|freeClientArgv)$")) | "\(.name) \(.calls)"' "$1" | sort
	}
	expect_cmp "redis: request-driven functions found" \
		"$(req "$WORK/rdplaced.json" | wc -l)" -ge 8
	same "redis: request-driven functions called the same with and without placement" \
		"$(req "$WORK/rdplaced.json")" "$(req "$WORK/rdfirst.json")"
else
	fail "redis-server and redis-benchmark are installed (scripts/deps.sh installs them)"
fi
