"""Run numfuse's three test tiers, each in its own pytest process, and total the results.

    python -m numfuse_tests                 # all tiers; execution on the CUDA simulator
    python -m numfuse_tests --gpu           # execution tier on the real GPU
    python -m numfuse_tests --gpu --jobs 16 # with 16 pytest-xdist workers per tier
    python -m numfuse_tests --tier run -- -k softmax -x
    python -m numfuse_tests --sequential    # one tier after another, printing as they go

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
    parser.add_argument("--sequential", action="store_true",
                        help="run the tiers one after another, printing as they go (on the simulator "
                             "they run at once by default, each tier's output printed when it ends)")
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
    # On the CUDA simulator the tiers run at once, each in its own process and cache directory:
    # the execution tier is bound to one core (the simulator's threads share the GIL) and NVVM
    # to another, so on two cores the whole run takes about as long as its longest tier.
    concurrent = not args.gpu and not args.sequential and len(tiers) > 1
    with tempfile.TemporaryDirectory() as tmp:
        started = []
        for tier in tiers:
            env = dict(os.environ)
            env.pop("NUMBA_ENABLE_CUDASIM", None)
            if tier == "run" and not args.gpu:
                env["NUMBA_ENABLE_CUDASIM"] = "1"
            if tier == "trace":
                env["NUMFUSE_TESTS_BLOCK_NUMBA"] = "1"
            if concurrent:
                env["NUMFUSE_CACHE_DIR"] = str(Path(tmp) / f"cache-{tier}")
            junit = Path(tmp) / f"{tier}.xml"
            # Test files or directories of this tier among the pytest arguments: run only those.
            paths = [a for a in args.pytest_args if Path(a).exists() and HERE in Path(a).resolve().parents]
            chosen = [a for a in paths if (HERE / tier) in Path(a).resolve().parents]
            others = [a for a in args.pytest_args if a not in paths]
            if paths and not chosen:
                continue  # the paths given belong to other tiers
            cmd = [
                sys.executable, "-m", "pytest", *(chosen or [str(HERE / tier)]), "-q",
                "-p", "no:cacheprovider", f"--junitxml={junit}", *parallel, *others,
            ]
            mode = " (GPU)" if tier == "run" and args.gpu else " (CUDA simulator)" if tier == "run" else ""
            header = f"\n=== numfuse_tests tier '{tier}'{mode}"
            start = time.time()
            if concurrent:
                log = open(Path(tmp) / f"{tier}.log", "w+")
                process = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
                started.append((tier, header, junit, start, process, log))
            else:
                print(header, flush=True)
                code = subprocess.call(cmd, env=env)
                failed = _report(tier, junit, start, code, totals)
                worst = worst or failed
        for tier, header, junit, start, process, log in started:
            code = process.wait()
            log.seek(0)
            print(header, flush=True)
            sys.stdout.write(log.read())
            log.close()
            failed = _report(tier, junit, start, code, totals)
            worst = worst or failed
    print(f"\nnumfuse_tests: {totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    return worst


def _report(tier: str, junit: Path, start: float, code: int, totals: dict) -> int:
    """Print a tier's counts and add them to `totals`; the exit status it makes the run fail
    with (0 where it passed)."""
    counts = _counts(junit)
    failed = counts["failures"] + counts["errors"]
    passed = counts["tests"] - failed - counts["skipped"]
    print(f"=== tier '{tier}': {passed} passed, {failed} failed, {counts['skipped']} skipped "
          f"in {time.time() - start:.0f}s (pytest exit {code})", flush=True)
    totals["passed"] += passed
    totals["failed"] += failed
    totals["skipped"] += counts["skipped"]
    return (code or 1) if code != 0 or counts["tests"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
