"""Arrays the function makes from their indices (np.arange, np.linspace, np.logspace, np.eye,
np.identity, np.tri, np.indices, np.mgrid, np.ogrid, and the masks of np.triu and np.tril) are
the primitive iota, computed where a kernel reads them: never a constant array in memory.
Only where no formula of the indices gives NumPy's values bit for bit does one stay a constant."""

import dataclasses

import numpy as np
import pytest

import numfuse
from numfuse.frontend import numpy_index_arrays
from numfuse.ir import check_graph, format_graph
from numfuse.ir.primitives import abstract_eval

F32 = np.float32
X = np.ones((6, 6))


def graph_text(fn, *args) -> str:
    return format_graph(numfuse.jit(fn).graph(*args), with_locs=False)


def test_arange_is_an_iota_in_the_graph():
    assert graph_text(lambda x: x + np.arange(3, 15, 2), np.ones((2, 6), F32)) == (
        "{ lambda a:f32[2,6] .\n"
        "  let b:i64[6] = iota\n"
        "      c:i64[6] = multiply b 2:i64\n"
        "      d:i64[6] = add c 3:i64\n"
        "      e:f64[2,6] = convert[dtype=f64] a\n"
        "      f:f64[6] = convert[dtype=f64] d\n"
        "      g:f64[2,6] = broadcast[shape=(2,6)] f\n"
        "      h:f64[2,6] = add e g\n"
        "  in (h) }"
    )


def test_eye_is_a_comparison_of_two_indices():
    assert graph_text(lambda: np.eye(3, 4, k=1, dtype=np.int32)) == (
        "{ lambda  .\n"
        "  let a:i64[3] = iota\n"
        "      b:i64[4] = iota\n"
        "      c:i64[1,4] = reshape[shape=(1,4)] b\n"
        "      d:i64[3,4] = broadcast[shape=(3,4)] c\n"
        "      e:i64[3,1] = reshape[shape=(3,1)] a\n"
        "      f:i64[3,4] = broadcast[shape=(3,4)] e\n"
        "      g:i64[3,4] = subtract d f\n"
        "      h:bool[3,4] = equal g 1:i64\n"
        "      i:i32[3,4] = convert[dtype=i32] h\n"
        "  in (i) }"
    )


def test_loop_nest_computes_the_index():
    plan = numfuse.jit(lambda x: x * np.arange(6), target="cpu").plan(np.ones((4, 6), F32))
    assert str(plan.kernels[0].nest) == (
        "kernel nf_pw_iota_multiply  pointwise[2d]\n"
        "  in  in_a:f32[4,6]\n"
        "  out out_f:f64[4,6]\n"
        "  for i0 < n0:  (n0=4)\n"
        "    for i1 < n1:  (n1=6)\n"
        "      v0 = load in_a[i0, i1]\n"
        "      v1:f64 = convert[f64] v0\n"
        "      v2:i64 = index i1\n"
        "      v3:f64 = convert[f64] v2\n"
        "      v4:f64 = multiply v1 v3\n"
        "      store out_f[i0, i1] = v4"
    )


MADE = [
    ("arange", lambda x: x + np.arange(6)),
    ("arange float", lambda x: x + np.arange(0.5, 3.5, 0.5)),
    ("arange float32", lambda x: x + np.arange(0.1, 1.9, 0.3, dtype=F32)),
    ("arange int8", lambda x: x + np.arange(-3, 3, dtype=np.int8)),
    ("linspace", lambda x: x + np.linspace(-1.0, 2.5, 6)),
    ("linspace int", lambda x: x + np.linspace(0, 100, 6, endpoint=False, dtype=np.int16)),
    ("logspace", lambda x: x * np.logspace(0, 2, 6)),
    ("eye", lambda x: x + np.eye(6, k=-2)),
    ("identity", lambda x: x * np.identity(6, dtype=np.int32)),
    ("tri", lambda x: x * np.tri(6, k=1)),
    ("triu", lambda x: np.triu(x, 1) + np.tril(x, -2)),
    ("indices", lambda x: x + np.indices((6, 6)).sum(axis=0)),
    ("indices sparse", lambda x: x + np.indices((6, 6), sparse=True)[0]),
    ("ogrid", lambda x: x * np.ogrid[1:7, 0:6][0]),
    ("mgrid 1-d", lambda x: x * np.mgrid[-1:1:6j]),
    ("meshgrid", lambda x: x + np.meshgrid(np.arange(6), np.linspace(0, 1, 6))[1]),
]


@pytest.mark.parametrize("fn", [fn for _, fn in MADE], ids=[name for name, _ in MADE])
def test_made_arrays_hold_no_memory(fn):
    jitted = numfuse.jit(fn, target="cpu")
    graph = jitted.graph(X)
    assert not graph.consts, format_graph(graph)
    assert any(e.prim == "iota" for e in graph.eqns)
    plan = jitted.plan(X)
    assert len(plan.kernels) == 1, str(plan)
    assert plan.bytes_moved == plan.min_bytes == 2 * X.nbytes, str(plan)  # x read, the result written


def test_no_formula_leaves_numpys_constant():
    # float16 past its range: NumPy's half arange fills with values no start + i * step gives.
    fn = lambda x: x + np.arange(1e7, 1e7 + 1, 0.1, dtype=np.float16)  # noqa: E731
    graph = numfuse.jit(fn, target="cpu").graph(np.ones(10, np.float16))
    assert [v.shape for v in graph.consts.values()] == [(10,)]
    assert not any(e.prim == "iota" for e in graph.eqns)


def test_formulas_are_checked_against_numpy():
    # The float formula that NumPy's arange fill uses in float64 where float32 arithmetic
    # differs: each candidate is tried on NumPy's own result, never assumed.
    array = np.arange(0.1, 30.0, 0.7, dtype=F32)
    formulas = numpy_index_arrays._affine_formulas(array)
    i = np.arange(array.size)
    matching = [k for k, f in enumerate(formulas) if numpy_index_arrays._same_bits(f(i), array)]
    assert matching, "no candidate reproduces NumPy's float32 arange"
    wrong = np.arange(array.size, dtype=np.int64) * 2
    assert not numpy_index_arrays._same_bits(formulas[matching[0]](i), wrong.astype(F32))


def test_iota_aval_is_checked_by_the_registry():
    graph = numfuse.jit(lambda x: x + np.arange(6)).graph(X)
    check_graph(graph, abstract_eval)
    eqn = next(e for e in graph.eqns if e.prim == "iota")
    eqn.out.aval = dataclasses.replace(eqn.out.aval, dtype=np.dtype(np.int32))
    with pytest.raises(AssertionError, match="iota"):
        check_graph(graph, abstract_eval)


def test_a_made_array_read_by_two_kernels_is_recomputed_not_stored():
    def two(x):
        r = np.arange(6.0)
        return (x * r).sum(axis=0) + r  # a column reduction, then its consumer reads r again

    plan = numfuse.jit(two, target="cpu").plan(X)
    assert plan.bytes_moved == plan.min_bytes, str(plan)
