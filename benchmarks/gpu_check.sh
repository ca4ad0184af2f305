#!/usr/bin/env bash
# Validate numfuse on a machine with a GPU: bash benchmarks/gpu_check.sh DIR
#
# Needs a Python that already has numba-cuda (with its CUDA toolkit wheels), NumPy, pytest and
# hypothesis; CuPy is used when present. Installs nothing and runs from this source tree:
#   1. NumPy's bits on the GPU (numfuse_tests/run/test_numpy_loop_bits.py: products NVVM must
#      not fuse, complex products, abs and powers), 40 s at most  -> DIR/bits-log.txt
#      then the whole test suite, the execution tier on the real GPU, spread over the machine's
#      cores (pytest-xdist, else test files shared out among pytest processes), interrupted
#      with a count of what ran if it is not done in 155 s       -> DIR/test-log.txt
#   2. the benchmark suite (python -m benchmarks): every workload at 1 MiB and 512 MiB, numfuse
#      against NumPy (CPU), plain CuPy, torch.compile, jax.jit and cupy.fuse, beside a
#      device-to-device copy, with a cache of its own (first calls compile); peers not reached
#      in NUMFUSE_BENCH_SECONDS (150 s) are skipped, and the table says so
#                                                     -> DIR/bench/<date>-<gpu>-<commit>.{json,md,png}
#   3. the differential fuzzer, random programs for 30 s        -> DIR/fuzz-log.txt
#   4. the cost of a cached call (numfuse's host work, the whole call on CuPy arrays, and a
#      two-kernel call launched kernel by kernel and as one CUDA graph)
#                                                               -> DIR/<date>-gpu-host-overhead.md
#   5. a fresh process's first calls with a cold and a warm disk cache
#                                                               -> DIR/<date>-gpu-disk-cache.md
#   6. plans with library calls: matmul + bias + GELU and a normalized cumsum against CuPy and
#      torch.compile                                            -> DIR/<date>-gpu-library-steps.md
# Items 4 and 5 are named as benchmarks/report.py finds them under benchmarks/results/.
# Finishes within 10 minutes (9 min 45 s at the very most): each step has its own time limit,
# and a step cut short is sent SIGINT first, so that it writes what it measured. Without git (a copied tree), name the
# commit: NUMFUSE_COMMIT=$(git rev-parse --short HEAD) bash benchmarks/gpu_check.sh DIR
set -u -o pipefail
out=${1:?usage: bash benchmarks/gpu_check.sh DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
unset NUMBA_ENABLE_CUDASIM
# Generated kernels go to a fresh cache, so compile times are those of a first run.
NUMFUSE_CACHE_DIR=$(mktemp -d)
export NUMFUSE_CACHE_DIR
python - <<'PY' 2>&1 | tee "$out/env.txt"
import importlib.metadata as m
import numba.cuda as c
names = ("numba", "numba-cuda", "cuda-core", "cuda-bindings", "cupy-cuda12x", "cupy-cuda13x", "torch", "jax", "numpy")
found = []
for name in names:
    try:
        found.append(f"{name} {m.version(name)}")
    except m.PackageNotFoundError:
        pass
print(", ".join(found), "| GPU:", c.get_current_device().name)
PY
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | tee -a "$out/env.txt"

stamp=$(date +%Y-%m-%d)
# First NumPy's bits where only a GPU can show them: products never fused by NVVM (mul.rn),
# complex products, abs and powers, bit for bit (the rest of the suite runs them again).
timeout -s INT -k 5 40 python -m pytest -q -p no:cacheprovider numfuse_tests/run/test_numpy_loop_bits.py 2>&1 | tee "$out/bits-log.txt"
# Every distinct kernel is compiled by NVVM on first use (the execution tier makes a few
# thousand): spread the tests over the machine's cores.
timeout -s INT -k 10 175 python -m numfuse_tests --gpu --jobs "$(nproc)" --max-seconds 155 2>&1 | tee "$out/test-log.txt"
tests=$?
NUMFUSE_CACHE_DIR=$(mktemp -d) timeout -s INT -k 10 150 python -m benchmarks --size both --out "$out/bench" \
    --max-seconds "${NUMFUSE_BENCH_SECONDS:-120}" 2>&1 | tee "$out/bench-log.txt"
bench=$?
# As many random programs as fit in 30 s (each new kernel is compiled by NVVM); a mismatch is
# shrunk (at most 30 s more) and printed as a script.
timeout -s INT -k 5 60 python -m numfuse_tests.fuzz --gpu --programs 100000 --max-seconds 30 2>&1 | tee "$out/fuzz-log.txt"
fuzz=$?
timeout -s INT -k 5 35 python -m benchmarks.host_overhead --out "$out/$stamp-gpu-host-overhead.md" 2>&1 | tee "$out/host-overhead-log.txt"
host=$?
timeout -s INT -k 5 45 python -m benchmarks.disk_cache --out "$out/$stamp-gpu-disk-cache.md" 2>&1 | tee "$out/disk-cache-log.txt"
disk=$?
# Plans with library calls (matmul + bias + GELU, a normalized cumsum) against CuPy and torch.compile.
timeout -s INT -k 5 60 python -m benchmarks.library_steps --out "$out/$stamp-gpu-library-steps.md" 2>&1 | tee "$out/library-steps-log.txt"
library=$?
# Host and device memory over 100,000 cached calls on CuPy arrays: flat, or a leak.
timeout -s INT -k 5 60 python -m benchmarks.memory_flat --target cuda --calls 100000 --out "$out/$stamp-gpu-memory-flat.md" 2>&1 | tee "$out/memory-flat-log.txt"
memory=$?
echo "gpu_check: tests exit $tests, benchmark exit $bench, fuzzer exit $fuzz, host overhead exit $host, disk cache exit $disk, library steps exit $library, memory exit $memory; results in $out"
[ "$tests" -eq 0 ] && [ "$bench" -eq 0 ] && [ "$fuzz" -eq 0 ] && [ "$host" -eq 0 ] && [ "$disk" -eq 0 ] && [ "$library" -eq 0 ] && [ "$memory" -eq 0 ]
