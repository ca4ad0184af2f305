"""The launch cost model (targets/cuda/launch_model.py) on an H200's properties, as text: grids, blocks,
shared memory and split chunks for a few kernels at a few sizes; and the device properties it
reads. Nothing runs (and numba is not imported)."""

import numpy as np

import numfuse
from numfuse.targets.cuda.device_props import H200, REDUCTION_RESERVE, SIMULATOR, optin_cache_bytes, row_cache_bytes
from numfuse.targets.cuda.device import read_props
from numfuse.targets.cuda.launch_model import candidate_configs, launch_config
from numfuse.targets.cuda import CUDA


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x):
    m = x.mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(axis=-1, keepdims=True) + 1e-5)


CASES = [
    ("x * 2 + 1", lambda x: x * 2 + 1, [(1000,), (1 << 20,), (1 << 24,)]),
    ("x.T + 1", lambda x: x.T + 1, [(4096, 4096), (1000, 3), (3, 1000), (1000000, 8)]),
    ("x.sum(axis=1)", lambda x: x.sum(axis=1), [(4, 6), (4096, 32), (4096, 4096), (8, 100000)]),
    ("x.sum(axis=0)", lambda x: x.sum(axis=0), [(1024, 4096), (100000, 8), (6, 3)]),
    ("softmax", softmax, [(4096, 1000), (64, 8192), (4, 20000)]),
    ("layer norm", layer_norm, [(4096, 1000)]),
    ("x.sum()", lambda x: x.sum(), [(100000,), (1 << 24,)]),
    ("argmax and var of float64", lambda x: (x.argmax(axis=1), x.var(axis=1), x.argmin(axis=1)), [(4096, 1000)]),
]

EXPECTED = """\
x * 2 + 1 (1000,): flat: grid 4x1, block 256x1
x * 2 + 1 (1048576,): flat: grid 4096x1, block 256x1
x * 2 + 1 (16777216,): flat: grid 4224x1, block 256x1
x.T + 1 (4096, 4096): 2d: grid 1x4096, block 256x1
x.T + 1 (1000, 3): 2d: grid 4x3, block 256x1
x.T + 1 (3, 1000): 2d: grid 1x16, block 4x64
x.T + 1 (1000000, 8): 2d: grid 528x8, block 256x1
x.sum(axis=1) (4, 6): rows: grid 1x1, block 8x4, 128 B shared
x.sum(axis=1) (4096, 32): rows: grid 512x1, block 32x8, 1024 B shared
x.sum(axis=1) (4096, 4096): rows: grid 4096x1, block 256x1, 1024 B shared
x.sum(axis=1) (8, 100000): rows, split: grid 8x66, block 256x1, 1024 B shared
x.sum(axis=0) (1024, 4096): columns: grid 128x1, block 32x8, 1024 B shared
x.sum(axis=0) (100000, 8): columns, split: grid 1x528, block 8x32, 1024 B shared
x.sum(axis=0) (6, 3): columns: grid 1x1, block 4x8, 128 B shared
softmax (4096, 1000): rows, cached in_a: grid 4096x1, block 256x1, 6048 B shared, ncache 1000
softmax (64, 8192): rows, cached in_a: grid 64x1, block 256x1, 34816 B shared, ncache 8192
softmax (4, 20000): rows, cached in_a: grid 4x1, block 256x1, 43008 B shared, ncache 10240
layer norm (4096, 1000): rows, cached in_a: grid 4096x1, block 256x1, 6048 B shared, ncache 1000
x.sum() (100000,): rows, split: grid 1x98, block 256x1, 1024 B shared
x.sum() (16777216,): rows, split: grid 1x528, block 256x1, 1024 B shared
argmax and var of float64 (4096, 1000): rows, cached in_a: grid 4096x1, block 128x1, 14144 B shared, ncache 1000"""


