"""Bugs planted by hand, one at a time, and whether the tests that should catch each do.

    python -m numfuse_tests.mutants            # every mutant
    python -m numfuse_tests.mutants 2 5        # mutants 2 and 5
    python -m numfuse_tests.mutants --list

Each mutant is an edit of one source file (an exact text replaced) with the tests that must
fail once it is applied. The script copies the package and its tests to a temporary folder,
applies the edit there (the working tree is never touched), runs those tests in their tier's
environment, and reports CAUGHT (some failed) or MISSED (all passed: the tests need a case
that fails). A mutant whose text is no longer in the source is reported STALE: update it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    what: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]  # pytest node ids or files, relative to the root
    target: str = "cuda"  # the run tier's target for them (the CPU target's fast path serves NumPy arrays)

    @property
    def tier(self) -> str:
        return "trace" if all(t.startswith("numfuse_tests/trace") for t in self.tests) else "run"


MUTANTS = (
    Mutant("the planner forgets that a reduction's input must be read at its own row's points",
           "numfuse/plan/planner.py",
           "elif self._row_key(producer) == key and not is_scan(producer.prim) and \\\n"
           "                    maps == {reduction_map(producer, key[0])}:",
           "elif self._row_key(producer) == key and not is_scan(producer.prim):",
           ("numfuse_tests/trace/test_plans.py::test_random_square_program_plan_invariants",
            "numfuse_tests/run/test_planted_bug_guards.py")),
    Mutant("a transpose's index map uses the permutation, not its inverse",
           "numfuse/ir/viewmaps.py",
           "        mapped[p] = imap[k]\n",
           "        mapped[k] = imap[p]\n",
           ("numfuse_tests/trace/test_permutation_maps.py",
            "numfuse_tests/run/test_planted_bug_guards.py::test_permutations_that_are_not_their_own_inverse")),
    Mutant("the signature of a NumPy array leaves out its dtype",
           "numfuse/frontend/arguments.py",
           'return ("np", info.shape, dtype.str, layout, readonly, strides, exact), spec',
           'return ("np", info.shape, layout, readonly, strides, exact), spec',
           ("numfuse_tests/run/test_planted_bug_guards.py::test_one_function_called_with_other_dtypes_and_layouts_in_turn",)),
    Mutant("the signature leaves out which arguments share memory",
           "numfuse/jit_function.py",
           "        sharing = self._sharing(values, specs)\n        key = (tuple(key_parts), structure, None if sharing is None else sharing.key,",
           "        sharing = None\n        key = (tuple(key_parts), structure, None,",
           ("numfuse_tests/run/test_shared_memory_and_globals.py",)),
    Mutant("the fast path skips its check that written arguments overlap no other",
           "numfuse/compiled.py",
           "        if arrays is not None and overlapping(args, arrays):\n            raise TakeFullPath\n",
           "",
           ("numfuse_tests/run/test_shared_memory_and_globals.py::test_fast_path_calls_with_and_then_without_sharing",),
           target="cpu"),
    Mutant("a global array the trace meets outside the function's own globals is a constant copied at trace time",
           "numfuse/frontend/tracer.py",
           "if found is None and self.external_candidates.get(id(array), (None, None))[1] is array:",
           "if False:",
           ("numfuse_tests/run/test_shared_memory_and_globals.py::test_an_array_in_a_global_tuple_is_read_at_each_call",)),
    Mutant("what NumPy computes from a global array in the function is computed once, at the trace",
           "numfuse/frontend/captures.py",
           "            new_globals[key] = ctx.external_array(new_globals[key])\n",
           "            pass\n",
           ("numfuse_tests/run/test_shared_memory_and_globals.py::test_what_numpy_computes_from_a_global_is_fresh_at_each_call",)),
    Mutant("a rebound global name does not trace again",
           "numfuse/frontend/captures.py",
           "def guards_hold(guards: tuple) -> bool:\n",
           "def guards_hold(guards: tuple) -> bool:\n    return True\n",
           ("numfuse_tests/run/test_shared_memory_and_globals.py",)),
    Mutant("a global array passed as the argument is read as a separate array",
           "numfuse/jit_function.py",
           "            if any(how is not False for _, _, how in shared):",
           "            if False:",
           ("numfuse_tests/run/test_shared_memory_and_globals.py::test_a_global_array_passed_as_the_argument_is_written_through_it",
            "numfuse_tests/run/test_shared_memory_and_globals.py::test_a_global_read_through_the_argument_that_is_it_or_a_view_of_it")),
    Mutant("attributes read of a global object are not guarded",
           "numfuse/frontend/captures.py",
           "        for root, links in _attribute_chains(code):",
           "        for root, links in ():",
           ("numfuse_tests/run/test_shared_memory_and_globals.py::test_scalars_read_through_attributes_of_globals_are_guarded",)),
    Mutant("what NumPy computes from an attribute's array alone is computed once, at the trace",
           "numfuse/frontend/captures.py",
           "                holder[key] = ctx.external_array(array)\n",
           "                pass\n",
           ("numfuse_tests/run/test_shared_memory_and_globals.py::"
            "test_what_numpy_computes_from_attribute_and_helper_arrays_alone_is_fresh_at_each_call",)),
    Mutant("a view of an argument is returned as a copy",
           "numfuse/frontend/tracer.py",
           "            views[k] = view\n",
           "            pass\n",
           ("numfuse_tests/run/test_user_mistakes.py", "numfuse_tests/run/test_views.py")),
    Mutant("simulated launches from several threads do not take turns",
           "numfuse/targets/cuda/device.py",
           "        with SIMULATOR_LAUNCHES:\n",
           "        with contextlib.nullcontext():\n",
           ("numfuse_tests/run/test_user_mistakes.py::test_eight_threads_first_calls_included_several_signatures",)),
    Mutant("a cache folder others can write is used",
           "numfuse/runtime/kernel_files.py",
           '    """Refuse a cache folder or file that another user owns or that others can write."""\n',
           '    """Refuse a cache folder or file that another user owns or that others can write."""\n    return\n',
           ("numfuse_tests/trace/test_cache_security.py",)),
    Mutant("a corrupted kernel file is loaded as it is",
           "numfuse/runtime/kernel_files.py",
           "            if path.read_text() == kernel.source:\n",
           "            if True:\n",
           ("numfuse_tests/trace/test_cache_security.py",)),
    Mutant("updates whose points meet share a kernel, as if they were disjoint",
           "numfuse/loops/horizontal.py",
           "    if first.view == second.view:\n        return boxes_meet(first.box, second.box)\n",
           "    if first.view == second.view:\n        return False\n",
           ("numfuse_tests/trace/test_disjoint_updates.py",)),
    Mutant("a part of a kernel of several parts counts its points from the kernel's first point",
           "numfuse/codegen/statements.py",
           "            offset = ast.BinOp(var(s.index), ast.Sub(), index_item(part.start)) if part.start != 0 else var(s.index)\n",
           "            offset = var(s.index)\n",
           ("numfuse_tests/run/test_disjoint_updates.py",)),
    Mutant("an array made from its indices takes its first formula without checking it against NumPy's",
           "numfuse/frontend/numpy_index_arrays.py",
           "        if _same_bits(value, array):\n",
           "        if True:\n",
           ("numfuse_tests/trace/test_index_arrays.py::test_no_formula_leaves_numpys_constant",
            "numfuse_tests/run/test_made_arrays.py::test_arange_is_numpys_bit_for_bit")),
    Mutant("the index a kernel computes for an iota is one past the point's",
           "numfuse/codegen/statements.py",
           'return assign(s.dst, call("int64", index_item(s.index)))',
           'return assign(s.dst, ast.BinOp(call("int64", index_item(s.index)), ast.Add(), ast.Constant(1)))',
           ("numfuse_tests/run/test_made_arrays.py",)),
    Mutant("a scan's running value is read in a later pass, where it holds the row's total",
           "numfuse/loops/lower.py",
           "if self.phase_of.get(var, 0) != phase or imap != identity_map(self.domain):",
           "if imap != identity_map(self.domain):",
           ("numfuse_tests/run/test_scans.py::test_scans_match_numpy",)),
    Mutant("a roll stencil's time loop nests its selects in one kernel, whatever the steps",
           "numfuse/plan/select_nesting.py",
           "            if not isinstance(atom, Var) or depth.of(atom, _varying(imap)) < MAX_NESTED_SELECTS:",
           "            if True:",
           ("numfuse_tests/trace/test_select_nesting.py",)),
    Mutant("a traced array answers isinstance(x, np.ndarray) as numfuse's tracer, not as NumPy's array",
           "numfuse/frontend/proxy.py",
           "        return ctx.array_class or cls\n",
           "        return cls\n",
           ("numfuse_tests/run/test_user_mistakes.py::test_isinstance_and_type_of_arrays_and_scalars_are_numpys",)),
    Mutant("a scatter into a view writes into a copy that never reaches the view's base",
           "numfuse/frontend/numpy_indexing.py",
           "    write(copy)\n    view[...] = copy\n",
           "    write(copy)\n",
           ("numfuse_tests/run/test_gathers.py::test_scatters_into_views_match_numpy",)),
    Mutant("a change the plan replays (self.x = x, cache['h'] = h) is never put back at a call",
           "numfuse/frontend/effects.py",
           "        for (kind, where, key), value in zip(self.slots, values):\n",
           "        for (kind, where, key), value in zip(self.slots, values[:0]):\n",
           ("numfuse_tests/run/test_side_effects.py",)),
    Mutant("a function that raises after writing into its argument loses the write",
           "numfuse/frontend/effects.py",
           "    if isinstance(raised, NumfuseError) or not (changed or ctx.wrote_inputs()):\n",
           "    if True:\n",
           ("numfuse_tests/run/test_side_effects.py::test_writes_before_an_exception_stay_written",)),
)


def _environment(tier: str, cache: Path, target: str = "cuda") -> dict:
    env = dict(os.environ)
    env["NUMFUSE_CACHE_DIR"] = str(cache)
    env["NUMFUSE_TARGET"] = target
    env["NUMFUSE_QUIET"] = "1"
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if tier == "trace":
        env["NUMFUSE_TESTS_BLOCK_NUMBA"] = "1"
    else:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    return env


def run_mutant(mutant: Mutant, workdir: Path) -> tuple[str, float]:
    """("CAUGHT" | "MISSED" | "STALE", seconds)."""
    copy = workdir / "tree"
    if copy.exists():
        shutil.rmtree(copy)
    copy.mkdir()
    for part in ("numfuse", "numfuse_tests", "benchmarks", "examples", "docs", "README.md", "setup.cfg"):
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, copy / part, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
        elif source.exists():
            shutil.copy2(source, copy / part)
    target = copy / mutant.path
    text = target.read_text()
    if text.count(mutant.old) != 1:
        return "STALE", 0.0
    target.write_text(text.replace(mutant.old, mutant.new))
    env = _environment(mutant.tier, workdir / "cache", mutant.target)
    env["PYTHONPATH"] = str(copy)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *mutant.tests],
                            cwd=copy, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode == 0:
        return "MISSED", seconds
    if result.returncode in (1,):  # tests failed
        return "CAUGHT", seconds
    return f"ERROR (pytest exit {result.returncode}: {result.stdout.strip().splitlines()[-1:]})", seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numfuse_tests.mutants", description=__doc__.split("\n\n")[0])
    parser.add_argument("numbers", nargs="*", type=int, help="the mutants to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    args = parser.parse_args(argv)
    chosen = args.numbers or list(range(1, len(MUTANTS) + 1))
    unknown = [k for k in chosen if not 1 <= k <= len(MUTANTS)]
    if unknown:
        parser.error(f"no mutant numbered {', '.join(map(str, unknown))}: they are 1 to {len(MUTANTS)} (--list)")
    if args.list:
        for k, m in enumerate(MUTANTS, 1):
            print(f"{k:2d}. {m.what} ({m.path}); caught by {', '.join(m.tests)}")
        return 0
    missed = 0
    with tempfile.TemporaryDirectory() as folder:
        for k in chosen:
            mutant = MUTANTS[k - 1]
            verdict, seconds = run_mutant(mutant, Path(folder))
            missed += verdict != "CAUGHT"
            print(f"{k:2d}. {verdict:7s} {mutant.what} ({seconds:.0f}s)", flush=True)
    print(f"numfuse_tests.mutants: {len(chosen) - missed} of {len(chosen)} caught")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
