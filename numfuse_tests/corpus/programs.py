"""Real NumPy programs written by other people, run through numfuse as a new user would.

Most come from npbench (https://github.com/spcl/npbench, BSD-3-Clause License, Copyright (c)
2021, SPCL / ETH Zurich and the NPBench authors; some kernels carry their own upstream notices,
repeated below). Each kernel is the NumPy version `npbench/benchmarks/**/<name>_numpy.py` copied
unchanged, except:
  - npbench names most polybench kernels `kernel`; here each is renamed after its benchmark so
    they can share one module (and mandelbrot1/2, and channel_flow's own `build_up_b`);
  - helpers that several benchmarks copy identically (relu, conv2d, softmax) appear once.
`make_args(rng)` ports the benchmark's `initialize` (npbench/benchmarks/**/<name>.py) to tiny
sizes (the CUDA simulator is slow), with the argument order of bench_info/<name>.json.

A few transformer layers from picoGPT (MIT) are in picogpt.py and registered at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import picogpt

NPBENCH = "github.com/spcl/npbench (BSD-3-Clause, Copyright (c) 2021 SPCL, ETH Zurich and the NPBench authors)"


@dataclass(frozen=True)
class Program:
    name: str
    fn: Callable
    make_args: Callable  # rng -> tuple of arguments
    source: str  # repository and file it was copied from
    static_argnames: tuple = ()
    reduced: int = 1  # terms combined per result, for numfuse_tests.helpers.tolerance
    # (rtol, atol) for np.testing.assert_allclose instead of the reduction-sized tolerance: for
    # factorizations and recurrences whose rounding differences are amplified step by step.
    tol: tuple | None = None
    notes: str = ""


PROGRAMS: list[Program] = []


def register(name, fn, make_args, path, **kw):
    source = kw.pop("source", None) or f"{NPBENCH}: {path}"
    PROGRAMS.append(Program(name, fn, make_args, source, **kw))


# =============================================================================================
# npbench/benchmarks/azimint_hist/azimint_hist_numpy.py
# Copyright 2014 Jérôme Kieffer et al. (Creative Commons Attribution License, CC-BY 3.0)
# Jérôme Kieffer and Giannis Ashiotis. Pyfai: a python library for high performance azimuthal
# integration on gpu, 2014. In Proceedings of the 7th European Conference on Python in Science.


def azimint_hist(data, radius, npt):
    histu = np.histogram(radius, npt)[0]
    histw = np.histogram(radius, npt, weights=data)[0]
    return histw / histu


def _azimint_args(rng, N=200, npt=10):
    data, radius = rng.random((N, )), rng.random((N, ))
    return data, radius, npt


register("azimint_hist", azimint_hist, _azimint_args, "npbench/benchmarks/azimint_hist/azimint_hist_numpy.py",
         reduced=200)


# =============================================================================================
# npbench/benchmarks/azimint_naive/azimint_naive_numpy.py  (same notice as azimint_hist)


def azimint_naive(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
        values_r12 = data[mask_r12]
        res[i] = values_r12.mean()
    return res


register("azimint_naive", azimint_naive, lambda rng: _azimint_args(rng, 200, 5),
         "npbench/benchmarks/azimint_naive/azimint_naive_numpy.py", reduced=200)


# =============================================================================================
# npbench/benchmarks/cavity_flow/cavity_flow_numpy.py
# Barba, Lorena A., and Forsyth, Gilbert F. (2018). CFD Python: the 12 steps to Navier-Stokes
# equations. Journal of Open Source Education, 1(9), 21, https://doi.org/10.21105/jose.00021
# (c) 2017 Lorena A. Barba, Gilbert F. Forsyth. Content CC-BY 4.0, code BSD-3 clause.


def build_up_b(b, rho, dt, u, v, dx, dy):

    b[1:-1,
      1:-1] = (rho * (1 / dt * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx) +
                                (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) -
                      ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx))**2 - 2 *
                      ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) *
                       (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx)) -
                      ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))**2))


def pressure_poisson(nit, p, dx, dy, b):
    pn = np.empty_like(p)
    pn = p.copy()

    for q in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2 +
                          (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2) /
                         (2 * (dx**2 + dy**2)) - dx**2 * dy**2 /
                         (2 * (dx**2 + dy**2)) * b[1:-1, 1:-1])

        p[:, -1] = p[:, -2]  # dp/dx = 0 at x = 2
        p[0, :] = p[1, :]  # dp/dy = 0 at y = 0
        p[:, 0] = p[:, 1]  # dp/dx = 0 at x = 0
        p[-1, :] = 0  # p = 0 at y = 2


def cavity_flow(nx, ny, nt, nit, u, v, dt, dx, dy, p, rho, nu):
    un = np.empty_like(u)
    vn = np.empty_like(v)
    b = np.zeros((ny, nx))

    for n in range(nt):
        un = u.copy()
        vn = v.copy()

        build_up_b(b, rho, dt, u, v, dx, dy)
        pressure_poisson(nit, p, dx, dy, b)

        u[1:-1,
          1:-1] = (un[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx *
                   (un[1:-1, 1:-1] - un[1:-1, 0:-2]) -
                   vn[1:-1, 1:-1] * dt / dy *
                   (un[1:-1, 1:-1] - un[0:-2, 1:-1]) - dt / (2 * rho * dx) *
                   (p[1:-1, 2:] - p[1:-1, 0:-2]) + nu *
                   (dt / dx**2 *
                    (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2]) +
                    dt / dy**2 *
                    (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])))

        v[1:-1,
          1:-1] = (vn[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx *
                   (vn[1:-1, 1:-1] - vn[1:-1, 0:-2]) -
                   vn[1:-1, 1:-1] * dt / dy *
                   (vn[1:-1, 1:-1] - vn[0:-2, 1:-1]) - dt / (2 * rho * dy) *
                   (p[2:, 1:-1] - p[0:-2, 1:-1]) + nu *
                   (dt / dx**2 *
                    (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2]) +
                    dt / dy**2 *
                    (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])))

        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1  # set velocity on cavity lid equal to 1
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0


def _flow_init(ny, nx, p_fill):
    u = np.zeros((ny, nx), dtype=np.float64)
    v = np.zeros((ny, nx), dtype=np.float64)
    p = np.full((ny, nx), p_fill, dtype=np.float64)
    dx = 2 / (nx - 1)
    dy = 2 / (ny - 1)
    dt = .1 / ((nx - 1) * (ny - 1))
    return u, v, p, dx, dy, dt


def _cavity_args(rng, ny=8, nx=8, nt=3, nit=4, rho=1.0, nu=0.1):
    u, v, p, dx, dy, dt = _flow_init(ny, nx, 0.0)
    return nx, ny, nt, nit, u, v, dt, dx, dy, p, rho, nu


register("cavity_flow", cavity_flow, _cavity_args, "npbench/benchmarks/cavity_flow/cavity_flow_numpy.py",
         reduced=64)


# =============================================================================================
# npbench/benchmarks/channel_flow/channel_flow_numpy.py (same notice as cavity_flow)
# (its build_up_b is renamed build_up_b_channel: cavity_flow's differs)


def build_up_b_channel(rho, dt, dx, dy, u, v):
    b = np.zeros_like(u)
    b[1:-1,
      1:-1] = (rho * (1 / dt * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx) +
                                (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) -
                      ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx))**2 - 2 *
                      ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) *
                       (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx)) -
                      ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))**2))

    # Periodic BC Pressure @ x = 2
    b[1:-1, -1] = (rho * (1 / dt * ((u[1:-1, 0] - u[1:-1, -2]) / (2 * dx) +
                                    (v[2:, -1] - v[0:-2, -1]) / (2 * dy)) -
                          ((u[1:-1, 0] - u[1:-1, -2]) / (2 * dx))**2 - 2 *
                          ((u[2:, -1] - u[0:-2, -1]) / (2 * dy) *
                           (v[1:-1, 0] - v[1:-1, -2]) / (2 * dx)) -
                          ((v[2:, -1] - v[0:-2, -1]) / (2 * dy))**2))

    # Periodic BC Pressure @ x = 0
    b[1:-1, 0] = (rho * (1 / dt * ((u[1:-1, 1] - u[1:-1, -1]) / (2 * dx) +
                                   (v[2:, 0] - v[0:-2, 0]) / (2 * dy)) -
                         ((u[1:-1, 1] - u[1:-1, -1]) / (2 * dx))**2 - 2 *
                         ((u[2:, 0] - u[0:-2, 0]) / (2 * dy) *
                          (v[1:-1, 1] - v[1:-1, -1]) /
                          (2 * dx)) - ((v[2:, 0] - v[0:-2, 0]) / (2 * dy))**2))

    return b


def pressure_poisson_periodic(nit, p, dx, dy, b):
    pn = np.empty_like(p)

    for q in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2 +
                          (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2) /
                         (2 * (dx**2 + dy**2)) - dx**2 * dy**2 /
                         (2 * (dx**2 + dy**2)) * b[1:-1, 1:-1])

        # Periodic BC Pressure @ x = 2
        p[1:-1, -1] = (((pn[1:-1, 0] + pn[1:-1, -2]) * dy**2 +
                        (pn[2:, -1] + pn[0:-2, -1]) * dx**2) /
                       (2 * (dx**2 + dy**2)) - dx**2 * dy**2 /
                       (2 * (dx**2 + dy**2)) * b[1:-1, -1])

        # Periodic BC Pressure @ x = 0
        p[1:-1,
          0] = (((pn[1:-1, 1] + pn[1:-1, -1]) * dy**2 +
                 (pn[2:, 0] + pn[0:-2, 0]) * dx**2) / (2 * (dx**2 + dy**2)) -
                dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, 0])

        # Wall boundary conditions, pressure
        p[-1, :] = p[-2, :]  # dp/dy = 0 at y = 2
        p[0, :] = p[1, :]  # dp/dy = 0 at y = 0


def channel_flow(nit, u, v, dt, dx, dy, p, rho, nu, F):
    udiff = 1
    stepcount = 0

    while udiff > .001:
        un = u.copy()
        vn = v.copy()

        b = build_up_b_channel(rho, dt, dx, dy, u, v)
        pressure_poisson_periodic(nit, p, dx, dy, b)

        u[1:-1,
          1:-1] = (un[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx *
                   (un[1:-1, 1:-1] - un[1:-1, 0:-2]) -
                   vn[1:-1, 1:-1] * dt / dy *
                   (un[1:-1, 1:-1] - un[0:-2, 1:-1]) - dt / (2 * rho * dx) *
                   (p[1:-1, 2:] - p[1:-1, 0:-2]) + nu *
                   (dt / dx**2 *
                    (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2]) +
                    dt / dy**2 *
                    (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])) +
                   F * dt)

        v[1:-1,
          1:-1] = (vn[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx *
                   (vn[1:-1, 1:-1] - vn[1:-1, 0:-2]) -
                   vn[1:-1, 1:-1] * dt / dy *
                   (vn[1:-1, 1:-1] - vn[0:-2, 1:-1]) - dt / (2 * rho * dy) *
                   (p[2:, 1:-1] - p[0:-2, 1:-1]) + nu *
                   (dt / dx**2 *
                    (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2]) +
                    dt / dy**2 *
                    (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])))

        # Periodic BC u @ x = 2
        u[1:-1, -1] = (
            un[1:-1, -1] - un[1:-1, -1] * dt / dx *
            (un[1:-1, -1] - un[1:-1, -2]) - vn[1:-1, -1] * dt / dy *
            (un[1:-1, -1] - un[0:-2, -1]) - dt / (2 * rho * dx) *
            (p[1:-1, 0] - p[1:-1, -2]) + nu *
            (dt / dx**2 *
             (un[1:-1, 0] - 2 * un[1:-1, -1] + un[1:-1, -2]) + dt / dy**2 *
             (un[2:, -1] - 2 * un[1:-1, -1] + un[0:-2, -1])) + F * dt)

        # Periodic BC u @ x = 0
        u[1:-1,
          0] = (un[1:-1, 0] - un[1:-1, 0] * dt / dx *
                (un[1:-1, 0] - un[1:-1, -1]) - vn[1:-1, 0] * dt / dy *
                (un[1:-1, 0] - un[0:-2, 0]) - dt / (2 * rho * dx) *
                (p[1:-1, 1] - p[1:-1, -1]) + nu *
                (dt / dx**2 *
                 (un[1:-1, 1] - 2 * un[1:-1, 0] + un[1:-1, -1]) + dt / dy**2 *
                 (un[2:, 0] - 2 * un[1:-1, 0] + un[0:-2, 0])) + F * dt)

        # Periodic BC v @ x = 2
        v[1:-1, -1] = (
            vn[1:-1, -1] - un[1:-1, -1] * dt / dx *
            (vn[1:-1, -1] - vn[1:-1, -2]) - vn[1:-1, -1] * dt / dy *
            (vn[1:-1, -1] - vn[0:-2, -1]) - dt / (2 * rho * dy) *
            (p[2:, -1] - p[0:-2, -1]) + nu *
            (dt / dx**2 *
             (vn[1:-1, 0] - 2 * vn[1:-1, -1] + vn[1:-1, -2]) + dt / dy**2 *
             (vn[2:, -1] - 2 * vn[1:-1, -1] + vn[0:-2, -1])))

        # Periodic BC v @ x = 0
        v[1:-1,
          0] = (vn[1:-1, 0] - un[1:-1, 0] * dt / dx *
                (vn[1:-1, 0] - vn[1:-1, -1]) - vn[1:-1, 0] * dt / dy *
                (vn[1:-1, 0] - vn[0:-2, 0]) - dt / (2 * rho * dy) *
                (p[2:, 0] - p[0:-2, 0]) + nu *
                (dt / dx**2 *
                 (vn[1:-1, 1] - 2 * vn[1:-1, 0] + vn[1:-1, -1]) + dt / dy**2 *
                 (vn[2:, 0] - 2 * vn[1:-1, 0] + vn[0:-2, 0])))

        # Wall BC: u,v = 0 @ y = 0,2
        u[0, :] = 0
        u[-1, :] = 0
        v[0, :] = 0
        v[-1, :] = 0

        udiff = (np.sum(u) - np.sum(un)) / np.sum(u)
        stepcount += 1

    return stepcount


def _channel_args(rng, ny=6, nx=6, nit=3, rho=1.0, nu=2.0, F=1.0, dt_scale=8):
    # The while loop runs until the flow is steady: with npbench's nu=0.1 that takes 695
    # iterations here (4 minutes on the CUDA simulator); a more viscous fluid and a longer time
    # step reach it in 32.
    u, v, p, dx, dy, dt = _flow_init(ny, nx, 1.0)
    return nit, u, v, dt * dt_scale, dx, dy, p, rho, nu, F


register("channel_flow", channel_flow, _channel_args, "npbench/benchmarks/channel_flow/channel_flow_numpy.py",
         reduced=64)


# =============================================================================================
# npbench/benchmarks/compute/compute_numpy.py
# https://cython.readthedocs.io/en/latest/src/userguide/numpy_tutorial.html


def compute(array_1, array_2, a, b, c):
    return np.clip(array_1, 2, 10) * a + array_2 * b + c


def _compute_args(rng, M=20, N=30):
    array_1 = rng.uniform(0, 1000, size=(M, N)).astype(np.int64)
    array_2 = rng.uniform(0, 1000, size=(M, N)).astype(np.int64)
    a = np.int64(4)
    b = np.int64(3)
    c = np.int64(9)
    return array_1, array_2, a, b, c


register("compute", compute, _compute_args, "npbench/benchmarks/compute/compute_numpy.py")


# =============================================================================================
# npbench/benchmarks/contour_integral/contour_integral_numpy.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def contour_integral(NR, NM, slab_per_bc, Ham, int_pts, Y):
    P0 = np.zeros((NR, NM), dtype=np.complex128)
    P1 = np.zeros((NR, NM), dtype=np.complex128)
    for z in int_pts:
        Tz = np.zeros((NR, NR), dtype=np.complex128)
        for n in range(slab_per_bc + 1):
            zz = np.power(z, slab_per_bc / 2 - n)
            Tz += zz * Ham[n]
        if NR == NM:
            X = np.linalg.inv(Tz)
        else:
            X = np.linalg.solve(Tz, Y)
        if abs(z) < 1.0:
            X = -X
        P0 += X
        P1 += z * X

    return P0, P1


def _rng_complex(shape, rng):
    return (rng.random(shape) + rng.random(shape) * 1j)


def _contour_args(rng, NR=4, NM=6, slab_per_bc=2, num_int_pts=4):
    Ham = _rng_complex((slab_per_bc + 1, NR, NR), rng)
    int_pts = _rng_complex((num_int_pts, ), rng)
    Y = _rng_complex((NR, NM), rng)
    return NR, NM, slab_per_bc, Ham, int_pts, Y


register("contour_integral", contour_integral, _contour_args,
         "npbench/benchmarks/contour_integral/contour_integral_numpy.py", tol=(1e-9, 1e-9),
         notes="solve of a random complex 4x4 system: rounding amplified by its condition number",
         static_argnames=("NR", "NM", "slab_per_bc"))


# =============================================================================================
# npbench/benchmarks/crc16/crc16_numpy.py
# Adapted from https://gist.github.com/oysstu/68072c44c02879a2abf94ef350d1c7c6


def crc16(data, poly=0x8408):
    '''
    CRC-16-CCITT Algorithm
    '''
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = (~crc & 0xFFFF)
    crc = (crc << 8) | ((crc >> 8) & 0xFF)

    return crc & 0xFFFF


register("crc16", crc16, lambda rng: (rng.integers(0, 256, size=(16, ), dtype=np.uint8),),
         "npbench/benchmarks/crc16/crc16_numpy.py")


# =============================================================================================
# npbench/benchmarks/deep_learning/conv2d_bias/conv2d_numpy.py (conv2d is identical in
# lenet_numpy.py and resnet_numpy.py; relu and softmax identical in lenet/mlp/resnet/softmax)


def relu(x):
    return np.maximum(x, 0)


# Deep learning convolutional operator (stride = 1)
def conv2d(input, weights):
    K = weights.shape[0]  # Assuming square kernel
    N = input.shape[0]
    H_out = input.shape[1] - K + 1
    W_out = input.shape[2] - K + 1
    C_out = weights.shape[3]
    output = np.empty((N, H_out, W_out, C_out), dtype=np.float32)

    # Loop structure adapted from https://github.com/SkalskiP/ILearnDeepLearning.py/blob/ba0b5ba589d4e656141995e8d1a06d44db6ce58d/01_mysteries_of_neural_networks/06_numpy_convolutional_neural_net/src/layers/convolutional.py#L88
    for i in range(H_out):
        for j in range(W_out):
            output[:, i, j, :] = np.sum(
                input[:, i:i + K, j:j + K, :, np.newaxis] *
                weights[np.newaxis, :, :, :],
                axis=(1, 2, 3),
            )

    return output


def conv2d_bias(input, weights, bias):
    return conv2d(input, weights) + bias


def _conv2d_args(rng, C_in=2, C_out=3, H=6, K=3, N=2, W=6):
    # NHWC data layout
    input = rng.random((N, H, W, C_in), dtype=np.float32)
    # Weights
    weights = rng.random((K, K, C_in, C_out), dtype=np.float32)
    bias = rng.random((C_out, ), dtype=np.float32)
    return input, weights, bias


register("conv2d_bias", conv2d_bias, _conv2d_args, "npbench/benchmarks/deep_learning/conv2d_bias/conv2d_numpy.py",
         reduced=18)


# =============================================================================================
# npbench/benchmarks/deep_learning/lenet/lenet_numpy.py


# 2x2 maxpool operator, as used in LeNet-5
def maxpool2d(x):
    output = np.empty(
        [x.shape[0], x.shape[1] // 2, x.shape[2] // 2, x.shape[3]],
        dtype=x.dtype)
    for i in range(x.shape[1] // 2):
        for j in range(x.shape[2] // 2):
            output[:, i, j, :] = np.max(x[:, 2 * i:2 * i + 2,
                                          2 * j:2 * j + 2, :],
                                        axis=(1, 2))
    return output


# LeNet-5 Convolutional Neural Network (inference mode)
def lenet5(input, conv1, conv1bias, conv2, conv2bias, fc1w, fc1b, fc2w, fc2b,
           fc3w, fc3b, N, C_before_fc1):
    x = relu(conv2d(input, conv1) + conv1bias)
    x = maxpool2d(x)
    x = relu(conv2d(x, conv2) + conv2bias)
    x = maxpool2d(x)
    x = np.reshape(x, (N, C_before_fc1))
    x = relu(x @ fc1w + fc1b)
    x = relu(x @ fc2w + fc2b)
    return x @ fc3w + fc3b


def _lenet_args(rng, N=1, H=16, W=16):
    # The network fixes 5x5 kernels and 6/16 channels; 16x16 is the smallest image they fit.
    H_conv1 = H - 4
    W_conv1 = W - 4
    H_pool1 = H_conv1 // 2
    W_pool1 = W_conv1 // 2
    H_conv2 = H_pool1 - 4
    W_conv2 = W_pool1 - 4
    H_pool2 = H_conv2 // 2
    W_pool2 = W_conv2 // 2
    C_before_fc1 = 16 * H_pool2 * W_pool2

    # NHWC data layout
    input = rng.random((N, H, W, 1), dtype=np.float32)
    # Weights
    conv1 = rng.random((5, 5, 1, 6), dtype=np.float32)
    conv1bias = rng.random((6, ), dtype=np.float32)
    conv2 = rng.random((5, 5, 6, 16), dtype=np.float32)
    conv2bias = rng.random((16, ), dtype=np.float32)
    # (npbench's fully connected layers are 120 and 84 wide; 24 and 16 keep this small)
    fc1w = rng.random((C_before_fc1, 24), dtype=np.float32)
    fc1b = rng.random((24, ), dtype=np.float32)
    fc2w = rng.random((24, 16), dtype=np.float32)
    fc2b = rng.random((16, ), dtype=np.float32)
    fc3w = rng.random((16, 10), dtype=np.float32)
    fc3b = rng.random((10, ), dtype=np.float32)

    return (input, conv1, conv1bias, conv2, conv2bias, fc1w, fc1b, fc2w, fc2b,
            fc3w, fc3b, N, C_before_fc1)


register("lenet", lenet5, _lenet_args, "npbench/benchmarks/deep_learning/lenet/lenet_numpy.py",
         tol=(1e-5, 0.0),
         notes="float32 through four layers of 150-term sums (all-positive inputs, no cancellation)")


# =============================================================================================
# npbench/benchmarks/deep_learning/mlp/mlp_numpy.py


# Numerically-stable version of softmax
def softmax(x):
    tmp_max = np.max(x, axis=-1, keepdims=True)
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.sum(tmp_out, axis=-1, keepdims=True)
    return tmp_out / tmp_sum


# 3-layer MLP
def mlp(input, w1, b1, w2, b2, w3, b3):
    x = relu(input @ w1 + b1)
    x = relu(x @ w2 + b2)
    x = softmax(x @ w3 + b3)  # Softmax call can be omitted if necessary
    return x


def _mlp_args(rng, C_in=3, N=8, S0=32, S1=16, S2=16):
    mlp_sizes = [S0, S1, S2]  # [300, 100, 10]
    # Inputs (npbench uses np.random.rand here, unseeded; the seeded rng keeps this repeatable)
    input = rng.random((N, C_in)).astype(np.float32)
    # Weights
    w1 = rng.random((C_in, mlp_sizes[0]), dtype=np.float32)
    b1 = rng.random((mlp_sizes[0], ), dtype=np.float32)
    w2 = rng.random((mlp_sizes[0], mlp_sizes[1]), dtype=np.float32)
    b2 = rng.random((mlp_sizes[1], ), dtype=np.float32)
    w3 = rng.random((mlp_sizes[1], mlp_sizes[2]), dtype=np.float32)
    b3 = rng.random((mlp_sizes[2], ), dtype=np.float32)
    return input, w1, b1, w2, b2, w3, b3


register("mlp", mlp, _mlp_args, "npbench/benchmarks/deep_learning/mlp/mlp_numpy.py",
         tol=(1e-5, 1e-7),
         notes="float32 softmax of logits near 100 after three positive layers: exp amplifies the "
               "logits' rounding (|logit| * eps32 ~ 1e-5 relative)")


# =============================================================================================
# npbench/benchmarks/deep_learning/resnet/resnet_numpy.py


# Batch normalization operator, as used in ResNet
def batchnorm2d(x, eps=1e-5):
    mean = np.mean(x, axis=0, keepdims=True)
    std = np.std(x, axis=0, keepdims=True)
    return (x - mean) / np.sqrt(std + eps)


# Bottleneck residual block (after initial convolution, without downsampling)
# in the ResNet-50 CNN (inference)
def resnet_basicblock(input, conv1, conv2, conv3):
    # Pad output of first convolution for second convolution
    padded = np.zeros((input.shape[0], input.shape[1] + 2, input.shape[2] + 2,
                       conv1.shape[3]))

    padded[:, 1:-1, 1:-1, :] = conv2d(input, conv1)
    x = batchnorm2d(padded)
    x = relu(x)

    x = conv2d(x, conv2)
    x = batchnorm2d(x)
    x = relu(x)
    x = conv2d(x, conv3)
    x = batchnorm2d(x)
    return relu(x + input)


def _resnet_args(rng, N=2, W=4, H=4, C1=4, C2=2):
    # Input
    input = rng.random((N, H, W, C1), dtype=np.float32)
    # Weights
    conv1 = rng.random((1, 1, C1, C2), dtype=np.float32)
    conv2 = rng.random((3, 3, C2, C2), dtype=np.float32)
    conv3 = rng.random((1, 1, C2, C1), dtype=np.float32)
    return (input, conv1, conv2, conv3)


register("resnet", resnet_basicblock, _resnet_args, "npbench/benchmarks/deep_learning/resnet/resnet_numpy.py",
         tol=(1e-4, 1e-5),
         notes="batch norm over a batch of 2 in float32: (x - mean) / sqrt(std) divides "
               "differences of near-equal values; errors grow through three normalizations")


# =============================================================================================
# npbench/benchmarks/deep_learning/softmax/softmax_numpy.py (softmax is defined above)


register("softmax", softmax, lambda rng: (rng.random((2, 2, 8, 8), dtype=np.float32),),
         "npbench/benchmarks/deep_learning/softmax/softmax_numpy.py", reduced=8)


# =============================================================================================
# npbench/benchmarks/go_fast/go_fast_numpy.py
# https://numba.readthedocs.io/en/stable/user/5minguide.html


def go_fast(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


register("go_fast", go_fast, lambda rng: (rng.random((8, 8), dtype=np.float64),),
         "npbench/benchmarks/go_fast/go_fast_numpy.py", reduced=8)


# =============================================================================================
# npbench/benchmarks/mandelbrot1/mandelbrot1_numpy.py
# From Numpy to Python, Copyright (2017) Nicolas P. Rougier - BSD license,
# https://github.com/rougier/numpy-book


def mandelbrot1(xmin, xmax, ymin, ymax, xn, yn, maxiter, horizon=2.0):
    # Adapted from https://www.ibm.com/developerworks/community/blogs/jfp/...
    #              .../entry/How_To_Compute_Mandelbrodt_Set_Quickly?lang=en
    X = np.linspace(xmin, xmax, xn, dtype=np.float64)
    Y = np.linspace(ymin, ymax, yn, dtype=np.float64)
    C = X + Y[:, None] * 1j
    N = np.zeros(C.shape, dtype=np.int64)
    Z = np.zeros(C.shape, dtype=np.complex128)
    for n in range(maxiter):
        I = np.less(abs(Z), horizon)
        N[I] = n
        Z[I] = Z[I]**2 + C[I]
    N[N == maxiter - 1] = 0
    return Z, N


def _mandel1_args(rng):
    return -1.75, 0.25, -1.00, 1.00, 8, 6, 8, 2.0


register("mandelbrot1", mandelbrot1, _mandel1_args, "npbench/benchmarks/mandelbrot1/mandelbrot1_numpy.py",
         static_argnames=("xn", "yn", "maxiter"))


# =============================================================================================
# npbench/benchmarks/mandelbrot2/mandelbrot2_numpy.py (same notice as mandelbrot1)


def mandelbrot2(xmin, xmax, ymin, ymax, xn, yn, itermax, horizon=2.0):
    # Adapted from
    # https://thesamovar.wordpress.com/2009/03/22/fast-fractals-with-python-and-numpy/
    Xi, Yi = np.mgrid[0:xn, 0:yn]
    X = np.linspace(xmin, xmax, xn, dtype=np.float64)[Xi]
    Y = np.linspace(ymin, ymax, yn, dtype=np.float64)[Yi]
    C = X + Y * 1j
    N_ = np.zeros(C.shape, dtype=np.int64)
    Z_ = np.zeros(C.shape, dtype=np.complex128)
    Xi.shape = Yi.shape = C.shape = xn * yn

    Z = np.zeros(C.shape, np.complex128)
    for i in range(itermax):
        if not len(Z):
            break

        # Compute for relevant points only
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)

        # Failed convergence
        I = abs(Z) > horizon
        N_[Xi[I], Yi[I]] = i + 1
        Z_[Xi[I], Yi[I]] = Z[I]

        # Keep going with those who have not diverged yet
        np.logical_not(I, I)  # np.negative(I, I) not working any longer
        Z = Z[I]
        Xi, Yi = Xi[I], Yi[I]
        C = C[I]
    return Z_.T, N_.T


def _mandel2_args(rng):
    return -2.00, 0.50, -1.25, 1.25, 8, 6, 8, 2.0


register("mandelbrot2", mandelbrot2, _mandel2_args, "npbench/benchmarks/mandelbrot2/mandelbrot2_numpy.py",
         static_argnames=("xn", "yn", "itermax"))


# =============================================================================================
# npbench/benchmarks/nbody/nbody_numpy.py
# Adapted from https://github.com/pmocz/nbody-python/blob/master/nbody.py (GPL-3.0 upstream)
# Create Your Own N-body Simulation (With Python), Philip Mocz (2020) Princeton University


def getAcc(pos, mass, G, softening):
    """
    Calculate the acceleration on each particle due to Newton's Law 
    pos  is an N x 3 matrix of positions
    mass is an N x 1 vector of masses
    G is Newton's Gravitational constant
    softening is the softening length
    a is N x 3 matrix of accelerations
    """
    # positions r = [x,y,z] for all particles
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    z = pos[:, 2:3]

    # matrix that stores all pairwise particle separations: r_j - r_i
    dx = x.T - x
    dy = y.T - y
    dz = z.T - z

    # matrix that stores 1/r^3 for all particle pairwise particle separations
    inv_r3 = (dx**2 + dy**2 + dz**2 + softening**2)
    inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0]**(-1.5)

    ax = G * (dx * inv_r3) @ mass
    ay = G * (dy * inv_r3) @ mass
    az = G * (dz * inv_r3) @ mass

    # pack together the acceleration components
    a = np.hstack((ax, ay, az))

    return a


def getEnergy(pos, vel, mass, G):
    """
    Get kinetic energy (KE) and potential energy (PE) of simulation
    pos is N x 3 matrix of positions
    vel is N x 3 matrix of velocities
    mass is an N x 1 vector of masses
    G is Newton's Gravitational constant
    KE is the kinetic energy of the system
    PE is the potential energy of the system
    """
    # Kinetic Energy:
    # KE = 0.5 * np.sum(np.sum( mass * vel**2 ))
    KE = 0.5 * np.sum(mass * vel**2)

    # Potential Energy:

    # positions r = [x,y,z] for all particles
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    z = pos[:, 2:3]

    # matrix that stores all pairwise particle separations: r_j - r_i
    dx = x.T - x
    dy = y.T - y
    dz = z.T - z

    # matrix that stores 1/r for all particle pairwise particle separations
    inv_r = np.sqrt(dx**2 + dy**2 + dz**2)
    inv_r[inv_r > 0] = 1.0 / inv_r[inv_r > 0]

    # sum over upper triangle, to count each interaction only once
    # PE = G * np.sum(np.sum(np.triu(-(mass*mass.T)*inv_r,1)))
    PE = G * np.sum(np.triu(-(mass * mass.T) * inv_r, 1))

    return KE, PE


def nbody(mass, pos, vel, N, Nt, dt, G, softening):

    # Convert to Center-of-Mass frame
    vel -= np.mean(mass * vel, axis=0) / np.mean(mass)

    # calculate initial gravitational accelerations
    acc = getAcc(pos, mass, G, softening)

    # calculate initial energy of system
    KE = np.ndarray(Nt + 1, dtype=np.float64)
    PE = np.ndarray(Nt + 1, dtype=np.float64)
    KE[0], PE[0] = getEnergy(pos, vel, mass, G)

    t = 0.0

    # Simulation Main Loop
    for i in range(Nt):
        # (1/2) kick
        vel += acc * dt / 2.0

        # drift
        pos += vel * dt

        # update accelerations
        acc = getAcc(pos, mass, G, softening)

        # (1/2) kick
        vel += acc * dt / 2.0

        # update time
        t += dt

        # get energy of system
        KE[i + 1], PE[i + 1] = getEnergy(pos, vel, mass, G)

    return KE, PE


def _nbody_args(rng, N=6, tEnd=0.1, dt=0.05, softening=0.1, G=1.0):
    mass = 20.0 * np.ones((N, 1)) / N  # total mass of particles is 20
    pos = rng.random((N, 3))  # randomly selected positions and velocities
    vel = rng.random((N, 3))
    Nt = int(np.ceil(tEnd / dt))
    return mass, pos, vel, N, Nt, dt, G, softening


register("nbody", nbody, _nbody_args, "npbench/benchmarks/nbody/nbody_numpy.py", reduced=36)


# =============================================================================================
# npbench/benchmarks/polybench/adi/adi_numpy.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def adi(TSTEPS, N, u):

    v = np.empty(u.shape, dtype=u.dtype)
    p = np.empty(u.shape, dtype=u.dtype)
    q = np.empty(u.shape, dtype=u.dtype)

    DX = 1.0 / N
    DY = 1.0 / N
    DT = 1.0 / TSTEPS
    B1 = 2.0
    B2 = 1.0
    mul1 = B1 * DT / (DX * DX)
    mul2 = B2 * DT / (DY * DY)

    a = -mul1 / 2.0
    b = 1.0 + mul2
    c = a
    d = -mul2 / 2.0
    e = 1.0 + mul2
    f = d

    for t in range(1, TSTEPS + 1):
        v[0, 1:N - 1] = 1.0
        p[1:N - 1, 0] = 0.0
        q[1:N - 1, 0] = v[0, 1:N - 1]
        for j in range(1, N - 1):
            p[1:N - 1, j] = -c / (a * p[1:N - 1, j - 1] + b)
            q[1:N - 1,
              j] = (-d * u[j, 0:N - 2] +
                    (1.0 + 2.0 * d) * u[j, 1:N - 1] - f * u[j, 2:N] -
                    a * q[1:N - 1, j - 1]) / (a * p[1:N - 1, j - 1] + b)
        v[N - 1, 1:N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            v[j, 1:N - 1] = p[1:N - 1, j] * v[j + 1, 1:N - 1] + q[1:N - 1, j]

        u[1:N - 1, 0] = 1.0
        p[1:N - 1, 0] = 0.0
        q[1:N - 1, 0] = u[1:N - 1, 0]
        for j in range(1, N - 1):
            p[1:N - 1, j] = -f / (d * p[1:N - 1, j - 1] + e)
            q[1:N - 1,
              j] = (-a * v[0:N - 2, j] +
                    (1.0 + 2.0 * a) * v[1:N - 1, j] - c * v[2:N, j] -
                    d * q[1:N - 1, j - 1]) / (d * p[1:N - 1, j - 1] + e)
        u[1:N - 1, N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            u[1:N - 1, j] = p[1:N - 1, j] * u[1:N - 1, j + 1] + q[1:N - 1, j]

    return u


def _adi_args(rng, TSTEPS=2, N=6):
    u = np.fromfunction(lambda i, j: (i + N - j) / N, (N, N), dtype=np.float64)
    return TSTEPS, N, u


register("adi", adi, _adi_args, "npbench/benchmarks/polybench/adi/adi_numpy.py", tol=(1e-12, 1e-12),
         notes="tridiagonal sweeps: each value is a recurrence over up to N steps",
         static_argnames=("TSTEPS", "N"))


# =============================================================================================
# npbench/benchmarks/polybench/atax/atax_numpy.py


def atax(A, x):

    return (A @ x) @ A


def _atax_args(rng, M=5, N=6, datatype=np.float64):
    fn = datatype(N)
    x = np.fromfunction(lambda i: 1 + (i / fn), (N, ), dtype=datatype)
    A = np.fromfunction(lambda i, j: ((i + j) % N) / (5 * M), (M, N), dtype=datatype)
    return A, x


register("atax", atax, _atax_args, "npbench/benchmarks/polybench/atax/atax_numpy.py", reduced=30)


# =============================================================================================
# npbench/benchmarks/polybench/bicg/bicg_numpy.py


def bicg(A, p, r):

    return r @ A, A @ p


def _bicg_args(rng, M=5, N=6, datatype=np.float64):
    A = np.fromfunction(lambda i, j: (i * (j + 1) % N) / N, (N, M), dtype=datatype)
    p = np.fromfunction(lambda i: (i % M) / M, (M, ), dtype=datatype)
    r = np.fromfunction(lambda i: (i % N) / N, (N, ), dtype=datatype)
    return A, p, r


register("bicg", bicg, _bicg_args, "npbench/benchmarks/polybench/bicg/bicg_numpy.py", reduced=6)


# =============================================================================================
# npbench/benchmarks/polybench/cholesky/cholesky_numpy.py


def cholesky(A):

    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def _spd_init(N, datatype=np.float64):
    # polybench's positive definite matrix (cholesky.py, cholesky2.py, lu.py, ludcmp.py)
    A = np.empty((N, N), dtype=datatype)
    for i in range(N):
        A[i, :i + 1] = np.fromfunction(lambda j: (-j % N) / N + 1, (i + 1, ), dtype=datatype)
        A[i, i + 1:] = 0.0
        A[i, i] = 1.0
    A[:] = A @ np.transpose(A)
    return A


register("cholesky", cholesky, lambda rng: (_spd_init(6),), "npbench/benchmarks/polybench/cholesky/cholesky_numpy.py",
         tol=(1e-12, 1e-12), notes="factorization: each entry depends on all earlier ones")


# =============================================================================================
# npbench/benchmarks/polybench/cholesky2/cholesky2_numpy.py


def cholesky2(A):
    A[:] = np.linalg.cholesky(A) + np.triu(A, k=1)


register("cholesky2", cholesky2, lambda rng: (_spd_init(6),),
         "npbench/benchmarks/polybench/cholesky2/cholesky2_numpy.py", tol=(1e-12, 1e-12),
         notes="LAPACK factorization (NumPy or CuPy) of a well-conditioned SPD matrix")


# =============================================================================================
# npbench/benchmarks/polybench/correlation/correlation_numpy.py


def correlation(M, float_n, data):

    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]

    return corr


def _correlation_args(rng, M=5, N=6, datatype=np.float64):
    float_n = datatype(N)
    data = np.fromfunction(lambda i, j: (i * j) / M + i, (N, M), dtype=datatype)
    return M, float_n, data


register("correlation", correlation, _correlation_args,
         "npbench/benchmarks/polybench/correlation/correlation_numpy.py", reduced=12)


# =============================================================================================
# npbench/benchmarks/polybench/covariance/covariance_numpy.py


def covariance(M, float_n, data):

    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)

    return cov


def _covariance_args(rng, M=5, N=6, datatype=np.float64):
    float_n = datatype(N)
    data = np.fromfunction(lambda i, j: (i * j) / M, (N, M), dtype=datatype)
    return M, float_n, data


register("covariance", covariance, _covariance_args,
         "npbench/benchmarks/polybench/covariance/covariance_numpy.py", reduced=12)


# =============================================================================================
# npbench/benchmarks/polybench/covariance2/covariance2_numpy.py


def covariance2(M, float_n, data):
    return np.cov(np.transpose(data))


register("covariance2", covariance2, _covariance_args,
         "npbench/benchmarks/polybench/covariance2/covariance2_numpy.py", reduced=12)


# =============================================================================================
# npbench/benchmarks/polybench/deriche/deriche_numpy.py


def deriche(alpha, imgIn):

    k = (1.0 - np.exp(-alpha)) * (1.0 - np.exp(-alpha)) / (
        1.0 + alpha * np.exp(-alpha) - np.exp(2.0 * alpha))
    a1 = a5 = k
    a2 = a6 = k * np.exp(-alpha) * (alpha - 1.0)
    a3 = a7 = k * np.exp(-alpha) * (alpha + 1.0)
    a4 = a8 = -k * np.exp(-2.0 * alpha)
    b1 = 2.0**(-alpha)
    b2 = -np.exp(-2.0 * alpha)
    c1 = c2 = 1

    y1 = np.empty_like(imgIn)
    y1[:, 0] = a1 * imgIn[:, 0]
    y1[:, 1] = a1 * imgIn[:, 1] + a2 * imgIn[:, 0] + b1 * y1[:, 0]
    for j in range(2, imgIn.shape[1]):
        y1[:, j] = (a1 * imgIn[:, j] + a2 * imgIn[:, j - 1] +
                    b1 * y1[:, j - 1] + b2 * y1[:, j - 2])

    y2 = np.empty_like(imgIn)
    y2[:, -1] = 0.0
    y2[:, -2] = a3 * imgIn[:, -1]
    for j in range(imgIn.shape[1] - 3, -1, -1):
        y2[:, j] = (a3 * imgIn[:, j + 1] + a4 * imgIn[:, j + 2] +
                    b1 * y2[:, j + 1] + b2 * y2[:, j + 2])

    imgOut = c1 * (y1 + y2)

    y1[0, :] = a5 * imgOut[0, :]
    y1[1, :] = a5 * imgOut[1, :] + a6 * imgOut[0, :] + b1 * y1[0, :]
    for i in range(2, imgIn.shape[0]):
        y1[i, :] = (a5 * imgOut[i, :] + a6 * imgOut[i - 1, :] +
                    b1 * y1[i - 1, :] + b2 * y1[i - 2, :])

    y2[-1, :] = 0.0
    y2[-2, :] = a7 * imgOut[-1, :]
    for i in range(imgIn.shape[0] - 3, -1, -1):
        y2[i, :] = (a7 * imgOut[i + 1, :] + a8 * imgOut[i + 2, :] +
                    b1 * y2[i + 1, :] + b2 * y2[i + 2, :])

    imgOut[:] = c2 * (y1 + y2)

    return imgOut


def _deriche_args(rng, W=6, H=5, datatype=np.float64):
    alpha = datatype(0.25)
    imgIn = np.fromfunction(lambda i, j: ((313 * i + 991 * j) % 65536) / 65535.0, (W, H), dtype=datatype)
    return alpha, imgIn


register("deriche", deriche, _deriche_args, "npbench/benchmarks/polybench/deriche/deriche_numpy.py",
         tol=(1e-12, 1e-12), notes="recursive filter: each column/row a recurrence over the previous ones")


# =============================================================================================
# npbench/benchmarks/polybench/doitgen/doitgen_numpy.py


def doitgen(NR, NQ, NP, A, C4):

    # for r in range(NR):
    #     for q in range(NQ):
    #         sum[:] = A[r, q, :] @ C4
    #         A[r, q, :] = sum
    A[:] = np.reshape(np.reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP))


def _doitgen_args(rng, NR=3, NQ=4, NP=5, datatype=np.float64):
    A = np.fromfunction(lambda i, j, k: ((i * j + k) % NP) / NP, (NR, NQ, NP), dtype=datatype)
    C4 = np.fromfunction(lambda i, j: (i * j % NP) / NP, (NP, NP), dtype=datatype)
    return NR, NQ, NP, A, C4


register("doitgen", doitgen, _doitgen_args, "npbench/benchmarks/polybench/doitgen/doitgen_numpy.py", reduced=5)


# =============================================================================================
# npbench/benchmarks/polybench/durbin/durbin_numpy.py


def durbin(r):

    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]

    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha

    return y


register("durbin", durbin, lambda rng: (np.fromfunction(lambda i: 8 + 1 - i, (8, ), dtype=np.float64),),
         "npbench/benchmarks/polybench/durbin/durbin_numpy.py", tol=(1e-9, 1e-12),
         notes="Levinson-Durbin recursion: each step divides by a product of all earlier (1 - alpha^2)")


# =============================================================================================
# npbench/benchmarks/polybench/fdtd_2d/fdtd_2d_numpy.py


def fdtd_2d(TMAX, ex, ey, hz, _fict_):

    for t in range(TMAX):
        ey[0, :] = _fict_[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] -
                               ey[:-1, :-1])


def _fdtd_args(rng, TMAX=3, NX=5, NY=6, datatype=np.float64):
    ex = np.fromfunction(lambda i, j: (i * (j + 1)) / NX, (NX, NY), dtype=datatype)
    ey = np.fromfunction(lambda i, j: (i * (j + 2)) / NY, (NX, NY), dtype=datatype)
    hz = np.fromfunction(lambda i, j: (i * (j + 3)) / NX, (NX, NY), dtype=datatype)
    _fict_ = np.fromfunction(lambda i: i, (TMAX, ), dtype=datatype)
    return TMAX, ex, ey, hz, _fict_


register("fdtd_2d", fdtd_2d, _fdtd_args, "npbench/benchmarks/polybench/fdtd_2d/fdtd_2d_numpy.py", reduced=8)


# =============================================================================================
# npbench/benchmarks/polybench/floyd_warshall/floyd_warshall_numpy.py


def floyd_warshall(path):

    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))


def _floyd_args(rng, N=6, datatype=np.int32):
    path = np.fromfunction(lambda i, j: i * j % 7 + 1, (N, N), dtype=datatype)
    for i in range(N):
        for j in range(N):
            if (i + j) % 13 == 0 or (i + j) % 7 == 0 or (i + j) % 11 == 0:
                path[i, j] = 999
    return (path,)


register("floyd_warshall", floyd_warshall, _floyd_args,
         "npbench/benchmarks/polybench/floyd_warshall/floyd_warshall_numpy.py")


# =============================================================================================
# npbench/benchmarks/polybench/gemm/gemm_numpy.py


def gemm(alpha, beta, C, A, B):

    C[:] = alpha * A @ B + beta * C


def _gemm_args(rng, NI=5, NJ=6, NK=7, datatype=np.float64):
    alpha = datatype(1.5)
    beta = datatype(1.2)
    C = np.fromfunction(lambda i, j: ((i * j + 1) % NI) / NI, (NI, NJ), dtype=datatype)
    A = np.fromfunction(lambda i, k: (i * (k + 1) % NK) / NK, (NI, NK), dtype=datatype)
    B = np.fromfunction(lambda k, j: (k * (j + 2) % NJ) / NJ, (NK, NJ), dtype=datatype)
    return alpha, beta, C, A, B


register("gemm", gemm, _gemm_args, "npbench/benchmarks/polybench/gemm/gemm_numpy.py", reduced=7)


# =============================================================================================
# npbench/benchmarks/polybench/gemver/gemver_numpy.py


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):

    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x


def _gemver_args(rng, N=6, datatype=np.float64):
    alpha = datatype(1.5)
    beta = datatype(1.2)
    fn = datatype(N)
    A = np.fromfunction(lambda i, j: (i * j % N) / N, (N, N), dtype=datatype)
    u1 = np.fromfunction(lambda i: i, (N, ), dtype=datatype)
    u2 = np.fromfunction(lambda i: ((i + 1) / fn) / 2.0, (N, ), dtype=datatype)
    v1 = np.fromfunction(lambda i: ((i + 1) / fn) / 4.0, (N, ), dtype=datatype)
    v2 = np.fromfunction(lambda i: ((i + 1) / fn) / 6.0, (N, ), dtype=datatype)
    w = np.zeros((N, ), dtype=datatype)
    x = np.zeros((N, ), dtype=datatype)
    y = np.fromfunction(lambda i: ((i + 1) / fn) / 8.0, (N, ), dtype=datatype)
    z = np.fromfunction(lambda i: ((i + 1) / fn) / 9.0, (N, ), dtype=datatype)
    return alpha, beta, A, u1, v1, u2, v2, w, x, y, z


register("gemver", gemver, _gemver_args, "npbench/benchmarks/polybench/gemver/gemver_numpy.py", reduced=36)


# =============================================================================================
# npbench/benchmarks/polybench/gesummv/gesummv_numpy.py


def gesummv(alpha, beta, A, B, x):

    return alpha * A @ x + beta * B @ x


def _gesummv_args(rng, N=6, datatype=np.float64):
    alpha = datatype(1.5)
    beta = datatype(1.2)
    A = np.fromfunction(lambda i, j: ((i * j + 1) % N) / N, (N, N), dtype=datatype)
    B = np.fromfunction(lambda i, j: ((i * j + 2) % N) / N, (N, N), dtype=datatype)
    x = np.fromfunction(lambda i: (i % N) / N, (N, ), dtype=datatype)
    return alpha, beta, A, B, x


register("gesummv", gesummv, _gesummv_args, "npbench/benchmarks/polybench/gesummv/gesummv_numpy.py", reduced=12)


# =============================================================================================
# npbench/benchmarks/polybench/gramschmidt/gramschmidt_numpy.py


def gramschmidt(A):

    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)

    for k in range(A.shape[1]):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]

    return Q, R


def _gramschmidt_args(rng, M=6, N=4, datatype=np.float64):
    A = rng.random((M, N), dtype=datatype)
    while np.linalg.matrix_rank(A) < N:
        A = rng.random((M, N), dtype=datatype)
    return (A,)


register("gramschmidt", gramschmidt, _gramschmidt_args,
         "npbench/benchmarks/polybench/gramschmidt/gramschmidt_numpy.py", tol=(1e-10, 1e-12),
         notes="classical Gram-Schmidt loses orthogonality at the rate of A's condition number")


# =============================================================================================
# npbench/benchmarks/polybench/heat_3d/heat_3d_numpy.py


def heat_3d(TSTEPS, A, B):

    for t in range(1, TSTEPS):
        B[1:-1, 1:-1,
          1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] +
                            A[:-2, 1:-1, 1:-1]) + 0.125 *
                   (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] +
                    A[1:-1, :-2, 1:-1]) + 0.125 *
                   (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] +
                    A[1:-1, 1:-1, 0:-2]) + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1,
          1:-1] = (0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] +
                            B[:-2, 1:-1, 1:-1]) + 0.125 *
                   (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] +
                    B[1:-1, :-2, 1:-1]) + 0.125 *
                   (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] +
                    B[1:-1, 1:-1, 0:-2]) + B[1:-1, 1:-1, 1:-1])


def _heat3d_args(rng, TSTEPS=3, N=5, datatype=np.float64):
    A = np.fromfunction(lambda i, j, k: (i + j + (N - k)) * 10 / N, (N, N, N), dtype=datatype)
    B = np.copy(A)
    return TSTEPS, A, B


register("heat_3d", heat_3d, _heat3d_args, "npbench/benchmarks/polybench/heat_3d/heat_3d_numpy.py", reduced=8)


# =============================================================================================
# npbench/benchmarks/polybench/jacobi_1d/jacobi_1d_numpy.py


def jacobi_1d(TSTEPS, A, B):

    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def _jacobi1d_args(rng, TSTEPS=4, N=12, datatype=np.float64):
    A = np.fromfunction(lambda i: (i + 2) / N, (N, ), dtype=datatype)
    B = np.fromfunction(lambda i: (i + 3) / N, (N, ), dtype=datatype)
    return TSTEPS, A, B


register("jacobi_1d", jacobi_1d, _jacobi1d_args, "npbench/benchmarks/polybench/jacobi_1d/jacobi_1d_numpy.py",
         reduced=8)


# =============================================================================================
# npbench/benchmarks/polybench/jacobi_2d/jacobi_2d_numpy.py


def jacobi_2d(TSTEPS, A, B):

    for t in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] +
                               A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] +
                               B[2:, 1:-1] + B[:-2, 1:-1])


def _jacobi2d_args(rng, TSTEPS=3, N=6, datatype=np.float64):
    A = np.fromfunction(lambda i, j: i * (j + 2) / N, (N, N), dtype=datatype)
    B = np.fromfunction(lambda i, j: i * (j + 3) / N, (N, N), dtype=datatype)
    return TSTEPS, A, B


register("jacobi_2d", jacobi_2d, _jacobi2d_args, "npbench/benchmarks/polybench/jacobi_2d/jacobi_2d_numpy.py",
         reduced=8)


# =============================================================================================
# npbench/benchmarks/polybench/k2mm/k2mm_numpy.py


def k2mm(alpha, beta, A, B, C, D):
    D[:] = alpha * A @ B @ C + beta * D


def _k2mm_args(rng, NI=4, NJ=5, NK=6, NL=7, datatype=np.float64):
    alpha = datatype(1.5)
    beta = datatype(1.2)
    A = np.fromfunction(lambda i, j: ((i * j + 1) % NI) / NI, (NI, NK), dtype=datatype)
    B = np.fromfunction(lambda i, j: (i * (j + 1) % NJ) / NJ, (NK, NJ), dtype=datatype)
    C = np.fromfunction(lambda i, j: ((i * (j + 3) + 1) % NL) / NL, (NJ, NL), dtype=datatype)
    D = np.fromfunction(lambda i, j: (i * (j + 2) % NK) / NK, (NI, NL), dtype=datatype)
    return alpha, beta, A, B, C, D


register("k2mm", k2mm, _k2mm_args, "npbench/benchmarks/polybench/k2mm/k2mm_numpy.py", reduced=30)


# =============================================================================================
# npbench/benchmarks/polybench/k3mm/k3mm_numpy.py


def k3mm(A, B, C, D):

    return A @ B @ C @ D


def _k3mm_args(rng, NI=4, NJ=5, NK=6, NL=7, NM=3, datatype=np.float64):
    A = np.fromfunction(lambda i, j: ((i * j + 1) % NI) / (5 * NI), (NI, NK), dtype=datatype)
    B = np.fromfunction(lambda i, j: ((i * (j + 1) + 2) % NJ) / (5 * NJ), (NK, NJ), dtype=datatype)
    C = np.fromfunction(lambda i, j: (i * (j + 3) % NL) / (5 * NL), (NJ, NM), dtype=datatype)
    D = np.fromfunction(lambda i, j: ((i * (j + 2) + 2) % NK) / (5 * NK), (NM, NL), dtype=datatype)
    return A, B, C, D


register("k3mm", k3mm, _k3mm_args, "npbench/benchmarks/polybench/k3mm/k3mm_numpy.py", reduced=90)


# =============================================================================================
# npbench/benchmarks/polybench/lu/lu_numpy.py


def lu(A):

    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]


register("lu", lu, lambda rng: (_spd_init(5),), "npbench/benchmarks/polybench/lu/lu_numpy.py",
         tol=(1e-12, 1e-12), notes="factorization: each entry depends on all earlier ones")


# =============================================================================================
# npbench/benchmarks/polybench/ludcmp/ludcmp_numpy.py


def ludcmp(A, b):

    x = np.zeros_like(b)
    y = np.zeros_like(b)

    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]
    for i in range(A.shape[0]):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(A.shape[0] - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]

    return x, y


def _ludcmp_args(rng, N=5, datatype=np.float64):
    A = _spd_init(N, datatype)
    fn = datatype(N)
    b = np.fromfunction(lambda i: (i + 1) / fn / 2.0 + 4.0, (N, ), dtype=datatype)
    return A, b


register("ludcmp", ludcmp, _ludcmp_args, "npbench/benchmarks/polybench/ludcmp/ludcmp_numpy.py",
         tol=(1e-11, 1e-12), notes="LU factorization then two triangular solves")


# =============================================================================================
# npbench/benchmarks/polybench/mvt/mvt_numpy.py


def mvt(x1, x2, y_1, y_2, A):

    x1 += A @ y_1
    x2 += y_2 @ A


def _mvt_args(rng, N=6, datatype=np.float64):
    x1 = np.fromfunction(lambda i: (i % N) / N, (N, ), dtype=datatype)
    x2 = np.fromfunction(lambda i: ((i + 1) % N) / N, (N, ), dtype=datatype)
    y_1 = np.fromfunction(lambda i: ((i + 3) % N) / N, (N, ), dtype=datatype)
    y_2 = np.fromfunction(lambda i: ((i + 4) % N) / N, (N, ), dtype=datatype)
    A = np.fromfunction(lambda i, j: (i * j % N) / N, (N, N), dtype=datatype)
    return x1, x2, y_1, y_2, A


register("mvt", mvt, _mvt_args, "npbench/benchmarks/polybench/mvt/mvt_numpy.py", reduced=6)


# =============================================================================================
# npbench/benchmarks/polybench/nussinov/nussinov_numpy.py


def match(b1, b2):
    if b1 + b2 == 3:
        return 1
    else:
        return 0


def nussinov(N, seq):

    table = np.zeros((N, N), np.int32)

    for i in range(N - 1, -1, -1):
        for j in range(i + 1, N):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < N:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < N:
                if i < j - 1:
                    table[i,
                          j] = max(table[i, j],
                                   table[i + 1, j - 1] + match(seq[i], seq[j]))
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])

    return table


def _nussinov_args(rng, N=5, datatype=np.int32):
    seq = np.fromfunction(lambda i: (i + 1) % 4, (N, ), dtype=datatype)
    return N, seq


register("nussinov", nussinov, _nussinov_args, "npbench/benchmarks/polybench/nussinov/nussinov_numpy.py")


# =============================================================================================
# npbench/benchmarks/polybench/seidel_2d/seidel_2d_numpy.py


def seidel_2d(TSTEPS, N, A):

    for t in range(0, TSTEPS - 1):
        for i in range(1, N - 1):
            A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] +
                           A[i, 2:] + A[i + 1, :-2] + A[i + 1, 1:-1] +
                           A[i + 1, 2:])
            for j in range(1, N - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def _seidel_args(rng, TSTEPS=2, N=5, datatype=np.float64):
    A = np.fromfunction(lambda i, j: (i * (j + 2) + 2) / N, (N, N), dtype=datatype)
    return TSTEPS, N, A


register("seidel_2d", seidel_2d, _seidel_args, "npbench/benchmarks/polybench/seidel_2d/seidel_2d_numpy.py",
         reduced=16,
         static_argnames=("TSTEPS", "N"))


# =============================================================================================
# npbench/benchmarks/polybench/symm/symm_numpy.py


def symm(alpha, beta, C, A, B):

    temp2 = np.empty((C.shape[1], ), dtype=C.dtype)
    C *= beta
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[:i, j] += alpha * B[i, j] * A[i, :i]
            temp2[j] = B[:i, j] @ A[i, :i]
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2


def _symm_args(rng, M=4, N=5, datatype=np.float64):
    alpha = datatype(1.5)
    beta = datatype(1.2)
    C = np.fromfunction(lambda i, j: ((i + j) % 100) / M, (M, N), dtype=datatype)
    B = np.fromfunction(lambda i, j: ((N + i - j) % 100) / M, (M, N), dtype=datatype)
    A = np.empty((M, M), dtype=datatype)
    for i in range(M):
        A[i, :i + 1] = np.fromfunction(lambda j: ((i + j) % 100) / M, (i + 1, ), dtype=datatype)
        A[i, i + 1:] = -999
    return alpha, beta, C, A, B


register("symm", symm, _symm_args, "npbench/benchmarks/polybench/symm/symm_numpy.py", reduced=8)


# =============================================================================================
# npbench/benchmarks/polybench/syr2k/syr2k_numpy.py


def syr2k(alpha, beta, C, A, B):

    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += (A[:i + 1, k] * alpha * B[i, k] +
                             B[:i + 1, k] * alpha * A[i, k])


def _syr2k_args(rng, M=3, N=5, datatype=np.float64):
    alpha = datatype(1.5)
    beta = datatype(1.2)
    C = np.fromfunction(lambda i, j: ((i * j + 3) % N) / M, (N, N), dtype=datatype)
    A = np.fromfunction(lambda i, j: ((i * j + 1) % N) / N, (N, M), dtype=datatype)
    B = np.fromfunction(lambda i, j: ((i * j + 2) % M) / M, (N, M), dtype=datatype)
    return alpha, beta, C, A, B


register("syr2k", syr2k, _syr2k_args, "npbench/benchmarks/polybench/syr2k/syr2k_numpy.py", reduced=8)


# =============================================================================================
# npbench/benchmarks/polybench/syrk/syrk_numpy.py


def syrk(alpha, beta, C, A):

    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]


def _syrk_args(rng, M=3, N=5, datatype=np.float64):
    alpha = datatype(1.5)
    beta = datatype(1.2)
    C = np.fromfunction(lambda i, j: ((i * j + 2) % N) / M, (N, N), dtype=datatype)
    A = np.fromfunction(lambda i, j: ((i * j + 1) % N) / N, (N, M), dtype=datatype)
    return alpha, beta, C, A


register("syrk", syrk, _syrk_args, "npbench/benchmarks/polybench/syrk/syrk_numpy.py", reduced=8)


# =============================================================================================
# npbench/benchmarks/polybench/trisolv/trisolv_numpy.py


def trisolv(L, x, b):

    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def _trisolv_args(rng, N=6, datatype=np.float64):
    L = np.fromfunction(lambda i, j: (i + N - j + 1) * 2 / N, (N, N), dtype=datatype)
    x = np.full((N, ), -999, dtype=datatype)
    b = np.fromfunction(lambda i: i, (N, ), dtype=datatype)
    return L, x, b


register("trisolv", trisolv, _trisolv_args, "npbench/benchmarks/polybench/trisolv/trisolv_numpy.py",
         tol=(1e-11, 1e-12), notes="forward substitution: x[i] depends on all earlier x")


# =============================================================================================
# npbench/benchmarks/polybench/trmm/trmm_numpy.py


def trmm(alpha, A, B):

    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha


def _trmm_args(rng, M=4, N=5, datatype=np.float64):
    alpha = datatype(1.5)
    A = np.fromfunction(lambda i, j: ((i * j) % M) / M, (M, M), dtype=datatype)
    for i in range(M):
        A[i, i] = 1.0
    B = np.fromfunction(lambda i, j: ((N + i - j) % N) / N, (M, N), dtype=datatype)
    return alpha, A, B


register("trmm", trmm, _trmm_args, "npbench/benchmarks/polybench/trmm/trmm_numpy.py", reduced=8)


# =============================================================================================
# npbench/benchmarks/pythran/arc_distance/arc_distance_numpy.py
# Copyright (c) 2019, Serge Guelton. All rights reserved. (BSD 3-clause: redistribution and use
# in source and binary forms, with or without modification, are permitted provided that the
# copyright notice, this list of conditions and the disclaimer are retained; THIS SOFTWARE IS
# PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR IMPLIED
# WARRANTIES ARE DISCLAIMED. Neither the name of HPCProject, Serge Guelton nor the names of its
# contributors may be used to endorse or promote products derived from this software without
# specific prior written permission.)


def arc_distance(theta_1, phi_1, theta_2, phi_2):
    """
    Calculates the pairwise arc distance between all points in vector a and b.
    """
    temp = np.sin((theta_2 - theta_1) /
                  2)**2 + np.cos(theta_1) * np.cos(theta_2) * np.sin(
                      (phi_2 - phi_1) / 2)**2
    distance_matrix = 2 * (np.arctan2(np.sqrt(temp), np.sqrt(1 - temp)))
    return distance_matrix


def _arc_args(rng, N=100):
    t0, p0, t1, p1 = rng.random((N, )), rng.random((N, )), rng.random((N, )), rng.random((N, ))
    return t0, p0, t1, p1


register("arc_distance", arc_distance, _arc_args, "npbench/benchmarks/pythran/arc_distance/arc_distance_numpy.py",
         reduced=4)


# =============================================================================================
# npbench/benchmarks/scattering_self_energies/scattering_self_energies_numpy.py
# Copyright 2021 ETH Zurich and the NPBench authors. All rights reserved.


def scattering_self_energies(neigh_idx, dH, G, D, Sigma):

    for k in range(G.shape[0]):
        for E in range(G.shape[1]):
            for q in range(D.shape[0]):
                for w in range(D.shape[1]):
                    for i in range(D.shape[-2]):
                        for j in range(D.shape[-1]):
                            for a in range(neigh_idx.shape[0]):
                                for b in range(neigh_idx.shape[1]):
                                    if E - w >= 0:
                                        dHG = G[k, E - w,
                                                neigh_idx[a, b]] @ dH[a, b, i]
                                        dHD = dH[a, b, j] * D[q, w, a, b, i, j]
                                        Sigma[k, E, a] += dHG @ dHD


def _sse_args(rng, Nkz=1, NE=2, Nqz=1, Nw=1, N3D=1, NA=2, NB=2, Norb=2):
    neigh_idx = np.ndarray([NA, NB], dtype=np.int32)
    for i in range(NA):
        neigh_idx[i] = np.positive(np.arange(i - NB / 2, i + NB / 2) % NA)
    dH = _rng_complex([NA, NB, N3D, Norb, Norb], rng)
    G = _rng_complex([Nkz, NE, NA, Norb, Norb], rng)
    D = _rng_complex([Nqz, Nw, NA, NB, N3D, N3D], rng)
    Sigma = np.zeros([Nkz, NE, NA, Norb, Norb], dtype=np.complex128)
    return neigh_idx, dH, G, D, Sigma


register("scattering_self_energies", scattering_self_energies, _sse_args,
         "npbench/benchmarks/scattering_self_energies/scattering_self_energies_numpy.py", reduced=16)


# =============================================================================================
# npbench/benchmarks/spmv/spmv_numpy.py


# Matrix-Vector Multiplication with the matrix given in Compressed Sparse Row
# (CSR) format
def spmv(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)

    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]

    return y


def _spmv_args(rng, M=8, N=8, nnz=16):
    # npbench builds the CSR matrix with scipy.sparse.random (scipy is not a dependency here):
    # the same format, `nnz` distinct random positions with random values.
    x = rng.random((N, ))
    flat = np.sort(rng.choice(M * N, size=nnz, replace=False))
    rows_of, cols = np.divmod(flat, N)
    indptr = np.zeros(M + 1, dtype=np.int64)
    np.add.at(indptr, rows_of + 1, 1)
    indptr = np.cumsum(indptr)
    rows = np.uint32(indptr)
    cols = np.uint32(cols)
    vals = rng.random(nnz)
    return rows, cols, vals, x


register("spmv", spmv, _spmv_args, "npbench/benchmarks/spmv/spmv_numpy.py", reduced=8)


# =============================================================================================
# npbench/benchmarks/stockham_fft/stockham_fft_numpy.py


def stockham_fft(N, R, K, x, y):

    # Generate DFT matrix for radix R.
    # Define transient variable for matrix.
    i_coord, j_coord = np.mgrid[0:R, 0:R]
    dft_mat = np.empty((R, R), dtype=np.complex128)
    dft_mat = np.exp(-2.0j * np.pi * i_coord * j_coord / R)
    # Move input x to output y
    # to avoid overwriting the input.
    y[:] = x[:]

    ii_coord, jj_coord = np.mgrid[0:R, 0:R**K]

    # Main Stockham loop
    for i in range(K):

        # Stride permutation
        yv = np.reshape(y, (R**i, R, R**(K - i - 1)))
        tmp_perm = np.transpose(yv, axes=(1, 0, 2))
        # Twiddle Factor multiplication
        D = np.empty((R, R**i, R**(K - i - 1)), dtype=np.complex128)
        tmp = np.exp(-2.0j * np.pi * ii_coord[:, :R**i] * jj_coord[:, :R**i] /
                     R**(i + 1))
        D[:] = np.repeat(np.reshape(tmp, (R, R**i, 1)), R**(K - i - 1), axis=2)
        tmp_twid = np.reshape(tmp_perm, (N, )) * np.reshape(D, (N, ))
        # Product with Butterfly
        y[:] = np.reshape(dft_mat @ np.reshape(tmp_twid, (R, R**(K - 1))),
                          (N, ))


def _stockham_args(rng, R=2, K=3):
    N = R**K
    X = _rng_complex((N, ), rng)
    Y = np.zeros_like(X, dtype=np.complex128)
    return N, R, K, X, Y


register("stockham_fft", stockham_fft, _stockham_args, "npbench/benchmarks/stockham_fft/stockham_fft_numpy.py",
         tol=(1e-12, 1e-12), notes="K butterfly stages of complex exponentials and products",
         static_argnames=("N", "R", "K"))


# =============================================================================================
# npbench/benchmarks/weather_stencils/hdiff/hdiff_numpy.py
# Adapted from https://github.com/GridTools/gt4py/blob/1caca893034a18d5df1522ed251486659f846589/tests/test_integration/stencil_definitions.py#L194


def hdiff(in_field, out_field, coeff):
    I, J, K = out_field.shape[0], out_field.shape[1], out_field.shape[2]
    lap_field = 4.0 * in_field[1:I + 3, 1:J + 3, :] - (
        in_field[2:I + 4, 1:J + 3, :] + in_field[0:I + 2, 1:J + 3, :] +
        in_field[1:I + 3, 2:J + 4, :] + in_field[1:I + 3, 0:J + 2, :])

    res = lap_field[1:, 1:J + 1, :] - lap_field[:-1, 1:J + 1, :]
    flx_field = np.where(
        (res *
         (in_field[2:I + 3, 2:J + 2, :] - in_field[1:I + 2, 2:J + 2, :])) > 0,
        0,
        res,
    )

    res = lap_field[1:I + 1, 1:, :] - lap_field[1:I + 1, :-1, :]
    fly_field = np.where(
        (res *
         (in_field[2:I + 2, 2:J + 3, :] - in_field[2:I + 2, 1:J + 2, :])) > 0,
        0,
        res,
    )

    out_field[:, :, :] = in_field[2:I + 2, 2:J + 2, :] - coeff[:, :, :] * (
        flx_field[1:, :, :] - flx_field[:-1, :, :] + fly_field[:, 1:, :] -
        fly_field[:, :-1, :])


def _hdiff_args(rng, I=4, J=4, K=3):
    in_field = rng.random((I + 4, J + 4, K))
    out_field = rng.random((I, J, K))
    coeff = rng.random((I, J, K))
    return in_field, out_field, coeff


register("hdiff", hdiff, _hdiff_args, "npbench/benchmarks/weather_stencils/hdiff/hdiff_numpy.py", reduced=8)


# =============================================================================================
# npbench/benchmarks/weather_stencils/vadv/vadv_numpy.py
# Adapted from https://github.com/GridTools/gt4py/blob/1caca893034a18d5df1522ed251486659f846589/tests/test_integration/stencil_definitions.py#L111

# Sample constants
BET_M = 0.5
BET_P = 0.5


def vadv(utens_stage, u_stage, wcon, u_pos, utens, dtr_stage):
    I, J, K = utens_stage.shape[0], utens_stage.shape[1], utens_stage.shape[2]
    ccol = np.ndarray((I, J, K), dtype=utens_stage.dtype)
    dcol = np.ndarray((I, J, K), dtype=utens_stage.dtype)
    data_col = np.ndarray((I, J), dtype=utens_stage.dtype)

    for k in range(1):
        gcv = 0.25 * (wcon[1:, :, k + 1] + wcon[:-1, :, k + 1])
        cs = gcv * BET_M

        ccol[:, :, k] = gcv * BET_P
        bcol = dtr_stage - ccol[:, :, k]

        # update the d column
        correction_term = -cs * (u_stage[:, :, k + 1] - u_stage[:, :, k])
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] +
                         utens_stage[:, :, k] + correction_term)

        # Thomas forward
        divided = 1.0 / bcol
        ccol[:, :, k] = ccol[:, :, k] * divided
        dcol[:, :, k] = dcol[:, :, k] * divided

    for k in range(1, K - 1):
        gav = -0.25 * (wcon[1:, :, k] + wcon[:-1, :, k])
        gcv = 0.25 * (wcon[1:, :, k + 1] + wcon[:-1, :, k + 1])

        as_ = gav * BET_M
        cs = gcv * BET_M

        acol = gav * BET_P
        ccol[:, :, k] = gcv * BET_P
        bcol = dtr_stage - acol - ccol[:, :, k]

        # update the d column
        correction_term = -as_ * (u_stage[:, :, k - 1] -
                                  u_stage[:, :, k]) - cs * (
                                      u_stage[:, :, k + 1] - u_stage[:, :, k])
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] +
                         utens_stage[:, :, k] + correction_term)

        # Thomas forward
        divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
        ccol[:, :, k] = ccol[:, :, k] * divided
        dcol[:, :, k] = (dcol[:, :, k] - (dcol[:, :, k - 1]) * acol) * divided

    for k in range(K - 1, K):
        gav = -0.25 * (wcon[1:, :, k] + wcon[:-1, :, k])
        as_ = gav * BET_M
        acol = gav * BET_P
        bcol = dtr_stage - acol

        # update the d column
        correction_term = -as_ * (u_stage[:, :, k - 1] - u_stage[:, :, k])
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] +
                         utens_stage[:, :, k] + correction_term)

        # Thomas forward
        divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
        dcol[:, :, k] = (dcol[:, :, k] - (dcol[:, :, k - 1]) * acol) * divided

    for k in range(K - 1, K - 2, -1):
        datacol = dcol[:, :, k]
        data_col[:] = datacol
        utens_stage[:, :, k] = dtr_stage * (datacol - u_pos[:, :, k])

    for k in range(K - 2, -1, -1):
        datacol = dcol[:, :, k] - ccol[:, :, k] * data_col[:, :]
        data_col[:] = datacol
        utens_stage[:, :, k] = dtr_stage * (datacol - u_pos[:, :, k])


def _vadv_args(rng, I=3, J=3, K=4):
    dtr_stage = 3. / 20.
    utens_stage = rng.random((I, J, K))
    u_stage = rng.random((I, J, K))
    wcon = rng.random((I + 1, J, K))
    u_pos = rng.random((I, J, K))
    utens = rng.random((I, J, K))
    return utens_stage, u_stage, wcon, u_pos, utens, dtr_stage


register("vadv", vadv, _vadv_args, "npbench/benchmarks/weather_stencils/vadv/vadv_numpy.py",
         tol=(1e-11, 1e-12), notes="Thomas algorithm: forward and backward recurrences over K")


# =============================================================================================
# picoGPT layers (github.com/jaymody/picoGPT, gpt2.py, MIT License, Copyright (c) 2023 Jay Mody)

PICOGPT = "github.com/jaymody/picoGPT (MIT, Copyright (c) 2023 Jay Mody): gpt2.py"


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _gpt_weights(rng, n_embd=8):
    return dict(
        fc_w=_f32(rng, n_embd, 4 * n_embd, scale=0.3), fc_b=_f32(rng, 4 * n_embd, scale=0.1),
        mproj_w=_f32(rng, 4 * n_embd, n_embd, scale=0.3), mproj_b=_f32(rng, n_embd, scale=0.1),
        attn_w=_f32(rng, n_embd, 3 * n_embd, scale=0.3), attn_b=_f32(rng, 3 * n_embd, scale=0.1),
        aproj_w=_f32(rng, n_embd, n_embd, scale=0.3), aproj_b=_f32(rng, n_embd, scale=0.1),
        ln1_g=1.0 + _f32(rng, n_embd, scale=0.1), ln1_b=_f32(rng, n_embd, scale=0.1),
        ln2_g=1.0 + _f32(rng, n_embd, scale=0.1), ln2_b=_f32(rng, n_embd, scale=0.1),
    )


def _gpt_block_args(rng, n_seq=6, n_embd=8, n_head=2):
    w = _gpt_weights(rng, n_embd)
    return (_f32(rng, n_seq, n_embd), w["fc_w"], w["fc_b"], w["mproj_w"], w["mproj_b"], w["attn_w"],
            w["attn_b"], w["aproj_w"], w["aproj_b"], w["ln1_g"], w["ln1_b"], w["ln2_g"], w["ln2_b"], n_head)


def _gpt_mha_args(rng, n_seq=6, n_embd=8, n_head=2):
    w = _gpt_weights(rng, n_embd)
    return _f32(rng, n_seq, n_embd), w["attn_w"], w["attn_b"], w["aproj_w"], w["aproj_b"], n_head


def _gpt_ffn_args(rng, n_seq=6, n_embd=8):
    w = _gpt_weights(rng, n_embd)
    return _f32(rng, n_seq, n_embd), w["fc_w"], w["fc_b"], w["mproj_w"], w["mproj_b"]


def _gpt_attention_args(rng, n_q=6, n_k=6, d_k=4, d_v=4):
    mask = (1 - np.tri(n_q, n_k, dtype=np.float32)) * -1e10
    return _f32(rng, n_q, d_k), _f32(rng, n_k, d_k), _f32(rng, n_k, d_v), mask


# x**3 is computed in float32 (NumPy's own float32 power, not correctly rounded; within an ULP)
# before np.sqrt(2 / np.pi), a float64 scalar, promotes the rest: a float32 tolerance.
register("picogpt_gelu", picogpt.gelu, lambda rng: (_f32(rng, 6, 32, scale=2.0),), "", source=PICOGPT,
         tol=(1e-6, 1e-7))
register("picogpt_layer_norm", picogpt.layer_norm,
         lambda rng: (_f32(rng, 6, 16), 1.0 + _f32(rng, 16, scale=0.1), _f32(rng, 16, scale=0.1)), "",
         source=PICOGPT, reduced=16)
register("picogpt_attention", picogpt.attention, _gpt_attention_args, "", source=PICOGPT,
         tol=(1e-5, 1e-6), notes="float32 softmax of 4-term dot products, then a 6-term product")
register("picogpt_ffn", picogpt.ffn_flat, _gpt_ffn_args, "", source=PICOGPT + " (ffn, via ffn_flat)",
         tol=(1e-5, 1e-6), notes="float32 matmuls of 8 and 32 terms around a GELU")
register("picogpt_mha", picogpt.mha_flat, _gpt_mha_args, "", source=PICOGPT + " (mha, via mha_flat)",
         tol=(1e-5, 1e-6), notes="float32 qkv projection, causal attention per head, projection",
         static_argnames=("n_head",))
register("picogpt_transformer_block", picogpt.transformer_block_flat, _gpt_block_args, "",
         source=PICOGPT + " (transformer_block, via transformer_block_flat)", tol=(1e-5, 1e-6),
         notes="float32: layer norm, causal multi-head attention, layer norm, GELU MLP",
         static_argnames=("n_head",))

# The same layer without static_argnames: numfuse makes a Python int static automatically when
# it is used as a Python value, but n_head reaches np.split as its section count (kept as a
# program of its own so that what happens there stays visible).
register("picogpt_mha_auto_static", picogpt.mha_flat, _gpt_mha_args, "",
         source=PICOGPT + " (mha, via mha_flat; n_head not declared static)", tol=(1e-5, 1e-6),
         notes="as picogpt_mha")


BY_NAME = {p.name: p for p in PROGRAMS}
assert len(BY_NAME) == len(PROGRAMS), "duplicate program names"
