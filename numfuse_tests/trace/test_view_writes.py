"""Writing through views, and concatenations, at trace time: the update each write becomes (its
`at` map composed through the views), what NumPy copies instead, what is refused, and the
kernel counts and reasons of their plans. Values: run/test_view_writes.py."""

import re

import numpy as np
import pytest

import numfuse
from numfuse.ir import format_graph
from numfuse_tests.helpers import with_offsets

X = np.zeros((4, 6), np.float32)
SQUARE = np.zeros((4, 4), np.float32)


def graph_text(fn, *args):
    return format_graph(numfuse.jit(fn).graph(*args), with_locs=False)


def updates(fn, *args):
    """The `update[...]` part of every update equation of fn's graph."""
    return re.findall(r"update\[at=\[.*?\] shape=\(.*?\)\]", graph_text(fn, *args))


def v32(*shape):
    return np.zeros(shape, np.float32)


# Each write of the issue: the update it becomes (the region's axes are i0, i1, ...).
WRITES = [
    ("a.T[0] = v", lambda a, v: a.T.__setitem__(0, v), X, v32(4), "update[at=[i0, 0] shape=(4,)]"),
    ("a.T[1:, :] += 1", None, X, None, "update[at=[i1, i0 + 1] shape=(5,4)]"),
    ("a.reshape(4, 6)[1] = v", lambda a, v: a.reshape(4, 6).__setitem__(1, v), v32(24), v32(6),
     "update[at=[i0 + 6] shape=(6,)]"),
    ("a.reshape(2, 12)[:, ::5] = v", lambda a, v: a.reshape(2, 12).__setitem__((slice(None), slice(None, None, 5)), v),
     X, v32(2, 3), "update[at=[(5*i1 + 12*i0) // 6, (5*i1 + 12*i0) % 6] shape=(2,3)]"),
    ("a[:, None][2] = v", lambda a, v: a[:, None].__setitem__(2, v), X, v32(6), "update[at=[2, i1] shape=(1,6)]"),
    ("np.moveaxis(a, 0, -1)[..., 1] = v", lambda a, v: np.moveaxis(a, 0, -1).__setitem__((Ellipsis, 1), v), X, v32(6),
     "update[at=[1, i0] shape=(6,)]"),
    ("a.ravel()[3:7] = v", lambda a, v: a.ravel().__setitem__(slice(3, 7), v), X, v32(4),
     "update[at=[(i0 + 3) // 6, (i0 + 3) % 6] shape=(4,)]"),
    ("a[::2].T[1] = v", lambda a, v: a[::2].T.__setitem__(1, v), X, v32(2), "update[at=[2*i0, 1] shape=(2,)]"),
    ("np.swapaxes(a, 0, 1)[::-2, 1:3] = v", lambda a, v: np.swapaxes(a, 0, 1).__setitem__((slice(None, None, -2), slice(1, 3)), v),
     X, v32(3, 2), "update[at=[i1 + 1, -2*i0 + 5] shape=(3,2)]"),
    ("np.squeeze(a[:, None])[1:3] = v", lambda a, v: np.squeeze(a[:, None]).__setitem__(slice(1, 3), v), X, v32(2, 6),
     "update[at=[i0 + 1, i1] shape=(2,6)]"),
    ("np.expand_dims(a, 0)[0, :, 2] = v", lambda a, v: np.expand_dims(a, 0).__setitem__((0, slice(None), 2), v), X, v32(4),
     "update[at=[i0, 2] shape=(4,)]"),
]


def _plus_one_through_transpose(a):
    a.T[1:, :] += 1


@pytest.mark.parametrize("case", WRITES, ids=lambda c: c[0])
def test_a_write_through_views_is_one_update_of_the_argument_in_one_kernel(case):
    _, write, a, v, expected = case
    if write is None:
        fn, args = _plus_one_through_transpose, (a,)
    else:
        def fn(a, v):
            write(a, v)
        args = (a, v)
    assert updates(fn, *args) == [expected]
    graph = numfuse.jit(fn).graph(*args)
    assert list(graph.writebacks) == [0]  # the caller's array gets the new values
    plan = numfuse.jit(fn).plan(*args)
    assert len(plan.kernels) == 1 and plan.kernels[0].spec.update is not None, str(plan)
    assert plan.bytes_moved == plan.min_bytes


