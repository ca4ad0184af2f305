"""The docs' code runs as printed: every ```python block of the README and the user guide.

    python -m numfuse_tests.docs            # run them; report each difference
    python -m numfuse_tests.docs --update   # write what they print into the output blocks

The blocks of one file run in order in one namespace (as a reader types them into one
session), with numpy as np and numfuse imported, in a temporary folder. A ```python block
followed (after blank lines only) by a plain ``` block shows its output: what the block prints
must be that text, up to trailing spaces and the `# file.py:line` notes of printed graphs
(the docs name a file, the run another). A block that cannot run here says so in a comment on
the line before it: `<!-- docs: not run: why -->`. The test tiers run this checker
(numfuse_tests/run/test_docs_run.py); `--update` regenerates the outputs in place.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ("README.md", "docs/user-guide.md", "docs/architecture.md")
NOT_RUN = re.compile(r"^\s*<!--\s*docs:\s*not run\b")
PRINTS = re.compile(r"`([^`]+)`(?: prints)?:\s*$")  # a line before a block naming the code it shows
HIDDEN = re.compile(r"^\s*<!--\s*docs:\s*run:(.*?)-->\s*$")
SHOWS = re.compile(r"^\s*<!--\s*docs:\s*shows:\s*(.*?)\s*-->\s*$")  # the block shows print(...) of this
FILE = re.compile(r"#\s+(\w+\.py)\s*$")
NUMBER = re.compile(r"^\d+ ?( |$)")
HASHED = re.compile(r"(nf_\w+?)_[0-9a-f]{16}\.py")  # a kernel file's content hash
LOCATION = re.compile(r"\s+# [^\s#]+:\d+\s*$")  # a printed graph's "# file.py:7" note


@dataclass
class Block:
    path: Path
    line: int  # of the opening ``` (1-based)
    code: str
    skipped: bool
    output: tuple[int, int] | None = None  # the output block's lines [start, end) in the file
    expected: str | None = None


def blocks_of(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        hidden = HIDDEN.search(lines[i])
        if hidden:  # setup the reader does not see: <!-- docs: run: x = ... -->
            found.append(Block(path, i + 1, hidden.group(1).strip() + "\n", False))
            i += 1
            continue
        before = _last_text_line(lines, i)
        shown = None
        if lines[i].strip() in ("```", "```python"):  # (a bash block shows commands)
            shown = SHOWS.search(before) or (PRINTS.search(before) if not NOT_RUN.search(before) else None)
        if shown:
            # "`print(f.explain(x))` prints:" or "`f.graph(x, y)`:" and a block: the expression's
            # output (printed where it is not a call of print).
            close = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
            code = shown.group(1)
            code = code if code.startswith("print(") else f"print({code})"
            found.append(Block(path, i + 1, code + "\n", False, (i + 1, close), "\n".join(lines[i + 1:close])))
            i = close + 1
            continue
        numbered = FILE.match(lines[i + 1]) if lines[i].strip() == "```python" and i + 1 < len(lines) else None
        if numbered:
            # A file shown with line numbers ("# example.py", then "1  import numpy as np"):
            # written as that file and imported, so that what it prints names its lines.
            close = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
            body = "\n".join(NUMBER.sub("", line, count=1) for line in lines[i + 2:close]) + "\n"
            module = numbered.group(1)[:-3]
            code = f"open({numbered.group(1)!r}, 'w').write({body!r})\nfrom {module} import *\n"
            found.append(Block(path, i + 1, code, False))
            i = close + 1
            continue
        if lines[i].strip().startswith("```") and lines[i].strip() != "```python":
            i = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```")) + 1
            continue
        if lines[i].strip() == "```python":
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
            skipped = i > 0 and bool(NOT_RUN.search(lines[i - 1]))
            block = Block(path, i + 1, "\n".join(lines[i + 1:end]) + "\n", skipped)
            k = end + 1
            while k < len(lines) and not lines[k].strip():
                k += 1
            if k < len(lines) and lines[k].strip() == "```":
                close = next(j for j in range(k + 1, len(lines)) if lines[j].strip().startswith("```"))
                block.output = (k + 1, close)
                block.expected = "\n".join(lines[k + 1:close])
                end = close
            found.append(block)
            i = end + 1
        else:
            i += 1
    return found


def _last_text_line(lines, i) -> str:
    k = i - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    return lines[k] if k >= 0 else ""


def normalized(text: str) -> str:
    lines = (HASHED.sub(r"\1_<hash>.py", LOCATION.sub("", line)).rstrip() for line in text.strip("\n").splitlines())
    return "\n".join(lines)


def run_blocks(blocks: list[Block]) -> list[tuple[Block, str | None, str]]:
    """(block, what it printed or None, the error's traceback or "") for each block run."""
    results = []
    namespace: dict = {"__name__": "__docs__", "kernel_lines": kernel_lines, "explain_section": explain_section}
    exec("import numpy as np\nimport numfuse\n", namespace)
    with tempfile.TemporaryDirectory() as folder, _cwd(folder), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for block in blocks:
            if block.skipped:
                continue
            out = io.StringIO()
            error = ""
            # Each block is a file of its own name: the graphs it prints name it.
            name = f"{block.path.stem}_{block.line}.py"
            Path(name).write_text(block.code)
            sys.modules.pop(name[:-3], None)
            try:
                with contextlib.redirect_stdout(out):
                    exec(compile(block.code, name, "exec"), namespace)
            except Exception:
                error = traceback.format_exc(limit=-3)
            results.append((block, out.getvalue().replace(os.path.realpath(folder) + os.sep, "").replace(
                folder + os.sep, ""), error))
    return results


def kernel_lines(jitted, *args, kernel: int = 0, lines=None) -> str:
    """The generated code of one kernel of `jitted` for `args`, without its header comment;
    `lines`: (first, last) line numbers (from 1) of an excerpt. For listings in the docs."""
    from numfuse.codegen.statements import kernel_code

    code = kernel_code(jitted.kernel_sources(*args)[kernel].source).rstrip("\n").splitlines()
    if lines is not None:
        code = code[lines[0] - 1:lines[1]]
    return "\n".join(code)


def explain_section(jitted, *args, kernel: int = 0, lines: int = 5) -> str:
    """The first `lines` lines of explain's section on one kernel (from its "-- kernel #k")."""
    text = jitted.explain(*args).splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith(f"-- kernel #{kernel} "))
    return "\n".join(text[start:start + lines])


