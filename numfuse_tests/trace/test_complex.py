"""complex64 and complex128 at trace time: result dtypes, shapes and scalar kinds are NumPy's
(promotion asked of NumPy, Python complex scalars weak as in NEP 50), the printed graph, and
every operation numfuse does not compute on complex values refused while tracing, naming the
operation and the dtype, never traced into a wrong answer.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.exceptions import ComplexWarning

import numfuse
from numfuse.targets.cuda.codegen import kernel_params
from numfuse.ir.dtypes import COMPLEX
from numfuse.ir import format_graph
from numfuse.ir.ops import BY_UFUNC

C64, C128 = np.complex64, np.complex128
Z = np.array([[1 + 2j, 3 - 1j, 0.5j], [2, -1j, 1 + 1j]], C64)
W = Z.astype(C128)
X = np.array([[0.5, 1.5, -2.0], [3.0, 0.0, 1.0]], np.float32)


def numpy_outcome(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*args), None
        except Exception as err:  # noqa: BLE001 - which error NumPy raises is what we compare
            return None, err


def kind_of(value) -> str:
    """How numfuse's trace marks a result of NumPy's type (TraceResult.leaf_kinds)."""
    if isinstance(value, np.ndarray):
        return "array"
    return "numpy_scalar" if isinstance(value, np.generic) else "python"


def assert_traces_like_numpy(fn, *args):
    """The traced outputs have NumPy's shapes, dtypes and scalar kinds."""
    expected, error = numpy_outcome(fn, *args)
    assert error is None, error
    expected = expected if isinstance(expected, tuple) else (expected,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ComplexWarning)
        traced = numfuse.jit(fn).trace(*args)
    avals = [v.aval for v in traced.graph.outputs]
    assert len(avals) == len(expected)
    for i, (aval, kind, want) in enumerate(zip(avals, traced.leaf_kinds, expected)):
        want_a = np.asarray(want)
        assert (aval.shape, aval.dtype) == (want_a.shape, want_a.dtype), (i, aval, want_a.dtype, want_a.shape)
        assert kind == kind_of(want), (i, kind, type(want))


# -- every ufunc: computed with NumPy's dtypes, or refused ----------------------------------------


def _ufunc_call(ufunc):
    return lambda *args: ufunc(*args)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("ufunc", sorted(BY_UFUNC, key=lambda u: u.__name__), ids=lambda u: u.__name__)
def test_every_ufunc_on_complex_is_numpys_or_refused_naming_it(ufunc, dtype):
    """On complex operands (all complex, or complex beside float32): where numfuse has a complex
    template the result is NumPy's; where NumPy has a loop but numfuse no template,
    UnsupportedError names the ufunc and the dtype; where NumPy has no loop, NumPy's error."""
    z = Z.astype(dtype)
    for args in ([z] * ufunc.nin, [z, X][: ufunc.nin], [X, z][-ufunc.nin:]):
        fn = _ufunc_call(ufunc)
        _, numpy_error = numpy_outcome(fn, *args)
        op = BY_UFUNC[ufunc]
        if numpy_error is not None:
            with pytest.raises(type(numpy_error)):
                numfuse.jit(fn, graph_breaks=False).graph(*args)
            continue
        loop = ufunc.resolve_dtypes(tuple(a.dtype for a in args) + (None,) * ufunc.nout)[op.type_from]
        if op.template(loop) is not None:
            assert_traces_like_numpy(fn, *args)
        else:
            with pytest.raises(numfuse.UnsupportedError, match=rf"np\.{ufunc.__name__} on {loop}"):
                numfuse.jit(fn, graph_breaks=False).graph(*args)


def test_the_complex_operations_are_the_ones_asked_for():
    takes_complex = {u.__name__ for u, op in BY_UFUNC.items() if "c" in op.impls}
    assert takes_complex == {"add", "subtract", "multiply", "divide", "negative", "positive", "absolute",
                             "square", "conjugate", "exp", "equal", "not_equal",
                             # scalar_impl_complex.py
                             "power", "sqrt", "log", "log10", "log2", "log1p", "expm1", "exp2",
                             "less", "less_equal", "greater", "greater_equal", "isnan", "isinf", "isfinite",
                             "sign", "reciprocal", "rint", "logical_and", "logical_or", "logical_xor",
                             "logical_not", "sin", "cos", "tan", "sinh", "cosh", "tanh"}


