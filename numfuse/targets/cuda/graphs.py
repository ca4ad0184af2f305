"""`numfuse.jit(cuda_graphs=True)`: a plan of several kernels launched as one CUDA graph.

Each kernel launch costs the driver a few microseconds on the host and leaves a gap on the
device before the next kernel starts. A CUDA graph submits a chain of kernels in one launch.
numfuse builds the graph explicitly (cuda.core's GraphDefinition: one kernel node per launch,
each depending on the one before) from the first fast call's packed parameters, and on later
calls of the same signature updates every node's parameters (only the data pointers and
scalar values change; cuGraphExecKernelNodeSetParams affects future launches only, never a
launch already queued) before launching the graph on the call's stream.

Used only on the fast path (fastcall.py) on a GPU, for plans of two or more kernels: one kernel
gains nothing from a graph. Whether it is faster than launching the kernels one by one depends
on the driver and the plan; `python -m benchmarks.host_overhead` times both on a GPU. Where
cuda.core lacks explicit graphs (before GraphDefinition), the kernels are launched one by one
with a NumfuseWarning, as they are where building the graph fails.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any, Sequence

from ...errors import NumfuseWarning


def graph_definition_class():
    """cuda.core's GraphDefinition, or None where this cuda.core has no explicit graphs."""
    try:
        from cuda.core.graph import GraphDefinition
    except ImportError:
        return None
    return GraphDefinition


class KernelGraph:
    """The launches of one fast call as one graph. `kernels` are launch.GpuKernel objects (their
    `function` and cuda.core `config`); a call passes each kernel's packed parameters."""

    def __init__(self, kernels: Sequence[Any], definition_class):
        self.kernels = list(kernels)
        self._definition_class = definition_class
        self._definition = None  # kept alive with the executable graph
        self.graph = None
        self.nodes: list = []
        self.failed = False  # the graph could not be built: the kernels launch one by one
        # Updating the nodes and launching is one step: another thread's update in between
        # would launch this call's kernels with that call's pointers.
        self._lock = threading.Lock()

    def __call__(self, stream, *params: Sequence) -> None:
        with self._lock:
            if self.graph is None and not self.failed:
                try:
                    self._build(params)
                except Exception as err:  # a driver or cuda.core that cannot build this graph
                    self.failed = True
                    warnings.warn(
                        f"numfuse: cuda_graphs=True could not build a CUDA graph ({type(err).__name__}: {err}); "
                        "the kernels launch one by one", NumfuseWarning, stacklevel=3,
                    )
            elif not self.failed:
                for node, kernel, packed in zip(self.nodes, self.kernels, params):
                    node.update(config=kernel.config, kernel=kernel.function, args=packed)
            if self.failed:
                for kernel, packed in zip(self.kernels, params):
                    kernel(stream, packed)
                return
            self.graph.launch(stream)

    def _build(self, params: Sequence[Sequence]) -> None:
        definition = self._definition_class()
        node, nodes = definition, []
        for kernel, packed in zip(self.kernels, params):
            node = node.launch(kernel.config, kernel.function, *packed)
            nodes.append(node)
        graph = definition.instantiate()
        self.nodes = [graph[n] for n in nodes]
        self._definition, self.graph = definition, graph


def kernel_graph(kernels: Sequence[Any]) -> KernelGraph | None:
    """A KernelGraph for these kernels, or None (with a warning) where cuda.core cannot build
    one."""
    definition_class = graph_definition_class()
    if definition_class is None:
        warnings.warn(
            "numfuse: this cuda.core has no explicit CUDA graphs (cuda.core.graph.GraphDefinition); "
            "cuda_graphs=True launches the kernels one by one",
            NumfuseWarning, stacklevel=4,
        )
        return None
    return KernelGraph(kernels, definition_class)
