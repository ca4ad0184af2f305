"""Integer-array indexing traces to `gather`: NumPy's result shapes and dtypes for every
placement of the index arrays, NumPy's errors, and plans in which a gather is a load inside the
fused kernel."""

import numpy as np
import pytest

import numfuse

X3 = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
I = np.array([2, 0, -1])
J = np.array([[1], [2]])


def _avals(fn, *args):
    expected = fn(*args)
    graph = numfuse.jit(fn).graph(*args)
    return (np.shape(expected), np.asarray(expected).dtype), (graph.outputs[0].aval.shape, graph.outputs[0].aval.dtype)


@pytest.mark.parametrize("fn", [
    lambda x, i, j: x[i],
    lambda x, i, j: x[:, i],
    lambda x, i, j: x[..., i],
    lambda x, i, j: x[i, :, i],  # separated by a slice: the index dimensions go first
    lambda x, i, j: x[1, :, i],  # an int beside an array counts as an index array
    lambda x, i, j: x[i, 1:3],
    lambda x, i, j: x[None, i, ::2],
    lambda x, i, j: x[j, i],
    lambda x, i, j: x[:, j, i],
    lambda x, i, j: x[[0, 2], 1],
    lambda x, i, j: x[i].sum(axis=1),
    lambda x, i, j: np.take(x, i, axis=2),
    lambda x, i, j: np.take(x, j),
    lambda x, i, j: np.take_along_axis(x, np.zeros((3, 2, 5), np.int64), axis=1),
    lambda x, i, j: np.take_along_axis(x, np.zeros((1, 4, 2), np.int32), axis=2),
])
def test_gather_shapes_and_dtypes_are_numpys(fn):
    expected, got = _avals(fn, X3, I, J)
    assert got == expected


def test_gather_prints_as_one_primitive():
    text = str(numfuse.jit(lambda x, i: x[:, i]).graph(X3[0], I))
    assert "gather[axis=1]" in text, text
    assert "convert[dtype=i64]" not in text  # int64 indices need no cast


def test_an_elementwise_chain_around_a_gather_is_one_kernel():
    plan = numfuse.jit(lambda x, i: np.exp(x[i] * 2.0) + 1.0).plan(X3, I)
    assert len(plan.kernels) == 1
    text = str(plan.kernels[0].nest)
    assert "load in_a[v" in text  # x is loaded at the computed index
    assert "check gather_index" in text


def test_a_gather_of_a_reduction_reads_it_from_an_earlier_kernel():
    plan = numfuse.jit(lambda x, i: x.sum(axis=0)[i]).plan(X3[0], I)
    assert len(plan.kernels) == 2


def test_a_reduction_over_gathered_rows_is_one_kernel():
    plan = numfuse.jit(lambda x, i: (x[i] * 2.0).sum(axis=1)).plan(X3[0], I)
    assert len(plan.kernels) == 1 and plan.kernels[0].nest.kind == "reduction"


@pytest.mark.parametrize("fn, args, error", [
    (lambda x, i: x[i], (X3, I.astype(np.float32)), IndexError),
    (lambda x, i: x[i, np.array([0, 1])], (X3, I), IndexError),
    (lambda x, i: x[i, i, i, i], (X3, I), IndexError),
])
def test_bad_indices_raise_numpys_error_type(fn, args, error):
    with pytest.raises(error):
        fn(*args)
    with pytest.raises(error):
        numfuse.jit(fn).graph(*args)


def test_broadcast_mismatch_message_is_numpys():
    with pytest.raises(IndexError) as numpy_error:
        X3[I, np.array([0, 1])]
    with pytest.raises(IndexError) as ours:
        numfuse.jit(lambda x, i, j: x[i, j]).graph(X3, I, np.array([0, 1]))
    assert str(numpy_error.value) in str(ours.value)


def test_mask_reads_and_scatters_into_views_are_refused_clearly():
    # What needs x[mask]'s size is a graph break; without them, refused.
    with pytest.raises(numfuse.UnsupportedError, match=r"returning x\[mask\]"):
        numfuse.jit(lambda x: x[x > 0], graph_breaks=False).graph(X3)
    with pytest.raises(numfuse.UnsupportedError, match="len"):
        numfuse.jit(lambda x: len(x[x > 0]), graph_breaks=False).graph(X3)
    with pytest.raises(numfuse.TracingError, match=r"returning x\[mask\]: x\[mask\]'s size depends on the data"):
        numfuse.jit(lambda x: x[x > 0]).graph(X3)



def test_a_scatter_into_a_view_scatters_into_its_values_then_writes_them_back():
    def write(x, i):
        x[1:][i] = 0.0
        return x

    assert str(numfuse.jit(write).graph(X3.copy(), I % 2)) == """\
{ lambda a:f32[3,4,5] b:i64[3] .
  let c:f32[2,4,5] = slice[start=(1,0,0) step=(1,1,1) drop=()] a    # test_gather_plans.py:100
      d:f64[] = broadcast[shape=()] 0.0:f64                         # test_gather_plans.py:100
      e:f32[] = convert[dtype=f32] d                                # test_gather_plans.py:100
      f:f32[2,4,5] = convert[dtype=f32] c                           # test_gather_plans.py:100
      g:f32[2,4,5] = scatter[axis=0 ufunc=None] f e b               # test_gather_plans.py:100
      h:f32[3,4,5] = update[at=[i0 + 1, i1, i2] shape=(2,4,5)] a g  # test_gather_plans.py:100
  in (h)  writes a<-h }"""

    def through_broadcast(x, i):
        np.broadcast_to(x, (2,) + x.shape)[:, i] = 0.0

    with pytest.raises(ValueError, match="read-only"):
        numfuse.jit(through_broadcast).graph(X3.copy(), I % 2)


def test_a_scatter_prints_as_one_in_place_primitive():
    def write(x, i):
        x[:, i] = 0.0
        return x

    text = str(numfuse.jit(write).graph(X3.copy(), I))
    assert "scatter[axis=1 ufunc=None]" in text, text
    assert "writes a<-" in text


def test_writing_through_x_k_for_a_traced_k_is_refused_not_lost():
    def f(x):
        row = x[np.argmax(x.sum(axis=1))]
        row[0] = 1.0  # in NumPy this writes into x
        return x

    with pytest.raises(numfuse.UnsupportedError, match="traced integer"):
        numfuse.jit(f).graph(X3[0].copy())


def test_a_scalar_argument_index_is_static_and_a_view():
    def f(x, k):
        row = x[k]
        row[0] = 7.0
        return x

    graph = numfuse.jit(f).graph(X3[0].copy(), 2)
    assert not any(e.prim == "gather" for e in graph.eqns)