# -- promotion with arrays and scalars of every kind ----------------------------------------------

OPERANDS = {
    "c64": Z, "c128": W, "f16": X.astype(np.float16), "f32": X, "f64": X.astype(np.float64),
    "i8": X.astype(np.int8), "u64": np.abs(X).astype(np.uint64), "bool": X > 0,
    "1j": 1j, "2.5": 2.5, "3": 3, "True": True, "np.c64": C64(1 - 1j), "np.c128": C128(2j),
    "np.f32": np.float32(1.5), "np.i64": np.int64(2), "0-d c64": np.array(1j, C64),
}
PAIRS = [(a, b) for a in OPERANDS for b in OPERANDS
         if "c" in (np.asarray(OPERANDS[a]).dtype.kind + np.asarray(OPERANDS[b]).dtype.kind)]
BINARY = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
    "==": lambda a, b: a == b, "np.divide": lambda a, b: np.divide(a, b),
    "np.not_equal": lambda a, b: np.not_equal(a, b), "where": lambda a, b: np.where(True, a, b),
}


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_promotion_with_every_kind_of_operand(name):
    """NumPy decides: complex64 beside float32 or a Python float stays complex64, beside
    float64, int64 arrays or NumPy int64 scalars it is complex128; Python complex scalars are
    weak (float32 array * 1j is complex64); results are arrays, NumPy scalars or Python scalars
    as NumPy gives them."""
    for a, b in PAIRS:
        assert_traces_like_numpy(BINARY[name], OPERANDS[a], OPERANDS[b])


def unary(z):
    return (abs(z), np.abs(z), -z, +z, np.exp(z), np.square(z), np.conj(z), np.conjugate(z), z.conjugate(),
            z.real, z.imag, np.real(z), np.imag(z), np.power(z, 2))


@pytest.mark.parametrize("name", ["c64", "c128", "np.c64", "np.c128", "1j", "0-d c64"])
def test_unary_operations(name):
    """abs and the parts are real of matching precision (float32 for complex64); the rest
    keep the dtype. Of a Python complex: abs(s), s.real, s.conjugate() are Python scalars."""
    assert_traces_like_numpy(unary, OPERANDS[name])
    if name != "1j":  # s ** 2 of a Python scalar gives a NumPy scalar: a known bug, not complex's
        assert_traces_like_numpy(lambda z: (z ** 2, z ** 2.0, z.conj()), OPERANDS[name])


@pytest.mark.parametrize("name", ["f16", "f32", "i8", "u64", "bool", "np.f32", "2.5", "True", "3"])
def test_parts_and_conjugate_of_real_values(name):
    """np.conjugate of a real value keeps its dtype (bool goes through int8, as NumPy's loop
    does); .real is the value itself and .imag zeros of its dtype (Python's True.real is 1)."""
    assert_traces_like_numpy(lambda x: (np.conj(x), x.conjugate(), x.real, x.imag, np.real(x), np.imag(x)),
                             OPERANDS[name])


# -- reductions -----------------------------------------------------------------------------------


def reductions(z):
    return (z.sum(), z.sum(axis=0), np.sum(z, axis=1, keepdims=True), z.mean(), np.mean(z, axis=0),
            z.prod(axis=1), np.prod(z), np.average(z, axis=1), z.any(), np.all(z, axis=0),
            np.count_nonzero(z), np.add.reduce(z), np.multiply.reduce(z, axis=1), z.sum(dtype=C128))


@pytest.mark.parametrize("name", ["c64", "c128"])
def test_reductions_accumulate_in_numpys_dtype(name):
    z = OPERANDS[name]
    assert_traces_like_numpy(reductions, z)
    graph = numfuse.jit(lambda z: (z.sum(axis=1), z.mean())).graph(z)
    sums = [e for e in graph.eqns if e.prim == "reduce_sum"]
    assert [e.out.aval.dtype for e in sums] == [z.dtype, z.dtype]  # complex64 sums in complex64


