#!/usr/bin/env python3
"""layout - checks that the source tree keeps the shape docs/architecture.md
draws, so the layering cannot rot in silence.

docs/architecture.md holds a fenced block marked `layers`: one line per
level, lowest first, each naming the units of that level (a folder, or a
single header such as src/server/config.h). A file belongs to the unit with
the longest path that holds it. A unit may include the headers of its own
unit and of every level below its own; never one above, nor a sibling of
its own level. A line `UNIT: A B C` instead names exactly the units UNIT
may include (besides its own), whatever their level.

Also checked: no .c or .h file under src/, include/, tools/ or examples/
is longer than MAX_LINES lines, and every such file belongs to a unit.

Usage: tests/layout.py [--graph] [ROOT]   (ROOT: the parent of tests/)
Exit status 0 when the tree is in shape; 1 with one line per fault.
--graph also prints the include graph between units: one line per unit,
the units it includes and how many #include lines reach each."""

import os
import re
import sys

MAX_LINES = 1000
SCOPES = ("src", "include", "tools", "examples")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_layers(root):
    """The levels (a list of lists of units) and the explicit allow-lists
    of docs/architecture.md's `layers` block."""
    path = os.path.join(root, "docs", "architecture.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^```layers\n(.*?)^```", text, re.S | re.M)
    if m is None:
        sys.exit(f"{path}: no ```layers block")
    levels, only = [], {}
    for line in m.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" in line:
            unit, allowed = line.split(":", 1)
            only[unit.strip().rstrip("/")] = [
                u.rstrip("/") for u in allowed.split()
            ]
        else:
            levels.append([u.rstrip("/") for u in line.split()])
    return levels, only


def unit_of(rel, units):
    """The unit with the longest path holding `rel`, or None."""
    best = None
    for u in units:
        if rel == u or rel.startswith(u + "/"):
            if best is None or len(u) > len(best):
                best = u
    return best


def resolve(root, rel, name):
    """The repository path an #include "name" of file `rel` reads, or None
    for a header from outside (a system header, a generated one)."""
    for base in (os.path.dirname(rel), "src", "include"):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def sources(root):
    for scope in SCOPES:
        for dirpath, _, files in os.walk(os.path.join(root, scope)):
            for fn in sorted(files):
                if fn.endswith((".c", ".h")):
                    full = os.path.join(dirpath, fn)
                    yield os.path.relpath(full, root)


def main():
    args = sys.argv[1:]
    graph = "--graph" in args
    args = [a for a in args if a != "--graph"]
    root = args[0] if args else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    edges = {}
    levels, only = read_layers(root)
    level = {u: i for i, line in enumerate(levels) for u in line}
    units = list(level) + list(only)
    faults = []
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > MAX_LINES:
            faults.append(f"{rel}: {len(lines)} lines, over {MAX_LINES}")
        mine = unit_of(rel, units)
        if mine is None:
            faults.append(f"{rel}: in no unit of docs/architecture.md's "
                          "layers")
            continue
        for n, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if m is None:
                continue
            target = resolve(root, rel, m.group(1))
            if target is None:
                continue
            theirs = unit_of(target, units)
            if theirs is None or theirs == mine:
                continue
            edges.setdefault(mine, {}).setdefault(theirs, 0)
            edges[mine][theirs] += 1
            if mine in only:
                if theirs not in only[mine]:
                    faults.append(f"{rel}:{n}: includes {target} "
                                  f"({theirs}), which {mine} may not")
            elif theirs in only or level[theirs] >= level[mine]:
                where = "beside" if level.get(theirs) == level[mine] \
                    else "above"
                faults.append(f"{rel}:{n}: includes {target}: {theirs} is "
                              f"{where} {mine}")
    if graph:
        for line in levels + [[u] for u in only]:
            for u in line:
                out = edges.get(u, {})
                print(f"{u} -> " + (", ".join(
                    f"{t} {n}" for t, n in sorted(out.items()))
                    if out else "(nothing)"))
    for fault in faults:
        print(fault)
    if faults:
        print(f"layout: {len(faults)} faults (docs/architecture.md draws "
              "the layers)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
