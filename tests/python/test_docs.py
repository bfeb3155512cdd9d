"""docs/python.md, the Python API reference, keeps up with the code: every
public name of stepprof, stepprof.profiler and its paddle submodules, and
stepprof.torch_profiler (in __all__, or any name not starting with '_' other
than a module from outside stepprof), and every public member of their classes, is named in the
reference, and each public function, class, method and property has a
docstring.

A name counts as documented where it opens a backticked span (`Profiler`,
`step(num_samples=None)`, `stepprof.profiler.timer`). A class member or a
submodule's name must appear as `Class.member`, or inside the class's (or
submodule's) own part of the page: the section under a heading that names it,
or the list item that opens with it."""
import enum
import inspect
import os
import re

import stepprof
import stepprof.profiler as profiler
import stepprof.torch_profiler as torch_profiler

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "python.md")
SUBMODULES = ("utils", "timer", "profiler_statistic", "statistic_helper")

_SPAN = re.compile(r"`([^`\n]+)`")
_IDENT = re.compile(r"(?:with\s+|@)?([A-Za-z_][\w.]*)")
_HEADING = re.compile(r"^(#+)\s+(.*)$")
_ITEM = re.compile(r"^(\s*)- ")


def idents(text):
    """The identifiers that open the backticked spans of text, each also
    under every dotted suffix (stepprof.profiler.timer: timer too)."""
    out = set()
    for span in _SPAN.findall(text):
        m = _IDENT.match(span.strip())
        if m:
            parts = m.group(1).strip(".").split(".")
            out.update(".".join(parts[i:]) for i in range(len(parts)))
    return out


def sections(text):
    """{name: [the text of each part of the page about name]}: a heading's
    section (up to the next heading of the same or a higher level) or a list
    item (with its continuation lines), keyed by the identifier it opens with."""
    lines = text.split("\n")
    out = {}

    def add(first_line, body):
        span = _SPAN.match(first_line.strip())  # only a part that opens with a name
        for name in idents(span.group(0)) if span else ():
            out.setdefault(name, []).append(body)

    for i, line in enumerate(lines):
        h = _HEADING.match(line)
        if h:
            level, end = len(h.group(1)), len(lines)
            for j in range(i + 1, len(lines)):
                h2 = _HEADING.match(lines[j])
                if h2 and len(h2.group(1)) <= level:
                    end = j
                    break
            add(h.group(2), "\n".join(lines[i:end]))
            continue
        item = _ITEM.match(line)
        if item:
            indent, end = len(item.group(1)), len(lines)
            for j in range(i + 1, len(lines)):
                nxt = lines[j]
                if not nxt.strip() or len(nxt) - len(nxt.lstrip()) <= indent:
                    end = j
                    break
            add(line[item.end():], "\n".join(lines[i:end]))
    return out


def public_names(module):
    names = set(getattr(module, "__all__", ()))
    for name in dir(module):
        obj = getattr(module, name)
        if name.startswith("_"):
            continue
        if inspect.ismodule(obj) and not obj.__name__.startswith("stepprof"):
            continue  # os, sys, threading ... imported for the module's own use
        names.add(name)
    return names


def _inherited(cls):
    names = set()
    for base in (object, int, tuple, BaseException):
        if issubclass(cls, base):
            names |= set(dir(base))
    return names


def public_members(cls):
    """Public attributes of cls beyond those of object, int, tuple and
    BaseException (enum members included)."""
    inherited = _inherited(cls)
    return {n for n in dir(cls) if not n.startswith("_") and n not in inherited}


def needs_doc(obj):
    return inspect.isroutine(obj) or inspect.isclass(obj) or isinstance(obj, property) or \
        inspect.isgetsetdescriptor(obj)


def api():
    """[(qualified name, owner, name, part)] of every public name: owner is
    the module or class that holds it, part the name of the page's part
    that must document it (None: anywhere on the page; a class's or a paddle
    submodule's name for their members)."""
    modules = [("stepprof", stepprof, None), ("stepprof.profiler", profiler, None),
               ("stepprof.torch_profiler", torch_profiler, None)]
    modules += [(f"stepprof.profiler.{s}", getattr(profiler, s), s) for s in SUBMODULES]
    entries = []
    for qual, module, part in modules:
        for name in sorted(public_names(module)):
            obj = getattr(module, name)
            entries.append((f"{qual}.{name}", module, name, part))
            if inspect.isclass(obj):
                for member in sorted(public_members(obj)):
                    entries.append((f"{qual}.{name}.{member}", obj, member, name))
    return entries


def test_every_public_name_is_in_the_reference():
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    everywhere, parts = idents(text), sections(text)
    missing = []
    for qual, _, name, part in api():
        if part is None:
            ok = name in everywhere
        else:
            ok = f"{part}.{name}" in everywhere or any(
                name in idents(body) for body in parts.get(part, []))
        if not ok:
            missing.append(qual)
    assert not missing, (f"docs/python.md does not document {len(missing)} public names: "
                         + ", ".join(missing))


def test_every_public_callable_has_a_docstring():
    undocumented = []
    for qual, owner, name, _ in api():
        obj = inspect.getattr_static(owner, name)
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(owner, type) and issubclass(owner, enum.Enum) and name in owner.__members__:
            continue  # enum members are values
        if needs_doc(obj) and not (inspect.getdoc(obj) or "").strip():
            undocumented.append(qual)
    assert not undocumented, "no docstring: " + ", ".join(undocumented)


def test_the_checker_sees_a_missing_name():
    text = "### `Klass`\n\n- `meth(x)`: does it.\n\n### Other\n\n- `free()`: too.\n"
    parts = sections(text)
    assert "meth" in idents(parts["Klass"][0]) and "free" not in idents(parts["Klass"][0])
    assert "free" in idents(text) and "gone" not in idents(text)
    assert {"stepprof.profiler.timer", "profiler.timer", "timer"} <= idents(
        "#### `stepprof.profiler.timer`")
    assert "Profiler" in public_names(profiler) and "os" not in public_names(profiler)
    assert "timer" in public_names(profiler)
