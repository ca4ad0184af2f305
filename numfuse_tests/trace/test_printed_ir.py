"""The printed forms: the traced graph (jaxpr-like) and the loop nest of planned kernels.

Whole strings are compared. Graphs are printed without source-line comments except in one test,
which computes the expected line numbers from the function's own source position.
"""

import inspect
import os

import numpy as np
import pytest

import numfuse
from numfuse.ir import format_graph

F32 = np.float32


def graph_text(fn, *args) -> str:
    return format_graph(numfuse.jit(fn).graph(*args), with_locs=False)


# -- graphs --------------------------------------------------------------------------------------


def test_elementwise_chain_with_literals():
    def chain(x):
        return np.sqrt(x * 2.0 + 1) - 3

    # Python literals are weak: they take the array's float32, printed as typed literals.
    assert graph_text(chain, np.ones((4, 5), F32)) == (
        "{ lambda a:f32[4,5] .\n"
        "  let b:f32[4,5] = multiply a 2.0:f32\n"
        "      c:f32[4,5] = add b 1.0:f32\n"
        "      d:f32[4,5] = sqrt c\n"
        "      e:f32[4,5] = subtract d 3.0:f32\n"
        "  in (e) }"
    )


def test_reductions_with_keepdims():
    def reds(x):
        return x.max(axis=1, keepdims=True), x.sum(axis=(0, 2), keepdims=True), x.min(axis=-1)

    assert graph_text(reds, np.ones((2, 3, 4))) == (
        "{ lambda a:f64[2,3,4] .\n"
        "  let b:f64[2,1,4] = reduce_max[axes=(1,) keepdims=True] a\n"
        "      c:f64[1,3,1] = reduce_sum[axes=(0,2) keepdims=True] a\n"
        "      d:f64[2,3] = reduce_min[axes=(2,) keepdims=False] a\n"
        "  in (b, c, d) }"
    )


def test_a_sum_that_casts_its_input_says_numpys_buffers():
    # np.mean of ints casts in the reduction, in NumPy's buffers; an astype before a sum
    # is an array of its own, summed whole
    def sums(x):
        return np.mean(x, axis=1), x.astype(np.float64).sum(axis=1)

    assert graph_text(sums, np.ones((2, 3), np.int64)) == (
        "{ lambda a:i64[2,3] .\n"
        "  let b:f64[2,3] = convert[dtype=f64] a\n"
        "      c:f64[2] = reduce_sum[axes=(1,) keepdims=False buffered=8192] b\n"
        "      d:f64[2] = divide c count(3.0):f64\n"
        "      e:f64[2] = reduce_sum[axes=(1,) keepdims=False] b\n"
        "  in (d, e) }"
    )
    nest = numfuse.jit(lambda x: np.mean(x, axis=1), target="cpu").plan(np.ones((2, 3), np.int64)).kernels[0].nest
    assert "acc0:f64 = 0.0 (add, in NumPy's buffers of 8192)" in str(nest)


def test_broadcast():
    def scale(x, v):
        return x * v

    assert graph_text(scale, np.ones((4, 5), F32), np.ones((4, 1), F32)) == (
        "{ lambda a:f32[4,5] b:f32[4,1] .\n"
        "  let c:f32[4,5] = broadcast[shape=(4,5)] b\n"
        "      d:f32[4,5] = multiply a c\n"
        "  in (d) }"
    )


def test_convert_from_promotion():
    def add(a, b):
        return a + b

    # int16 + uint16 computes in int32: both operands are converted first.
    assert graph_text(add, np.ones(3, np.int16), np.ones(3, np.uint16)) == (
        "{ lambda a:i16[3] b:u16[3] .\n"
        "  let c:i32[3] = convert[dtype=i32] a\n"
        "      d:i32[3] = convert[dtype=i32] b\n"
        "      e:i32[3] = add c d\n"
        "  in (e) }"
    )