def test_real_arrays_reduce_into_complex_on_request():
    assert_traces_like_numpy(lambda x: (np.sum(x, dtype=C64), x.mean(dtype=C128), x.prod(dtype=C64)), X)


def test_a_long_complex_row_is_split_with_complex_partial_results():
    z = np.ones(20000, C64)
    nest = numfuse.jit(lambda z: z.sum()).plan(z).kernels[0].nest
    assert nest.split
    partials = [p for p in kernel_params(nest) if p.kind == "partial"]
    assert [p.dtype for p in partials] == [np.dtype(C64)]


# -- refused, naming the function and the dtype ---------------------------------------------------

REFUSED = {
    "np.max": lambda z: z.max(),
    "np.min": lambda z: np.min(z, axis=0),
    "np.argmax": lambda z: np.argmax(z),
    "np.argmin": lambda z: z.argmin(axis=1),
    "np.var": lambda z: z.var(),
    "np.std": lambda z: np.std(z, axis=0),
    "np.nansum": lambda z: np.nansum(z),
    "np.nanprod": lambda z: np.nanprod(z),
    "np.nanmean": lambda z: np.nanmean(z),
    "np.nanmax": lambda z: np.nanmax(z),
    "np.nanvar": lambda z: np.nanvar(z),
    "np.nanstd": lambda z: np.nanstd(z),
    "np.ptp": lambda z: np.ptp(z),
    "np.clip": lambda z: np.clip(z, 0, 1),
    "np.round": lambda z: np.round(z, 2),
    "np.maximum": lambda z: np.maximum.reduce(z),
    "np.fmax": lambda z: np.fmax.reduce(z),
    "np.arcsin": lambda z: np.arcsin(z),
    "np.arccos": lambda z: np.arccos(z),
    "np.minimum": lambda z: np.minimum(z, 1j),
}


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("name", list(REFUSED))
def test_other_operations_are_refused_at_trace_time(name, dtype):
    _, numpy_error = numpy_outcome(REFUSED[name], Z.astype(dtype))
    assert numpy_error is None  # NumPy computes it: a refusal, never a silent approximation
    with pytest.raises(numfuse.UnsupportedError, match=rf"{name.replace('.', '[.]')}(\.reduce)? on {np.dtype(dtype)}"):
        numfuse.jit(REFUSED[name], graph_breaks=False).graph(Z.astype(dtype))


