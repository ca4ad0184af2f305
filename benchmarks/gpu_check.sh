#!/usr/bin/env bash
# Validate numfuse on a machine with a GPU: bash benchmarks/gpu_check.sh DIR
#
# Needs a Python that already has numba-cuda (with its CUDA toolkit wheels), NumPy, pytest and
# hypothesis; CuPy is used when present. Installs nothing and runs from this source tree:
#   1. the whole test suite, the execution tier on the real GPU  -> DIR/test-log.txt
#   2. the benchmark suite (python -m benchmarks): every workload at 1 MiB and 512 MiB, numfuse
#      against NumPy (CPU), plain CuPy, torch.compile, jax.jit and cupy.fuse, beside a
#      device-to-device copy; peers not reached in 150 s are skipped, and the table says so
#                                                     -> DIR/bench/<date>-<gpu>-<commit>.{json,md,png}
#   3. the differential fuzzer, random programs for 35 s        -> DIR/fuzz-log.txt
#   4. the cost of a cached call (numfuse's host work, the whole call on CuPy arrays, and a
#      two-kernel call launched kernel by kernel and as one CUDA graph)
#                                                               -> DIR/host-overhead.md
#   5. a fresh process's first calls with a cold and a warm disk cache -> DIR/disk-cache.md
# Finishes within 10 minutes (each step has its own time limit).
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
python -c "import numba, numba.cuda as c; print('numba', numba.__version__, '| GPU:', c.get_current_device().name)" 2>&1 | tee "$out/env.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | tee -a "$out/env.txt"

# Every distinct kernel is compiled by NVVM on first use (the execution tier makes a few
# thousand): spread the tests over the machine's cores with pytest-xdist.
timeout 230 python -m numfuse_tests --gpu --jobs "$(nproc)" 2>&1 | tee "$out/test-log.txt"
tests=$?
timeout 180 python -m benchmarks --size both --out "$out/bench" --max-seconds "${NUMFUSE_BENCH_SECONDS:-150}" 2>&1 | tee "$out/bench-log.txt"
bench=$?
# As many random programs as fit in 35 s (each new kernel is compiled by NVVM); a mismatch is
# shrunk (at most 30 s more) and printed as a script.
timeout 70 python -m numfuse_tests.fuzz --gpu --programs 100000 --max-seconds 35 2>&1 | tee "$out/fuzz-log.txt"
fuzz=$?
timeout 40 python -m benchmarks.host_overhead --out "$out/host-overhead.md" 2>&1 | tee "$out/host-overhead-log.txt"
host=$?
timeout 50 python -m benchmarks.disk_cache --out "$out/disk-cache.md" 2>&1 | tee "$out/disk-cache-log.txt"
disk=$?
echo "gpu_check: tests exit $tests, benchmark exit $bench, fuzzer exit $fuzz, host overhead exit $host, disk cache exit $disk; results in $out"
[ "$tests" -eq 0 ] && [ "$bench" -eq 0 ] && [ "$fuzz" -eq 0 ] && [ "$host" -eq 0 ] && [ "$disk" -eq 0 ]