def test_convert_before_broadcast_and_mean_of_ints():
    def f(a, v):
        return a + v, a.mean(axis=0)

    assert graph_text(f, np.ones((3, 4), np.int32), np.ones(4, F32)) == (
        "{ lambda a:i32[3,4] b:f32[4] .\n"
        "  let c:f64[3,4] = convert[dtype=f64] a\n"
        "      d:f64[4] = convert[dtype=f64] b\n"
        "      e:f64[3,4] = broadcast[shape=(3,4)] d\n"
        "      f:f64[3,4] = add c e\n"
        "      g:f64[4] = reduce_sum[axes=(0,) keepdims=False buffered=8192] c\n"
        "      h:f64[4] = divide g count(3.0):f64\n"
        "  in (f, h) }"
    )


def test_transpose():
    def f(x, y):
        return x.T - y

    assert graph_text(f, np.ones((4, 5), F32), np.ones((5, 4), F32)) == (
        "{ lambda a:f32[4,5] b:f32[5,4] .\n"
        "  let c:f32[5,4] = transpose[perm=(1,0)] a\n"
        "      d:f32[5,4] = subtract c b\n"
        "  in (d) }"
    )


def test_python_scalar_argument_is_a_weak_input():
    def f(x, s):
        return x * s

    # A Python int argument is a 0-d i64 input, converted to the array's int8 (NEP 50).
    assert graph_text(f, np.ones(3, np.int8), 2) == (
        "{ lambda a:i8[3] b:i64[] .\n"
        "  let c:i8[] = convert[dtype=i8] b\n"
        "      d:i8[3] = broadcast[shape=(3,)] c\n"
        "      e:i8[3] = multiply a d\n"
        "  in (e) }"
    )


def test_readme_example_graph_with_source_lines():
    def f(x, y):
        z = np.exp(x) * y + 1.0
        return z, z.sum(axis=1)

    first = inspect.getsourcelines(f)[1]
    here = os.path.basename(__file__)
    x = np.ones((4, 5), F32)
    text = str(numfuse.jit(f).graph(x, x.copy()))
    assert text == (
        "{ lambda a:f32[4,5] b:f32[4,5] .\n"
        f"  let c:f32[4,5] = exp a                                 # {here}:{first + 1}\n"
        f"      d:f32[4,5] = multiply c b                          # {here}:{first + 1}\n"
        f"      e:f32[4,5] = add d 1.0:f32                         # {here}:{first + 1}\n"
        f"      f:f32[4] = reduce_sum[axes=(1,) keepdims=False] e  # {here}:{first + 2}\n"
        "  in (e, f) }"
    )


# -- loop nests ----------------------------------------------------------------------------------


def test_readme_example_loop_nest():
    def f(x, y):
        z = np.exp(x) * y + 1.0
        return z, z.sum(axis=1)

    x = np.ones((4, 5), F32)
    plan = numfuse.jit(f).plan(x, x.copy())
    assert len(plan.kernels) == 1
    assert str(plan.kernels[0].nest) == (
        "kernel nf_red_exp_multiply_add_sum  reduction[rows]\n"
        "  in  in_a:f32[4,5]  in_b:f32[4,5]\n"
        "  out out_e:f32[4,5]  out_f:f32[4]\n"
        "  for o0 < no0:  (no0=4)\n"
        "    acc0:f32 = 0.0 (add)\n"
        "    for r0 < nr0:  (nr0=5)\n"
        "      v0 = load in_a[o0, r0]\n"
        "      v1:f32 = exp v0\n"
        "      v2 = load in_b[o0, r0]\n"
        "      v3:f32 = multiply v1 v2\n"
        "      v4:f32 = add v3 1.0:f32\n"
        "      acc0 = add acc0 v4\n"
        "      store out_e[o0, r0] = v4\n"
        "    store out_f[o0] = acc0"
    )