def test_h200_choices():
    lines = []
    for name, fn, shapes in CASES:
        for shape in shapes:
            for kernel in numfuse.jit(fn).plan(np.zeros(shape, np.float64 if "float64" in name else np.float32)).kernels:
                lines.append(f"{name} {shape}: {kernel.nest.strategy}: {launch_config(kernel.nest, H200)}")
    assert "\n".join(lines) == EXPECTED


def test_the_plans_row_cache_is_the_shared_memory_a_block_gets_less_the_reduction_reserve():
    assert CUDA.row_cache_bytes == row_cache_bytes(H200) == 48 * 1024 - REDUCTION_RESERVE == 40 * 1024
    opted_in = H200.__class__(**{**H200.__dict__, "shared_optin_usable": True})
    # The model's cache stays the same where kernels can opt in; autotune's may grow to the rest.
    assert row_cache_bytes(opted_in) == 40 * 1024
    assert optin_cache_bytes(opted_in) == 227 * 1024 - REDUCTION_RESERVE
    assert optin_cache_bytes(H200) == 40 * 1024


def test_where_kernels_can_opt_in_the_models_own_launches_stay_within_48_kib():
    opted_in = H200.__class__(**{**H200.__dict__, "shared_optin_usable": True})
    for shape in ((4096, 1000), (64, 12000), (8, 60000)):
        nest = numfuse.jit(softmax).plan(np.zeros(shape, np.float32)).kernels[0].nest
        assert launch_config(nest, opted_in) == launch_config(nest, H200)
        assert launch_config(nest, opted_in).shared_bytes <= 48 * 1024


def test_the_simulator_launches_tiny_grids():
    nest = numfuse.jit(softmax).plan(np.zeros((4096, 1000), np.float32)).kernels[0].nest
    assert str(launch_config(nest, SIMULATOR)) == "grid 2x1, block 16x1, 4128 B shared, ncache 1000"


def test_candidates_start_with_the_default_and_fit_the_device():
    nest = numfuse.jit(softmax).plan(np.zeros((4096, 1000), np.float32)).kernels[0].nest
    configs = candidate_configs(nest, H200)
    assert configs[0] == launch_config(nest, H200)
    assert [str(c) for c in configs] == [
        "grid 4096x1, block 256x1, 6048 B shared, ncache 1000",
        "grid 4096x1, block 128x1, 5024 B shared, ncache 1000",
        "grid 2112x1, block 512x1, 8096 B shared, ncache 1000",
        "grid 1056x1, block 1024x1, 12192 B shared, ncache 1000",
        "grid 2048x1, block 128x2, 10048 B shared, ncache 1000",
    ]


class _FakeDevice:
    """What numba.cuda's Device answers; an attribute it lacks raises, as an unknown enum does."""

    name = b"NVIDIA H100 80GB HBM3"
    MULTIPROCESSOR_COUNT = 114
    MAX_THREADS_PER_BLOCK = 1024
    MAX_THREADS_PER_MULTIPROCESSOR = 2048
    MAX_BLOCKS_PER_MULTIPROCESSOR = 32
    WARP_SIZE = 32
    MAX_SHARED_MEMORY_PER_BLOCK = 49152
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 232448
    MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 233472

    @property
    def L2_CACHE_SIZE(self):
        raise AttributeError("CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE")


def test_device_properties_are_read_once_with_defaults_for_what_is_missing():
    props = read_props(_FakeDevice())
    assert props.name == "NVIDIA H100 80GB HBM3"
    assert (props.sm_count, props.shared_per_block, props.shared_per_block_optin) == (114, 49152, 232448)
    assert props.l2_bytes == H200.l2_bytes and not props.simulated
    nest = numfuse.jit(lambda x: x * 2).plan(np.zeros(1 << 24, np.float32)).kernels[0].nest
    assert str(launch_config(nest, props)) == "grid 3648x1, block 256x1"  # 114 SMs x 8 x 4 waves