def test_a_chained_write_binds_no_view_equations():
    def f(a, v):
        a[::2].T[1] = v

    assert graph_text(f, X, v32(2)) == (
        "{ lambda a:f32[4,6] b:f32[2] .\n"
        "  let c:f32[4,6] = update[at=[2*i0, 1] shape=(2,)] a b\n"
        "  in ()  writes a<-c }"
    )


def test_the_store_goes_through_the_composed_map():
    def f(a, v):
        a.T[::2, 1:] = v

    nest = numfuse.jit(f).plan(X, v32(3, 3)).kernels[0].nest
    assert "store out_c[i1 + 1, 2*i0] = v0" in with_offsets(nest), str(nest)


def test_a_right_side_that_reads_the_array_elsewhere_goes_through_a_temporary():
    def shift(a):
        a.T[1:] = a.T[:-1] * 2

    plan = numfuse.jit(shift).plan(SQUARE)
    assert len(plan.kernels) == 2, str(plan)
    assert "a temporary: the right side of e reads the array it writes at other points" in plan.kernels[0].reason
    assert "store out_e[i1, i0 + 1] = v0" in with_offsets(plan.kernels[1].nest)


def test_a_right_side_that_reads_only_the_points_it_writes_needs_no_temporary():
    def f(a, b):
        np.moveaxis(a, 0, 1)[2:] *= b.T[2:]
        a.reshape(-1)[::5] += 1.0

    plan = numfuse.jit(f).plan(X, X)
    assert len(plan.kernels) == 2 and all(k.spec.update is not None for k in plan.kernels), str(plan)
    assert not any("temporary" in k.reason for k in plan.kernels)


def test_augmented_assignment_through_a_view_writes_once():
    """`v[i] += 1` is `t = v[i]; t += 1; v[i] = t`: the last store would write what is there."""
    def f(a):
        a.T[2] += 1.0
        np.expand_dims(a, 1)[1:3] *= 2.0

    assert updates(f, X) == ["update[at=[i0, 2] shape=(4,)]", "update[at=[i0 + 1, i2] shape=(2,1,6)]"]


def test_writes_into_local_arrays_and_their_views():
    def f(x):
        y = x * 2.0
        y.T[0] = 1.0
        z = y.reshape(2, 12)
        z[1, ::3] = 5.0
        return y

    graph = graph_text(f, X)
    assert "writes" not in graph  # x is not written
    assert "update[at=[i0, 0] shape=(4,)] c 1.0:f32" in graph
    assert "update[at=[(3*i0 + 12) // 6, (3*i0 + 12) % 6] shape=(4,)] d 5.0:f32" in graph
    assert len(numfuse.jit(f).plan(X).kernels) == 3


# -- what NumPy copies, written as NumPy writes it: into the copy --------------------------------


@pytest.mark.parametrize(
    "write, layout, writes_argument",
    [
        ("a.reshape(-1)[0] = 5", "C", True),
        ("a.T.reshape(-1)[0] = 5", "C", False),  # x.T is not C-contiguous: reshape copies
        ("a[:, ::2].reshape(-1)[1] = 5", "C", True),  # rows of 3 with step 2: still one stride
        ("a[:, :3].reshape(-1)[1] = 5", "C", False),
        ("a[:, 0].reshape(-1)[1] = 5", "C", True),
        ("a[:, 0].ravel()[1] = 5", "C", False),  # ravel is a view only of a C-contiguous array
        ("a.ravel()[1] = 5", "F", False),
        ("a.T.ravel()[1] = 5", "F", True),
        ("a.reshape(6, 4)[1] = 5", "F", False),
        ("a.T.reshape(3, 2, 4)[1] = 5", "F", True),  # splits the contiguous axis
        ("a.flatten()[1] = 5", "C", False),
        ("a.reshape(-1)[1] = 5", "steps", False),
        ("a.reshape(2, 2, 6)[1] = 5", "steps", True),
    ],
)
def test_numpy_decides_whether_the_write_reaches_the_argument(write, layout, writes_argument):
    def arg():
        base = np.zeros((8, 6), np.float32)
        return {"C": base[:4], "F": np.asfortranarray(base[:4]), "steps": base[::2]}[layout]

    namespace = {"np": np}
    exec(f"def f(a):\n    {write}\n", namespace)
    f = namespace["f"]
    probe = arg()
    f(probe)
    assert bool(probe.any()) == writes_argument  # NumPy's own answer
    graph = numfuse.jit(f).graph(arg())
    assert bool(graph.writebacks) == writes_argument, format_graph(graph)


