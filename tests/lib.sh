# shellcheck shell=bash
# Helpers for the integration tests: source it first thing.
#
# Every check prints one line, "ok - TEST: what" or "not ok - TEST: what"
# followed by "#   detail" lines; tests/run.sh counts those lines. On exit,
# the test kills the processes it started (and only those), removes its work
# directory (kept with KEEP_WORK=1) and exits 1 if a check failed.
set -u

TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$TESTS_DIR/.." && pwd)
ADAPTRACE=${ADAPTRACE:-$ROOT/adaptrace}
TARGETS=$TESTS_DIR/build/targets
BPFTOOL=${BPFTOOL:-/usr/sbin/bpftool}
TEST_NAME=$(basename "$0" .sh)
# Seconds to wait for "adaptrace: tracing" and for a process to end.
ATTACH_TIMEOUT=${ATTACH_TIMEOUT:-30}
STOP_TIMEOUT=${STOP_TIMEOUT:-30}

T_PASS=0
T_FAIL=0
# Exit status of the last at_run, wait_exit or stop_pid, for the tests.
# shellcheck disable=SC2034 # used by the scripts that source this file
RC=0
_PIDS=()
WORK=$(mktemp -d /tmp/adaptrace-test."$TEST_NAME".XXXXXX)

ok()
{
	T_PASS=$((T_PASS + 1))
	echo "ok - $TEST_NAME: $1"
}

# fail NAME [DETAIL]...
fail()
{
	local name=$1 line
	shift
	T_FAIL=$((T_FAIL + 1))
	echo "not ok - $TEST_NAME: $name"
	for line in "$@"; do
		printf '%s\n' "$line" | sed 's/^/#   /'
	done
}

# check NAME CMD [ARG]...: passes if CMD exits 0.
check()
{
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$name"
	else
		fail "$name" "command: $*" "exit status: $rc" "$(printf '%s\n' "$out" | tail -n 20)"
	fi
	return "$rc"
}

# expect_eq NAME ACTUAL EXPECTED
expect_eq()
{
	if [ "$2" = "$3" ]; then
		ok "$1 ($(printf '%s' "$2" | tr '\n' ' '))"
	else
		fail "$1" "expected: $3" "actual:   $2"
		return 1
	fi
}

