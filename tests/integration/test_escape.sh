#!/usr/bin/env bash
# Strings from the target are data: tests/targets/hostile passes strings
# built to break output formats (quotes, line breaks, terminal escapes, bad
# UTF-8, spreadsheet formulas, XML and Markdown markup) as a captured
# argument and as a USDT key, which becomes a row name. Every output is read
# back with a real parser (jq, python's json and csv, promtool, xmllint with
# the JUnit schema, cmark-gfm) and must give the strings back, or U+FFFD for
# bytes that are not UTF-8.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

HOSTILE=$TARGETS/hostile
# rec OUT SCALE: record hostile, its USDT key rows and every visit's arguments.
rec()
{
	at_run "$WORK/rec" record -q -o "$1" -u 'hostile:visit(arg1:str)' -f visit --detail visit \
		--detail-rate 1 --args 'visit(str:64,i32):i32' -- "$HOSTILE" "$2"
	expect_eq "record at scale $2 exits 0" "$RC" 0
}
rec "$WORK/base.data" 1
rec "$WORK/new.data" 3
B=$WORK/base.data
N=$("$HOSTILE" 1 | sed -n 's/^strings=\([0-9]*\) .*/\1/p')

# The strings as hostile.c has them, and as readers must see them.
cat >"$WORK/expect.py" <<'EOF'
import re
src = open(__import__("sys").argv[1], "rb").read()
body = src[src.index(b"hostile[] = {"):src.index(b"};", src.index(b"hostile[] = {"))]
def unc(lit):
    out, i = b"", 0
    while i < len(lit):
        c = lit[i:i + 1]
        if c != b"\\":
            out += c; i += 1; continue
        n = lit[i + 1:i + 2]
        if n == b"x":
            m = re.match(rb"[0-9a-fA-F]+", lit[i + 2:])
            out += bytes([int(m.group(0), 16)]); i += 2 + len(m.group(0))
        else:
            out += {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"a": b"\a"}.get(n, n); i += 2
    return out
# Adjacent literals (only blanks between them) are one string, as in C.
STRINGS, prev_end = [], None
for m in re.finditer(rb'"((?:[^"\\]|\\.)*)"', body[body.index(b"{"):]):
    gap = body[body.index(b"{"):][prev_end:m.start()] if prev_end is not None else b","
    if gap.strip():
        STRINGS.append(b"")
    STRINGS[-1] += unc(m.group(1))
    prev_end = m.end()
DECODED = [s.decode("utf-8", "replace") for s in STRINGS]
NAMES = ["hostile:visit[%s]" % d for d in DECODED]
EOF
SRC=$ROOT/tests/targets/hostile.c
py()
{
	python3 - "$SRC" "$@" <<EOF
import sys
exec(open("$WORK/expect.py").read())
$(cat)
EOF
}

expect_eq "the test reads hostile.c's $N strings" \
	"$(py <<<'print(len(STRINGS))')" "$N"

# --- report --json: names and keys decode back; counts per key exact.
if report_json "$B" "$WORK/r.json"; then
	check "report --json: every key decodes to its string (U+FFFD for bad bytes), with its count" \
		py "$WORK/r.json" <<'EOF'
import json
r = json.load(open(sys.argv[2]))
rows = {u["row"] if "row" in u else u["name"]: u for u in r["usdt"] if u.get("kind") == "usdt_key"}
keys = {u["key"][0]: u["calls"] for u in r["usdt"] if u.get("kind") == "usdt_key"}
assert sorted(keys) == sorted(DECODED), (sorted(keys), sorted(DECODED))
for i, d in enumerate(DECODED):
    assert keys[d] == i + 1, (d, keys[d])
names = {f["name"] for f in r["functions"]}
assert set(NAMES) <= names, set(NAMES) - names
EOF
fi

# --- report text: one line per row whatever the names hold, no terminal control.
"$ADAPTRACE" report "$B" >"$WORK/r.txt" 2>&1
check "report table: no ESC, CR, BEL, DEL, C1 or bidi-override byte reaches the terminal" \
	py "$WORK/r.txt" <<'EOF'
t = open(sys.argv[2], "rb").read()
for bad in (b"\x1b", b"\r", b"\x07", b"\x7f", b"\xc2\x9b", b"\xe2\x80\xae", b"\xe2\x80\xa8"):
    assert bad not in t, bad
t.decode("utf-8")
EOF
expect_eq "report table: one line per row ($((N + 1)) rows: visit and a key row per string)" \
	"$(sed -n '2,/^$/p' "$WORK/r.txt" | grep -cE '^(visit |hostile:visit\[)')" "$((N + 1))"

# --- captured arguments: report --events, text and JSON lines.
"$ADAPTRACE" report "$B" --events >"$WORK/ev.txt" 2>&1
CALLS=$(( N * (N + 1) / 2 ))
expect_eq "report --events: one line per call ($CALLS)" "$(grep -c '^visit ' "$WORK/ev.txt")" "$CALLS"
check "report --events: no terminal control bytes, strings quoted and escaped" \
	py "$WORK/ev.txt" <<'EOF'
t = open(sys.argv[2], "rb").read()
for bad in (b"\x1b", b"\r", b"\x07", b"\x7f", b"\xc2\x9b", b"\xe2\x80\xae"):
    assert bad not in t, bad
assert b'("quote\\"back\\\\slash\'apos", 1)' in t, "quote string"
assert b'("\\x1b[2J\\x1b]0;pwned\\x07esc", 3)' in t, "escape string"
EOF
"$ADAPTRACE" report "$B" --events --json >"$WORK/ev.json" 2>&1
check "report --events --json: every line parses, args[0] gives the strings back" \
	py "$WORK/ev.json" <<'EOF'
