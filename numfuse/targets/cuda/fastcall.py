"""The call path of a signature already run once on device arrays: everything precomputed.

A call's key (`fast_key`) is, per positional argument, its type, and for arrays also shape,
dtype and strides; for static arguments their value. The first call of a key goes through
jit's full path (arguments classified, arrays described and checked, traced, planned,
compiled, run). When that call's arrays were device arrays of one library that numfuse can
address directly, the executable then builds a `FastCall` for the key: the kernels' packed
parameters with everything fixed by the key filled in (shapes, strides, sizes, constants,
scratch buffers), and for each array argument, each buffer to allocate and each scalar, where
its pointer or value goes. A later call with that key only reads the arrays' data pointers,
allocates the results through the library, casts the scalars and launches.

Not taken (the full path runs each time): NumPy arguments (copies), several GPUs on the
machine, plans that check run-time errors, constant outputs, a stream option with CuPy or
PyTorch arrays (their interface may ask for a wait), and libraries other than Numba, CuPy and
PyTorch.

With `cuda_graphs=True` a plan of several kernels launches on the fast path as one CUDA graph
(graphs.py) that each call updates with its pointers and scalars.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...errors import OtherStream, ScalarOutOfRange
from . import graphs
from .call_stub import CallStub
from .device import THREAD_CONTEXT
from ...runtime.scalars import scalar_cast
from .launch import DATA_SLOT, array_params, c_strides, scalar_packer, size_param

from ...runtime.fast_keys import register_array_type


class FastCall:
    """One signature's call on device arrays of one library; see the module docstring."""

    def __init__(self, executable, call, access, values: Sequence, traced_positions: Sequence[int],
                 finish: Callable[[list], Any], follow_library_stream: bool):
        plan = executable.plan
        self.executable = executable
        self.simulated = executable.backend.simulated
        self.access = access
        self.finish = finish
        self.traced_positions = list(traced_positions)
        self.all_traced = self.traced_positions == list(range(len(self.traced_positions)))
        self.scalar_casts = [(i, dtype, scalar_cast(dtype)) for i, dtype in executable.scalar_casts]
        self.stream_handle = call.handle
        self.stream = call.stream if self.simulated else executable.core_streams.get(call.handle)
        self.follow_library_stream = follow_library_stream
        consts = executable.device_consts(call)

        # Slots: every array the kernels take. Inputs come from the arguments, buffers are
        # allocated per call, constants and scratch arrays are fixed.
        slot_of: dict[Any, int] = {}
        self.input_slots: list[tuple[int, int]] = []  # (traced input index, slot)
        self.alloc_slots: list[tuple[int, tuple, np.dtype]] = []
        self.fixed: dict[int, Any] = {}
        for k, var in enumerate(plan.graph.inputs):
            if k not in plan.scalar_inputs:
                slot_of[var] = len(slot_of)
                self.input_slots.append((k, slot_of[var]))
        for var in executable.buffers.allocated:  # the full path's buffer plan
            slot_of[var] = len(slot_of)
            self.alloc_slots.append((slot_of[var], var.aval.shape, var.aval.dtype))
        for var, root in plan.aliases.items():
            slot_of[var] = slot_of[root]
        for var, array in consts.items():
            slot_of.setdefault(var, len(slot_of))
            self.fixed[slot_of[var]] = array
        self.nslots = len(slot_of)

        self.launches = []
        for index, launch in enumerate(executable.launches):
            if launch.empty:
                continue
            kernel = executable.kernel(call.device_id, index)
            template, array_patches, scalar_patches = [], [], []
            for position, arg in enumerate(launch.args):
                if arg[0] == "buffer":
                    var, view = arg[1], arg[2]
                    slot = slot_of[var]
                    strided = view == var.aval.shape and k_strided(launch, position)
                    if self.simulated:
                        array_patches.append((len(template), slot, None if view == var.aval.shape else view))
                        template.append(None)
                    else:
                        array_patches.append((len(template) + DATA_SLOT, slot, None))
                        if strided:  # an argument read through its own strides
                            template.extend(self._strided_params(values, plan, var, call))
                        else:
                            itemsize = var.aval.dtype.itemsize
                            template.extend(array_params(0, view, c_strides(view, itemsize), itemsize))
                elif arg[0] == "scalar":
                    pack = (lambda v: [v]) if self.simulated else scalar_packer(arg[1][1])
                    width = 1 if self.simulated or arg[1][1].kind != "c" else 2
                    scalar_patches.append((len(template), width, arg[1], pack))
                    template.extend([None] * width)
                elif arg[0] == "scratch":
                    scratch = executable.scratch_array(call, index, position, *arg[1])
                    if self.simulated:
                        template.append(scratch)
                    else:
                        template.extend(_params_of(scratch))
                elif arg[0] == "size":
                    template.append(arg[1] if self.simulated else size_param(arg[1]))
                elif arg[0] == "count":
                    template.extend([arg[1]] if self.simulated else scalar_packer(arg[1].dtype)(arg[1]))
                else:
                    raise ValueError(f"no fast call for a kernel argument {arg[0]!r}")
            self.launches.append((kernel, template, array_patches, scalar_patches))
        # Several kernels on a GPU, with cuda_graphs=True: one CUDA graph per signature.
        self.graph = None
        if executable.cuda_graphs and not self.simulated and len(self.launches) > 1:
            self.graph = graphs.kernel_graph([kernel for kernel, *_ in self.launches])
        # Constants and scratch arrays: the same every call (pointers, on a GPU). Scratch is
        # this stream's (Executable.scratch_array): on another stream the full path runs.
        self.stream_scratch = any(arg[0] == "scratch" for launch in executable.launches for arg in launch.args)
        self.fixed_slots: list[Any] = [None] * self.nslots
        for slot, array in self.fixed.items():
            self.fixed_slots[slot] = array if self.simulated else _params_of(array)[DATA_SLOT]

        # (True, slot): a buffer the call allocated; (False, i): traced input i, returned (an
        # argument updated in place is returned as the caller's array).
        input_of_slot = {slot: k for k, slot in self.input_slots}
        self.outputs = []
        for o in plan.outputs:
            if o.kind != "buffer":
                self.outputs.append((False, o.input_index))
            elif slot_of[o.var] in input_of_slot:
                self.outputs.append((False, input_of_slot[slot_of[o.var]]))
            else:
                self.outputs.append((True, slot_of[o.var]))
        # What a call runs: on a GPU the same steps written out as one function (call_stub.py).
        self.stub = None if self.simulated else CallStub(self)
        self.run: Callable[[Sequence], Any] = self.__call__ if self.stub is None else self.stub.function

    @staticmethod
    def _strided_params(values, plan, var, call) -> list:
        """A strided argument's parameters with its (keyed, so fixed) shape and strides."""
        root = plan.aliases.get(var, var)  # a version of an argument updated in place
        if root not in plan.graph.inputs:  # a buffer the call allocates: C-contiguous
            itemsize = var.aval.dtype.itemsize
            return array_params(0, var.aval.shape, c_strides(var.aval.shape, itemsize), itemsize)
        value = values[plan.graph.inputs.index(root)]
        detach = getattr(value, "detach", None)  # a tensor that requires grad hides its interface
        params = _params_of(value if detach is None else detach())
        params[DATA_SLOT] = 0
        return params

    def other_stream(self, handle: int):
        """The cuda.core stream of `handle`, another stream than this fast call's own."""
        if self.stream_scratch:
            raise OtherStream()
        return self.executable.core_streams.get(handle)

    def __call__(self, args: Sequence) -> Any:
        if not self.simulated and not THREAD_CONTEXT.ready:
            THREAD_CONTEXT.ensure(self.executable.backend.cuda)
        values = args if self.all_traced else [args[i] for i in self.traced_positions]
        scalars = None
        if self.scalar_casts:
            scalars = {}
            for i, dtype, make in self.scalar_casts:
                try:
                    scalars[i, dtype] = make(values[i])
                except OverflowError:
                    raise ScalarOutOfRange(i) from None
        access = self.access
        slots = self.fixed_slots.copy()
        data = access.data
        for k, slot in self.input_slots:
            slots[slot] = data(values[k])
        results = {}
        empty = access.empty
        for slot, shape, dtype in self.alloc_slots:
            results[slot], slots[slot] = empty(shape, dtype)
        stream = self.stream
        if self.follow_library_stream:
            handle = access.stream_handle()
            if handle != self.stream_handle and not self.simulated:
                stream = self.other_stream(handle)
        if self.simulated:
            with self.executable.backend.launching():
                self._launch(stream, slots, scalars)
        else:
            self._launch(stream, slots, scalars)
        return self.finish([results[i] if slot else values[i] for slot, i in self.outputs])

    def _launch(self, stream, slots, scalars) -> None:
        launched = []
        for kernel, template, array_patches, scalar_patches in self.launches:
            params = template.copy()
            for at, slot, view in array_patches:
                params[at] = slots[slot] if view is None else slots[slot].reshape(view)
            for at, width, key, pack in scalar_patches:
                params[at:at + width] = pack(scalars[key])
            if self.graph is None:
                kernel(stream, params)
            else:
                launched.append(params)
        if self.graph is not None:
            self.graph(stream, *launched)


