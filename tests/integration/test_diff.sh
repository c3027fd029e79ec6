#!/usr/bin/env bash
# adaptrace diff on real recordings of the 50-function target: A/A (20
# repetitions), A/B with one function 20 % slower, one called twice as
# often, different programs, the output formats, and record --baseline.
. "$(dirname "$0")/../lib.sh"

AB=$TARGETS/ab
# 600 rounds: about 40 intervals of 25 ms per recording, enough for a 20 %
# shift to stand out from this VM's noise after the Holm correction over 50.
ROUNDS=${DIFF_ROUNDS:-600}
AA_REPS=${DIFF_AA_REPS:-20}

# rec OUT VARIANT [RECORD-OPTION]...: record one run of fifty VARIANT; sets RC.
rec()
{
	local out=$1 variant=$2
	shift 2
	at_run "$WORK/rec" record -q -f 'f??' --interval 0.025 -o "$out" "$@" -- \
		"$AB/$variant/fifty" "$ROUNDS"
}

rec_ok()
{
	rec "$@"
	if [ "$RC" -ne 0 ]; then
		fail "record $2 into $(basename "$1")" "exit status: $RC" "$(tail -n 5 "$WORK/rec.err")"
		return 1
	fi
}

# diff_run PREFIX ARG...: adaptrace diff ARG...; sets RC.
diff_run()
{
	local prefix=$1
	shift
	at_run "$prefix" diff "$@"
}

# verdict FILE: a diff --json's speed factor and regressions, for the log.
verdict()
{
	jq -c '[.speed_factor, (.regressions[] | [.name, .change_pct, .p_value])]' "$1"
}

# ab_diff PREFIX VARIANT WANT [DIFF-OPTION]...: record a fresh base, then
# VARIANT, and diff them into PREFIX.out; sets RC. A verdict whose
# regressions are not WANT (names, comma-separated) gets one fresh pair,
# as the A/A checks below: on this shared host a group of functions of one
# recording can run slower together (5 of them in one CI run).
ab_diff()
{
	local prefix=$1 variant=$2 want=$3 try
	shift 3
	for try in 1 2; do
		rec_ok "$WORK/base.data" base
		rec_ok "$WORK/$variant.data" "$variant"
		diff_run "$prefix" "$WORK/base.data" "$WORK/$variant.data" "$@"
		[ "$(jq -r '[.regressions[].name] | join(",")' "$prefix.out")" = "$want" ] && return 0
		[ "$try" = 2 ] || echo "# A/B $variant: first pair's regressions, retried: $(verdict "$prefix.out")"
	done
}

# rec_slow_vs_base OUT [RECORD-OPTION]...: record slow --baseline base.data,
# whose verdict must be 1 (f17); a miss gets one fresh base, as ab_diff.
rec_slow_vs_base()
{
	local out=$1
	shift
	rec "$out" slow --baseline "$WORK/base.data" "$@"
	[ "$RC" -eq 1 ] && return 0
	echo "# $(basename "$out"): first try exit $RC, retried with a fresh base: $(grep -A3 '^REGRESSIONS\|^Common' "$WORK/rec.err" | tr '\n' ' ')"
	rec_ok "$WORK/base.data" base
	rec "$out" slow --baseline "$WORK/base.data" "$@"
}

# --- A/A: the same build recorded twice, 20 times over. A regression verdict
# gets one fresh pair, as the --baseline A/A below: on this shared host a
# quarter of the functions of one recording ran 20 % slower together, in
# 2 reps of 20 (their p-values 1e-4 to 1e-2). Only a verdict that holds
# twice counts.
false_alarms=0
aa_fail=()
aa_retried=()
for i in $(seq 1 "$AA_REPS"); do
	rec_ok "$WORK/aa1.data" base || continue
	rec_ok "$WORK/aa2.data" base || continue
	diff_run "$WORK/aa" "$WORK/aa1.data" "$WORK/aa2.data" --json
	if [ "$RC" -eq 1 ]; then
		aa_retried+=("rep $i, first pair: $(verdict "$WORK/aa.out")")
		rec_ok "$WORK/aa1.data" base || continue
		rec_ok "$WORK/aa2.data" base || continue
		diff_run "$WORK/aa" "$WORK/aa1.data" "$WORK/aa2.data" --json
	fi
	case $RC in
	0) ;;
	1)
		false_alarms=$((false_alarms + 1))
		aa_fail+=("rep $i: $(jq -c '[.speed_factor, (.regressions[] | [.name, .change_pct, .p_value]), (.calls_changed[] | .name)]' "$WORK/aa.out")")
		;;
	*) aa_fail+=("rep $i: exit $RC: $(head -n 2 "$WORK/aa.err")") ;;
	esac
