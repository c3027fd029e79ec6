#!/usr/bin/env bash
# The whole test suite: unit tests, a short run of every fuzzer, then every
# integration test. Builds nothing: "make check" builds first, then runs this.
# Every "ok"/"not ok" line is one check; the last line is "N passed, N failed"
# and the exit status is 1 if anything failed.
#
# Environment: FUZZ_SECONDS (30) per fuzzer, TEST_TIMEOUT (300) per
# integration script, ONLY=REGEX to run only the matching programs.
set -u

TESTS_DIR=$(cd "$(dirname "$0")" && pwd)
BUILD=$TESTS_DIR/build
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
ONLY=${ONLY:-}
PASSED=0
FAILED=0
TMP=$(mktemp -d /tmp/adaptrace-run.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

selected()
{
	[ -z "$ONLY" ] || [[ $1 =~ $ONLY ]]
}

# run_counted NAME TIMEOUT CMD...: run CMD, print its output, count its
# "ok"/"not ok" lines; a non-zero exit with no "not ok" line is one failure.
run_counted()
{
	local name=$1 limit=$2 rc npass nfail
	shift 2
	echo "# --- $name"
	timeout -k 10 "$limit" "$@" >"$TMP/out" 2>&1 </dev/null
	rc=$?
	cat "$TMP/out"
	npass=$(grep -cE '^ok\b' "$TMP/out")
	nfail=$(grep -cE '^not ok\b' "$TMP/out")
	if [ "$rc" -ne 0 ] && [ "$nfail" -eq 0 ]; then
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "not ok - $name: timed out after ${limit}s"
		else
			echo "not ok - $name: exited with status $rc"
		fi
		nfail=1
	elif [ "$rc" -eq 0 ] && [ "$nfail" -gt 0 ]; then
		echo "# $name: exited 0 despite failed checks"
	fi
	PASSED=$((PASSED + npass))
	FAILED=$((FAILED + nfail))
}

# Unit tests (ASan/UBSan builds): their own ok/not ok lines.
for t in "$BUILD"/unit/test_*; do
	[ -x "$t" ] || continue
	selected "$(basename "$t")" || continue
	run_counted "unit/$(basename "$t")" 300 "$t"
done

# Fuzzers: a short run from a scratch copy of the seed corpus, one check each.
for f in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	selected "$name" || continue
	corpus=$TMP/corpus-$name
	mkdir -p "$corpus"
	seeds=$TESTS_DIR/fuzz/corpus/${name#fuzz_}
	[ -d "$seeds" ] && cp -r "$seeds"/. "$corpus"/
	# Crashing inputs are kept in build/fuzz/artifacts/ for the report.
	artifacts=$BUILD/fuzz/artifacts
	mkdir -p "$artifacts"
	echo "# --- fuzz/$name (${FUZZ_SECONDS}s)"
	(cd "$TMP" && timeout -k 10 $((FUZZ_SECONDS * 3 + 60)) "$f" -max_total_time="$FUZZ_SECONDS" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
		"$corpus" >"$TMP/fuzz.log" 2>&1 </dev/null)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "ok - fuzz/$name: $(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$TMP/fuzz.log" |
			grep -Eo '[0-9]+$' || echo '?') runs, no crash"
		PASSED=$((PASSED + 1))
	else
		echo "not ok - fuzz/$name: exit status $rc"
		grep -E 'ERROR|SUMMARY|Test unit written|^ *#[0-9]+ ' "$TMP/fuzz.log" | head -n 20 | sed 's/^/#   /'
		FAILED=$((FAILED + 1))
	fi
done

# Integration tests (root, real probes).
for t in "$TESTS_DIR"/integration/test_*.sh; do
	[ -f "$t" ] || continue
	selected "$(basename "$t")" || continue
	run_counted "integration/$(basename "$t" .sh)" "$TEST_TIMEOUT" bash "$t"
done

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
