#!/usr/bin/env bash
# USDT probes: list --usdt, counted, keyed and paired probes with exact
# counts and decoded values, on our own <sys/sdt.h> target, Debian's
# python3.11 and libstdc++; semaphores raised only while traced; errors.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

SDT=$TARGETS/sdt
PY=/usr/bin/python3.11

# usdt ROW FIELD JSON: a field of the "usdt" entry whose row is ROW.
usdt()
{
	jq -r --arg r "$1" --arg f "$2" 'first(.usdt[] | select(.row == $r) | .[$f]) // "missing"' \
		"$3" 2>/dev/null || echo missing
}

# sema PID BINARY OFFSET: the 16-bit semaphore at file OFFSET of BINARY in PID.
sema()
{
	python3 - "$@" <<'EOF'
import os, sys
pid, binary, off = sys.argv[1], os.path.realpath(sys.argv[2]), int(sys.argv[3])
for line in open(f"/proc/{pid}/maps"):
    f = line.split()
    if len(f) < 6 or os.path.realpath(f[5]) != binary:
        continue
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    moff = int(f[2], 16)
    if moff <= off < moff + (hi - lo):
        with open(f"/proc/{pid}/mem", "rb") as m:
            m.seek(lo + off - moff)
            print(int.from_bytes(m.read(2), "little"))
        sys.exit(0)
print("unmapped")
EOF
}

# sema_off BINARY PROBE: the file offset of PROVIDER:NAME's semaphore.
sema_off()
{
	"$ADAPTRACE" list --usdt -b "$1" --json 2>/dev/null |
		jq -r --arg p "${2%%:*}" --arg n "${2#*:}" \
			'first(.binaries[].probes[] | select(.provider == $p and .name == $n)) | .semaphore_offset'
}

# ---- list --usdt
"$ADAPTRACE" list --usdt -b "$SDT" --json >"$WORK/list.json" 2>"$WORK/list.err"
expect_eq "list --usdt exits 0" "$?" 0
expect_eq "list: probes of the target" \
	"$(jq -r '[.binaries[0].probes[] | "\(.provider):\(.name)"] | join(" ")' "$WORK/list.json")" \
	"attest:close attest:enter attest:idx attest:inl attest:leave attest:long attest:mem attest:open attest:tick attest:val"
expect_eq "list: the inlined probe has 3 locations" \
	"$(jq '.binaries[0].probes[] | select(.name == "inl") | .locations | length' "$WORK/list.json")" 3
expect_eq "list: tick's argument types" \
	"$(jq -r '.binaries[0].probes[] | select(.name == "tick") | [.args[].type] | join(",")' \
		"$WORK/list.json")" "s32,u64,u64,u64"
expect_eq "list: attachable probes (not idx: index register)" \
	"$(jq -r '[.binaries[0].probes[] | select(.attachable | not) | .name] | join(",")' "$WORK/list.json")" \
	"idx"
expect_eq "list: tick has a semaphore" \
	"$(jq '.binaries[0].probes[] | select(.name == "tick") | .semaphore' "$WORK/list.json")" true
"$ADAPTRACE" list --usdt -b "$SDT" -f 'attest:t*' >"$WORK/list.txt" 2>/dev/null
expect_match "list: plain output with -f" "$(cat "$WORK/list.txt")" \
	'attest:tick +1 +0x[0-9a-f]+ +arg1:s32=-4@'
"$ADAPTRACE" list --usdt -b "$TARGETS/thrower" -l libstdc++.so.6 --json >"$WORK/lcxx.json" 2>/dev/null
expect_eq "list -l libstdc++.so.6: its throw probe" \
	"$(jq -r '[.binaries[].probes[] | select(.name == "throw") | .provider] | join(",")' \
		"$WORK/lcxx.json")" "libstdcxx"

# ---- our own target: counts and decoded values
at_run "$WORK/sdt" record -q -o "$WORK/sdt.data" -u 'attest:*' -u 'attest:tick(arg4:str)' \
	-u 'attest:tick(arg3:ptr)' -u 'attest:val(arg1:int)' -u 'attest:val(arg2:uint)' \
	-u 'attest:inl(arg1:int)' -u 'attest:long(arg1:str)' -u 'attest:enter+leave(arg1:int)' \
	-u 'attest:enter+leave' -u 'attest:mem(arg1:int)' \
	-- "$SDT"
