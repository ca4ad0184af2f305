"""Float constants of a formula are kernel arguments (loops/lower.py, Lowerer._constant), as sizes
are: the kernels of a Python loop whose coefficients change from one iteration to the next are
one compiled code, not one code per iteration."""

import numpy as np

import numfuse

F32 = np.float32


def DCT(frame, orthonormal=True):
    # ddbourgin/numpy-ml, numpy_ml/preprocessing/dsp.py, verbatim: an O(N^2) loop whose every
    # step multiplies by its own cosine.
    N = len(frame)
    out = np.zeros_like(frame)
    for k in range(N):
        for (n, xn) in enumerate(frame):
            out[k] += xn * np.cos(np.pi * k * (2 * n + 1) / (2 * N))
        scale = np.sqrt(1 / (4 * N)) if k == 0 else np.sqrt(1 / (2 * N))
        out[k] *= 2 * scale if orthonormal else 2
    return out


def test_the_kernels_of_a_loop_over_coefficients_are_a_few_codes_at_any_length():
    codes = {}
    for n in (8, 16, 48):
        sources = numfuse.jit(DCT, target="cuda").kernel_sources(np.ones(n, F32))
        codes[n] = {s.code_digest for s in sources}
        assert len(sources) >= n  # a kernel (or two) for each k: each with its own cosines
    # (Before, every kernel but the first was a code of its own: 96 codes at n = 48.) At 48 the
    # code budget splits each k's chain in two, which adds the codes of the two halves.
    assert len(codes[8]) == len(codes[16]) == 3 and len(codes[48]) <= 6


def forced_diffusion(u, steps):
    for n in range(steps):
        u = u + 0.01 * np.sin(0.7 * n * 0.01) * (np.roll(u, 1) - u)
    return u


def test_a_time_loop_whose_forcing_changes_every_step_is_one_code():
    sources = numfuse.jit(forced_diffusion, static_argnums=1, target="cpu").kernel_sources(np.ones(64), 6)
    values = [p.value.item() for s in sources for p in s.params if p.name.startswith("const")]
    assert len({s.code_digest for s in sources[1:]}) == 1  # (step 0's sine is 0: in the code)
    assert len(set(values)) > len(sources)  # the forcing of every step, as arguments


def test_the_constants_are_listed_with_their_values_and_printed_as_arguments():
    def f(x):
        return np.sqrt(x * 0.1 + 1) - 3

    jitted = numfuse.jit(f, target="cuda")
    nest = str(jitted.plan(np.ones(20, F32)).kernels[0].nest)
    assert "in  in_a:f32[20]  const0:f32=0.10000000149011612  const1:f32=3.0\n" in nest
    assert "multiply v0 const0\n" in nest and "add v1 1.0:f32\n" in nest and "subtract v3 const1\n" in nest
    assert "   constants as arguments: const0=0.10000000149011612, const1=3.0 (one code for other values)" \
        in jitted.explain(np.ones(20, F32))


def test_zero_one_non_finite_values_and_exponents_stay_in_the_code_other_values_are_arguments():
    def f(x):
        return np.where(x > 0, x * 1.0 - x ** 3.0 + x ** 0.3, np.inf) + np.maximum(x, -0.0) * -1.0 - x * 0.5 / 2.0

    nest = str(numfuse.jit(f, target="cpu").plan(np.ones(20)).kernels[0].nest)
    for kept in ("1.0:f64", "3.0:f64", "0.3:f64", "inf:f64", "-0.0:f64", "-1.0:f64"):
        assert kept in nest, kept
    # Powers of two are arguments too: a loop's `x * i` is one at 7 of 100 values of i.
    assert "const0:f64=0.5  const1:f64=2.0" in nest and "0.5:f64" not in nest and "2.0:f64" not in nest


def test_equal_constants_are_one_argument_each_so_the_code_never_depends_on_which_are_equal():
    def f(x, y):
        return x * 0.1 + y * 0.1

    nest = numfuse.jit(f, target="cpu").plan(np.ones(8), np.ones(8)).kernels[0].nest
    assert [(c.name, c.value.item()) for c in nest.counts if c.coefficient] == [("const0", 0.1), ("const1", 0.1)]


def test_integer_constants_are_arguments_but_divisors_and_shifts_stay_in_the_code():
    # mandelbrot1 (npbench) records the iteration `N[abs(Z) < horizon] = n`: one code for every n
    def f(x):
        return (x * 3 + 7) // 5 + (x % 6) + (x >> 2)

    nest = numfuse.jit(f, target="cpu").plan(np.ones(8, np.int64)).kernels[0].nest
    assert [(c.name, c.value.item()) for c in nest.counts if c.coefficient] == [("const0", 3), ("const1", 7)]
    for kept in ("floor_divide v2 5:i64", "remainder v0 6:i64", "right_shift v0 2:i64"):
        assert kept in str(nest), kept


def test_complex_and_bool_constants_stay_in_the_code():
    def f(z, b):
        return z * (0.3 + 0.1j), b & True

    for kernel in numfuse.jit(f, target="cpu").plan(np.ones(8, np.complex128), np.ones(8, bool)).kernels:
        assert not any(c.coefficient for c in kernel.nest.counts)
