"""A fast call (fastcall.py) as one straight-line Python function, built through `ast`.

The loops of `FastCall.__call__` cost a few microseconds per call in Python. On a GPU every
loop is over things the key fixes (which arguments are arrays, what each kernel takes), so
the same work can be written out once per signature. For `x * y + z` on three CuPy arrays:

    def fast_call(args):
        if not context.ready:
            context.ensure(cuda)
        v0 = args[0]
        v1 = args[1]
        v2 = args[2]
        d0 = data(v0)
        d1 = data(v1)
        d2 = data(v2)
        r3, d3 = empty(shape3, dtype3)
        handle = stream_handle()
        stream = stream0 if handle == handle0 else get_stream(handle)
        kernel0(stream, [0, 0, 1024, 4, d0, 1024, 4, 0, 0, 1024, 4, d1, ..., size0])
        return finish([r3])

Names other than the locals are the function's globals: the library's accessors, the kernels,
the parameters fixed by the key. `str(stub)` is that source, via `ast.unparse`. With a CUDA
graph (graphs.py) the kernels' calls become one: `graph(stream, [...], [...])`.
"""

from __future__ import annotations

import ast
from typing import Any, Callable

from ...codegen.pyast import assign, call, var
from ...errors import ScalarOutOfRange
from .device import THREAD_CONTEXT


def _out_of_range(index: int):
    raise ScalarOutOfRange(index)


class CallStub:
    """The straight-line function of a GPU-mode FastCall."""

    def __init__(self, fast):
        env: dict[str, Any] = {"data": fast.access.data, "empty": fast.access.empty,
                               "stream_handle": fast.access.stream_handle, "finish": fast.finish,
                               "out_of_range": _out_of_range, "stream0": fast.stream,
                               "handle0": fast.stream_handle, "get_stream": fast.other_stream}
        env.update(context=THREAD_CONTEXT, cuda=fast.executable.backend.cuda)
        body: list[ast.stmt] = [ast.If(  # if not context.ready: context.ensure(cuda)
            test=ast.UnaryOp(ast.Not(), ast.Attribute(var("context"), "ready", ast.Load())),
            body=[ast.Expr(ast.Call(ast.Attribute(var("context"), "ensure", ast.Load()), [var("cuda")], []))],
            orelse=[])]
        positions = fast.traced_positions
        used = sorted({k for k, _ in fast.input_slots} | {i for i, _, _ in fast.scalar_casts}
                      | {i for slot, i in fast.outputs if not slot})
        for k in used:
            body.append(assign(f"v{k}", ast.Subscript(var("args"), ast.Constant(positions[k]), ast.Load())))
        scalar_names = {}
        for n, (i, dtype, make) in enumerate(fast.scalar_casts):
            env[f"make{n}"] = make
            scalar_names[i, dtype] = f"c{n}"
            body.append(ast.Try(
                body=[assign(f"c{n}", call(f"make{n}", var(f"v{i}")))],
                handlers=[ast.ExceptHandler(var("OverflowError"), None,
                                            [ast.Expr(call("out_of_range", ast.Constant(i)))])],
                orelse=[], finalbody=[],
            ))
        slot_values: dict[int, ast.expr] = {}
        for slot, value in enumerate(fast.fixed_slots):
            if value is not None:
                env[f"fixed{slot}"] = value
                slot_values[slot] = var(f"fixed{slot}")
        for k, slot in fast.input_slots:
            body.append(assign(f"d{slot}", call("data", var(f"v{k}"))))
            slot_values[slot] = var(f"d{slot}")
        for slot, shape, dtype in fast.alloc_slots:
            env[f"shape{slot}"], env[f"dtype{slot}"] = shape, dtype
            body.append(assign((f"r{slot}", f"d{slot}"), call("empty", var(f"shape{slot}"), var(f"dtype{slot}"))))
            slot_values[slot] = var(f"d{slot}")
        if fast.follow_library_stream:
            body.append(assign("handle", call("stream_handle")))
            body.append(assign("stream", ast.IfExp(
                ast.Compare(var("handle"), [ast.Eq()], [var("handle0")]),
                var("stream0"), call("get_stream", var("handle")))))
        else:
            body.append(assign("stream", var("stream0")))
        launched: list[ast.expr] = []  # each kernel's parameters, for the graph
        for j, (kernel, template, array_patches, scalar_patches) in enumerate(fast.launches):
            env[f"kernel{j}"] = kernel
            items: list[ast.expr] = []
            for at, value in enumerate(template):
                if isinstance(value, int) and not isinstance(value, bool):
                    items.append(ast.Constant(value))
                else:
                    env[f"t{j}_{at}"] = value
                    items.append(var(f"t{j}_{at}"))
            for at, slot, _ in array_patches:
                items[at] = slot_values[slot]
            # From the last: a complex scalar's two entries become one starred item.
            for n, (at, width, key, pack) in reversed(list(enumerate(scalar_patches))):
                env[f"pack{j}_{n}"] = pack
                items[at] = ast.Starred(call(f"pack{j}_{n}", var(scalar_names[key])), ast.Load())
                del items[at + 1:at + width]
            if fast.graph is None:
                body.append(ast.Expr(call(f"kernel{j}", var("stream"), ast.List(items, ast.Load()))))
            else:
                launched.append(ast.List(items, ast.Load()))
        if fast.graph is not None:
            env["graph"] = fast.graph
            body.append(ast.Expr(call("graph", var("stream"), *launched)))
        outputs = [var(f"r{i}") if slot else var(f"v{i}") for slot, i in fast.outputs]
        body.append(ast.Return(call("finish", ast.List(outputs, ast.Load()))))
        arguments = ast.arguments(posonlyargs=[], args=[ast.arg("args")], vararg=None, kwonlyargs=[],
                                  kw_defaults=[], kwarg=None, defaults=[])
        fn = ast.FunctionDef(name="fast_call", args=arguments, body=body, decorator_list=[], returns=None)
        module = ast.fix_missing_locations(ast.Module([fn], []))
        self.source = ast.unparse(module)
        exec(compile(module, "<numfuse fast call>", "exec"), env)
        self.function: Callable = env["fast_call"]

    def __str__(self) -> str:
        return self.source
