"""Run numfuse's three test tiers, each in its own pytest process, and total the results.

    python -m numfuse_tests                 # all tiers; execution on the CUDA simulator
    python -m numfuse_tests --gpu           # execution tier on the real GPU
    python -m numfuse_tests --gpu --jobs 16 # with 16 pytest-xdist workers per tier
    python -m numfuse_tests --tier run -- -k softmax -x

numba.cuda chooses between the simulator and a GPU when it is first imported, and the trace
tier must prove that numfuse traces and plans without numba at all, hence three processes.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIERS = ("trace", "compile", "run")


def _counts(junit: Path) -> dict[str, int]:
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if not junit.exists():
        return counts
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    for suite in suites:
        for key in counts:
            counts[key] += int(suite.get(key, 0))
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numfuse_tests", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tier", choices=TIERS, action="append", help="run only this tier (repeatable)")
    parser.add_argument("--gpu", action="store_true", help="run the execution tier on the real GPU")
    parser.add_argument(
        "--jobs", type=int, default=1,
        help="pytest-xdist workers per tier, where pytest-xdist is installed (on a GPU each new "
             "kernel is compiled by NVVM, and the execution tier makes a few thousand)",
    )
    parser.add_argument("pytest_args", nargs="*", help="extra arguments for pytest (after --)")
    args = parser.parse_args(argv)
    tiers = args.tier or list(TIERS)
    parallel = []
    if args.jobs > 1:
        if importlib.util.find_spec("xdist") is not None:
            parallel = ["-n", str(args.jobs)]
        else:
            print("numfuse_tests: pytest-xdist is not installed; running each tier in one process")
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    worst = 0
    with tempfile.TemporaryDirectory() as tmp:
        for tier in tiers:
            env = dict(os.environ)
            env.pop("NUMBA_ENABLE_CUDASIM", None)
            if tier == "run" and not args.gpu:
                env["NUMBA_ENABLE_CUDASIM"] = "1"
            if tier == "trace":
                env["NUMFUSE_TESTS_BLOCK_NUMBA"] = "1"
            junit = Path(tmp) / f"{tier}.xml"
            # Test files or directories of this tier among the pytest arguments: run only those.
            chosen = [a for a in args.pytest_args if Path(a).exists() and (HERE / tier) in Path(a).resolve().parents]
            others = [a for a in args.pytest_args if a not in chosen]
            if args.pytest_args != others and not chosen:
                continue  # the paths given belong to another tier
            cmd = [
                sys.executable, "-m", "pytest", *(chosen or [str(HERE / tier)]), "-q",
                "-p", "no:cacheprovider", f"--junitxml={junit}", *parallel, *others,
            ]
            mode = " (GPU)" if tier == "run" and args.gpu else " (CUDA simulator)" if tier == "run" else ""
            print(f"\n=== numfuse_tests tier '{tier}'{mode}", flush=True)
            start = time.time()
            code = subprocess.call(cmd, env=env)
            counts = _counts(junit)
            failed = counts["failures"] + counts["errors"]
            passed = counts["tests"] - failed - counts["skipped"]
            print(f"=== tier '{tier}': {passed} passed, {failed} failed, {counts['skipped']} skipped "
                  f"in {time.time() - start:.0f}s (pytest exit {code})", flush=True)
            totals["passed"] += passed
            totals["failed"] += failed
            totals["skipped"] += counts["skipped"]
            if code != 0 or counts["tests"] == 0:
                worst = worst or (code or 1)
    print(f"\nnumfuse_tests: {totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    return worst


if __name__ == "__main__":
    sys.exit(main())