is_number()
{
	[[ $1 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]
}

# expect_near NAME ACTUAL EXPECTED PCT: |ACTUAL - EXPECTED| <= PCT % of EXPECTED.
expect_near()
{
	local name=$1 actual=$2 expected=$3 pct=$4
	if is_number "$actual" && is_number "$expected" &&
		awk -v a="$actual" -v e="$expected" -v p="$pct" \
			'BEGIN { d = a - e; if (d < 0) d = -d; m = e < 0 ? -e : e; exit !(d <= m * p / 100) }'; then
		ok "$name ($actual ~ $expected +-$pct%)"
	else
		fail "$name" "expected: $expected +-$pct%" "actual:   $actual"
		return 1
	fi
}

# expect_cmp NAME ACTUAL OP BOUND, OP one of < <= > >= (numbers).
expect_cmp()
{
	local name=$1 actual=$2 op=$3 bound=$4
	if is_number "$actual" && is_number "$bound" &&
		awk -v a="$actual" -v b="$bound" -v op="$op" \
			'BEGIN { r = op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : a >= b; exit !r }'; then
		ok "$name ($actual $op $bound)"
	else
		fail "$name" "expected: $op $bound" "actual:   $actual"
		return 1
	fi
}

# expect_match NAME TEXT EXTENDED-REGEX
expect_match()
{
	if printf '%s\n' "$2" | grep -Eq -- "$3"; then
		ok "$1"
	else
		fail "$1" "expected to match: $3" "actual: $(printf '%s\n' "$2" | head -n 20)"
		return 1
	fi
}

# Remember a PID that the test started, for the cleanup trap.
track()
{
	_PIDS+=("$1")
}

alive()
{
	kill -0 "$1" 2>/dev/null
}

# wait_exit PID TIMEOUT: wait for a child of this shell; sets RC (124 on timeout).
wait_exit()
{
	local pid=$1 deadline=$((SECONDS + $2))
	while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.05
	done
	if alive "$pid"; then
		RC=124
		return 1
	fi
	wait "$pid" 2>/dev/null
	RC=$?
	return 0
}

# stop_pid PID SIGNAL [TIMEOUT]: signal a child, wait; SIGKILL if it does not
# end in time. Sets RC (124 when it had to be killed). Never blocks for long:
# a process stuck in the kernel (D state) may still be there on return 1.
stop_pid()
{
	local pid=$1 sig=$2 t=${3:-$STOP_TIMEOUT}
	kill -s "$sig" "$pid" 2>/dev/null
	if ! wait_exit "$pid" "$t"; then
		proc_state "$pid" >"$WORK/stuck.$pid"
		kill -s KILL "$pid" 2>/dev/null
		wait_exit "$pid" 10
		RC=124
		return 1
	fi
}

# proc_state PID: one line with the state and kernel wait channel, then the
# kernel stack (for reporting a hang).
proc_state()
{
	echo "pid $1: state $(awk '/^State:/ { print $2, $3 }' "/proc/$1/status" 2>/dev/null)," \
		"wchan $(cat "/proc/$1/wchan" 2>/dev/null)"
	sed 's/^/  /' "/proc/$1/stack" 2>/dev/null | head -n 8
}

# wait_line FILE EXTENDED-REGEX TIMEOUT [PID]: wait until FILE has a matching
# line; gives up early when PID (if given) has ended.
wait_line()
{
	local file=$1 re=$2 deadline=$((SECONDS + $3)) pid=${4:-}
	while [ "$SECONDS" -lt "$deadline" ]; do
		grep -Eq -- "$re" "$file" 2>/dev/null && return 0
		if [ -n "$pid" ] && ! alive "$pid"; then
			grep -Eq -- "$re" "$file" 2>/dev/null
			return
		fi
		sleep 0.05
	done
	return 1
}

# wait_exec PID PATH: wait (up to 5 s) until PID runs PATH; a tracer given
# -p right after the fork would otherwise find the shell before its exec.
wait_exec()
{
	local want
	want=$(readlink -f "$2")
	for _ in $(seq 100); do
		[ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$want" ] && return 0
		sleep 0.05
	done
	return 1
}

# start_target OUTPREFIX CMD [ARG]...: start a gated target in the background
# and wait for its "ready" line. Sets TGT_PID; stdout/stderr in OUTPREFIX.out/.err.
start_target()
{
	local prefix=$1
	shift
	"$@" >"$prefix.out" 2>"$prefix.err" &
	TGT_PID=$!
	track "$TGT_PID"
	wait_line "$prefix.err" '^ready$' 10 "$TGT_PID"
}

# at_start OUTPREFIX ARG...: start "adaptrace ARG..." in the background and
# wait for its "adaptrace: tracing" line. Sets AT_PID; stdout/stderr in
# OUTPREFIX.out/.err. Returns 1 if the line did not come.
at_start()
{
	local prefix=$1
	shift
	"$ADAPTRACE" "$@" >"$prefix.out" 2>"$prefix.err" &
	AT_PID=$!
	track "$AT_PID"
	wait_line "$prefix.err" '^adaptrace: tracing ' "$ATTACH_TIMEOUT" "$AT_PID" && return 0
	# Say why in the .err file, which the callers quote.
	if alive "$AT_PID"; then
		echo "(no tracing line after ${ATTACH_TIMEOUT}s) $(proc_state "$AT_PID")" >>"$prefix.err"
	else
		echo "(adaptrace ended before tracing)" >>"$prefix.err"
	fi
	return 1
}

# at_run OUTPREFIX ARG...: run adaptrace in the foreground with a time limit.
# Sets RC; stdout/stderr in OUTPREFIX.out/.err.
at_run()
{
	local prefix=$1
	shift
	timeout -k 5 "${AT_RUN_TIMEOUT:-120}" "$ADAPTRACE" "$@" >"$prefix.out" 2>"$prefix.err"
	# shellcheck disable=SC2034 # read by the caller
	RC=$?
}

# report_json TRACEFILE OUT: "adaptrace report TRACEFILE --json" into OUT;
# one check. Returns 1 (after a failed check) if it did not give valid JSON.
report_json()
{
	local file=$1 out=$2 rc
	timeout -k 5 60 "$ADAPTRACE" report "$file" --json >"$out" 2>"$out.err"
	rc=$?
	if [ "$rc" -eq 0 ] && jq -e 'type == "object"' "$out" >/dev/null 2>&1; then
		ok "report --json on $(basename "$file") gives a JSON object"
		return 0
	fi
	fail "report --json on $(basename "$file") gives a JSON object" "exit status: $rc" \
		"stderr: $(head -n 5 "$out.err")" "stdout: $(head -c 300 "$out")"
	return 1
}

# fn JSON NAME FIELD: a field of the first function named NAME ("missing" if
# none, or null; false stays false).
fn()
{
	jq -r --arg n "$2" --arg f "$3" \
		'[.functions[] | select(.name == $n) | .[$f]] |
		 if length == 0 or .[0] == null then "missing" else .[0] end' "$1" 2>/dev/null ||
		echo missing
}

# fn_sum JSON NAME FIELD: the field summed over every entry named NAME.
fn_sum()
{
	jq -r --arg n "$2" --arg f "$3" \
		'[.functions[] | select(.name == $n) | .[$f]] | if length == 0 then "missing" else add end' \
		"$1" 2>/dev/null || echo missing
}

# counts_match LABEL JSON TARGET-STDOUT: every "name=count" line is exact.
counts_match()
{
	local label=$1 json=$2 out=$3 name count n=0
	while IFS='=' read -r name count; do
		expect_eq "$label: calls of $name" "$(fn "$json" "$name" calls)" "$count"
		n=$((n + 1))
	done < <(grep -E '^[a-z_0-9]+=[0-9]+$' "$out")
	[ "$n" -gt 0 ] || fail "$label: the target printed its counts" "$(head -n 5 "$out")"
}

# kv FILE KEY: value of a "KEY=VALUE" line printed by a target.
kv()
{
	sed -n "s/^$2=//p" "$1" | head -n 1
}

# BPF object ids a process holds: "prog ID" and "link ID" lines (from fdinfo).
bpf_ids_of()
{
	local pid=$1 f
	for f in /proc/"$pid"/fdinfo/*; do
		awk '/^link_id:/ { print "link", $2 } /^prog_id:/ { print "prog", $2 }' "$f" 2>/dev/null
	done | sort -u
}

# bpf_alive IDS-FILE: print the ids of IDS-FILE ("prog N"/"link N" lines)
# that still exist, and perf events still running one of those programs.
bpf_alive()
{
	local ids=$1
	{
		"$BPFTOOL" prog show -j 2>/dev/null | jq -r '.[] | "prog \(.id)"'
		"$BPFTOOL" link show -j 2>/dev/null | jq -r '.[] | "link \(.id)"'
		"$BPFTOOL" perf show -j 2>/dev/null |
			jq -r '.[] | "prog \(.prog_id) perf_event pid \(.pid) fd \(.fd)"'
	} | awk 'NR == FNR { want[$0] = 1; next } { key = $1 " " $2; if (key in want) print }' "$ids" -
}

# bpf_left IDS-FILE: bpf_alive once the kernel has had up to 2 s to free
# what adaptrace closed: links and programs are released asynchronously.
bpf_left()
{
	local left
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		left=$(bpf_alive "$1")
		[ -z "$left" ] && return 0
		sleep 0.2
	done
	printf '%s\n' "$left"
}

# detail_links: links of adaptrace's detail programs still in the kernel
# (any recorder's, so only meaningful when no other recording runs).
detail_links()
{
	local ids
	ids=$("$BPFTOOL" prog show -j 2>/dev/null | jq -r '.[] | select(.name // "" | startswith("detail_")) | .id')
	"$BPFTOOL" link show -j 2>/dev/null | jq --arg ids "$ids" \
		'[.[] | select((.prog_id | tostring) as $p | ($ids | split("\n") | index($p)))] | length'
}

# bpf_fds_of PID: descriptors of PID that are BPF objects or perf events.
bpf_fds_of()
{
	local f t
	for f in /proc/"$1"/fd/*; do
		t=$(readlink "$f" 2>/dev/null) || continue
		case $t in
		*bpf* | *perf_event*) echo "$f -> $t" ;;
		esac
	done
}

# text_diff PID BINARY: number of bytes of BINARY's executable mappings in
# PID that differ from the file (a uprobe is an int3 written in the text).
text_diff()
{
	python3 - "$1" "$2" <<'EOF'
import os, sys
pid, path = sys.argv[1], os.path.realpath(sys.argv[2])
diffs = 0
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem, open(path, "rb") as f:
    for line in maps:
        p = line.split(maxsplit=5)
        if len(p) < 6 or "x" not in p[1] or os.path.realpath(p[5].strip()) != path:
            continue
        lo, hi = (int(x, 16) for x in p[0].split("-"))
        mem.seek(lo)
        live = mem.read(hi - lo)
        f.seek(int(p[2], 16))
        disk = f.read(hi - lo)
        diffs += sum(1 for a, b in zip(live, disk) if a != b)
print(diffs)
EOF
}

_cleanup()
{
	local pid
	for pid in "${_PIDS[@]}"; do
		alive "$pid" && kill -s TERM "$pid" 2>/dev/null
	done
	for pid in "${_PIDS[@]}"; do
		wait_exit "$pid" 2 && continue
		kill -s KILL "$pid" 2>/dev/null
		wait_exit "$pid" 5 || echo "# $TEST_NAME: left behind, not exiting: $(proc_state "$pid" | head -n 1)"
	done
	if [ "${KEEP_WORK:-0}" = 1 ]; then
		echo "# $TEST_NAME: work directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
	echo "# $TEST_NAME: $T_PASS passed, $T_FAIL failed"
	[ "$T_FAIL" -eq 0 ]
}
trap '_cleanup; exit $?' EXIT
trap 'fail "interrupted"; exit 1' INT TERM

# Nothing can be tested without the binary and the targets.
if [ ! -x "$ADAPTRACE" ]; then
	fail "adaptrace binary exists" "missing: $ADAPTRACE (run make)"
	exit 1
fi
if [ ! -d "$TARGETS" ]; then
	fail "test targets are built" "missing: $TARGETS (run make -C tests targets)"
	exit 1
fi
