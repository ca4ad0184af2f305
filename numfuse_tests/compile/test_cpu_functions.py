"""Every program's CPU functions compile with Numba (nothing runs), and Numba infers for each
value the dtype the loop nest gives it; the parallel twin of each CPU template compiles too."""

import os

import numba
import numpy as np
import pytest

import numfuse
from numfuse.targets.cpu import loader
from numfuse.targets.cpu.executable import CpuExecutable
from numfuse_tests.programs import PROGRAMS


def _numpy_dtype(numba_type):
    try:
        return np.dtype(str(numba_type))
    except TypeError:
        return None


def _functions(fn, *args):
    jf = numfuse.jit(fn, target="cpu")
    compiled = jf._compiled(args, {})[0]
    executable = compiled.executable = compiled.executable or jf._executable(compiled)
    assert isinstance(executable, CpuExecutable)
    return jf, executable


def _signature(executable: CpuExecutable, index: int, values):
    scalars = {(i, d): np.asarray(values[i]).astype(d)[()] for i, d in executable.scalar_casts}
    env = executable._buffers(executable._inputs(values, [str(i) for i in range(len(values))]))
    args = executable._arguments(index, env, scalars, np.zeros(1, np.int32))
    return tuple(numba.typeof(a) for a in args)


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    # Compiled for real, not loaded from Numba's disk cache: the typing is what is checked.
    monkeypatch.setenv("NUMFUSE_CACHE_DIR", str(tmp_path))
    loader._functions.clear()


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_functions_compile_with_the_ir_dtypes(program):
    args = program.args(np.random.default_rng(0))
    jf, executable = _functions(program.fn, *args)
    values = [args[i] for i in jf._compiled(args, {})[0].traced_positions]
    for index, kernel in enumerate(executable.plan.kernels):
        serial = loader.functions(executable.sources[index])[1]
        signature = _signature(executable, index, values)
        serial.compile(signature)
        typemap = serial.overloads[signature].type_annotation.typemap
        computes = _computes(kernel.nest)
        checked = 0
        for stmt in computes:
            found = [t for name, t in typemap.items() if name.split(".")[0] == stmt.dst]
            expected = np.float32 if stmt.dtype == np.float16 else stmt.dtype  # float16 held as float32
            for t in found:
                assert _numpy_dtype(t) == expected, (kernel.name, stmt.dst, t, stmt.dtype)
            checked += len(found)
        assert checked or not computes, kernel.name  # the values were found under their names


def _computes(nest):
    from numfuse.loops.loopnest import Compute, walk

    stmts = list(nest.body) + [s for p in nest.phases for s in p.body] + list(nest.epilogue)
    return [s for s in walk(stmts) if isinstance(s, Compute)]


TEMPLATES = {
    "pointwise flat": (lambda x: np.exp(x) + 1, (1000,)),
    "pointwise 2d": (lambda x: x.T * 2, (30, 40)),
    # x ** 3 and x ** 4: products with their rounding errors (vector_math.POWERS)
    "pointwise flat, powers": (lambda x: x ** 3 + x ** 4 + x.astype(np.float64) ** 3 + x.astype(np.float64) ** 4,
                               (1000,)),
    "rows with lanes": (lambda x: x.astype(np.int32).sum(axis=1, dtype=np.int32), (30, 40)),
    "rows, pairwise": (lambda x: x.sum(axis=1), (30, 400)),
    "rows, pairwise, computed in lanes": (lambda x: (x * x).sum(axis=1), (30, 400)),
    "rows, pairwise, leaf stored": (lambda x: np.exp(x).sum(axis=1), (30, 400)),
    "rows, pairwise, in NumPy's buffers": (lambda x: x.sum(axis=1, dtype=np.float64), (30, 400)),
    "rows, product in order": (lambda x: x.prod(axis=1), (30, 40)),
    "rows, argmax": (lambda x: x.argmax(axis=1), (30, 40)),
    "columns": (lambda x: x.max(axis=0), (30, 40)),
    "columns, phases": (lambda x: x - x.mean(axis=0), (30, 40)),
    "columns cut into chunks": (lambda x: x.min(axis=0), (4000, 40)),
    "columns, sum in order": (lambda x: x.sum(axis=0), (4000, 40)),
    "columns cut into chunks, argmax": (lambda x: x.argmax(axis=0), (4000, 40)),
    "split": (lambda x: x.max(), (1 << 16,)),
    "split, pairwise": (lambda x: x.sum(), (1 << 16,)),
    "split, pairwise, in NumPy's buffers": (lambda x: x.sum(dtype=np.float64), (1 << 16,)),
    "split, argmin": (lambda x: x.argmin(), (1 << 16,)),
    "phases": (lambda x: x / x.sum(axis=1, keepdims=True), (30, 40)),
    # sin and cos: each loop checks its arguments first (trig_loops.py)
    "pointwise blocks, sin": (lambda x: np.sin(x) * 2, (5000,)),
    "pointwise 2d, cos": (lambda x: np.cos(x.T), (30, 40)),
    "rows, chunk loops, sin": (lambda x: np.sin(x).sum(axis=1), (30, 400)),
    "split, cos": (lambda x: np.cos(x).sum(), (1 << 16,)),
    "columns cut into chunks, sin": (lambda x: np.sin(x).max(axis=0), (4000, 40)),
    # arrays made from their indices: the point's own index (an Iota statement) in each loop
    "pointwise flat, iota": (lambda x: x + np.arange(x.size, dtype=np.float32), (1000,)),
    "rows, chunk loops, iota": (lambda x: (x * np.arange(x.shape[1], dtype=np.float32)).sum(axis=1), (30, 400)),
    "columns cut into chunks, iota": (lambda x: (x * np.arange(x.shape[0], dtype=np.float32)[:, None]).max(axis=0), (4000, 40)),
    "split, iota": (lambda x: (x * np.linspace(0, 1, x.size, dtype=np.float32)).sum(), (1 << 16,)),
    # scans: a running accumulator, each row in order in one thread
    "rows, scan": (lambda x: np.cumsum(x * 2, axis=1) - 1, (30, 400)),
    "columns, scan": (lambda x: np.cumprod(x, axis=0) + x, (400, 40)),
    "rows, scan in a second pass": (lambda x: np.cumsum(x - x.max(axis=1, keepdims=True), axis=1), (30, 40)),
    "flattened scan": (lambda x: np.cumsum(x), (1 << 16,)),
}


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_compiles_parallel(name):
    fn, shape = TEMPLATES[name]
    x = np.ones(shape, np.float32)
    jf, executable = _functions(fn, x)
    if "cut into chunks" in name:
        assert "nsplit" in {p.name for p in executable.sources[0].params}  # column_split_reduction
    if "pairwise" in name:  # pairwise.stores_leaf: exp's points go through the thread's row, x * x's not
        leaf_rows = any(p.name.startswith("nf_leaf_") for p in executable.sources[0].params)
        assert leaf_rows == ("leaf stored" in name)
    for index in range(len(executable.launches)):
        parallel = loader.functions(executable.sources[index])[0]
        parallel.compile(_signature(executable, index, [x]))
        assert parallel.signatures
    assert os.environ["NUMFUSE_CACHE_DIR"]