def test_a_strided_layout_and_its_strides_are_in_the_signature():
    base = np.zeros((8, 6), np.float32)

    def f(a):
        return a.reshape(-1) * 2

    jf = numfuse.jit(f)
    first = jf.plan(base[::2])
    assert jf.plan(np.ones((8, 6), np.float32)[::2]) is first  # the same strides: the same trace
    assert jf.plan(base[:, ::2][:4]) is not first  # another stride pattern: another trace (NumPy copies it)
    assert len(jf._cache) == 2


class StridedDeviceArray:
    """A device array of an unknown library, neither C- nor Fortran-contiguous."""

    def __init__(self, shape=(4, 6)):
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": "<f4", "strides": (48, 4), "data": (0, False), "version": 3,
        }


def test_a_reshape_whose_copying_depends_on_unknown_strides_is_refused_only_where_it_matters():
    x = StridedDeviceArray()
    assert len(numfuse.jit(lambda a: a.reshape(-1) * 2).plan(x).kernels) == 1  # read: the same either way

    def write(a):
        a.reshape(2, 12)[0] = 1.0

    with pytest.raises(numfuse.UnsupportedError, match="writing through a reshape of an array whose memory layout numfuse does not trace"):
        numfuse.jit(write).graph(x)

    def read_after_write(a):
        r = a.reshape(-1)
        a[0] = 1.0
        return r * 2

    with pytest.raises(numfuse.UnsupportedError, match="reading a reshape of an array whose memory layout numfuse does not trace"):
        numfuse.jit(read_after_write).graph(x)

    def transposed(a):  # a transpose is a view whatever the strides
        a.T[0] = 1.0
        np.expand_dims(a, 0)[0, 1] = 2.0  # so is a reshape that only adds a size-one axis

    assert len(updates(transposed, x)) == 2


def test_writes_numpy_refuses_are_refused_with_numpys_errors():
    def broadcast(a):
        np.broadcast_to(a[0], (3, 6)).T[0] = 1.0

    with pytest.raises(ValueError, match="assignment destination is read-only"):
        numfuse.jit(broadcast).graph(X)
    readonly = X.copy()
    readonly.flags.writeable = False

    def through_transpose(a):
        a.T[0] = 1.0

    with pytest.raises(ValueError, match="assignment destination is read-only"):
        numfuse.jit(through_transpose).graph(readonly)

    def wrong_shape(a):
        a.T[0] = np.ones(6, np.float32)

    with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(6,\) into shape \(4,\)"):
        numfuse.jit(wrong_shape).graph(X)


def test_ravel_in_memory_order_of_an_array_neither_c_nor_fortran_contiguous_is_refused():
    with pytest.raises(numfuse.UnsupportedError, match=r"ravel\(order='K'\) of an array neither C- nor Fortran-"):
        numfuse.jit(lambda a: a[:, ::2].ravel(order="K"), graph_breaks=False).graph(X)
    graph = numfuse.jit(lambda a: a.ravel(order="K")).graph(X)  # C-contiguous: the same as 'C'
    assert graph.eqns[-1].prim == "reshape"
    # Fortran-contiguous, or order='F': the reversed axes' C order (a view of a Fortran array)
    for order, x in (("K", np.asfortranarray(X)), ("A", np.asfortranarray(X)), ("F", X)):
        graph = numfuse.jit(lambda a: a.ravel(order=order)).graph(x)
        assert [e.prim for e in graph.eqns[-2:]] == ["transpose", "reshape"], order


def test_a_copy_of_an_updated_array_is_its_own_array():
    def f(x):
        x[0] = 1.0
        y = x.copy()
        y[1] = 5.0
        return x, y

    graph = graph_text(f, X)
    assert "update[at=[1, i0] shape=(6,)] c 5.0:f32" in graph  # c: y's own copy
    assert "writes a<-b" in graph
    assert len(numfuse.jit(f).plan(X).kernels) == 3


# -- concatenate and stack ------------------------------------------------------------------------