expect_eq "sdt: record exits 0" "$RC" 0 || sed 's/^/#   stderr: /' "$WORK/sdt.err" | head
expect_match "sdt: attest:* leaves out attest:idx with a warning" "$(cat "$WORK/sdt.err")" \
	'warning: USDT probe attest:idx: .*; left out$'
if report_json "$WORK/sdt.data" "$WORK/sdt.json"; then
	J=$WORK/sdt.json
	expect_eq "sdt: semaphore raised for every tick" "$(kv "$WORK/sdt.out" ticks_seen)" 1000
	expect_eq "sdt: tick counted" "$(usdt attest:tick calls "$J")" 1000
	expect_eq "sdt: val counted" "$(usdt attest:val calls "$J")" 15
	expect_eq "sdt: inlined probe counted over its 3 locations" "$(usdt attest:inl calls "$J")" 60
	expect_eq "sdt: long counted" "$(usdt attest:long calls "$J")" 1
	expect_eq "sdt: enter counted" "$(usdt attest:enter calls "$J")" 15
	for kc in alpha=334 beta=333 gamma=333; do
		expect_eq "sdt: tick keyed by string ${kc%=*}" \
			"$(usdt "attest:tick[${kc%=*}]" calls "$J")" "${kc#*=}"
	done
	bufs=$(kv "$WORK/sdt.out" bufs)
	for i in 0 1 2 3; do
		p=$(printf '0x%x' $((bufs + 4 * i)))
		expect_eq "sdt: tick keyed by pointer $p" "$(usdt "attest:tick[$p]" calls "$J")" 250
	done
	for v in -2 -1 0 1 2; do
		expect_eq "sdt: val keyed by signed $v" "$(usdt "attest:val[$v]" calls "$J")" $((v + 3))
		u=$(python3 -c "print(2**63 + $v + 2)")
		expect_eq "sdt: val keyed by unsigned $u" "$(usdt "attest:val[$u]" calls "$J")" $((v + 3))
	done
	expect_eq "sdt: decoded signed key value" \
		"$(jq -c '[.usdt[] | select(.name == "val" and .kind == "usdt_key") | .key[0]] | sort | .[0]' "$J")" \
		"-2"
	expect_eq "sdt: memory-operand argument decoded" \
		"$(jq -c '[.usdt[] | select(.name == "mem" and .kind == "usdt_key") | .key[0]] | sort' "$J")" \
		"[-300,-200,-100,0,100,200,300]"
	expect_match "sdt: mem's argument is a memory operand" \
		"$(jq -r '.binaries[0].probes[] | select(.name == "mem") | .args[0].spec' "$WORK/list.json")" \
		'^-4@-?[0-9]+\(%r[sb]p\)$'
	# inl_a(k) fires k, inl_b 2k, inl_c 3k: 0 three times, 3 twice, 57 once.
	expect_eq "sdt: inlined key 0" "$(usdt 'attest:inl[0]' calls "$J")" 3
	expect_eq "sdt: inlined key 3" "$(usdt 'attest:inl[3]' calls "$J")" 2
	expect_eq "sdt: inlined key 57" "$(usdt 'attest:inl[57]' calls "$J")" 1
	expect_eq "sdt: inlined keys total" \
		"$(jq '[.usdt[] | select(.name == "inl" and .kind == "usdt_key") | .calls] | add' "$J")" 60
	x63=$(printf 'x%.0s' $(seq 63))
	expect_eq "sdt: long string key truncated to 63 bytes" \
		"$(jq -r '.usdt[] | select(.name == "long" and .kind == "usdt_key") | "\(.key[0]) \(.truncated)"' "$J")" \
		"$x63 true"
	expect_eq "sdt: truncation visible in the row name" \
		"$(usdt "attest:long[$x63...]" calls "$J")" 1
	for d in 1 2 3; do
		expect_eq "sdt: pair enter+leave depth $d: calls" "$(fn "$J" "attest:enter[$d]" calls)" 5
		expect_eq "sdt: pair enter+leave depth $d: returns" "$(fn "$J" "attest:enter[$d]" returns)" 5
	done
	expect_eq "sdt: pair without keys: calls" "$(fn "$J" "attest:enter+leave" calls)" 15
	expect_eq "sdt: pair without keys: returns" "$(fn "$J" "attest:enter+leave" returns)" 15
	# Nested calls of the one row: total counts the outermost only, below the sum of calls.
	expect_cmp "sdt: pair without keys: recursion counted once in total" \
		"$(fn "$J" "attest:enter+leave" total_ns)" "<" \
		"$(jq '.functions[] | select(.name == "attest:enter+leave") | .mean_ns * .returns' "$J")"
	expect_eq "sdt: pair without keys: one call in flight (recursion on one thread)" \
		"$(fn "$J" "attest:enter+leave" max_concurrency)" 1
	t3=$(fn "$J" "attest:enter[3]" total_ns)
	t2=$(fn "$J" "attest:enter[2]" total_ns)
	s3=$(fn "$J" "attest:enter[3]" self_ns)
	expect_cmp "sdt: pair depth 3 includes depth 2" "$t3" ">" "$t2"
	expect_cmp "sdt: pair self time excludes the nested pairs" "$s3" "<" "$t3"
	expect_cmp "sdt: pair p50 > 0" "$(fn "$J" "attest:enter[1]" p50_ns)" ">" 0
