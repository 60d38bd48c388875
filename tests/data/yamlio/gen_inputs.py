"""Writes the input trees of the yamlio table tests (run once; outputs are committed).

Each case is a directory with ``kustomization.yaml`` and ``input.yaml``;
``case.json`` and ``expected.yaml`` (what ``kubectl kustomize`` printed) are written by
``scripts/record_fixture.py --tables`` and never edited.
"""
from __future__ import annotations

import pathlib
import random
from typing import Dict, List

HERE = pathlib.Path(__file__).parent
KUST = "resources:\n- input.yaml\n"


def dq(s: str) -> str:
    """A YAML double-quoted scalar for any text (go-yaml and libyaml both read these escapes)."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or o == 0x7F or 0x80 <= o < 0xA0:
            out.append("\\x%02X" % o)
        elif o in (0xFEFF, 0x2028, 0x2029, 0xFFFE, 0xFFFF) or 0xD800 <= o < 0xE000:
            out.append("\\u%04X" % o)
        elif o > 0xFFFF:
            out.append("\\U%08X" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


WORDS = ("y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF "
         "~ null Null NULL .nan .NaN .inf -.inf +.inf .Inf << = .").split()
NUMBERS = ("0 1 -1 +1 -0 0123 08 09 0o17 0O17 0x1F 0X1f 0b101 -0b101 0b 0x 1_000 1__ _1 1e3 1E3 1.0 1. .5 -.5 +.5 "
           "1.5e-3 6.02e23 1e400 9223372036854775807 9223372036854775808 18446744073709551615 "
           "18446744073709551616 99999999999999999999 -9223372036854775808 -9223372036854775809 "
           "1:20 1:20:30.5 -1:20 190:20:30 1:60 1_0:20 "
           "2001-12-14 2001-12-14t21:59:43.10-05:00 2001-12-14T21:59:43Z 2001-13-14 2001-1-2 2001-02-30 "
           "2000-02-29 1900-02-29 20011214 2001-12-14T25:00:00Z 1.2.3 v1.2 0xZZ 12abc 1e 1e+ 0.0.0.0 "
           "127.0.0.1 10.0.0.0/8 3.14 -3.14 1,000 $1 5% 1/2").split()
INDICATORS = ["&a", "@a", "!a", "*a", "%a", "|a", ">a", "{a}", "[a]", "- a", "? a", "#a", "'a", '"a', "`a",
              ",a", "a,b", "a:b", "a: b", "a #b", "a#b", "-a", "?a", ":a", "a:", "a: ", "<a>&", "-", "--",
              "---", "...", "?", ":", "!", "&", "*", "|", ">", "#", "%", "@", "`", "~a", "a~",
              "http://x.io/y?a=b#c", "app.kubernetes.io/name", "key: value", "{", "}", "[", "]", ",",
              "a]", "a}", "a[", "a{", "a, b", "a ,b", "[a, b]", "{a: b}", "'", '"', "''", "a'b", 'a"b',
              "a\\b", "\\", "- ", "-- a", "?x", "a?", "a!", "a&b", "a*b", "a|b", "a>b", "a%b", "a@b"]
SPACES = [" ", "  ", " a", "a ", " a ", "a  b", "\t", "a\tb", "\ta", "a\t", " \t "]
UNICODE = ["é", "\u00a0", "a\u00a0b", "日本語", "\U0001F600", "a \U0001F600 b", "\ufeffa", "a\ufeff",
           "\u2028", "a\u2028b", "a\u0085b", "\x01", "\u200b", "\ue000", "\ufffd",
           "\U00010000x", "Ω≈ç√", "\x08"]
MULTI = ["line1\nline2", "line1\nline2\n", "line1\nline2\n\n", "\nleading", " lead\nx", "  two\nx\n",
         "line1 \nline2", "line1\n\ttab\n", "a\n", "\n", "\n\n", "trailing  \n", "x\n  indented\n",
         "#c\nx", "- a\n- b\n", "a\rb", "a\r\nb", "x\n\n\ny", "tab\tin\nline", "end space\nlast ",
         "é\nü\n", "\U0001F600\nx", "a\n" + "long " * 30 + "\n", "---\nx\n", "key: v\nk2: v2\n",
         "\ttab first\nx", "x\n ", "x\n\t"]
LONG = ["a" * 100, "word " * 30, "x" * 85 + " y", "x" * 79 + " " + "y" * 10, "x" * 80 + " " + "y" * 10,
        " lead " + "word " * 25, "a: b " * 25, "a #b " * 25, "word  " * 25, "word" + "  word" * 25,
        "é " * 60, "\U0001F600 " * 30, "word " * 20 + "\x01" + " word" * 10, "yes " * 40,
        "0123 " * 30, "http://example.com/" + "p" * 100, "a" * 79 + " b", "a" * 78 + " b c",
        "word " * 15 + "x" * 90 + " " + "word " * 5, "'quoted' " * 15, '"dq" ' * 15,
        "trailing space long " * 5 + " ", "a\u00a0" * 60, "- " * 50, "a - " * 30]


def main() -> None:
    groups: Dict[str, List[str]] = {"words": WORDS, "numbers": NUMBERS, "indicators": INDICATORS,
                                    "spaces": SPACES, "unicode": UNICODE, "multi": MULTI, "long": LONG}
    # 1. the emitter: every string written double-quoted, so only output style is tested.
    docs = []
    for n, (name, vals) in enumerate(groups.items()):
        # kustomize's legacy sort orders same-kind resources by name: keep input order.
        lines = ["apiVersion: example.com/v1", "kind: Tricky", "metadata:", f"  name: s{n}-{name}", "data:"]
        for i, v in enumerate(vals):
            lines.append(f"  k{i:03d}: {dq(v)}")
        lines.append("list:")
        for v in vals:
            lines.append(f"- {dq(v)}")
        docs.append("\n".join(lines) + "\n")
    write("strings", "---\n".join(docs))
    # 2. the loader: the same texts written plain where YAML allows it.
    lines = ["apiVersion: example.com/v1", "kind: Tricky", "metadata:", "  name: plain", "data:"]
    plain = [w for w in WORDS + NUMBERS if "inf" not in w.lower() and "nan" not in w.lower()]
    for i, v in enumerate(plain):
        lines.append(f"  k{i:03d}: {v}")
    lines.append("list:")
    for v in plain:
        lines.append(f"- {v}")
    lines.append("  # a comment")
    write("plain-typing", "\n".join(lines) + "\n")
    # 3. keys: natural order, long keys, keys needing quotes.
    keys = ["*.x", "-", "_x", "1", "2", "10", "A", "Zeta", "a-b", "a.b", "a/b", "a_b", "a~", "a1", "a2",
            "a10", "aB", "x0", "x00", "x1", "x01", "x001", "x9", "x09", "x10", "yes", "zeta", "ä",
            "é1", "b[", "b]", "b^", "b`", "b{", "b|", "b}", "b:", "b@", "a00b", "a0b", "a0", "a000",
            "v1.10", "v1.9", "v1.09", "1.5", "1.10", "01", "001", "0", "00", "x99999999999999999999",
            "x99999999999999999998", "x18446744073709551616", "b1c", "b10c", "b1d", "ab", "a b",
            "a", "B", "b", "日本", "Ω", "_", "~", "null", "true", "on", "k" * 129, "k" * 128,
            "long key " * 16, "a: b", " lead", "\U0001F600", "k\nv"]
    lines = ["apiVersion: example.com/v1", "kind: Tricky", "metadata:", "  name: keys", "data:"]
    for i, k in enumerate(keys):
        lines.append(f"  {dq(k)}: {i}")
    lines.append("nested:")
    lines.append("  " + dq("k" * 130) + ":")
    lines.append("  - a")
    lines.append("  - " + dq("line\nbreak"))
    write("keys", "\n".join(lines) + "\n")
    # 4. structure: anchors, merges, nested lists, block scalars, separators, empty docs, CRLF.
    write("structure", STRUCTURE)
    (HERE / "crlf").mkdir(exist_ok=True)
    (HERE / "crlf" / "kustomization.yaml").write_text(KUST)
    (HERE / "crlf" / "input.yaml").write_bytes(CRLF.replace("\n", "\r\n").encode())
    write("floats", FLOATS)
    # 5. long and multi-line strings at several depths and in sequences.
    samples = [LONG[1], LONG[3], LONG[6], LONG[11], LONG[12], LONG[18], LONG[20], MULTI[0], MULTI[4],
               MULTI[6], MULTI[22], " lead\n" + "word " * 20, "\U0001F600 " * 40 + "end"]
    lines = ["apiVersion: example.com/v1", "kind: Tricky", "metadata:", "  name: nesting", "spec:"]
    for i, v in enumerate(samples):
        lines += [f"  s{i:02d}:", "    a:", f"      b: {dq(v)}", "      c:", f"      - {dq(v)}",
                  f"      - - {dq(v)}", f"        - x: {dq(v)}", f"          y: [{dq(v)}]",
                  f"      - {dq(v)}: {dq(v)}"]
    write("nesting", "\n".join(lines) + "\n")
    # 6. the same texts in single-quoted and block styles (kyaml re-encodes each
    #    node in its input style before kustomize's JSON round trip).
    lines = ["apiVersion: example.com/v1", "kind: Tricky", "metadata:", "  name: styles", "single:"]
    printable = [v for v in INDICATORS + LONG + SPACES + WORDS
                 if all(c == " " or (c.isprintable() and ord(c) < 0xFFFF) for c in v)]
    for i, v in enumerate(printable):
        lines.append(f"  k{i:03d}: '" + v.replace("'", "''") + "'")
    lines.append("literal:")
    for i, v in enumerate(MULTI + [w + "\n" + w for w in LONG[:8]]):
        if v.strip("\n") and all(c == "\n" or (c.isprintable() and ord(c) < 0xFFFF) for c in v) \
                and not v.startswith((" ", "\n")):
            body = "".join("    " + ln + "\n" if ln else "\n" for ln in v.rstrip("\n").split("\n"))
            chomp = "-" if not v.endswith("\n") else ("+" if v.endswith("\n\n") else "")
            lines.append(f"  k{i:03d}: |{chomp}")
            lines.append(body.rstrip("\n") + ("\n" * (len(v) - len(v.rstrip("\n")) - 1) if chomp == "+" else ""))
    write("styles", "\n".join(lines) + "\n")
    # 7. 600 random strings (seeded) as values, sequence items at depth, and keys.
    rnd = random.Random(7)
    alphabet = (list("abcxyz") * 6 + list(" " * 10) + list(":#-?,[]{}&*!|>'\"%@`\\/.~=+")
                + ["\n", "\t", "é", "日", "\U0001F600", "0", "1", "9"])
    vals = ["".join(rnd.choice(alphabet) for _ in range(rnd.choice([1, 2, 3, 5, 8, 20, 40, 75, 79, 80, 81, 85,
                                                                     120, 200])))
            for _ in range(600)]
    lines = ["apiVersion: v1", "kind: T", "metadata:", "  name: x", "data:"]
    lines += [f"  k{i:04d}: {dq(v)}" for i, v in enumerate(vals)]
    lines += ["deep:", "  a:", "    b:"] + [f"    - {dq(v)}" for v in vals[:200]]
    lines += ["keys:"] + [f"  {dq(v + str(i))}: {i}" for i, v in enumerate(vals[200:400]) if "\n" not in v]
    write("random", "\n".join(lines) + "\n")


STRUCTURE = """\
# leading comment
---
apiVersion: example.com/v1
kind: Tricky
metadata:
  name: anchors
  labels: &labels
    app: web
    tier: front
