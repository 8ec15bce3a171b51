"""The golden package in layers: every import between its modules goes down the layer order declared here, and no
imports form a cycle. The imports are read with `ast` from each module's source, those inside functions included, so
a deferred import cannot hide an upward dependency or a cycle. No module, tests included, is longer than MAX_LINES.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1]
MAX_LINES = 500  # a module longer than this holds more than one concept: split it where the concepts part

# The layers, bottom up: each with its modules (a name covers its submodules) and the layers right below it. A module
# may import its own layer's modules and those of every layer below, directly or through the layers in between.
LAYERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # the facts both the RTL and the Python side use: field widths and layouts, opcodes, error codes, banks
    "arch": (("golden.arch",), ()),
    # the bit-exact arithmetic of golden/SPEC.md
    "semantics": (("golden.fxp", "golden.fxp_ref", "golden.semantics"), ("arch",)),
    # what a run is given: the network config and the data
    "config": (("golden.config", "golden.config_file", "golden.datasets"), ("semantics",)),
    # the programs: tensors, ops and their kinds, a compiled network
    "ir": (("golden.ir",), ("config",)),
    # the units: descriptors, their plain references and cycles, the lane forms; they know no program
    "isa": (("golden.isa",), ("semantics",)),
    # the executors of the programs
    "sim": (("golden.machine", "golden.scalar_machine"), ("ir",)),
    # compiled ops -> descriptors -> the program memory image, the build parameters
    "backend": (("golden.lowering", "golden.program"), ("ir", "isa")),
    # network config -> programs: the contraction order, layouts and element orders, the memory layout
    "compiler": (("golden.planner", "golden.compiler"), ("backend",)),
    # the float reference networks the fixed-point model's accuracy is judged against
    "float": (("golden.float_tt", "golden.float_model"), ("config",)),
    # the host's policy and tools: training runs and their files, the rank schedule and recompiling, cost and memory
    # reports, float training under the same schedule
    "host": (
        (
            "golden.cost",
            "golden.memory",
            "golden.compact",
            "golden.rank_schedule",
            "golden.float_train",
            "golden.checkpoint",
            "golden.run_report",
            "golden.device",
            "golden.prune_phase",
            "golden.train",
        ),
        ("compiler", "sim", "float"),
    ),
    "cli": (("golden.__main__",), ("host",)),
    "tests": (("golden.tests",), ("cli",)),
}


def module_sources(root: Path = GOLDEN) -> dict[str, str]:
    """Every module of the package under `root` by its dotted name (a package by its __init__'s)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path.read_text()
    return out


def import_graph(sources: dict[str, str]) -> dict[str, list[tuple[str, int]]]:
    """module -> (imported module of the package, line) for every import statement anywhere in its source; `from
    golden.x import y` counts as an import of golden.x.y where that is a module, else of golden.x."""
    graph: dict[str, list[tuple[str, int]]] = {}
    for name, text in sources.items():
        is_package = any(other.startswith(name + ".") for other in sources)
        edges = []
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:  # relative: from the module's own package
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in sources else module for a in node.names]
            edges += [(t, node.lineno) for t in targets if t in sources and t != name]
        graph[name] = edges
    return graph


def layer_of(module: str) -> str | None:
    """The layer whose longest module prefix matches `module`; None for a module no layer declares."""
    best, best_len = None, -1
    for layer, (modules, _) in LAYERS.items():
        for m in modules:
            if (module == m or module.startswith(m + ".")) and len(m) > best_len:
                best, best_len = layer, len(m)
    return best


def allowed(layer: str) -> set[str]:
    """The layers a module of `layer` may import: its own and every layer below it."""
    out, todo = {layer}, [layer]
    while todo:
        for below in LAYERS[todo.pop()][1]:
            if below not in out:
                out.add(below)
                todo.append(below)
    return out


def layer_violations(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    """The imports that go against the layer order, and the modules without a layer."""
    problems = []
    for module, edges in sorted(graph.items()):
        layer = layer_of(module)
        if layer is None:
            if module != "golden":  # the package itself holds nothing
                problems.append(f"{module}: no layer declares it (golden/tests/test_layers.py LAYERS)")
            continue
        for target, line in edges:
            target_layer = layer_of(target)
            if target_layer is not None and target_layer not in allowed(layer):
                problems.append(f"{module}:{line} imports {target}: layer {layer} may not import layer {target_layer}")
    return problems


def cycles(graph: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """The import cycles among the package's modules, each as the modules around it (Tarjan's strongly connected
    components of more than one module, or a module that imports itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w, _ in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or any(w == v for w, _ in graph.get(v, ())):
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@functools.cache
def package_graph() -> dict[str, list[tuple[str, int]]]:
    """The import graph of the package as it is (read once for the tests that use it as it is)."""
    return import_graph(module_sources())


def test_every_module_is_in_a_layer_and_imports_go_down():
    problems = layer_violations(package_graph())
    assert not problems, "\n".join(problems)


def test_no_import_cycle():
    found = cycles(package_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_layers_are_a_partial_order():
    for layer, (_, below) in LAYERS.items():
        assert set(below) <= set(LAYERS), f"{layer}: unknown layers below it"
        assert all(layer not in allowed(b) for b in below), f"layer {layer} is below itself"


def test_an_upward_import_fails():
    """A deferred import of the compiler in the machine (sim may not import compiler) is found, with its line."""
    sources = module_sources()
    sources["golden.machine"] += "\n\ndef _planted():\n    from golden.compiler import compile_network\n"
    problems = layer_violations(import_graph(sources))
    assert any(p.startswith("golden.machine:") and "imports golden.compiler" in p for p in problems), problems


def test_a_cycle_fails():
    """Two modules of one layer that import each other pass the layer check, not the cycle check."""
    sources = module_sources()
    sources["golden.fxp"] += "\n\ndef _planted():\n    from golden import semantics\n"
    graph = import_graph(sources)
    assert not layer_violations(graph)
    assert ["golden.fxp", "golden.semantics"] in cycles(graph)


def test_an_undeclared_module_fails():
    sources = module_sources()
    sources["golden.stray"] = "import golden.arch\n"
    assert "golden.stray: no layer declares it" in "\n".join(layer_violations(import_graph(sources)))


def test_no_module_is_longer_than_max_lines():
    long = {name: n for name, text in module_sources().items() if (n := len(text.splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"
