"""Run numfuse's four test tiers, each in its own pytest process, and total the results.

    python -m numfuse_tests                 # all tiers; execution on the CUDA simulator and the CPU
    python -m numfuse_tests --gpu           # execution tier on the real GPU
    python -m numfuse_tests --gpu --jobs 16 # 16 processes: pytest-xdist workers, or test files
                                            # shared out among that many pytest processes
    python -m numfuse_tests --gpu --jobs 16 --max-seconds 200   # interrupted then, with counts
    python -m numfuse_tests --tier run -- -k softmax -x
    python -m numfuse_tests --sequential    # one tier after another, printing as they go

numba.cuda chooses between the simulator and a GPU when it is first imported, and the trace
tier must prove that numfuse traces and plans without numba at all, hence a process per tier.
The cpu tier runs the CPU target's own tests (numfuse_tests/cpu) and the execution tier's
programs that are not about CUDA (CPU_RUN_FILES) with NUMFUSE_TARGET=cpu.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIERS = ("trace", "compile", "run", "cpu")
# The execution tier's files the cpu tier runs on the CPU target, within the time CI allows
# (the CPU target compiles each kernel with LLVM, where the simulator compiles nothing);
# `--cpu-all` adds the others whose tests are not about CUDA itself (launch configurations,
# autotuning, streams, device arrays, the simulator).
CPU_RUN_FILES = (
    "test_programs.py", "test_benchmark_workloads.py", "test_corpus.py", "test_graph_breaks.py",
    "test_made_arrays.py", "test_gathers.py", "test_views.py", "test_view_writes.py", "test_disjoint_updates.py",
    "test_hyp_normalizations.py", "test_fuzzer_findings.py", "test_containers.py", "test_composition.py",
    "test_scalar_rules.py", "test_ufunc_options.py", "test_exec_rounding.py",
    "test_shared_memory_and_globals.py", "test_user_mistakes.py", "test_planted_bug_guards.py", "test_lost_state.py",
    "test_fp_modes.py", "test_scans.py", "test_numpy_loop_bits.py", "test_numpy_fallback.py", "test_side_effects.py",
    "test_eager_rest.py", "test_array_flags.py",
    # The random programs; the fuzzer's own tests (planted bugs) are the run tier's.
    "test_fuzz_programs.py::test_random_programs_match_numpy",
)
CPU_MORE_FILES = (
    "test_library_calls.py", "test_hyp_elementwise.py", "test_hyp_reductions.py", "test_hyp_programs.py",
    "test_hyp_scalars.py", "test_hyp_statistics.py", "test_hyp_complex.py", "test_composed_functions.py",
    "test_complex_ufuncs.py", "test_new_ufuncs.py",
)


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


def _shards(paths: list[Path], count: int) -> list[list[Path]]:
    """The test files under `paths` shared out among `count` groups of about equal size (the
    largest file first, each to the group with the fewest bytes so far)."""
    files = sorted((f for p in paths for f in ([p] if p.is_file() else p.rglob("test_*.py"))),
                   key=lambda f: -f.stat().st_size)
    groups: list[list[Path]] = [[] for _ in range(max(1, min(count, len(files))))]
    sizes = [0] * len(groups)
    for f in files:
        k = sizes.index(min(sizes))
        groups[k].append(f)
        sizes[k] += f.stat().st_size
    return [g for g in groups if g]


def _shard_counts(tiers: list[str], jobs: int) -> dict[str, int]:
    """Processes per tier out of `jobs`, by the work each tier does: the execution tier
    compiles a few thousand kernels, the compile tier a few hundred, the trace tier none."""
    if jobs <= 1:
        return {t: 1 for t in tiers}
    weight = {"trace": 1, "compile": 3, "run": 12, "cpu": 8}
    total = sum(weight[t] for t in tiers)
    return {t: max(1, round(jobs * weight[t] / total)) for t in tiers}


class _Job:
    """One pytest process: a tier's tests, or one shard of them."""

    def __init__(self, tier: str, shard: int, cmd: list[str], env: dict, junit: Path, log: Path | None):
        self.tier, self.shard, self.cmd, self.env, self.junit, self.log = tier, shard, cmd, env, junit, log
        self.process: subprocess.Popen | None = None
        self.code: int | None = None
        self.started = self.ended = 0.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numfuse_tests", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tier", choices=TIERS, action="append", help="run only this tier (repeatable)")
    parser.add_argument("--gpu", action="store_true", help="run the execution tier on the real GPU")
    parser.add_argument(
        "--jobs", type=int, default=1,
        help="processes in all: pytest-xdist workers per tier where pytest-xdist is installed, else "
             "each tier's test files shared out among several pytest processes, all run at once (on "
             "a GPU each new kernel is compiled by NVVM, and the execution tier makes a few thousand)",
    )
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="interrupt the tests still running then (pytest reports what ran)")
    parser.add_argument("--cpu-all", action="store_true",
                        help="the cpu tier runs every execution-tier file not about CUDA (CPU_MORE_FILES too)")
    parser.add_argument("--sequential", action="store_true",
                        help="run the tiers one after another, printing as they go (on the simulator "
                             "they run at once by default, each tier's output printed when it ends)")
    parser.add_argument("pytest_args", nargs="*", help="extra arguments for pytest (after --)")
    args = parser.parse_args(argv)
    tiers = args.tier or list(TIERS)
    parallel, shard_counts = [], {t: 1 for t in tiers}
    if args.jobs > 1:
        if importlib.util.find_spec("xdist") is not None:
            parallel = ["-n", str(args.jobs)]
        else:
            shard_counts = _shard_counts(tiers, args.jobs)
            print(f"numfuse_tests: pytest-xdist is not installed; test files shared out among "
                  f"{sum(shard_counts.values())} pytest processes ({shard_counts})")
    # On the CUDA simulator the tiers run at once, each in its own process and cache directory:
    # the execution tier is bound to one core (the simulator's threads share the GIL) and NVVM
    # to another, so on two cores the whole run takes about as long as its longest tier. Shards
    # run at once too.
    sharded = any(n > 1 for n in shard_counts.values())
    concurrent = not args.sequential and (sharded or (not args.gpu and len(tiers) > 1))
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for tier in tiers:
            env = dict(os.environ)
            env.pop("NUMBA_ENABLE_CUDASIM", None)
            env["NUMFUSE_TARGET"] = "cpu" if tier == "cpu" else "cuda"
            if tier in ("run", "cpu") and not args.gpu:
                # (The cpu tier's programs run on the CPU target; its modules still ask the
                # CUDA backend, the simulator here, what size of inputs suit it.)
                env["NUMBA_ENABLE_CUDASIM"] = "1"
            if tier == "trace":
                env["NUMFUSE_TESTS_BLOCK_NUMBA"] = "1"
            cpu_files = CPU_RUN_FILES + (CPU_MORE_FILES if args.cpu_all else ())
            tier_dirs = [HERE / "cpu", *(HERE / "run" / f for f in cpu_files)] if tier == "cpu" else [HERE / tier]
            # Test files or directories of this tier among the pytest arguments: run only those.
            paths = [a for a in args.pytest_args if Path(a).exists() and HERE in Path(a).resolve().parents]
            chosen = [a for a in paths if (HERE / tier) in Path(a).resolve().parents]
            others = [a for a in args.pytest_args if a not in paths]
            if paths and not chosen:
                continue  # the paths given belong to other tiers
            targets = [Path(a) for a in chosen] or tier_dirs
            groups = _shards(targets, shard_counts[tier]) if shard_counts[tier] > 1 else [targets]
            for k, group in enumerate(groups):
                name = tier if len(groups) == 1 else f"{tier}-{k}"
                job_env = dict(env)
                if concurrent:
                    job_env["NUMFUSE_CACHE_DIR"] = str(Path(tmp) / f"cache-{name}")
                junit = Path(tmp) / f"{name}.xml"
                cmd = [sys.executable, "-m", "pytest", *map(str, group), "-q", "-p", "no:cacheprovider",
                       f"--junitxml={junit}", *parallel, *others]
                jobs.append(_Job(tier, k, cmd, job_env, junit, Path(tmp) / f"{name}.log" if concurrent else None))
        return _run_jobs(jobs, tiers, args, concurrent)


