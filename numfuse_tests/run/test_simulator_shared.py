"""On the simulator, every thread of a block gets the same static shared array, even when the
threads reach its line at the same moment (the simulator's own lookup has no lock; numfuse's
backend serializes it). The race made block reductions flaky."""

import threading

import pytest

from numfuse.targets.cuda.device import backend


@pytest.mark.skipif(not backend().simulated, reason="the simulator's shared arrays only")
def test_threads_arriving_together_share_one_static_array():
    from numba.cuda.simulator.kernelapi import FakeCUDAShared
    from numba.cuda.types import float32

    for _ in range(20):
        shared = FakeCUDAShared(0)
        start = threading.Barrier(16)
        seen = []

        def thread():
            start.wait()
            seen.append(id(shared.array(64, float32)))

        threads = [threading.Thread(target=thread) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(set(seen)) == 1, f"{len(set(seen))} different arrays for one line"


@pytest.mark.skipif(not backend().simulated, reason="the simulator's shared arrays only")
def test_two_lines_get_two_arrays():
    from numba.cuda.simulator.kernelapi import FakeCUDAShared
    from numba.cuda.types import float32

    shared = FakeCUDAShared(0)
    first = shared.array(8, float32)
    second = shared.array(8, float32)
    assert first is not second
