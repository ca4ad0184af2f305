"""Updates of disjoint regions share a kernel (plan/horizontal.py), and give NumPy's values: the
borders of a grid, a loop that writes one point per iteration, blocks of an array assembled
from others, and random sequences of region updates, some disjoint and some not. Plans in
detail: trace/test_disjoint_updates.py."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import numfuse
from numfuse_tests.helpers import assert_same


def run_like_numpy(fn, *args):
    """numfuse.jit(fn) on copies of args returns what fn returns and leaves the arrays as fn
    does; the plan, for its kernel count."""
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = fn(*theirs)
    jf = numfuse.jit(fn)
    got = jf(*mine)
    assert_same(got, expected)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if isinstance(a, np.ndarray):
            assert_same(a, b, path=f"argument {i}")
    return jf.plan(*args)


def dirichlet(u):
    u[0, :] = 0.0
    u[-1, :] = 0.0
    u[:, 0] = 1.0
    u[:, -1] = 1.0
    return u


def neumann(u):
    u[0, :] = u[1, :]
    u[-1, :] = u[-2, :]
    u[:, 0] = u[:, 1]
    u[:, -1] = u[:, -2]
    return u


def test_borders_of_a_grid_are_two_kernels():
    rng = np.random.default_rng(1)
    for fn in (dirichlet, neumann):
        plan = run_like_numpy(fn, rng.uniform(-1, 1, (6, 7)))
        # Rows, then columns: the columns' first and last points are the rows' too.
        assert len(plan.kernels) == 2, str(plan)
        assert [len(k.members) for k in plan.kernels] == [2, 2], str(plan)


def test_a_loop_writing_a_point_per_iteration():
    def diagonal(u, s):
        for i in range(u.shape[0]):
            u[i, i] = s * i - u[i, i]
        return u

    plan = run_like_numpy(diagonal, np.random.default_rng(2).uniform(-1, 1, (11, 11)), 0.5)
    assert len(plan.kernels) == 2, str(plan)  # 8 parts, then 3


def test_blocks_assembled_from_other_arrays():
    def assemble(out, a, b, c):
        out[:3, :4] = a * 2.0
        out[3:, :4] = np.sin(b)
        out[:, 4:] = c.T + 1.0
        return out

    rng = np.random.default_rng(3)
    out = np.zeros((5, 6))
    plan = run_like_numpy(assemble, out, rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (2, 4)),
                          rng.uniform(-1, 1, (2, 5)))
    assert len(plan.kernels) == 1, str(plan)


def test_a_true_dependence_keeps_the_order():
    def chained(u):
        u[0] = u[1] + 1.0  # row 0 from row 1
        u[1] = u[0] * 2.0  # row 1 from the new row 0: after the first
        u[3] = u[2] - 1.0  # disjoint from both
        return u

    plan = run_like_numpy(chained, np.random.default_rng(4).uniform(-1, 1, (4, 5)))
    assert len(plan.kernels) == 2, str(plan)


def test_integer_updates_with_a_runtime_check():
    def powers(u, k):
        u[0] = u[0] ** k
        u[-1] = u[-1] + k
        return u

    plan = run_like_numpy(powers, np.arange(12).reshape(3, 4), 3)
    assert len(plan.kernels) == 1, str(plan)
    jf = numfuse.jit(powers)
    with pytest.raises(ValueError, match="negative integer powers"):
        jf(np.arange(12).reshape(3, 4), -1)
    out = np.arange(12).reshape(3, 4)
    jf(out, 2)  # the function is still usable after the error
    assert out[0].tolist() == [0, 1, 4, 9]


def test_a_stencil_time_loop_with_its_borders():
    def heat(u, steps):
        for _ in range(steps):
            u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (
                u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
            u[0, :] = u[1, :]
            u[-1, :] = u[-2, :]
        return u

    plan = run_like_numpy(heat, np.random.default_rng(5).uniform(0, 1, (7, 8)), 3)
    # Each step: the interior's right side into a temporary, the interior, the two rows as one.
    assert len(plan.kernels) == 3 * 3, str(plan)


# -- random sequences of region updates --------------------------------------------------------

N0, N1 = 6, 5


@st.composite
def regions(draw):
    """An index of a (6, 5) array: per axis an int or a slice (steps 1, 2 and -1)."""
    index = []
    for n in (N0, N1):
        if draw(st.booleans()):
            index.append(draw(st.integers(-n, n - 1)))
        else:
            start = draw(st.integers(0, n - 1))
            stop = draw(st.integers(start + 1, n))
            step = draw(st.sampled_from([1, 2, -1]))
            index.append(slice(start, stop, step) if step > 0 else slice(stop - 1, None if start == 0 else start - 1, -1))
    return tuple(index)


def _box(index):
    box = []
    for entry, n in zip(index, (N0, N1)):
        if isinstance(entry, int):
            box.append((entry % n, entry % n))
        else:
            points = range(n)[entry]
            box.append((min(points), max(points)))
    return box


def _apart(first, second) -> bool:
    return any(b1 < a2 or b2 < a1 for (a1, b1), (a2, b2) in zip(_box(first), _box(second)))


@st.composite
def update_programs(draw):
    updates = []
    for _ in range(draw(st.integers(2, 10))):
        dst = draw(regions())
        shape = np.zeros((N0, N1))[dst].shape
        kind = draw(st.sampled_from(["const", "scalar", "other", "self"]))
        src = None
        if kind == "self":  # the array itself at a region of the same shape (one row or column)
            candidates = [r for r in (draw(regions()) for _ in range(8))
                          if np.zeros((N0, N1))[r].shape == shape]
            src = candidates[0] if candidates else None
            kind = "self" if src is not None else "const"
        updates.append((dst, kind, src))
    return updates


def program(updates):
    def f(u, v, s):
        for dst, kind, src in updates:
            if kind == "const":
                u[dst] = 1.5
            elif kind == "scalar":
                u[dst] = s
            elif kind == "other":
                u[dst] = np.sin(v[dst]) + s
            else:
                u[dst] = u[src] * 2.0 + 1.0
        return u

    return f


@settings(max_examples=25, deadline=None)
@given(update_programs(), st.integers(0, 2**31 - 1))
def test_random_region_updates_match_numpy(updates, seed):
    rng = np.random.default_rng(seed)
    u, v = rng.uniform(-1, 1, (N0, N1)), rng.uniform(-1, 1, (N0, N1))
    plan = run_like_numpy(program(updates), u, v, 0.25)
    # Updates whose regions (and what they read) are pairwise apart are one kernel, 8 parts a kernel.
    touched = [[d] + ([s] if s is not None else []) for d, _, s in updates]
    apart = all(
        _apart(a, b) for i in range(len(updates)) for j in range(i) for a in touched[i] for b in touched[j]
        if a is updates[i][0] or b is updates[j][0]
    ) and all(s is None or _apart(d, s) for d, _, s in updates)
    if apart:
        assert len(plan.kernels) == -(-len(updates) // 8), str(plan)
    assert len(plan.kernels) <= 2 * len(updates), str(plan)