def _run_jobs(jobs: list[_Job], tiers: list[str], args, concurrent: bool) -> int:
    deadline = None if args.max_seconds is None else time.monotonic() + args.max_seconds
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    worst = 0
    interrupted = False

    def report(tier: str, mine: list[_Job]) -> int:
        code = next((j.code for j in mine if j.code), 0)
        seconds = max(j.ended for j in mine) - min(j.started for j in mine)
        return _report(tier, [j.junit for j in mine], seconds, code, totals)

    if concurrent:
        for job in jobs:
            with open(job.log, "w") as log:
                job.started = time.time()
                job.process = subprocess.Popen(job.cmd, env=job.env, stdout=log, stderr=subprocess.STDOUT)
        interrupted = _wait(jobs, deadline)
        for tier in tiers:
            mine = [j for j in jobs if j.tier == tier]
            if mine:
                print(_header(tier, args.gpu) + (f", {len(mine)} processes" if len(mine) > 1 else ""), flush=True)
                for job in mine:
                    sys.stdout.write(job.log.read_text())
                failed = report(tier, mine)  # every tier reported, whatever the one before
                worst = worst or failed
    else:
        for job in jobs:
            print(_header(job.tier, args.gpu), flush=True)
            job.started = time.time()
            job.process = subprocess.Popen(job.cmd, env=job.env)
            interrupted = _wait([job], deadline)
            failed = report(job.tier, [job])
            worst = worst or failed
            if interrupted:
                break
    if interrupted:
        why = f"--max-seconds {args.max_seconds:g} spent" if args.max_seconds is not None else "Ctrl-C"
        print(f"\nnumfuse_tests: interrupted ({why}); the counts are of the tests that ran")
        worst = worst or 1
    print(f"\nnumfuse_tests: {totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    return worst


def _header(tier: str, gpu: bool) -> str:
    mode = " (GPU)" if tier == "run" and gpu else " (CUDA simulator)" if tier == "run" else ""
    mode = " (the CPU target)" if tier == "cpu" else mode
    return f"\n=== numfuse_tests tier '{tier}'{mode}"


def _wait(jobs: list[_Job], deadline: float | None) -> bool:
    """Wait for every job, noting when each ends; past `deadline` (or on Ctrl-C) interrupt the
    rest with SIGINT, so that pytest reports what ran and writes its JUnit file. Whether any
    was interrupted."""
    interrupted = False
    next_progress = time.monotonic() + PROGRESS_SECONDS
    try:
        while any(job.code is None for job in jobs):
            for job in jobs:
                if job.code is None and job.process.poll() is not None:
                    job.code, job.ended = job.process.returncode, time.time()
                    if job.log is not None:
                        name = job.tier if job.shard == 0 and sum(j.tier == job.tier for j in jobs) == 1 else \
                            f"{job.tier}-{job.shard}"
                        print(f"numfuse_tests: {name} ended after {job.ended - job.started:.0f}s "
                              f"(pytest exit {job.code}; its output follows when all have ended)", flush=True)
            if deadline is not None and time.monotonic() > deadline:
                raise KeyboardInterrupt
            if jobs[0].log is not None and time.monotonic() > next_progress:  # (else pytest prints itself)
                next_progress = time.monotonic() + PROGRESS_SECONDS
                print("numfuse_tests: " + "; ".join(_progress(j) for j in jobs if j.code is None), flush=True)
            time.sleep(0.2)
    except KeyboardInterrupt:
        interrupted = True
        for job in jobs:
            if job.code is None:
                job.process.send_signal(signal.SIGINT)
        for job in jobs:
            if job.code is None:
                try:
                    job.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    job.process.kill()
                    job.process.wait()
                job.code, job.ended = job.process.returncode, time.time()
    return interrupted


PROGRESS_SECONDS = 60  # how often a line says how far the running tiers are


def _progress(job: _Job) -> str:
    """How far a running job is: its elapsed time and pytest's last percentage in its log."""
    name = job.tier if job.shard == 0 else f"{job.tier}-{job.shard}"
    done = ""
    if job.log is not None and job.log.exists():
        found = re.findall(r"\[\s*(\d+)%\]", job.log.read_text()[-4000:])
        if found:
            done = f", {found[-1]}% of its tests"
    return f"{name} running {time.time() - job.started:.0f}s{done}"


def _report(tier: str, junits: list[Path], seconds: float, code: int, totals: dict) -> int:
    """Print a tier's counts (over its processes' JUnit files) and add them to `totals`; the
    exit status it makes the run fail with (0 where it passed)."""
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for junit in junits:
        for key, n in _counts(junit).items():
            counts[key] += n
    failed = counts["failures"] + counts["errors"]
    passed = counts["tests"] - failed - counts["skipped"]
    print(f"=== tier '{tier}': {passed} passed, {failed} failed, {counts['skipped']} skipped "
          f"in {seconds:.0f}s (pytest exit {code})", flush=True)
    totals["passed"] += passed
    totals["failed"] += failed
    totals["skipped"] += counts["skipped"]
    return (code or 1) if code != 0 or counts["tests"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
