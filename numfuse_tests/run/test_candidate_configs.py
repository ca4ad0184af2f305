"""Every launch configuration the cost model offers an autotuner (targets/cuda/launch_model.py
`candidate_configs`, for an H200) gives NumPy's answer: blocks of 128 to 1024 threads, more or
fewer rows per block, more or fewer chunks per split row, the shared memory sized for each."""

import numpy as np
import pytest

import numfuse
from numfuse.targets.cuda.device_props import H200
from numfuse.targets.cuda import device
from numfuse.targets.cuda.launch_model import candidate_configs, check_config
from numfuse.targets.cuda import CUDA
from numfuse_tests.helpers import assert_same


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def column_softmax(x):
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


CASES = [
    ("pointwise", lambda x: np.tanh(x * 2.0) + x, (37, 5), "flat"),
    ("pointwise 2d", lambda x: np.tanh(x.T * 2.0) + x[0], (37, 37), "2d"),
    ("rows", lambda x: (x.sum(axis=1), x.argmax(axis=1)), (9, 40), "rows"),
    ("columns", lambda x: (x.max(axis=0), x.argmin(axis=0)), (40, 9), "columns"),
    ("softmax, cached rows", softmax, (5, 40), "rows, cached in_a"),
    ("column softmax, cached", column_softmax, (40, 9), "columns, cached in_a"),
    ("split", lambda x: (x.sum(axis=1), x.argmax(axis=1)), (1, CUDA.split_min_reduced + 8), "rows, split"),
]


def _runs(case):
    name, fn, shape, strategy = case
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    plan = numfuse.jit(fn).plan(x)
    assert [k.nest.strategy for k in plan.kernels] == [strategy]
    nest = plan.kernels[0].nest
    configs = candidate_configs(nest, H200)
    assert len(configs) > 1, configs  # alternatives beyond the default
    return fn, x, nest, configs


@pytest.mark.skipif(not device.backend().simulated, reason="forced launch shapes: simulator only")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_candidate_config_gives_numpys_answer(case, monkeypatch):
    fn, x, nest, configs = _runs(case)
    expected = fn(x)
    for config in configs:
        check_config(nest, config, H200)
        monkeypatch.setattr(device.Backend, "launch_config", lambda self, nest, config=config: config)
        assert_same(numfuse.jit(fn)(x), expected, reduced=max(x.shape)), config


def test_candidates_cover_the_block_sizes_and_variants():
    """Blocks of 128 to 1024 threads where the sizes allow them, and the split variants."""
    _, _, nest, configs = _runs(CASES[-1])
    assert {c.threads for c in configs} >= {128, 256, 512, 1024}
    assert 1 in {c.nsplit for c in configs} and len({c.nsplit for c in configs}) >= 4
    _, _, nest, configs = _runs(next(c for c in CASES if c[0] == "softmax, cached rows"))
    assert all(c.shared_bytes > 0 and c.cache_points == 40 for c in configs)
    _, _, nest, configs = _runs(next(c for c in CASES if c[0] == "pointwise 2d"))
    assert {c.block for c in configs} >= {(64, 2), (64, 4), (64, 8), (64, 16)}  # 37 points a row


def _standardized(x):
    return (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)


def _long_row():
    """One row of float64 longer than the cost model's 40 KiB row cache (5200 points, 41.6 kB)."""
    x = np.random.default_rng(7).standard_normal((1, 5200))
    nest, = [k.nest for k in numfuse.jit(_standardized).plan(x).kernels]
    assert nest.cached and nest.inner_size * 8 > 40 * 1024
    return x, nest


def test_a_row_past_the_cache_is_offered_a_whole_row_cache_where_kernels_opt_in():
    from dataclasses import replace

    x, nest = _long_row()
    assert all(c.shared_bytes <= 48 * 1024 for c in candidate_configs(nest, H200))  # cannot opt in
    optin = replace(H200, shared_optin_usable=True)
    default = candidate_configs(nest, optin)[0]
    assert default.shared_bytes <= 48 * 1024 and default.cache_points < 5200  # the model's own choice
    wide = [c for c in candidate_configs(nest, optin) if c.cache_points == 5200]  # the whole row on chip
    assert {c.threads for c in wide} == {256, 512, 1024}
    assert any(c.shared_bytes > 48 * 1024 for c in wide)  # past what a launch gets without opting in
    for config in wide:
        check_config(nest, config, optin)


@pytest.mark.skipif(not device.backend().simulated, reason="forced launch shapes: simulator only")
def test_whole_row_caches_past_48_kib_give_numpys_answer(monkeypatch):
    from dataclasses import replace

    x, nest = _long_row()
    expected = _standardized(x)
    optin = replace(H200, shared_optin_usable=True)
    wide = [c for c in candidate_configs(nest, optin) if c.cache_points == 5200]
    assert any(c.shared_bytes > 48 * 1024 for c in wide)
    for config in wide:
        monkeypatch.setattr(device.Backend, "launch_config", lambda self, nest, config=config: config)
        assert_same(numfuse.jit(_standardized)(x), expected, reduced=x.shape[1]), config
