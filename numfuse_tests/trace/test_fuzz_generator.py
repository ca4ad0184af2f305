"""The differential fuzzer's own parts, without running kernels: the generator covers numfuse's
operations, programs print as exact Python, the comparison catches each kind of difference, the
error model bounds real reorderings and refuses unstable operations, and the reducer cuts
programs down."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from numfuse.ir.ops import BY_UFUNC
from numfuse_tests.fuzz import catalog, numerics
from numfuse_tests.fuzz.builder import Builder, Rules, replay
from numfuse_tests.fuzz.compare import compare
from numfuse_tests.fuzz.program import ARRAY, NUMPY_SCALAR, PYTHON_SCALAR, Input
from numfuse_tests.fuzz.reduce import reduce_program
from numfuse_tests.fuzz.strategies import programs

SETTINGS = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}


def generated(n: int, seed_value: int) -> list:
    found = []

    @settings(max_examples=n, phases=[Phase.generate], **SETTINGS)
    @seed(seed_value)
    @given(programs())
    def collect(program):
        found.append(program)

    collect()
    return found


@pytest.fixture(scope="module")
def sample():
    # A seed whose 250 programs draw every dtype, an empty, a 0-d and a 4-d array, every op kind
    # and a library-call product with today's op mix (test_programs_are_varied and the tests of
    # kinds below); the op mix changes the draws.
    return generated(250, 5)


def test_programs_use_every_kind_of_operation(sample):
    labels = {op.rules.label for p in sample for op in p.ops}
    words = {word for label in labels for word in label.split()}
    assert set(catalog.REDUCTIONS) | {"method", "function", "ufunc"} <= words
    assert {"where", "astype", "clip", "round", "transpose", "zeros_like", "ones_like", "full_like",
            "in-place"} <= words
    assert len({label for label in labels if label.startswith("ufunc")}) >= len(BY_UFUNC) // 2


def test_programs_use_library_calls_gathers_and_masks(sample):
    """Matrix products (fused and library calls), scans, sorts, gathers, masked writes and the
    composed functions are each generated (a new op kind that the builder always refuses fails)."""
    labels = {op.rules.label for p in sample for op in p.ops}
    words = {word for label in labels for word in label.split()}
    assert {"matmul", "@", "np.matmul", "np.dot", "einsum", "scan", "cumsum", "cumprod", "sort", "argsort",
            "gather", "np.take", "np.take_along_axis", "mask", "np.putmask", "np.copyto", "setitem",
            "compose", "flip", "roll", "diff", "outer", "concatenate", "hstack", "break:", "branch", "bound",
            "np.unique", "asarray", "loop:", "shift", "halving", "scatter", "np.add.at", "np.put"} <= words, sorted(words)
    # Inputs passed one by one and in containers (a dict, a list, a list and a dict), and programs
    # that store an output into their container.
    assert {p.packing.removesuffix("+store") for p in sample} == {"", "dict", "list", "nested"}
    assert any(p.packing.endswith("+store") for p in sample)
    # Several writes into one array, whose regions may be disjoint (one kernel) or not.
    assert any(op.rules.label.startswith("setitem") and len(op.lines) > 2 for p in sample for op in p.ops)
    sources = "\n".join(p.source() for p in sample)
    for text in ('kind="stable"', "np.cumsum(", "[:, ", "np.einsum('"):
        assert text in sources, text
    # Gathers read negative indices (wrapping as in NumPy), from index arguments and constants.
    index_inputs = [i for p in sample for i in p.inputs if i.bound is not None]
    assert index_inputs and any(np.any(i.value < 0) for i in index_inputs)
    assert all(np.all((i.value >= -i.bound) & (i.value < i.bound)) for i in index_inputs)
    assert any(i.bound is not None for p in sample if p.again for i in p.again[0].inputs)
    # Integer scans and products are exact (an int32 cumsum gives int64); float ones carry the
    # sum rule's tolerance.
    kinds = {}
    for p in sample:
        if not any(op.rules.label.startswith(("scan", "matmul")) for op in p.ops):
            continue
        _, values = replay(p, numerics.ErrorModel())
        for k, op in enumerate(p.ops):
            if op.rules.label.startswith(("scan", "matmul")):
                x, out = values[op.operands[0]], values[len(p.inputs) + k]
                if out.dtype.kind != "f":
                    assert out.err is None
                kinds[(op.rules.label.split()[0], x.dtype.kind, out.dtype.kind, out.err is not None)] = True
    assert ("scan", "i", "i", False) in kinds and ("matmul", "i", "i", False) in kinds, sorted(kinds)
    assert ("scan", "f", "f", True) in kinds and ("matmul", "f", "f", True) in kinds, sorted(kinds)
    assert any(op.lines == ("{out} = np.cumsum({0})",) for p in sample for op in p.ops)  # axis=None


def test_some_generated_products_are_library_calls_and_some_fused(sample):
    import numfuse

    from numfuse_tests.fuzz.strategies import FUSED_PRODUCTS, LIBRARY_PRODUCTS

    for shapes, calls in [(LIBRARY_PRODUCTS, 1), (FUSED_PRODUCTS, 0)]:
        for sa, sb in shapes:
            plan = numfuse.jit(lambda a, b: (a @ b,)).plan(np.ones(sa, np.float32), np.ones(sb, np.float32))
            assert len(plan.library_steps) == calls, (sa, sb)
    library = set(map(tuple, sum(LIBRARY_PRODUCTS, ())))
    used = [p for p in sample if any(op.rules.label.startswith("matmul") and
                                     any(np.shape(i.value) in library for i in p.inputs) for op in p.ops)]
    assert used, "no program multiplies the operands of a library-call product"


@settings(max_examples=60, **SETTINGS)
@given(dtype=st.sampled_from([np.float32, np.float64]), data=st.data())
def test_the_product_bound_covers_every_summation_order(dtype, data):
    """A matrix product summed in a random order (and with each product rounded) stays within
    the bound the fuzzer gives it (numerics.product_error), inputs' errors aside."""
    n, k, m = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 40)), data.draw(st.integers(1, 4))
    floats = st.floats(-1e3, 1e3, width=32)
    a = np.array(data.draw(st.lists(floats, min_size=n * k, max_size=n * k)), dtype=dtype).reshape(n, k)
    b = np.array(data.draw(st.lists(floats, min_size=k * m, max_size=k * m)), dtype=dtype).reshape(k, m)
    order = data.draw(st.permutations(range(k)))
    reordered = np.zeros((n, m), dtype)
    for t in order:
        reordered = reordered + a[:, t:t + 1] * b[t:t + 1, :]
    expected = a @ b
    bound = numerics.product_error(lambda x, y: x @ y, [a, b], [None, None], expected, k)
    assert np.all(np.abs(reordered.astype(np.float64) - expected.astype(np.float64)) <= bound)