@contextlib.contextmanager
def _cwd(folder):
    before = os.getcwd()
    os.chdir(folder)
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.path.remove(folder)
        os.chdir(before)


def check(files=FILES) -> list[str]:
    """Each difference between a doc and what its code does, as a message."""
    problems = []
    for name in files:
        for block, printed, error in run_blocks(blocks_of(ROOT / name)):
            where = f"{name}:{block.line}"
            if error:
                problems.append(f"{where}: the block raised\n{error}")
            elif block.expected is not None and normalized(printed) != normalized(block.expected):
                problems.append(f"{where}: the block printed\n{printed}\nbut the doc shows\n{block.expected}")
    return problems


def update(files=FILES) -> int:
    """Write what each block prints into its output block; how many changed."""
    changed = 0
    for name in files:
        path = ROOT / name
        results = [(b, p) for b, p, e in run_blocks(blocks_of(path)) if b.output is not None and not e]
        lines = path.read_text().splitlines()
        for block, printed in sorted(results, key=lambda r: -r[0].line):
            if normalized(printed) == normalized(block.expected):
                continue
            start, end = block.output
            lines[start:end] = printed.rstrip("\n").splitlines()
            changed += 1
        path.write_text("\n".join(lines) + "\n")
    return changed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numfuse_tests.docs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="write what the blocks print into the docs")
    args = parser.parse_args(argv)
    if args.update:
        print(f"numfuse_tests.docs: {update()} output block(s) rewritten")
        return 0
    problems = check()
    for problem in problems:
        print(problem, "\n")
    print(f"numfuse_tests.docs: {len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