spec:
  selector:
    matchLabels: *labels
  base: &base {a: 1, b: [x, y], c: {d: e}}
  merged:
    <<: *base
    b: override
    z: 26
  multi:
    <<: [{m: 1, n: 1}, {m: 2, o: 2}]
    p: 3
  nested: [[1, 2], [[3]], [], {}, [{}]]
  deep:
  - - - a
      - b
    - c
  - {}
  - []
  - - null
  empty:
  emptystr: ""
  tilde: ~
  folded: >
    folded text
    continues here

    new paragraph
  folded-strip: >-
    abc
    def
  literal-keep: |+
    keep

  literal-indent: |2
      two extra
    back
  literal-strip: |-
    strip
  sq: 'it''s'
  dq: "tab\\there"
  bin: !!binary aGVsbG8gd29ybGQ=
  str: !!str 123
  custom: !foo bar
  flow: {a: b, c: [d, e]}
  quoted-merge-key-dropped: {"<<": {a: 1}, b: 2}
  merge-string-in-list: ["<<", {"<<": 5}]
--- # separator with a comment
apiVersion: example.com/v1
kind: Tricky
metadata:
  name: second
data:
  x: y
---

---
# only a comment
---
null
---
~
---
apiVersion: example.com/v1
kind: Tricky
metadata:
  name: third
