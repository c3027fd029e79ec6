#!/usr/bin/env bash
# Damaged trace files: truncated at many offsets or with one bit flipped,
# "report" exits 2 with one line that names the byte offset, never crashes.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

DATA=$WORK/good.data
at_run "$WORK/rec" record -q -o "$DATA" --interval 0.1 -- "$TARGETS/mt"
expect_eq "record -- mt exits 0" "$RC" 0 || sed 's/^/#   stderr: /' "$WORK/rec.err" | head -n 5
report_json "$DATA" "$WORK/good.json" || exit 1
size=$(stat -c %s "$DATA")
expect_cmp "trace file is not empty" "$size" '>' 64

# damaged LABEL FILE [any]: report must exit 2 with one line on stderr that
# names the byte offset ("any": a file that is not recognisable as a trace
# file at all, empty or with a damaged magic, need not name a byte).
damaged()
{
	local label=$1 file=$2 what="exit 2, one line naming the byte" rc lines named=yes
	timeout -k 5 30 "$ADAPTRACE" report "$file" >"$WORK/d.out" 2>"$WORK/d.err"
	rc=$?
	lines=$(wc -l <"$WORK/d.err")
	if [ "${3:-}" = any ]; then
		what="exit 2, one line"
	elif ! grep -q 'byte' "$WORK/d.err"; then
		named=no
	fi
	if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && [ "$named" = yes ]; then
		ok "$label: $what"
	else
		fail "$label: $what" "exit status: $rc" "stderr ($lines lines): $(head -n 3 "$WORK/d.err")"
	fi
}

# The magic is the first 8 bytes (user/tracefile.h).
MAGIC_LEN=8
unrecognisable()
{
	[ "$1" -lt "$MAGIC_LEN" ] && echo any
}

# Truncations: the header, the first chunk, the middle, the end.
offsets=(0 1 4 7 8 9 12 16 24 32 48 64 100 $((size / 4)) $((size / 3)) $((size / 2)) \
	$((size * 2 / 3)) $((size * 3 / 4)) $((size - 100)) $((size - 16)) $((size - 8)) \
	$((size - 4)) $((size - 1)))
for off in $(printf '%s\n' "${offsets[@]}" | sort -n -u); do
	if [ "$off" -lt 0 ] || [ "$off" -ge "$size" ]; then
		continue
	fi
	head -c "$off" "$DATA" >"$WORK/trunc.data"
	damaged "truncated to $off of $size bytes" "$WORK/trunc.data" "$( [ "$off" -eq 0 ] && echo any)"
done

# Bit flips: one bit at each of these offsets (bit number = offset mod 8).
flips=(0 3 5 7 8 9 10 11 12 13 14 15 16 20 24 28 32 40 48)
for i in $(seq 1 23); do
	flips+=($((size * i / 24)))
done
flips+=($((size - 5)) $((size - 1)))
for off in $(printf '%s\n' "${flips[@]}" | sort -n -u); do
	if [ "$off" -lt 0 ] || [ "$off" -ge "$size" ]; then
		continue
	fi
	python3 - "$DATA" "$WORK/flip.data" "$off" <<'PY'
import sys
src, dst, off = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = bytearray(open(src, "rb").read())
b[off] ^= 1 << (off % 8)
open(dst, "wb").write(b)
PY
	damaged "bit $((off % 8)) of byte $off flipped" "$WORK/flip.data" "$(unrecognisable "$off")"
done

# --json on a damaged file: no partial JSON on stdout.
head -c $((size / 2)) "$DATA" >"$WORK/half.data"
timeout -k 5 30 "$ADAPTRACE" report "$WORK/half.data" --json >"$WORK/half.out" 2>"$WORK/half.err"
expect_eq "report --json on a truncated file exits 2" "$?" 2
expect_eq "report --json on a truncated file prints nothing on stdout" "$(wc -c <"$WORK/half.out")" 0

# Not a trace file at all.
: >"$WORK/empty.data"
head -c 4096 /dev/urandom >"$WORK/random.data"
printf 'hello, world\n' >"$WORK/text.data"
for f in empty random text; do
	timeout -k 5 30 "$ADAPTRACE" report "$WORK/$f.data" >/dev/null 2>"$WORK/$f.err"
	rc=$?
	expect_eq "$f file: report exits 2" "$rc" 2
	expect_eq "$f file: one line on stderr" "$(wc -l <"$WORK/$f.err")" 1
done

# The original is untouched and still reads.
report_json "$DATA" "$WORK/again.json"