def test_broadcast_add_loop_nest():
    def f(x, v):
        return x + v

    plan = numfuse.jit(f).plan(np.ones((4, 5), F32), np.ones(5, F32))
    assert len(plan.kernels) == 1
    assert str(plan.kernels[0].nest) == (
        "kernel nf_pw_add  pointwise[2d]\n"
        "  in  in_a:f32[4,5]  in_b:f32[5]\n"
        "  out out_d:f32[4,5]\n"
        "  for i0 < n0:  (n0=4)\n"
        "    for i1 < n1:  (n1=5)\n"
        "      v0 = load in_a[i0, i1]\n"
        "      v1 = load in_b[i1]\n"
        "      v2:f32 = add v0 v1\n"
        "      store out_d[i0, i1] = v2"
    )


def test_contiguous_elementwise_loop_nest_is_flat():
    def f(x):
        return np.sqrt(x * 2.0 + 1) - 3

    plan = numfuse.jit(f).plan(np.ones((4, 5), F32))
    assert str(plan.kernels[0].nest) == (
        "kernel nf_pw_multiply_add_sqrt_subtract  pointwise[flat]\n"
        "  in  in_a:f32[20]  const0:f32=2.0  const1:f32=3.0\n"
        "  out out_e:f32[20]\n"
        "  for i0 < n0:  (n0=20)\n"
        "    v0 = load in_a[i0]\n"
        "    v1:f32 = multiply v0 const0\n"
        "    v2:f32 = add v1 1.0:f32\n"
        "    v3:f32 = sqrt v2\n"
        "    v4:f32 = subtract v3 const1\n"
        "    store out_e[i0] = v4"
    )


def test_transposed_loop_nest_indexes_the_input_transposed():
    def f(x, y):
        return x.T - y

    plan = numfuse.jit(f).plan(np.ones((4, 5), F32), np.ones((5, 4), F32))
    assert str(plan.kernels[0].nest) == (
        "kernel nf_pw_subtract  pointwise[2d]\n"
        "  in  in_a:f32[4,5]  in_b:f32[5,4]\n"
        "  out out_d:f32[5,4]\n"
        "  for i0 < n0:  (n0=5)\n"
        "    for i1 < n1:  (n1=4)\n"
        "      v0 = load in_a[i1, i0]\n"
        "      v1 = load in_b[i0, i1]\n"
        "      v2:f32 = subtract v0 v1\n"
        "      store out_d[i0, i1] = v2"
    )


def test_epilogue_loop_nest():
    def f(x, w):
        return np.sqrt((x * x).sum(axis=1)) * w

    plan = numfuse.jit(f).plan(np.ones((4, 6), F32), np.ones(4, F32))
    assert str(plan.kernels[0].nest) == (
        "kernel nf_red_multiply_sum_sqrt  reduction[rows]\n"
        "  in  in_a:f32[4,6]  in_b:f32[4]\n"
        "  out out_f:f32[4]\n"
        "  for o0 < no0:  (no0=4)\n"
        "    acc0:f32 = 0.0 (add)\n"
        "    for r0 < nr0:  (nr0=6)\n"
        "      v0 = load in_a[o0, r0]\n"
        "      v1:f32 = multiply v0 v0\n"
        "      acc0 = add acc0 v1\n"
        "    v2:f32 = sqrt acc0\n"
        "    v3 = load in_b[o0]\n"
        "    v4:f32 = multiply v2 v3\n"
        "    store out_f[o0] = v4"
    )


def test_explain_holds_graph_plan_and_loop_nest():
    def f(x, y):
        z = np.exp(x) * y + 1.0
        return z, z.sum(axis=1)

    x = np.ones((4, 5), F32)
    jf = numfuse.jit(f)
    text = jf.explain(x, x.copy())
    assert text.startswith("numfuse.jit(f) for (x: f32[4,5], y: f32[4,5])\n\n== graph\n")
    assert str(jf.graph(x, x.copy())) in text
    assert "== plan: 1 kernel(s), 256 bytes moved, minimum 256 (1.00x)" in text
    nest = "\n".join("     " + line for line in str(jf.plan(x, x.copy()).kernels[0].nest).splitlines())
    assert nest in text


