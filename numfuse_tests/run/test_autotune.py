"""numfuse.jit(autotune=True) (targets/cuda/autotune.py): every candidate configuration gives NumPy's
answer, the winner is stored on disk and reused without timing, in-place updates are applied
once, and a damaged entry is timed again."""

import json

import numpy as np
import pytest

import numfuse
from numfuse.targets.cuda import autotune
from numfuse.targets.cuda.device import backend
from numfuse_tests.helpers import assert_same

RNG = np.random.default_rng(11)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMFUSE_CACHE_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def timed(monkeypatch) -> list:
    """The option lists autotune timed."""
    record = []
    real = autotune.fastest

    def spy(options, prepare, elapsed):
        record.append(list(options))
        return real(options, prepare, elapsed)

    monkeypatch.setattr(autotune, "fastest", spy)
    return record


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# Points each result combines (summation orders differ between configurations).
REDUCED = {"row sum": 40, "column sum": 40, "softmax": 30, "split full sum": 9000, "two kernels": 6}

CASES = {
    "pointwise": (lambda x: np.tanh(x) * 2 + 1, lambda: (RNG.standard_normal((7, 9)).astype(np.float32),)),
    "row sum": (lambda x: x.sum(axis=1), lambda: (RNG.standard_normal((5, 40)).astype(np.float32),)),
    "column sum": (lambda x: x.sum(axis=0), lambda: (RNG.standard_normal((40, 6)),)),
    "softmax": (softmax, lambda: (RNG.standard_normal((6, 30)).astype(np.float32),)),
    "split full sum": (lambda x: x.sum(), lambda: (RNG.standard_normal(9000),)),
    "two kernels": (lambda x: x - x.max(axis=1), lambda: (RNG.standard_normal((6, 6)),)),
}


@pytest.mark.parametrize("case", CASES)
def test_autotuned_results_match_numpy_and_the_winner_is_reused(case, cache, timed):
    fn, make = CASES[case]
    args = make()
    assert_same(numfuse.jit(fn, autotune=True)(*args), fn(*args), REDUCED.get(case, 1))
    assert timed, "nothing was timed"
    entries = sorted((cache / "autotune").glob("*.json"))
    assert len(entries) == len(timed)
    stored = [json.loads(entry.read_text())["winner"] for entry in entries]
    considered = [{"grid": list(c.grid), "block": list(c.block), "shared_bytes": c.shared_bytes,
                   "cache_points": c.cache_points} for options in timed for c in options]
    assert all(winner in considered for winner in stored)
    timed.clear()
    args = make()
    assert_same(numfuse.jit(fn, autotune=True)(*args), fn(*args), REDUCED.get(case, 1))  # from disk
    assert timed == []


@pytest.mark.parametrize("case", ["row sum", "softmax", "split full sum", "pointwise"])
def test_every_candidate_gives_numpys_answer(case, cache, monkeypatch):
    fn, make = CASES[case]
    args = make()
    jf = numfuse.jit(fn)
    nest = jf.plan(*args).kernels[0].nest
    options = autotune.candidates(nest, backend())
    assert len(options) >= 2 and options[0] == backend().launch_config(nest)
    for choice in range(len(options)):
        monkeypatch.setattr(autotune, "fastest", lambda opts, prepare, elapsed, c=choice: (prepare(opts[c])() or opts[c], {}))
        monkeypatch.setattr(autotune, "load", lambda path, opts: None)
        assert_same(numfuse.jit(fn, autotune=True)(*args), fn(*args), REDUCED.get(case, 1))


def test_an_in_place_update_is_applied_once(cache, timed):
    def step(a, b):
        a[1:-1] += b[1:-1]
        return a

    a, b = RNG.standard_normal(12), RNG.standard_normal(12)
    expected = a.copy()
    expected[1:-1] += b[1:-1]
    out = numfuse.jit(step, autotune=True)(a, b)
    assert_same(a, expected)
    assert out is a


def test_a_damaged_entry_is_timed_again(cache, timed):
    fn, make = CASES["row sum"]
    numfuse.jit(fn, autotune=True)(*make())
    entry = next((cache / "autotune").glob("*.json"))
    entry.write_text("{not json")
    timed.clear()
    args = make()
    assert_same(numfuse.jit(fn, autotune=True)(*args), fn(*args), REDUCED["row sum"])
    assert len(timed) == 1
    assert "winner" in json.loads(entry.read_text())


def test_an_alternative_the_device_refuses_is_left_out_and_a_refused_default_raises():
    from numfuse.targets.cuda import autotune
    from numfuse.targets.cuda.device import LaunchConfig

    default, refused, other = (LaunchConfig((1, 1), (t, 1)) for t in (256, 1024, 128))

    def prepare(config):
        def launch():
            if config is refused:
                raise RuntimeError("CUDA_ERROR_INVALID_VALUE")
        return launch

    winner, timings = autotune.fastest([default, refused, other], prepare, autotune.host_elapsed)
    assert winner in (default, other) and set(timings) == {default, other}
    with pytest.raises(RuntimeError, match="INVALID_VALUE"):
        autotune.fastest([refused, default], prepare, autotune.host_elapsed)


def test_the_fastest_configuration_by_the_given_clock_wins_and_only_launches_are_timed():
    """Each configuration is prepared once (compile, load, pack: untimed), launched once to warm
    up, then REPEATS times under the clock; the least time per launch wins."""
    from numfuse.targets.cuda import autotune
    from numfuse.targets.cuda.device import LaunchConfig

    options = [LaunchConfig((1, 1), (t, 1)) for t in (256, 128, 512)]
    cost = {options[0]: 3.0, options[1]: 1.0, options[2]: 2.0}
    prepared, launched = [], []

    def prepare(config):
        prepared.append(config)
        return lambda: launched.append(config)

    def elapsed(launch, times):  # a clock where each launch costs its configuration's cost
        before = len(launched)
        for _ in range(times):
            launch()
        return sum(cost[c] for c in launched[before:])

    winner, timings = autotune.fastest(options, prepare, elapsed)
    assert winner == options[1] and timings == cost
    assert prepared == options and len(launched) == 3 * (1 + autotune.REPEATS)


def test_on_a_gpu_launches_are_timed_between_two_events_on_the_calls_stream():
    from types import SimpleNamespace

    from numfuse.targets.cuda import autotune

    log = []

    class Event:
        def record(self, stream):
            log.append(("record", stream))

        def synchronize(self):
            log.append("wait")

    cuda = SimpleNamespace(event=Event, event_elapsed_time=lambda start, end: 6.0)  # ms
    elapsed = autotune.event_elapsed(cuda, "the call's stream")
    assert elapsed(lambda: log.append("launch"), 3) == pytest.approx(0.006)
    assert log == [("record", "the call's stream"), "launch", "launch", "launch",
                   ("record", "the call's stream"), "wait"]
