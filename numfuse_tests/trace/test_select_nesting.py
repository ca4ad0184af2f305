"""Values stored so that no kernel nests selects too deeply (plan/select_nesting.py): time loops
of np.roll stencils plan a kernel every step or two, of one code, not one kernel whose code
grows by a factor at every step."""

import numpy as np

import numfuse
from numfuse.plan.select_nesting import MAX_NESTED_SELECTS
from numfuse_tests.programs import jacobi_roll as jacobi, life


def euler(y, steps):
    for _ in range(steps):  # rows of the last step: fixed indices, no select
        y = y + 0.001 * np.array([10 * (y[1] - y[0]), y[0] * (28 - y[2]) - y[1], y[0] * y[1] - 2.5 * y[2]])
    return y


def test_a_roll_stencils_time_loop_is_a_kernel_every_two_steps_of_one_code():
    u = np.zeros((16, 16))
    assert MAX_NESTED_SELECTS == 2
    plans = {}
    for steps, kernels in ((1, 1), (2, 1), (3, 2), (6, 3), (9, 5)):  # (fewer steps first: without
        plans[steps] = numfuse.jit(jacobi, static_argnums=1).plan(u, steps)  # the rule, 9 plan for ever)
        assert len(plans[steps].kernels) == kernels, steps
    digests = [s.code_digest for s in numfuse.jit(jacobi, static_argnums=1).kernel_sources(u, 9)]
    assert len(set(digests[:-1])) == 1 and digests[-1] != digests[0]  # one code for two steps; the last: one
    biggest = max(len(str(k.nest)) for k in plans[9].kernels)
    assert biggest < 1.05 * max(len(str(k.nest)) for k in plans[2].kernels)  # (longer buffer names)
    assert "is stored because reading it through the concatenation at programs.py:187 would nest " \
           "more than 2 selects" in str(plans[3])


def test_a_game_of_life_step_is_one_kernel_and_each_step_another():
    board = np.zeros((8, 8), bool)
    assert len(numfuse.jit(life, static_argnums=1).plan(board, 1).kernels) == 1  # rolls of rolls: 2 deep
    assert len(numfuse.jit(life, static_argnums=1).plan(board, 4).kernels) == 4


def test_rows_of_the_last_step_read_at_fixed_indices_nest_no_select():
    assert len(numfuse.jit(euler, static_argnums=1).plan(np.zeros((3, 50)), 4).kernels) == 1
    # Longer, the code budget (plan/code_size.py) cuts it, never the selects.
    plan = numfuse.jit(euler, static_argnums=1).plan(np.zeros((3, 50)), 12)
    assert "selects" not in str(plan) and "more than 128 operations" in str(plan)


def test_one_roll_of_a_computed_value_stays_fused():
    plan = numfuse.jit(lambda x: np.roll(np.sin(x) * 2, 1) + np.roll(np.roll(x, 1, 0) + 1, 2, 1)).plan(np.zeros((4, 5)))
    assert len(plan.kernels) == 1
