"""numpy_fallback.MeasuredChoice: which calls it times, what it chooses, what it prints (a
clock that each run advances by a given time: no real timing)."""

import pytest

from numfuse import numpy_fallback
from numfuse.numpy_fallback import DECISIVE, MARGIN, ROUNDS, MeasuredChoice


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def runner(clock, seconds, name, log):
    def run():
        log.append(name)
        clock.now += seconds
        return name

    return run


def calls(fused_s, plain_s, n):
    clock = Clock()
    choice = MeasuredChoice(clock=clock)
    log = []
    results = [choice.call(runner(clock, fused_s, "fused", log), runner(clock, plain_s, "plain", log))
               for _ in range(n)]
    assert results == log  # each call runs exactly one of them, and returns what it returned
    return choice, log


def test_the_first_call_is_untimed_then_they_take_turns_then_the_plain_function_wins():
    choice, log = calls(0.030, 0.010, 2 * ROUNDS + 4)  # 3x: not decisive, ROUNDS rounds
    assert log[:2 * ROUNDS + 1] == ["fused"] + ["fused", "plain"] * ROUNDS
    assert log[2 * ROUNDS + 1:] == ["plain"] * 3
    assert choice.chosen == "numpy" and choice.runs_numpy
    assert choice.fused == pytest.approx([0.03] * ROUNDS) and choice.plain == pytest.approx([0.01] * ROUNDS)
    assert str(choice) == ("numfuse or NumPy: runs as the plain function on NumPy, measured faster: numfuse's call "
                           f"took 30 ms, the plain function on NumPy 10 ms (best of {ROUNDS} each)")


def test_a_decisive_difference_decides_after_one_round():
    choice, log = calls(0.400, 0.001, 5)  # 400x
    assert log == ["fused", "fused", "plain", "plain", "plain"]
    assert str(choice) == ("numfuse or NumPy: runs as the plain function on NumPy, measured faster: numfuse's call "
                           "took 400 ms, the plain function on NumPy 1 ms (one call each)")
    choice, log = calls(0.001, 0.400, 5)
    assert log == ["fused", "fused", "plain", "fused", "fused"] and choice.chosen == "numfuse"
    assert DECISIVE > MARGIN


def test_a_close_call_stays_with_numfuse():
    plain = 0.010
    choice, log = calls(plain * MARGIN * 0.99, plain, 2 * ROUNDS + 3)
    assert choice.chosen == "numfuse" and not choice.runs_numpy
    assert log[2 * ROUNDS + 1:] == ["fused"] * 2
    assert str(choice).startswith("numfuse or NumPy: runs numfuse's plan: numfuse's call took 12.4 ms")


def test_numfuse_faster_is_kept():
    choice, log = calls(0.001, 0.050, 2 * ROUNDS + 2)
    assert choice.chosen == "numfuse" and log[-1] == "fused"


def test_undecided_says_how_it_decides():
    choice, _ = calls(0.02, 0.01, 2)
    assert choice.chosen is None
    assert str(choice) == (f"numfuse or NumPy: undecided (1 + 0 timed so far); calls 2 to {2 * ROUNDS + 1} of this "
                           "signature take turns with the plain function on NumPy, and the faster runs from then on")


def test_a_call_that_raises_records_no_time():
    clock = Clock()
    choice = MeasuredChoice(clock=clock)
    choice.call(lambda: None, lambda: None)

    def fails():
        raise ValueError("the user's")

    with pytest.raises(ValueError, match="the user's"):
        choice.call(fails, lambda: None)
    assert choice.fused == [] and choice.chosen is None


@pytest.mark.parametrize("option, env, expected", [
    (None, None, True), (None, "0", False), (None, "off", False), (None, "1", True),
    (True, "0", True), (False, None, False),
])
def test_the_option_then_the_environment_decide(monkeypatch, option, env, expected):
    if env is None:
        monkeypatch.delenv("NUMFUSE_NUMPY_FALLBACK", raising=False)
    else:
        monkeypatch.setenv("NUMFUSE_NUMPY_FALLBACK", env)
    assert numpy_fallback.enabled(option) is expected


def test_device_arrays_and_unreal_times_make_no_choice(monkeypatch):
    monkeypatch.delenv("NUMFUSE_NUMPY_FALLBACK", raising=False)
    import numpy as np

    class Real:
        def times_are_real(self):
            return True

    class Simulated:
        def times_are_real(self):
            return False

    class DeviceArray:
        __cuda_array_interface__ = {}

    host = [np.zeros(3), 2.0, np.float32(1)]
    assert numpy_fallback.applies(None, host, Real())
    assert not numpy_fallback.applies(None, host, Simulated())
    assert not numpy_fallback.applies(None, host + [DeviceArray()], Real())
    assert not numpy_fallback.applies(False, host, Real())
