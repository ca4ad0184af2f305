"""Values stored so that no kernel's code outgrows its budget, and no long scalar computation
runs again at every point (plan/code_size.py): a Python loop that accumulates a scalar is cut
into stretches of one code, and the array that reads the scalar loads it."""

import numpy as np

import numfuse
from numfuse.plan.code_size import LONG_WEIGHT
from numfuse.targets import by_name

TARGET = by_name("cpu")


def go_fast(a):  # npbench's go_fast (from Numba's 5-minute guide)
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def test_a_scalar_accumulated_by_a_loop_is_cut_into_stretches_of_one_code():
    a = np.ones((40, 40))
    jitted = numfuse.jit(go_fast, target="cpu")
    plan = jitted.plan(a)
    per_step = LONG_WEIGHT + 1  # a tanh and an add (the diagonal point is a load)
    steps = TARGET.code_budget // per_step
    assert len(plan.kernels) == -(-40 // steps) + 1
    *stretches, last = plan.kernels
    assert all(k.nest.outer_size == 1 for k in stretches)
    # The array reads the stored scalar: no tanh at its every point.
    assert "tanh" not in str(last.nest) and last.nest.outer_size == 1600
    digests = [s.code_digest for s in jitted.kernel_sources(a)]
    assert len(set(digests[1:-2])) == 1  # the stretches between the first and the tail: one code
    text = str(plan)
    assert f"would compute more than {TARGET.code_budget} operations" in text
    assert "because each of the 1600 points reading it at test_code_size.py:18 would compute its" in text


def test_a_short_scalar_computation_stays_fused():
    plan = numfuse.jit(lambda x: x * np.exp(-x[0, 0]) + np.tanh(x[1, 1]), target="cpu").plan(np.ones((8, 8)))
    assert len(plan.kernels) == 1


def test_a_long_elementwise_chain_is_cut_where_its_code_passes_the_budget():
    def chain(x):
        for _ in range(100):
            x = x * 0.5 + 1.0
        return x

    plan = numfuse.jit(chain, target="cpu").plan(np.ones(1000, np.float32))
    assert [k.nest.outer_size for k in plan.kernels] == [1000] * 2
    assert len(numfuse.jit(chain, target="cpu").plan(np.ones(10, np.float32)).kernels) == 2


def test_past_max_reductions_a_later_phase_reduction_goes_to_a_later_kernel():
    # npbench's azimint_naive: a max, then two sums an iteration over masks that compare with it.
    # In one kernel of several phases they were not cut into runs: 201 accumulators, 24 s of
    # Numba at npt = 100.
    from numfuse_tests.corpus.programs import _azimint_args, azimint_naive

    data, radius, npt = _azimint_args(np.random.default_rng(0), 400, 48)
    jitted = numfuse.jit(azimint_naive, target="cpu", static_argnames="npt")
    plan = jitted.plan(data, radius, npt)
    reductions = [k for k in plan.kernels if k.nest.kind == "reduction"]
    sizes = [len(k.nest.accumulators) for k in reductions]
    first_size = TARGET.max_phased_reductions
    assert sizes == [first_size] + [TARGET.max_reductions] * 4 + [1 + 2 * npt - first_size - 64], sizes
    first, *later = reductions
    assert len(first.nest.phases) == 2 and all(len(k.nest.phases) == 1 for k in later)
    assert all("split because it reads c from #1, written by an earlier kernel" in k.reason for k in later)
    # The later kernels read each iteration's bounds `rmax * i / npt` with i as an argument: one code.
    digests = [s.code_digest for s in jitted.kernel_sources(data, radius, npt)]
    position = {id(k): i for i, k in enumerate(plan.kernels)}
    assert len({digests[position[id(k)]] for k in later[:-1]}) == 1 and len(later) == 5


def test_a_scalar_carried_from_one_step_to_the_next_is_stored_so_the_codes_stay_bounded():
    # npbench's durbin (Levinson-Durbin): `beta *= 1 - alpha * alpha` at each step, where alpha,
    # read by an array, is stored. beta was computed again from its start in every kernel
    # reading it, a chain growing at every step: 89 codes at n = 120 (1,444 kernels and 89
    # codes at npbench's n = 500). Now beta is stored where alpha is, and the kernels repeat.
    from numfuse_tests.corpus.programs import durbin

    jitted = numfuse.jit(durbin, target="cpu")
    codes = {}
    for n in (30, 120):
        r = np.random.default_rng(0).random(n)
        codes[n] = len({s.code_digest for s in jitted.kernel_sources(r)})
    assert codes[30] == codes[120] <= 24, codes
    text = jitted.explain(np.random.default_rng(0).random(12))
    assert "is stored because it leads to the stored scalar of programs.py:1169 and is read again at " \
           "programs.py:1168: carried on so, its computation would grow at every step" in text


def normalized_layer(x, w):
    h = np.maximum((x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-5), 0)
    return (h[:, :, None] * w[None, :, :]).sum(axis=1)  # each output column sums h's row again


def test_a_computed_operand_of_a_sum_of_products_is_stored_not_computed_for_each_sum():
    # A convolution of a normalized input (npbench's resnet: 177 ms a call where NumPy takes
    # 57) computed the normalization again for every output channel reading a point: it is
    # stored once now, and the sums load it.
    x, w = np.random.default_rng(0).random((16, 8)), np.ones((8, 32))
    plan = numfuse.jit(normalized_layer, target="cpu").plan(x, w)
    *before, sums = plan.kernels
    assert "sqrt" not in str(sums.nest) and "sqrt" in "".join(str(k.nest) for k in before)
    assert ("is stored because it is a computed operand of a sum of products at test_code_size.py:97, which "
            "would compute its 7 operations again for each of the 32 sums reading a point") in str(plan)
    # An array made from its indices stays computed where it is read (it reads no memory).
    ramp = numfuse.jit(lambda w: (np.linspace(0, 1, 8)[:, None] * w).sum(axis=0), target="cpu").plan(w)
    assert len(ramp.kernels) == 1


def test_a_sum_of_products_with_an_empty_operand_plans():
    # Found by the fuzzer (seed 3601): an empty operand of a fused product (1 x 0 x 1 x 4 @
    # 1 x 1 x 4 x 4) divided by its size.
    x0, x1 = np.zeros((1, 1, 4, 4)), np.zeros((1, 0, 1, 4), dtype=np.int64)
    plan = numfuse.jit(lambda a, b: b @ a, target="cpu").plan(x0, x1)
    assert all(k.nest.outer_size == 0 for k in plan.kernels)