def build(executable, call, values: Sequence, traced_positions: Sequence[int],
          finish: Callable[[list], Any], stream_option) -> FastCall | None:
    """The fast path for later calls like this one (`call`, not yet entered, on traced
    `values`), or None where it does not apply (see the module docstring)."""
    from .arrays import fast_access

    library = call.library
    access = fast_access(library, executable.backend)
    if access is None or executable.checks_errors:
        return None
    if executable.plan.library_steps:
        return None  # not yet: library calls run on the full path (plan_steps.py)
    if any(o.kind == "const" for o in executable.plan.outputs):
        return None
    plan = executable.plan
    if any(plan.aliases.get(v, v) is not plan.graph.inputs[p] for p, v in plan.graph.writebacks.items()):
        return None  # an argument's last version in another buffer: the full path copies it back
    if any(isinstance(v, np.ndarray) for v in values):
        return None
    if stream_option is not None and library.name in ("cupy", "torch"):
        return None
    if not executable.backend.simulated and len(executable.backend.cuda.gpus) != 1:
        return None
    if not executable.backend.simulated and not all(
            executable.kernel(call.device_id, i).packed for i, launch in enumerate(executable.launches)
            if not launch.empty):
        return None  # Numba's dispatcher launches: the full path
    with call:
        fast = FastCall(executable, call, access, values, traced_positions, finish, stream_option is None)
    for value in values:
        if library.owns(value):
            register_array_type(type(value), library.fast_key)
    return fast


def k_strided(launch, position: int) -> bool:
    """Whether the buffer parameter at `position` is read through its own strides."""
    name = launch.source.params[position].name
    return any(b.name == name and b.strided for b in launch.nest.buffers)


def _params_of(array) -> list:
    from .launch import device_array_params

    return device_array_params(array)

