"""The layout shows the architecture: one package a stage, one folder a target. Each module
imports (anywhere in it, function-level imports included) only from its own stage or earlier
ones; the two targets never import each other; and no import cycle exists, lazy or not."""

import ast
from pathlib import Path

import numfuse

PACKAGE = Path(numfuse.__file__).parent

# Each stage and what it may import. The base modules (errors, debug, version) every stage may.
BASE = {"numfuse.errors", "numfuse.debug", "numfuse.version"}
STAGES = {
    "numfuse.ir": set(),
    "numfuse.frontend": {"numfuse.ir"},
    "numfuse.loops": {"numfuse.ir"},
    "numfuse.plan": {"numfuse.ir", "numfuse.loops"},
    "numfuse.codegen": {"numfuse.ir", "numfuse.loops"},
    "numfuse.runtime": {"numfuse.ir", "numfuse.loops", "numfuse.plan", "numfuse.codegen"},
    "numfuse.targets": {"numfuse.ir", "numfuse.loops", "numfuse.plan", "numfuse.codegen", "numfuse.runtime"},
}
# The API on top (numfuse, api, jit_function, compiled, explain, cache, numpy_fallback) may import every stage.
TOP = {"numfuse", "numfuse.api", "numfuse.jit_function", "numfuse.compiled", "numfuse.explain", "numfuse.cache",
       "numfuse.numpy_fallback"}


def _modules() -> dict[str, Path]:
    return {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
            for p in PACKAGE.rglob("*.py")}


MODULES = _modules()


def _imports(module: str) -> set[str]:
    """The numfuse modules `module` imports, anywhere in it: `from . import x` names module x,
    `from .m import y` module m (or m.y where that is a module)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            named = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
            found.update(named or [target])
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m in MODULES and m != module}


GRAPH = {m: _imports(m) for m in MODULES}


def _stage(module: str) -> str:
    if module in BASE:
        return "base"
    if module in TOP:
        return "top"
    for stage in STAGES:
        if module == stage or module.startswith(stage + "."):
            return stage
    raise AssertionError(f"{module} belongs to no stage: add it to one (or to BASE or TOP)")


def test_every_module_belongs_to_a_stage():
    for module in MODULES:
        _stage(module)


def _upward(graph) -> list[str]:
    """Each import of a later stage (or a stage not allowed), as text."""
    found = []
    for module, imported in sorted(graph.items()):
        stage = _stage(module)
        if stage == "top":
            continue
        allowed = {"base"} if stage == "base" else STAGES[stage] | {stage, "base"}
        found += [f"{module} ({stage}) imports {m}" for m in sorted(imported) if _stage(m) not in allowed]
    return found


def _cycle(graph) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(m, stack):
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack + [m, n]
            if n not in state:
                found = visit(n, stack + [m])
                if found:
                    return found
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [])
            if found:
                return found
    return None


def test_a_stage_imports_only_itself_and_earlier_stages():
    assert _upward(GRAPH) == []


def test_the_targets_do_not_import_each_other():
    for module in MODULES:
        for own, other in (("numfuse.targets.cuda", "numfuse.targets.cpu"), ("numfuse.targets.cpu", "numfuse.targets.cuda")):
            if module.startswith(own):
                assert not any(m.startswith(other) for m in GRAPH[module]), module
    # What every target shares is targets/base.py; it imports neither.
    assert not any(m.startswith("numfuse.targets.c") for m in GRAPH["numfuse.targets.base"])


def test_no_import_cycles_function_level_imports_included():
    cycle = _cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_checks_find_a_planted_upward_import_and_cycle():
    """The checks read what they claim to: lazy imports are in the graph, and an upward import
    or a cycle planted in it is found."""
    assert "numfuse.targets.cuda.executable" in GRAPH["numfuse.targets.cuda"]  # a function-level import
    assert "numfuse.loops.spec" in GRAPH["numfuse.loops.lower"]
    planted = {m: set(i) for m, i in GRAPH.items()}
    planted["numfuse.loops.collapse"].add("numfuse.targets.cuda.device_props")
    assert _upward(planted) == ["numfuse.loops.collapse (numfuse.loops) imports numfuse.targets.cuda.device_props"]
    planted = {m: set(i) for m, i in GRAPH.items()}
    planted["numfuse.ir.ops"].add("numfuse.ir.primitives")  # primitives imports ops
    assert _cycle(planted) is not None