def test_concatenate_is_one_value_fused_with_producers_and_consumers():
    def f(x, y):
        return np.concatenate([x, y * 2.0], axis=1) + 1.0

    assert graph_text(f, v32(3, 4), v32(3, 2)) == (
        "{ lambda a:f32[3,4] b:f32[3,2] .\n"
        "  let c:f32[3,2] = multiply b 2.0:f32\n"
        "      d:f32[3,6] = concatenate[axis=1] a c\n"
        "      e:f32[3,6] = add d 1.0:f32\n"
        "  in (e) }"
    )
    plan = numfuse.jit(f).plan(v32(3, 4), v32(3, 2))
    assert len(plan.kernels) == 1 and plan.bytes_moved == plan.min_bytes
    assert plan.kernels[0].name == "nf_pw_concatenate_multiply_add"
    assert with_offsets(plan.kernels[0].nest).splitlines()[5:] == [
        "      if i1 < 4:",
        "        v0 = load in_a[i0, i1]",
        "        v3:f32 = v0",
        "      else:",
        "        v1 = load in_b[i0, i1 - 4]",
        "        v2:f32 = multiply v1 const0",
        "        v3:f32 = v2",
        "      v4:f32 = add v3 1.0:f32",
        "      store out_e[i0, i1] = v4",
    ]


def test_stack_is_a_concatenation_of_size_one_views():
    graph = graph_text(lambda x, y: np.stack([x, y], axis=-1), X, X.copy())
    assert "c:f32[4,6,1] = reshape[shape=(4,6,1)] a" in graph
    assert "e:f32[4,6,2] = concatenate[axis=2] c d" in graph


def test_a_reduction_of_a_concatenation_is_one_kernel_and_its_branch_loads_are_not_cached():
    def softmax_of_joined(x, y):
        z = np.concatenate([x, y], axis=1)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    plan = numfuse.jit(softmax_of_joined).plan(v32(3, 4), v32(3, 5))
    assert len(plan.kernels) == 1, str(plan)
    assert plan.kernels[0].nest.cached == ()  # each branch loads its operand at some points only
    plan = numfuse.jit(lambda x, y: np.stack([x, y]).sum(axis=0)).plan(X, X)
    assert len(plan.kernels) == 1


def test_a_constant_index_along_the_axis_reads_one_operand():
    nest = numfuse.jit(lambda x, y: np.concatenate([x, y])[5] * 2.0).plan(X, v32(3, 6)).kernels[0].nest
    assert "if" not in str(nest) and "load in_b[1, i0]" in with_offsets(nest), str(nest)


def test_empty_operands_are_left_out_and_the_axis_keeps_its_own_loop():
    nest = numfuse.jit(lambda x, y: np.concatenate([x[:0], x, y[:0]], axis=0)).plan(X, X).kernels[0].nest
    assert "if" not in str(nest)
    nest = numfuse.jit(lambda x, y: np.concatenate([x, y], axis=1)).plan(X, X).kernels[0].nest
    assert [d.size for d in nest.outer] == [4, 12]  # the branch's axis is not merged with i0


def test_many_operands_make_one_kernel():
    f = numfuse.jit(lambda x: np.concatenate([x * k for k in range(40)]))
    assert len(f.plan(X).kernels) == 1
    assert "nf_pw_concatenate_multiply" in f.kernel_sources(X)[0].source


def test_writing_into_a_concatenation_writes_a_new_array():
    def f(x, y):
        z = np.concatenate([x, y])
        z.T[0] = 1.0
        return z, x

    graph = numfuse.jit(f).graph(X, X)
    assert not graph.writebacks
    assert len(numfuse.jit(f).plan(X, X).kernels) == 2


def test_what_a_numpy_scalars_view_methods_return_is_a_new_array():
    def f(x):
        s = x.sum()
        r = s.reshape(-1)
        r[0] = 5.0
        np.expand_dims(s, 0)[0] = 7.0
        return s, r

    graph = numfuse.jit(f).graph(X)
    assert [o.aval.shape for o in graph.outputs] == [(), (1,)]
    assert graph.outputs[0] is graph.eqns[0].out  # the sum itself, never written

    def g(x):
        np.broadcast_to(x.max(), (3,))[0] = 1.0

    with pytest.raises(ValueError, match="read-only"):
        numfuse.jit(g).graph(X)