import json, collections
seen = collections.Counter()
for line in open(sys.argv[2], encoding="utf-8"):
    e = json.loads(line)
    seen[e["args"][0]] += 1
    assert DECODED[e["args"][1]] == e["args"][0], e
assert seen == {d: i + 1 for i, d in enumerate(DECODED)}, seen
EOF

# --- export: Chrome trace (JSON), CSV, OpenMetrics.
"$ADAPTRACE" export "$B" --format chrome -o "$WORK/c.json" 2>"$WORK/c.err"
check "export chrome: jq parses it" jq -e '.traceEvents | length > 0' "$WORK/c.json"
check "export chrome: the captured strings come back from python's json" py "$WORK/c.json" <<'EOF'
import json
s = json.dumps(json.load(open(sys.argv[2], encoding="utf-8")), ensure_ascii=False)
for d in DECODED:
    assert json.dumps(d, ensure_ascii=False)[1:-1] in s, d
EOF
"$ADAPTRACE" export "$B" --format csv -o "$WORK/c.csv" 2>"$WORK/csv.err"
check "export csv: python's csv reads every row with the header's field count and the names" \
	py "$WORK/c.csv" <<'EOF'
import csv
rows = list(csv.reader(open(sys.argv[2], encoding="utf-8", newline="")))
head = rows[0]
assert all(len(r) == len(head) for r in rows), [r for r in rows if len(r) != len(head)]
fn = head.index("function")
names = {r[fn] for r in rows[1:]}
assert set(NAMES) <= names, set(NAMES) - names
EOF
"$ADAPTRACE" export "$B" --format openmetrics -o "$WORK/om.txt" 2>"$WORK/om.err"
check "export openmetrics: promtool check metrics accepts it" \
	sh -c "promtool check metrics <'$WORK/om.txt'"
check "export openmetrics: one calls sample per row, labels unescape to the names" \
	py "$WORK/om.txt" <<'EOF'
import re
text = open(sys.argv[2], encoding="utf-8").read()
lines = [l for l in text.split("\n") if l.startswith("adaptrace_calls_total{")]
got = set()
for l in lines:
    m = re.match(r'adaptrace_calls_total\{binary="((?:[^"\\]|\\.)*)",function="((?:[^"\\]|\\.)*)"\} \d+$', l)
    assert m, l
    got.add(re.sub(r'\\(.)', lambda x: "\n" if x.group(1) == "n" else x.group(1), m.group(2)))
clean = lambda s: "".join("\ufffd" if (ord(c) < 0x20 and c != "\n") or c == "\x7f" else c for c in s)
assert {clean(n) for n in NAMES} <= got, {clean(n) for n in NAMES} - got
EOF

# --- diff: JSON, Markdown, JUnit XML; every key row is called 3x as often.
at_run "$WORK/d" diff "$B" "$WORK/new.data" --json --all
expect_eq "diff --json exits 1 (called more often)" "$RC" 1
check "diff --json: jq parses it, the names come back" py "$WORK/d.out" <<'EOF'
import json
d = json.load(open(sys.argv[2], encoding="utf-8"))
names = {x["name"] for x in d["calls_changed"]}
assert set(NAMES) <= names, set(NAMES) - names
EOF
at_run "$WORK/md" diff "$B" "$WORK/new.data" --markdown --junit "$WORK/junit.xml"
cmark-gfm -e table "$WORK/md.out" >"$WORK/md.html" 2>&1
check "diff --markdown: cmark-gfm renders a table row per changed function, no markup from the names" \
	py "$WORK/md.html" <<'EOF'
import html, re
h = open(sys.argv[2], encoding="utf-8").read()
assert "<script" not in h and "<x " not in h and "<a " not in h and "<em>" not in h and "<code>" not in h, h
body = h[h.index("<tbody>"):h.index("</tbody>")]
rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
# The key rows and one more changed call count; a latency verdict on any other
# function depends on timing, so more rows may follow.
assert len(rows) >= len(NAMES) + 1, len(rows)
cells = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in rows]
assert all(len(c) == 8 for c in cells), [len(c) for c in cells]
got = {html.unescape(c[1]) for c in cells}
want = {n.replace("\n", " ").replace("\r", " ").replace("\t", " ").replace("\x1b", " ")
        .replace("\x07", " ").replace("\x7f", " ").replace("\u202e", "\ufffd").replace("\u2028", "\ufffd")
        .replace("\x9b", "\ufffd") for n in NAMES}
assert want <= got, (want - got, got)
EOF
check "diff --junit: xmllint validates it against the JUnit schema" \
	xmllint --noout --schema "$TESTS_DIR/fixtures/junit.xsd" "$WORK/junit.xml"
check "diff --junit: one test case per row, names come back from the XML parser" \
	py "$WORK/junit.xml" <<'EOF'
import xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[2]).getroot().iter("testcase")
names = {c.get("name") for c in cases}
want = {"".join("\ufffd" if (ord(c) < 0x20 and c not in "\t\n\r") or c == "\x7f" else c
                for c in n) for n in NAMES}
assert want <= names, (want - names)
EOF

# --- error messages quote names: still one line, no control bytes.
at_run "$WORK/err" record -q -o "$WORK/x.data" -f $'nomatch\x1b[2J\nfake line' -- "$HOSTILE"
expect_eq "a pattern with control bytes: exit 2" "$RC" 2
check "... and its error is one escaped line" py "$WORK/err.err" <<'EOF'
t = open(sys.argv[2], "rb").read()
assert t.count(b"\n") == 1 and b"\x1b" not in t and b"\\x1b[2J\\nfake line" in t, t
EOF