def test_a_product_of_inexact_operands_carries_their_errors():
    """The corners of the operands' intervals miss a product's propagated error (mixed signs
    cancel); product_error adds |da| |b| + |a| |db|."""
    b = Builder(numerics.ErrorModel())
    b.add_input(Input(ARRAY, np.array([[1.0, -1.0]])))
    b.add_input(Input(ARRAY, np.array([[1.0], [1.0]])))
    assert b.add(("{out} = np.exp({0})",), (0,), Rules("exp", ufunc=np.exp))
    error = lambda run, vals, errs, r: numerics.product_error(run, vals, errs, r, 2)  # noqa: E731
    assert b.add(("{out} = {0} @ {1}",), (2, 1), Rules("matmul", error=error))
    e = b.values[2].err
    assert float(b.values[-1].err[0, 0]) >= float(e[0, 0] + e[0, 1])


# Inputs that some argument of every ufunc fits: in (0, 1), above 1, integers, booleans.
SUITABLE = [np.array([[0.25, 0.5], [0.75, 0.125]]), np.array([[1.5, 2.0], [3.0, 1.25]]),
            np.array([[1, 2], [3, 4]], dtype=np.int32), np.array([[True, False], [False, True]])]


@pytest.mark.parametrize("ufunc", list(BY_UFUNC), ids=lambda u: u.__name__)
def test_every_ufunc_numfuse_supports_is_accepted_on_suitable_inputs(ufunc):
    """The strategy draws from every ufunc of numfuse's table (catalog.UNARY, BINARY); the
    builder must accept each on some inputs (a domain rule too strict would drop it)."""
    assert ufunc in catalog.UNARY + catalog.BINARY
    b = Builder(numerics.ErrorModel())
    for x in SUITABLE:
        b.add_input(Input(ARRAY, x))
    call = f"{{out}} = np.{ufunc.__name__}({', '.join(f'{{{k}}}' for k in range(ufunc.nin))})"
    pairs = [(i,) for i in range(4)] if ufunc.nin == 1 else [(i, j) for i in range(4) for j in range(4)]
    rules = Rules(ufunc.__name__, domain=lambda args, r: catalog.in_domain(ufunc, args, r), ufunc=ufunc)
    assert any(b.add((call,), operands, rules) for operands in pairs)