fi

# More keys than the table holds: counted in a warning, and the pairs stay matched.
at_run "$WORK/many" record -q -o "$WORK/many.data" -u 'attest:open+close(arg1:int)' -- "$SDT"
expect_eq "many keys: record exits 0" "$RC" 0
expect_match "many keys: a warning counts the hits beyond the table" "$(cat "$WORK/many.err")" \
	'warning: 77 keyed USDT hits were not counted: more than 1024 distinct keys'
if report_json "$WORK/many.data" "$WORK/many.json"; then
	expect_eq "many keys: 1024 rows" \
		"$(jq '[.usdt[] | select(.name == "open")] | length' "$WORK/many.json")" 1024
	expect_eq "many keys: the outer pair still matched" \
		"$(fn "$WORK/many.json" 'attest:open[-1]' calls) $(fn "$WORK/many.json" 'attest:open[-1]' returns)" \
		"1 1"
	expect_eq "many keys: no unmatched returns" \
		"$(jq .diagnostics.unmatched_returns "$WORK/many.json")" 0
fi

# Probes beside functions: -f adds functions to -u's probes.
at_run "$WORK/mix" record -q -o "$WORK/mix.data" -f nest -u 'attest:enter' -- "$SDT"
expect_eq "mix: record exits 0" "$RC" 0 || sed 's/^/#   stderr: /' "$WORK/mix.err" | head
if report_json "$WORK/mix.data" "$WORK/mix.json"; then
	expect_eq "mix: function nest counted" "$(fn "$WORK/mix.json" nest calls)" 15
	expect_eq "mix: probe attest:enter counted beside it" \
		"$(usdt attest:enter calls "$WORK/mix.json")" 15
	expect_eq "mix: only those two rows" "$(jq '.functions | length' "$WORK/mix.json")" 2
fi

# Untraced, the guarded probe does not fire.
"$SDT" >"$WORK/plain.out"
expect_eq "sdt: semaphore is 0 without a tracer" "$(kv "$WORK/plain.out" ticks_seen)" 0

# ---- libstdc++ throw through -l
at_run "$WORK/cxx" record -q -o "$WORK/cxx.data" -l libstdc++.so.6 -u 'libstdcxx:throw' \
	-- "$TARGETS/thrower"
expect_eq "c++: record exits 0" "$RC" 0 || sed 's/^/#   stderr: /' "$WORK/cxx.err" | head
if report_json "$WORK/cxx.data" "$WORK/cxx.json"; then
	expect_eq "c++: target caught 1000" "$(kv "$WORK/cxx.out" caught)" 1000
	expect_eq "c++: libstdcxx:throw counts 1000" "$(usdt libstdcxx:throw calls "$WORK/cxx.json")" 1000
fi

# -p with a library probe: the process's own mapping of libstdc++.
mkfifo "$WORK/go"
"$TARGETS/thrower" wait <"$WORK/go" >"$WORK/thp.out" 2>&1 &
THPID=$!
track "$THPID"
exec 7>"$WORK/go"
wait_line "$WORK/thp.out" '^ready=1$' 10 "$THPID"
"$ADAPTRACE" list --usdt -p "$THPID" -l libstdc++.so.6 -f 'libstdcxx:throw' >"$WORK/thp.list" 2>/dev/null
expect_match "c++ -p: list --usdt -p -l shows the library's probe" "$(cat "$WORK/thp.list")" \
	'^libstdcxx:throw +1 +- +libstdc\+\+'