done
if [ "$false_alarms" -le 1 ] && [ "${#aa_fail[@]}" -eq "$false_alarms" ]; then
	ok "A/A: $false_alarms of $AA_REPS diffs of two recordings of one build reported a regression (at most 1 allowed)"
else
	fail "A/A: at most 1 of $AA_REPS diffs may report a regression" "${aa_fail[@]}" \
		"${aa_retried[@]}"
fi

# --- Two builds of one program: same file name, different build-ids.
build_id()
{
	readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: //p'
}
bid_base=$(build_id "$AB/base/fifty")
bid_slow=$(build_id "$AB/slow/fifty")
if [ -n "$bid_base" ] && [ "$bid_base" != "$bid_slow" ]; then
	ok "the base and slow builds have different build-ids ($bid_base, $bid_slow)"
else
	fail "the base and slow builds have different build-ids" "base: $bid_base" "slow: $bid_slow"
fi

# --- A/B: f17 does 20 % more work in the slow build. The base is recorded
# just before, so that both see the machine in the same state.
ab_diff "$WORK/ab" slow f17 --json --all
if ! expect_eq "A/B slow f17: exit status 1" "$RC" 1; then
	echo "#   f17: $(jq -c '.functions[] | select(.name == "f17")' "$WORK/ab.out")"
fi
if ! expect_eq "A/B slow f17: the regressions are f17 and no other" \
	"$(jq -r '[.regressions[].name] | join(",")' "$WORK/ab.out")" "f17"; then
	echo "#   speed factor $(jq -c '.speed_factor' "$WORK/ab.out"); regressions:"
	jq -c '.regressions[] | [.name, .base, .new, .change_pct, .p_value, .test]' "$WORK/ab.out" | sed 's/^/#   /'
fi
expect_eq "A/B slow f17: nothing under calls_changed" \
	"$(jq -r '.calls_changed | length' "$WORK/ab.out")" 0
expect_cmp "A/B slow f17: change_pct" "$(jq -r '.regressions[0].change_pct' "$WORK/ab.out")" '>' 10
expect_cmp "A/B slow f17: p_value" "$(jq -r '.regressions[0].p_value' "$WORK/ab.out")" '<' 0.01
expect_eq "A/B: 50 functions compared" "$(jq -r '.compared' "$WORK/ab.out")" 50
expect_eq "diff --json keys" \
	"$(jq -c '[has("regressions"), has("improvements"), has("calls_changed"), has("compared"), (.regressions[0] | has("name") and has("stat") and has("base") and has("new") and has("change_pct") and has("p_value"))]' "$WORK/ab.out")" \
	"[true,true,true,true,true]"

# The readable table and the markdown name it too.
diff_run "$WORK/abt" "$WORK/base.data" "$WORK/slow.data"
expect_match "A/B table names f17 under REGRESSIONS" "$(sed -n '/^REGRESSIONS/,/^$/p' "$WORK/abt.out")" '^  f17 +fifty'
diff_run "$WORK/md" "$WORK/base.data" "$WORK/slow.data" --markdown --junit "$WORK/junit.xml"
expect_eq "--markdown --junit: exit status 1" "$RC" 1
if python3 - "$WORK/md.out" >"$WORK/md.check" 2>&1 <<'EOF'; then
import re, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [l for l in lines if l.startswith("|")]
assert len(rows) >= 3, "no table"
cells = lambda l: [c for c in re.split(r"(?<!\\)\|", l.strip())[1:-1]]
n = len(cells(rows[0]))
assert all(len(cells(r)) == n for r in rows), "ragged table"
assert all(re.fullmatch(r"-+:?|:?-+:?", c.strip()) for c in cells(rows[1])), "no delimiter row"
body = rows[2:]
assert len(body) == 1 and cells(body[0])[1].strip() == "f17" and "regression" in body[0], body
EOF
	ok "--markdown is a GFM table (header, delimiter, one row for f17)"
else
	fail "--markdown is a GFM table" "$(cat "$WORK/md.check")" "$(cat "$WORK/md.out")"
fi

# JUnit: the structure CI systems read (Jenkins/GitLab/GitHub junit schema).
if python3 - "$WORK/junit.xml" >"$WORK/junit.check" 2>&1 <<'EOF'; then
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
assert len(suites) == 1
s = suites[0]
for a in ("name", "tests", "failures", "errors"):
    assert a in s.attrib, a
cases = s.findall("testcase")
assert len(cases) == int(s.get("tests")) == 50, len(cases)
for c in cases:
    assert c.get("name") and c.get("classname"), c.attrib
    for child in c:
        assert child.tag in ("failure", "error", "skipped", "system-out", "system-err"), child.tag
        if child.tag == "failure":
            assert child.get("message"), "failure without message"