def test_what_numpy_refuses_raises_numpys_error():
    """NumPy has no floor division, remainder or floor of complex values: its own TypeError."""
    for fn in (lambda z: z // 2, lambda z: z % 2, lambda z: np.floor(z), lambda z: ~z):
        _, numpy_error = numpy_outcome(fn, Z)
        assert isinstance(numpy_error, TypeError)
        with pytest.raises(TypeError):
            numfuse.jit(fn).graph(Z)


def test_refusals_say_what_complex_values_take():
    with pytest.raises(numfuse.UnsupportedError) as info:
        numfuse.jit(lambda z: np.arctan(z), graph_breaks=False).graph(Z)
    message = str(info.value)
    assert "np.arctan on complex64" in message and "np.exp" in message and "np.sum" in message
    assert "test_complex.py" in message  # the user's line


# -- casts, assignment, views ---------------------------------------------------------------------


def test_casts_to_real_warn_as_numpy_does():
    with pytest.warns(ComplexWarning) as record:
        numfuse.jit(lambda z: z.astype(np.float32)).graph(Z)
    assert record[0].filename == __file__  # pointed at the user's line
    with pytest.warns(ComplexWarning):
        numfuse.jit(lambda z: np.astype(z, np.int16)).graph(Z)
    with pytest.warns(ComplexWarning):
        numfuse.jit(lambda z, x: np.full_like(x, z[0, 0])).graph(Z, X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ComplexWarning)  # (no ComplexWarning: these casts keep the imaginary part)
        numfuse.jit(lambda z: (z.astype(bool), z.astype(C128), Z.astype(C64), X.astype(C64))).graph(Z)


def test_assigning_complex_into_real_arrays_follows_numpy():
    def assign(x, value):
        x = x.copy()
        x[0] = value
        return x

    with pytest.warns(ComplexWarning):  # a complex array or NumPy scalar: the real part, warned
        numfuse.jit(assign).graph(X, Z[1])
    with pytest.warns(ComplexWarning):
        numfuse.jit(lambda x: assign(x, C64(1j))).graph(X)
    with pytest.raises(TypeError):  # a Python complex: NumPy refuses
        np.zeros(3)[0] = 1j
    with pytest.raises(TypeError):
        numfuse.jit(lambda x: assign(x, 1j)).graph(X)
    with pytest.raises(TypeError, match="not 'complex'"):  # a Python complex argument too
        numfuse.jit(assign).graph(X, 1j)
    with pytest.raises(TypeError, match="not 'complex'"):
        numfuse.jit(assign).graph(X.astype(np.int16), 2 + 1j)
    assert numfuse.jit(assign).graph(X.astype(bool), 1j) is not None  # bool(1j): no refusal


def test_writing_through_complex_parts_rebuilds_the_array_from_both_parts():
    """NumPy writes the part in place: the trace sets the whole array to the complex value of
    the part so written and the other part as it was (values checked in
    run/test_hyp_complex.py)."""
    def f(z):
        z.real[0] = 1.0
        return z

    prims = [e.prim for e in numfuse.jit(f).graph(Z).eqns]
    assert {"real", "imag", "complex_from_parts", "update"} <= set(prims), prims


def test_real_part_of_a_real_array_writes_through():
    def f(x):
        x = x.copy()
        x.real[0] = 5.0
        return x, x.imag

    assert_traces_like_numpy(f, X)
    assert "update" in [e.prim for e in numfuse.jit(f).graph(X).eqns]


def test_python_complex_has_no_conj():
    with pytest.raises(AttributeError):
        (1j).conj()
    with pytest.raises(AttributeError):
        numfuse.jit(lambda s: s.conj()).graph(1j)


# -- arguments and the printed graph --------------------------------------------------------------


def test_complex_scalar_arguments_are_traced_values():
    jf = numfuse.jit(lambda x, s, t: x * s + t)
    graph = jf.graph(X, 1j, C64(2))
    assert [str(v.aval) for v in graph.inputs] == ["f32[2,3]", "c128[]", "c64[]"]
    assert jf.graph(X, 2j, C64(1j)) is graph  # new values: the same signature, no retrace
    assert graph.outputs[0].aval.dtype == C64  # NEP 50: the Python complex is weak


def test_longer_complex_dtypes_are_refused_with_a_hint():
    if np.dtype(np.clongdouble).itemsize <= 16:
        pytest.skip("clongdouble is complex128 on this platform")
    with pytest.raises(numfuse.UnsupportedError, match=r"dtype complex\d+ \(argument 'z'\).*complex64 and complex128"):
        numfuse.jit(lambda z: z + 1).graph(np.ones(3, np.clongdouble))


def test_printed_graph():
    def f(z, x, s):
        y = z * x - s
        return abs(y), np.exp(y).real, y.conj().sum(axis=1)

    text = format_graph(numfuse.jit(f).graph(Z, X, 0.5j), with_locs=False)
    assert text == (
        "{ lambda a:c64[2,3] b:f32[2,3] c:c128[] .\n"
        "  let d:c64[2,3] = convert[dtype=c64] b\n"
        "      e:c64[2,3] = multiply a d\n"
        "      f:c64[] = convert[dtype=c64] c\n"
        "      g:c64[2,3] = broadcast[shape=(2,3)] f\n"
        "      h:c64[2,3] = subtract e g\n"
        "      i:f32[2,3] = absolute h\n"
        "      j:c64[2,3] = exp h\n"
        "      k:f32[2,3] = real j\n"
        "      l:c64[2,3] = conjugate h\n"
        "      m:c64[2] = reduce_sum[axes=(1,) keepdims=False] l\n"
        "  in (i, k, m) }"
    )
    literal = format_graph(numfuse.jit(lambda z: z * (1 - 2j) + 1).graph(Z), with_locs=False)
    assert "multiply a (1-2j):c64" in literal and "add b (1+0j):c64" in literal
