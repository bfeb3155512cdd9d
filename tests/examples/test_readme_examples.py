#!/usr/bin/env python3
"""test_readme_examples.py: the README's example programs are the files
under examples/, so what a reader copies is what `make test` runs.

A code block that shows a file is preceded by a marker line
    <!-- example: examples/quickstart/quickstart.c -->
and must equal that file byte for byte. Each file in EXAMPLES must be shown
so, and a C block with a main() or a Python block that imports stepprof must
carry a marker (a whole program belongs in examples/, where it is run).
Standard library only."""
import os
import re
import sys

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = ["examples/quickstart/quickstart.c", "examples/quickstart/quickstart.py",
            "examples/paddle/train.py"]
MARKER = re.compile(r"<!-- example: (\S+) -->")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def blocks(text):
    """(language, body, marked path or None, line number) of each fenced block."""
    out = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.fullmatch(before.strip())
        line = text.count("\n", 0, m.start()) + 1
        out.append((m.group(1), m.group(2), marker.group(1) if marker else None, line))
    return out


def check(readme_text, src):
    problems, shown = [], set()
    for lang, body, path, line in blocks(readme_text):
        if path is None:
            if (lang == "c" and "main(" in body) or (lang == "python" and "import stepprof" in body):
                problems.append(f"README.md:{line}: a whole {lang} program with no "
                                f"'<!-- example: examples/... -->' marker; put it under examples/")
            continue
        shown.add(path)
        try:
            with open(os.path.join(src, path), encoding="utf-8") as f:
                want = f.read()
        except OSError as e:
            problems.append(f"README.md:{line}: marker names {path}, which cannot be read: {e}")
            continue
        if body != want:
            problems.append(f"README.md:{line}: the block differs from {path}; copy the file "
                            f"into the README (or the README's change into the file)")
    for path in EXAMPLES:
        if path not in shown:
            problems.append(f"README.md shows no block marked '<!-- example: {path} -->'")
    return problems


def self_test():
    """The checker itself: a true copy passes; a drifted copy, a missing file
    and an unmarked program are each reported."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for path in EXAMPLES:
            os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
            with open(os.path.join(d, path), "w", encoding="utf-8") as f:
                f.write(f"int main(void) {{ return 0; }} /* {path} */\n")
        good = "".join(f"<!-- example: {p} -->\n```c\nint main(void) {{ return 0; }} /* {p} */\n```\n"
                       for p in EXAMPLES)
        assert check(good, d) == [], check(good, d)
        drifted = good.replace("return 0", "return 1", 1)
        assert any("differs from" in p for p in check(drifted, d))
        missing = good.split("<!-- example", 2)[1]
        assert any("shows no block" in p for p in check("<!-- example" + missing, d))
        unmarked = good + "```c\nint main(void) { return 2; }\n```\n"
        assert any("no '<!-- example" in p for p in check(unmarked, d))
        assert check(good + "```c\nsp_range_end();\n```\n", d) == []


def main():
    self_test()
    with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
        problems = check(f.read(), SRC)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f"README examples: {len(EXAMPLES)} files shown verbatim")
    return 0


if __name__ == "__main__":
    sys.exit(main())