def test_check_graph_rederives_every_aval_from_the_registry():
    import dataclasses

    from numfuse.ir import Aval, Var, check_graph
    from numfuse.ir.primitives import PRIMITIVES, abstract_eval

    x = np.ones((3, 4), np.float32)
    graph = numfuse.jit(lambda x: (np.exp(x) @ x.T).sum(axis=1)[np.array([0, 2])]).graph(x)
    check_graph(graph, abstract_eval)  # as the tracer does for every graph
    for k, eqn in enumerate(graph.eqns):
        wrong = Var(Aval(eqn.out.aval.shape, np.dtype(np.int8 if eqn.out.aval.dtype != np.int8 else np.int16)))
        broken = dataclasses.replace(graph, eqns=graph.eqns[:k] + [dataclasses.replace(eqn, out=wrong)])
        with pytest.raises(AssertionError, match="the rule gives"):
            check_graph(broken, abstract_eval)
    kinds = {p.kind for p in PRIMITIVES.values()}
    assert kinds == {"elementwise", "reduction", "scan", "view", "convert", "concatenate", "update", "gather", "iota",
                     "library"}


def test_the_kernel_spec_handed_to_lowering_prints_readably():
    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    plan = numfuse.jit(softmax).plan(np.ones((4, 5), np.float32))
    assert [k.spec.format(plan.names) for k in plan.kernels] == ["\n".join([
        "kernel spec #0 reduction over [4,5], reducing axes 1",
        "  phase 0: b = reduce_max a",
        "  phase 1: f = reduce_sum e",
        "  stores from a last pass: h",
    ])]


def test_lowering_hands_collapse_statements_over_domain_axes_readably():
    """The handoff between lowering and loop collapsing (loops/evaluated.py): statements indexed
    by the domain's axes d0, d1, with the offsets still constants; collapse turns the axes into
    loops and lifts the constants into kernel arguments."""

    def g(x, y):
        return (x[:, ::-1] + y[1:]).T * 2.0

    kernel, = numfuse.jit(g).plan(np.ones((4, 5), np.float32), np.ones((5, 5), np.float32)).kernels
    assert kernel.evaluated.format() == "\n".join([
        "evaluated nf_pw_add_multiply  pointwise over [5,4]",
        "  in  in_a:f32[4,5]  in_b:f32[5,5]",
        "  out out_g:f32[5,4]",
        "  scalars const0",
        "  phase 0:",
        "    v0 = load in_a[d1, -d0 + 4]",
        "    v1 = load in_b[d1 + 1, d0]",
        "    v2:f32 = add v0 v1",
        "    v3:f32 = multiply v2 const0",
        "    store out_g[d0, d1] = v3",
    ])
    assert str(kernel.nest).splitlines()[2:] == [
        "  out out_g:f32[5,4]",
        "  for i0 < n0:  (n0=5)",
        "    for i1 < n1:  (n1=4)",
        "      v0 = load in_a[i1, -i0 + off0]",
        "      v1 = load in_b[i1 + off1, i0]",
        "      v2:f32 = add v0 v1",
        "      v3:f32 = multiply v2 const0",
        "      store out_g[i0, i1] = v3",
    ]


def test_a_reduction_hands_collapse_its_phases():
    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    kernel, = numfuse.jit(softmax).plan(np.ones((4, 5), np.float32)).kernels
    text = kernel.evaluated.format().splitlines()
    assert text[0] == "evaluated nf_red_max_subtract_exp_sum_divide  reduction over [4,5], reducing d1"
    assert [line for line in text if line.startswith("  phase")] == ["  phase 0:", "  phase 1:", "  phase 2:"]
    assert "    acc1 = add acc1 v3" in text and "    store out_h[d0, d1] = v7" in text