def test_programs_are_varied(sample):
    sizes = [len(p.ops) for p in sample]
    assert max(sizes) >= 20 and np.mean(sizes) >= 5, sizes
    inputs = [i for p in sample for i in p.inputs]
    assert {i.kind for i in inputs} == {ARRAY, NUMPY_SCALAR, PYTHON_SCALAR}
    arrays = [np.asarray(i.value) for i in inputs if i.kind == ARRAY]
    assert {a.dtype for a in arrays} == set(catalog.DTYPES)
    assert any(a.size == 0 for a in arrays) and any(a.ndim == 0 for a in arrays)
    assert any(1 in a.shape for a in arrays) and max(a.ndim for a in arrays) == 4
    assert {i.layout for i in inputs if i.kind == ARRAY} == {"C", "F", "strided", "transposed"}
    assert any(len(p.outputs) >= 3 for p in sample)
    inexact = [p for p in sample if any(np.any(t > 0) for t in p.tolerances)]
    assert len(inexact) >= len(sample) // 10  # reductions and transcendental functions
    assert any(np.isnan(a).any() for a in arrays if a.dtype.kind == "f")
    assert len([p for p in sample if p.again]) >= len(sample) // 10  # called again, new values


def test_a_program_computes_what_the_builder_evaluated(sample):
    """The printed program, on its laid-out arguments, gives the values the builder computed op
    by op (pruning and renumbering change nothing), and a replay gives the same tolerances."""
    for p in sample[:60]:
        replayed, values = replay(p, numerics.ErrorModel())
        for a, b in zip(replayed.tolerances, p.tolerances):
            np.testing.assert_array_equal(a, b)
        built = tuple(values[k].value for k in p.outputs)
        with np.errstate(all="ignore"):
            assert compare(p.function()(*p.arguments()), built, p.tolerances) == [], p.source()
        compile(p.snippet(), "<snippet>", "exec")


@pytest.mark.parametrize("dtype", catalog.DTYPES)
@pytest.mark.parametrize("layout", ["C", "F", "strided", "transposed"])
def test_array_literals_are_exact(dtype, layout):
    values = [0, 1, -3.25, math.nan, math.inf, -math.inf, -0.0, 1e-3] if dtype.kind == "f" else [0, 1, 5, 3]
    for shape in [(), (0,), (2, 0), (2, 3), (1, 2, 4)]:
        size = math.prod(shape)
        a = np.array((values * 8)[:size] if size else [], dtype=dtype).reshape(shape)
        inp = Input(ARRAY, a, layout)
        back = eval(inp.literal(), {"np": np})
        arg = inp.argument()
        assert back.dtype == arg.dtype and back.shape == arg.shape == a.shape
        assert back.tobytes() == arg.tobytes()  # NaN and -0.0 included
        assert back.flags.c_contiguous == arg.flags.c_contiguous
    scalar = Input(NUMPY_SCALAR, dtype.type(values[2]))
    assert eval(scalar.literal(), {"np": np}).dtype == dtype


# -- comparing ---------------------------------------------------------------------------------------


def test_compare_finds_each_kind_of_difference():
    f = np.array([1.0, np.nan, np.inf, -0.0])
    exact, loose = np.zeros(4), np.full(4, 0.5)
    assert compare((f.copy(),), (f,), [exact]) == []
    cases = {
        "NaN positions": np.array([1.0, 2.0, np.inf, -0.0]),
        "+inf positions": np.array([1.0, np.nan, -np.inf, -0.0]),
        "beyond tolerance": np.array([1.0 + 1e-16 * 4, np.nan, np.inf, -0.0]),
        "sign of zero": np.array([1.0, np.nan, np.inf, 0.0]),
    }
    for what, got in cases.items():
        assert any(what in problem for problem in compare((got,), (f,), [exact])), what
    assert compare((np.array([1.4, np.nan, np.inf, 0.0]),), (f,), [loose]) == []
    assert "dtype" in compare((f.astype(np.float32),), (f,), [exact])[0]
    assert "shape" in compare((f[:3],), (f,), [exact])[0]
    assert "NumPy a float64" in compare((np.array(1.0),), (np.float64(1.0),), [0.0])[0]
    assert "values differ" in compare((np.array([1, 2]),), (np.array([1, 3]),), [np.zeros(2)])[0]
    assert compare([f], (f,), [exact])  # a list where NumPy gives a tuple