if at_start "$WORK/cxxp" record -q -o "$WORK/cxxp.data" -p "$THPID" -l libstdc++.so.6 \
	-u 'libstdcxx:throw' -u 'libstdcxx:catch'; then
	echo go >&7
	wait_exit "$THPID" 20
	expect_eq "c++ -p: the target ends" "$RC" 0
	wait_exit "$AT_PID" 30
	expect_eq "c++ -p: record exits 0 when the process does" "$RC" 0
	if report_json "$WORK/cxxp.data" "$WORK/cxxp.json"; then
		expect_eq "c++ -p: throw and catch count 1000 each" \
			"$(usdt libstdcxx:throw calls "$WORK/cxxp.json") $(usdt libstdcxx:catch calls "$WORK/cxxp.json")" \
			"1000 1000"
	fi
else
	fail "c++ -p: adaptrace attached" "$(tail -n 5 "$WORK/cxxp.err")"
fi
exec 7>&-

# -b with a library probe: processes started later, only those running the -b binary.
cp "$TARGETS/thrower" "$WORK/other_thrower"
if at_start "$WORK/cxxb" record -q -o "$WORK/cxxb.data" -b "$TARGETS/thrower" \
	-l libstdc++.so.6 -u 'libstdcxx:throw' -d 4; then
	"$TARGETS/thrower" >/dev/null
	"$WORK/other_thrower" >/dev/null
	"$TARGETS/thrower" >/dev/null
	wait_exit "$AT_PID" 30
	expect_eq "c++ -b: record exits 0" "$RC" 0
	report_json "$WORK/cxxb.data" "$WORK/cxxb.json" &&
		expect_eq "c++ -b: two later runs of the binary count 2000, another program's none" \
			"$(usdt libstdcxx:throw calls "$WORK/cxxb.json")" 2000
else
	fail "c++ -b: adaptrace attached" "$(tail -n 5 "$WORK/cxxb.err")"
fi

# ---- python3.11: keyed, paired Python functions
cat >"$WORK/fib.py" <<'EOF'
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def other(i):
    return i + 1

fib(20)
for i in range(1000):
    other(i)
EOF
at_run "$WORK/py" record -q -o "$WORK/py.data" \
	-u 'python:function__entry+function__return(arg1:str,arg2:str)' -- "$PY" "$WORK/fib.py"
expect_eq "python: record exits 0" "$RC" 0 || sed 's/^/#   stderr: /' "$WORK/py.err" | head
if report_json "$WORK/py.data" "$WORK/py.json"; then
	J=$WORK/py.json
	fibrow="python:function__entry[$WORK/fib.py,fib]"
	expect_eq "python: fib(20) keyed count" "$(fn "$J" "$fibrow" calls)" 21891
	expect_eq "python: fib returns" "$(fn "$J" "$fibrow" returns)" 21891
	expect_cmp "python: fib p50 > 0" "$(fn "$J" "$fibrow" p50_ns)" ">" 0
	expect_eq "python: other() keyed count" \
		"$(fn "$J" "python:function__entry[$WORK/fib.py,other]" calls)" 1000
	expect_eq "python: usdt entry has the key" \
		"$(jq -c --arg r "$fibrow" '.usdt[] | select(.row == $r) | .key' "$J")" \
		"[\"$WORK/fib.py\",\"fib\"]"
fi

# Keyed rows take part in the relevance expression like functions: with
# --select all, the fib row enters the selection (logged, no argument probe).
cat >"$WORK/fib24.py" <<'EOF'
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
fib(24)
EOF
at_run "$WORK/pysel" record -q --interval 0.05 -o "$WORK/pysel.data" --select all \
	-u 'python:function__entry+function__return(arg2:str,arg1:str)' -- "$PY" "$WORK/fib24.py"
expect_eq "python --select all: record exits 0" "$RC" 0
"$ADAPTRACE" report "$WORK/pysel.data" --selection --json >"$WORK/pysel.sel" 2>/dev/null
expect_match "python --select all: the fib row entered the selection as a USDT row" \
	"$(jq -r --arg r "python:function__entry[fib,$WORK/fib24.py]" \
		'select(.function == $r and .change == "enter") | .reason' "$WORK/pysel.sel")" \
	'USDT row'