"""

CRLF = """\
apiVersion: example.com/v1
kind: Tricky
metadata:
  name: crlf
data:
  a: one
  b: |
    line1
    line2
  c: "x"
---
apiVersion: example.com/v1
kind: Tricky
metadata:
  name: crlf2
"""

FLOATS = """\
apiVersion: example.com/v1
kind: Tricky
metadata:
  name: floats
spec:
  values: [1.0, 1e3, 1.0e+10, 1.50, 6.02e23, 0.000001, 0.0000001, 12345678.9, 1234567.5, 123456.5,
    1e20, 1e21, 1e22, 99999999999999999999, 9223372036854775807, 9223372036854775808,
    18446744073709551615, 18446744073709551616, -9223372036854775808, -9223372036854775809,
    0.1, 0.2, 0.30000000000000004, -0.0, -1.5, 1e-5, 1e-4, 0.0001234, 123456789012345678901234,
    3.0e-10, 2.5e+300, 1.7976931348623157e308, 5e-324, 4.9e-324, 100000, 1000000, 1e6, 1e5,
    9007199254740993, 9007199254740993.0, 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0o777, 0755,
    -0o17, -0x1F, +0x10, 1_0.5, 1_000.000_1, .5, +.5, -.5e3, 1., 08.5, 0e0, -0e0]
"""


def write(name: str, text: str) -> None:
    d = HERE / name
    d.mkdir(exist_ok=True)
    (d / "kustomization.yaml").write_text(KUST)
    (d / "input.yaml").write_text(text)


if __name__ == "__main__":
    main()