# -- the error model -----------------------------------------------------------------------------------


@settings(max_examples=60, **SETTINGS)
@given(dtype=st.sampled_from([np.float16, np.float32, np.float64]), data=st.data())
def test_the_sum_bound_covers_every_summation_order(dtype, data):
    n = data.draw(st.integers(1, 64))
    x = np.array(data.draw(st.lists(st.floats(-1e3, 1e3, width=16), min_size=n, max_size=n)), dtype=dtype)
    order = data.draw(st.permutations(range(n)))
    total = dtype(0)
    for i in order:  # sequential, in the array's dtype, in a random order (a GPU's tree is another)
        total = dtype(np.float32(total) + np.float32(x[i])) if dtype == np.float16 else total + x[i]
    bound = numerics.reduction_error("sum", x, None, (0,), False, np.sum(x), n)
    assert abs(float(total) - float(np.sum(x))) <= float(bound)


def test_unstable_operations_are_refused():
    b = Builder(numerics.ErrorModel())
    b.add_input(Input(ARRAY, np.array([0.1, 0.2, 0.7], dtype=np.float32)))
    assert b.add(("{out} = {0}.sum()",), (0,), Rules("sum", reduction=("sum", None, False)))
    assert b.values[1].err is not None and b.values[1].err > 0  # a float sum is not exact
    # 0.1 + 0.2 + 0.7 is 1.0 up to rounding: where it lands against 1 is the order's choice.
    assert not b.add(("{out} = {0} >= 1",), (1,), Rules("compare"))
    assert not b.add(("{out} = np.floor({0})",), (1,), Rules("floor"))
    assert b.add(("{out} = {0} > 0.5",), (1,), Rules("compare"))  # far from it: stable
    assert b.values[-1].err is None
    assert b.add(("{out} = np.exp({0})",), (1,), Rules("exp", ufunc=np.exp))
    assert np.all(b.values[-1].err > b.values[1].err)  # exp amplifies the error, adds ulps


@pytest.mark.parametrize("kind, values", [("sum", [3e38, 3e38, -3e38]), ("prod", [1e30, 1e30, 0.0]),
                                          ("prod", [1e-30, 1e-30, 1e30, 1e30])])
def test_reductions_that_overflow_in_some_order_are_refused(kind, values):
    """(3e38 + 3e38) - 3e38 is inf, 3e38 + (3e38 - 3e38) is 3e38: the order decides."""
    b = Builder(numerics.ErrorModel())
    b.add_input(Input(ARRAY, np.array(values, dtype=np.float32)))
    assert not b.add((f"{{out}} = {{0}}.{kind}()",), (0,), Rules(kind, reduction=(kind, None, False)))
    b.add_input(Input(ARRAY, np.array(values, dtype=np.float64)))  # float64 holds every order
    assert b.add((f"{{out}} = {{0}}.{kind}()",), (1,), Rules(kind, reduction=(kind, None, False)))


def test_reduce_reroutes_around_unneeded_operations():
    b = Builder(numerics.ErrorModel())
    b.add_input(Input(ARRAY, np.arange(6.0).reshape(2, 3)))
    for _ in range(4):
        b.add(("{out} = -{0}",), (len(b.values) - 1,), Rules("negative", ufunc=np.negative))
    b.add(("{out} = {0}.sum(axis=1)",), (len(b.values) - 1,), Rules("sum", reduction=("sum", 1, False)))
    b.add(("{out} = np.sin({0})",), (len(b.values) - 1,), Rules("sin", ufunc=np.sin))
    program = b.program([len(b.values) - 1, 2])
    assert len(program.ops) == 6

    def fails(p):  # stands in for "numfuse differs": any program that sums
        return any(".sum(" in line for op in p.ops for line in op.lines)

    reduced = reduce_program(program, fails, numerics.ErrorModel())
    assert [op.lines for op in reduced.ops] == [("{out} = {0}.sum(axis=1)",)]
    assert "v0 = x0.sum(axis=1)" in reduced.source()