# Exceptions unwind through function__return, generators return at each yield.
cat >"$WORK/exc.py" <<'EOF'
def inner(i):
    raise ValueError(i)
def mid(i):
    return inner(i)
def gen(n):
    for i in range(n):
        yield i
for i in range(100):
    try:
        mid(i)
    except ValueError:
        pass
s = sum(gen(50))
EOF
at_run "$WORK/exc" record -q -o "$WORK/exc.data" \
	-u 'python:function__entry+function__return(arg1:str,arg2:str)' -- "$PY" "$WORK/exc.py"
if report_json "$WORK/exc.data" "$WORK/exc.json"; then
	for f in inner mid gen; do
		row="python:function__entry[$WORK/exc.py,$f]"
		n=100
		[ "$f" = gen ] && n=51 # one entry and one return per resumption
		expect_eq "python: $f: calls and returns" \
			"$(fn "$WORK/exc.json" "$row" calls) $(fn "$WORK/exc.json" "$row" returns)" "$n $n"
	done
	expect_eq "python: no unmatched returns" "$(jq .diagnostics.unmatched_returns "$WORK/exc.json")" 0
fi

# ---- semaphores with -p: raised while traced, 0 afterwards
cat >"$WORK/wait.py" <<'EOF'
import os, sys, time
def f():
    return 1
open(sys.argv[1], "w").write(str(os.getpid()))
while not os.path.exists(sys.argv[2]):
    f()
    time.sleep(0.02)
EOF
"$ADAPTRACE" list --usdt -p $$ >/dev/null 2>&1
expect_eq "list --usdt -p on a process without probes exits 2" "$?" 2
OFF_ENTRY=$(sema_off "$PY" python:function__entry)
OFF_LINE=$(sema_off "$PY" python:line)
"$PY" "$WORK/wait.py" "$WORK/pypid" "$WORK/pystop" &
PYPID=$!
track "$PYPID"
for _ in $(seq 100); do [ -s "$WORK/pypid" ] && break; sleep 0.05; done
"$ADAPTRACE" list --usdt -p "$PYPID" -f 'python:function__*' >"$WORK/lp.txt" 2>/dev/null
expect_eq "list --usdt -p PID: python's function probes" \
	"$(awk 'NR > 1 { print $1 }' "$WORK/lp.txt" | tr '\n' ' ')" "python:function__entry python:function__return "
expect_eq "python -p: semaphores 0 before" \
	"$(sema "$PYPID" "$PY" "$OFF_ENTRY") $(sema "$PYPID" "$PY" "$OFF_LINE")" "0 0"
if at_start "$WORK/pp" record -q -o "$WORK/pp.data" -p "$PYPID" -d 2 \
	-u 'python:function__entry+function__return(arg2:str)'; then
	# Once seen read as "1 0" right after the attach: give the kernel a moment.
	for _ in $(seq 15); do
		semas="$(sema "$PYPID" "$PY" "$OFF_ENTRY") $(sema "$PYPID" "$PY" "$OFF_LINE")"
		[ "$semas" = "1 1" ] && break
		sleep 0.1
	done
	expect_eq "python -p: entry and line semaphores raised while traced" "$semas" "1 1"
	wait_exit "$AT_PID" 30
	expect_eq "python -p: record exits 0" "$RC" 0
	expect_eq "python -p: semaphores back to 0 after adaptrace exits" \
		"$(sema "$PYPID" "$PY" "$OFF_ENTRY") $(sema "$PYPID" "$PY" "$OFF_LINE")" "0 0"
	report_json "$WORK/pp.data" "$WORK/pp.json" &&
		expect_cmp "python -p: f() counted" \
			"$(fn "$WORK/pp.json" "python:function__entry[f]" calls)" ">" 10
else
	fail "python -p: adaptrace attached" "$(tail -n 5 "$WORK/pp.err")"
fi
touch "$WORK/pystop"
wait_exit "$PYPID" 10