failed = [c.get("name") for c in cases if c.find("failure") is not None]
assert failed == ["f17"], failed
assert int(s.get("failures")) == 1 and int(root.get("failures")) == 1
print("ok")
EOF
	ok "--junit: testsuites/testsuite/testcase structure, 50 cases, one failure (f17)"
else
	fail "--junit structure" "$(cat "$WORK/junit.check")"
fi
# tests/fixtures/junit.xsd: the structure of Jenkins', GitLab's and GitHub's
# readers, stricter on types; xmllint is libxml2-utils (scripts/deps.sh).
check "--junit validates against the JUnit schema CI systems read (xmllint --schema)" \
	xmllint --noout --schema "$TESTS_DIR/fixtures/junit.xsd" "$WORK/junit.xml"

# --- A/B: f33 is called twice as often, with no latency regression.
ab_diff "$WORK/tw" twice "" --json
expect_eq "A/B twice f33: exit status 1" "$RC" 1
expect_eq "A/B twice f33: calls_changed is f33, $ROUNDS -> $((2 * ROUNDS)) per run" \
	"$(jq -c '[.calls_changed[] | [.name, .base, .new, .change_pct]]' "$WORK/tw.out")" \
	"[[\"f33\",$ROUNDS,$((2 * ROUNDS)),100]]"
expect_eq "A/B twice f33: no latency regression" "$(jq -r '.regressions | length' "$WORK/tw.out")" 0

# --- Different programs: refused (2) unless --force; usage errors are 2.
at_run "$WORK/other" record -q -o "$WORK/simple.data" -- "$TARGETS/simple"
diff_run "$WORK/dp" "$WORK/base.data" "$WORK/simple.data"
expect_eq "different programs: exit status 2" "$RC" 2
expect_match "different programs: one-line message naming both and --force" \
	"$(cat "$WORK/dp.err")" '^adaptrace: .*different programs \(fifty and simple.*--force$'
expect_eq "different programs: message is one line" "$(wc -l <"$WORK/dp.err")" 1
diff_run "$WORK/dpf" "$WORK/base.data" "$WORK/simple.data" --force --json
expect_eq "different programs with --force: compared, exit 0" \
	"$RC $(jq -r '.compared' "$WORK/dpf.out") $(jq -r '.vanished | length' "$WORK/dpf.out")" "0 0 50"
diff_run "$WORK/bad" "$WORK/base.data" "$WORK/missing.data"
expect_eq "missing file: exit status 2" "$RC" 2
diff_run "$WORK/bad" "$WORK/base.data" "$WORK/slow.data" --stat p42
expect_eq "bad --stat: exit status 2" "$RC" 2

# --- record --baseline: the verdict becomes the exit status.
rec_slow_vs_base "$WORK/bl-slow.data"
expect_eq "record --baseline with a regression: exit status 1" "$RC" 1
expect_match "record --baseline prints the verdict" "$(cat "$WORK/rec.err")" '^FAIL: 1 regression'
# One A/A comparison: like the A/A diffs above it may raise a false alarm
# on a noisy host, so a regression verdict gets one fresh recording.
rec "$WORK/bl-same.data" base --baseline "$WORK/base.data"
if [ "$RC" -eq 1 ]; then
	cp "$WORK/rec.err" "$WORK/bl-same.first.err"
	rec "$WORK/bl-same.data" base --baseline "$WORK/base.data"
fi
if [ "$RC" -eq 0 ]; then
	ok "record --baseline without regression: exit status 0"
else
	fail "record --baseline without regression: exit status 0" "got $RC" "$(tail -n 8 "$WORK/rec.err")" \
		"$(cat "$WORK/bl-same.first.err" 2>/dev/null)"
fi
rec "$WORK/bl-bad.data" base --baseline "$WORK/missing.data"
expect_eq "record --baseline with a missing baseline: exit 2 before recording" \
	"$RC $([ -e "$WORK/bl-bad.data" ] && echo written || echo none)" "2 none"

# --- The relevance criterion 'regressed': with --baseline, the detail phase
# selects the function that got slower, and the selection log says why.
rec_slow_vs_base "$WORK/rg-slow.data" --select regressed
expect_eq "--select regressed --baseline: exit status 1 (the regression)" "$RC" 1
"$ADAPTRACE" report "$WORK/rg-slow.data" --selection --json >"$WORK/rg.sel" 2>"$WORK/rg.err"
expect_match "--select regressed: f17 entered the detail phase as regressed" \
	"$(jq -r 'select(.function == "f17" and .change == "enter") | .reason' "$WORK/rg.sel")" \
	'regressed'
rec "$WORK/rg-none.data" base --select regressed
expect_eq "--select regressed without --baseline: exit 2" "$RC" 2
expect_match "... saying to give --baseline" "$(cat "$WORK/rec.err")" '--baseline FILE'