# ---- kill -9 of adaptrace tracing USDT probes beside a hot function's return
# probe: it dies promptly, the probes go with it, the semaphores drop to 0.
rm -f "$WORK/pypid" "$WORK/pystop"
"$PY" "$WORK/wait.py" "$WORK/pypid" "$WORK/pystop" &
PYPID=$!
track "$PYPID"
for _ in $(seq 100); do [ -s "$WORK/pypid" ] && break; sleep 0.05; done
if at_start "$WORK/pk" record -q -o "$WORK/pk.data" -p "$PYPID" -f PyLong_FromLong \
	-u 'python:function__entry+function__return(arg2:str)' -u 'python:gc__*'; then
	sleep 1
	expect_eq "kill -9: semaphores raised while traced" \
		"$(sema "$PYPID" "$PY" "$OFF_ENTRY") $(sema "$PYPID" "$PY" "$OFF_LINE")" "1 1"
	kill -s KILL "$AT_PID"
	wait_exit "$AT_PID" 10
	expect_eq "kill -9: adaptrace died of SIGKILL within 10 s" "$RC" 137
	sleep 0.5
	expect_eq "kill -9: semaphores back to 0" \
		"$(sema "$PYPID" "$PY" "$OFF_ENTRY") $(sema "$PYPID" "$PY" "$OFF_LINE")" "0 0"
else
	fail "kill -9: adaptrace attached" "$(tail -n 5 "$WORK/pk.err")"
fi
touch "$WORK/pystop"
wait_exit "$PYPID" 10
expect_eq "kill -9: the traced python exits normally" "$RC" 0

# ---- semaphores with -b: a process started after attaching, then 0 again
rm -f "$WORK/pypid" "$WORK/pystop"
if at_start "$WORK/pb" record -q -o "$WORK/pb.data" -b "$PY" -d 3 \
	-u "python:function__entry(arg1:str,arg2:str)"; then
	"$PY" "$WORK/wait.py" "$WORK/pypid" "$WORK/pystop" &
	PYPID=$!
	track "$PYPID"
	for _ in $(seq 100); do [ -s "$WORK/pypid" ] && break; sleep 0.05; done
	sleep 0.3
	expect_eq "python -b: semaphores raised in a process started later" \
		"$(sema "$PYPID" "$PY" "$OFF_ENTRY") $(sema "$PYPID" "$PY" "$OFF_LINE")" "1 1"
	wait_exit "$AT_PID" 30
	expect_eq "python -b: record exits 0" "$RC" 0
	expect_eq "python -b: semaphores back to 0 after adaptrace exits" \
		"$(sema "$PYPID" "$PY" "$OFF_ENTRY") $(sema "$PYPID" "$PY" "$OFF_LINE")" "0 0"
	report_json "$WORK/pb.data" "$WORK/pb.json" &&
		expect_cmp "python -b: f() of the later process counted" \
			"$(fn "$WORK/pb.json" "python:function__entry[$WORK/wait.py,f]" calls)" ">" 10
	touch "$WORK/pystop"
	wait_exit "$PYPID" 10
else
	fail "python -b: adaptrace attached" "$(tail -n 5 "$WORK/pb.err")"
fi

# ---- errors: exit 2 with one line
err_case()
{
	local name=$1
	shift
	at_run "$WORK/err" record -q -o "$WORK/err.data" "$@"
	expect_eq "error exits 2: $name" "$RC" 2
	expect_eq "error is one line: $name" "$(wc -l <"$WORK/err.err")" 1
}
err_case "glob matching no probe" -u 'nope:*' -- "$SDT"
err_case "binary without .note.stapsdt" -u 'libstdcxx:throw' -- "$TARGETS/thrower"
err_case "bad key type" -u 'attest:tick(arg1:float)' -- "$SDT"
err_case "key argument out of range" -u 'attest:tick(arg9:int)' -- "$SDT"
err_case "unclosed key list" -u 'attest:tick(arg1:int' -- "$SDT"
err_case "glob in a keyed probe" -u 'attest:t*(arg1:int)' -- "$SDT"
err_case "missing return probe" -u 'attest:enter+nope' -- "$SDT"
err_case "an argument libbpf cannot decode (index register)" -u 'attest:idx' -- "$SDT"
expect_match "the error names the argument" "$(cat "$WORK/err.err")" "argument 1 .*index register"
"$ADAPTRACE" list --usdt -b "$TARGETS/thrower" >/dev/null 2>"$WORK/lerr"
expect_eq "list --usdt on a binary without probes exits 2" "$?" 2

