"""The package is built in floors, and a floor imports only the floors below it:

    command line   minishare/cli.py, minishare/__main__.py          may import anything
    grader         minishare/grader/                             the kernel (and the lab)
    lab            minishare/analysis/, minishare/experiments/      the kernel
    kernel         everything else: tensor, autograd, ops, nn, sharing, models, optim, data, ...

so that ``import minishare`` (the kernel) stays NumPy-only and small, and a measurement or a figure
can change without touching what it measures. This reads every import statement of every module
under ``minishare/`` with ``ast`` (those inside functions too: a lazy import is still an
import), resolves relative imports, and fails naming file:line on an import that goes up a floor,
and on an import circle (modules that import each other, directly or through others).

The one circle by design is the engine's: ``minishare.tensor``, ``minishare.autograd`` and
``minishare.ops`` (with its submodules) need each other (a Tensor's methods call the ops, the ops
build Tensors and record them on the tape). The circles in ``KNOWN_CIRCLES`` are older ones, to be
removed; the list may shrink, never grow.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "minishare"

FLOORS = ("kernel", "lab", "grader", "command line")      # bottom to top
LAB = ("minishare.analysis", "minishare.experiments")
GRADER = ("minishare.grader",)
COMMAND_LINE = ("minishare.cli", "minishare.__main__")

# may import each other: the autograd engine (see the module docstring)
ENGINE = ("minishare.tensor", "minishare.autograd", "minishare.ops")

# Circles that exist today and are out of scope of the floors, each to be removed later. A circle
# found must lie inside one of these (or inside the engine); a known circle that is gone must be
# taken off this list (test_known_circles_are_still_there), so the list only shrinks. None is left:
# the grader's last (grade <-> release) was cut by minishare/grader/suites.py, below both.
KNOWN_CIRCLES = ()


def within(module, packages):
    """Whether ``module`` is one of ``packages`` or inside one of them."""
    return any(module == p or module.startswith(p + ".") for p in packages)


def floor(module):
    if within(module, COMMAND_LINE):
        return "command line"
    if within(module, GRADER):
        return "grader"
    if within(module, LAB):
        return "lab"
    return "kernel"


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(dotted):
    """The module of ours that importing ``dotted`` runs last (the longest prefix that is one of
    our modules: ``minishare.nn.Module`` is ``minishare.nn``), or None for another package's."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in MODULES:
            return name
    return None


def imports(module):
    """(line, imported module of ours) for every import statement in ``module``, at any depth.
    ``from package import name`` imports the submodule ``package.name`` when there is one, else
    the package itself. The parent packages an import runs first are not counted: every module
    would otherwise import ``minishare/__init__.py``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:                       # relative: from the module's own package up
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                if node.level - 1 > len(package) - 1:
                    raise AssertionError(f"{path.relative_to(ROOT)}:{node.lineno}: relative import "
                                         f"beyond the top-level package")
                base = ".".join(package[:len(package) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                base = node.module
            targets = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            found = resolve(target)
            if found is not None and found != module:
                yield node.lineno, found


GRAPH = {module: sorted(set(imports(module))) for module in MODULES}


def where(module, line):
    return f"{MODULES[module].relative_to(ROOT)}:{line}"


def circles():
    """The strongly connected components of the import graph with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    edges = {m: sorted({t for _, t in GRAPH[m]}) for m in GRAPH}

    def visit(root):                          # iterative: no recursion limit on a long chain
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))

    for module in edges:
        if module not in index:
            visit(module)
    return found


def shortest_loop(component):
    """[(module, line, imported module)] of a shortest import loop inside ``component`` (BFS)."""
    best = None
    for start in sorted(component):
        came = {start: None}                  # module -> (previous module, line)
        queue, found = [start], None
        while queue and found is None:
            node = queue.pop(0)
            for line, target in GRAPH[node]:
                if target == start:
                    found = (node, line)
                    break
                if target in component and target not in came:
                    came[target] = (node, line)
                    queue.append(target)
        if found is None:
            continue
        loop, (node, line) = [(found[0], found[1], start)], found
        while came[node] is not None:
            previous, line = came[node]
            loop.insert(0, (previous, line, node))
            node = previous
        if best is None or len(loop) < len(best):
            best = loop
    return best


def describe(component):
    """A circle as the imports of one shortest loop through it, one per line, as file:line."""
    return "\n".join(f"  {where(m, line)} imports {target}" for m, line, target in shortest_loop(component))


def test_the_graph_sees_the_package():
    assert {"minishare", "minishare.tensor", "minishare.sharing", "minishare.analysis.display",
            "minishare.grader.grade", "minishare.cli"} <= set(MODULES)
    assert {floor(m) for m in MODULES} == set(FLOORS)
    # an import inside a function counts, and a relative import is resolved
    assert any(target == "minishare.analysis.params" for _, target in GRAPH["minishare.cli"])


def test_no_floor_imports_a_floor_above_it():
    wrong = [f"{where(m, line)}: {floor(m)} module {m} imports {floor(target)} module {target}"
             for m in GRAPH for line, target in GRAPH[m]
             if FLOORS.index(floor(target)) > FLOORS.index(floor(m))]
    assert not wrong, ("imports that go up a floor (kernel < lab < grader < command line; a lab "
                       "function the kernel needs belongs in the kernel, and Jupyter drawing is "
                       "registered from the lab, minishare.analysis.display):\n" + "\n".join(wrong))


def test_no_import_circles_but_the_engine_and_the_known_ones():
    new = [c for c in circles()
           if not all(within(m, ENGINE) for m in c) and not any(c <= set(k) for k in KNOWN_CIRCLES)]
    assert not new, "import circles:\n" + "\n\n".join(
        f"{', '.join(sorted(c))}:\n{describe(c)}" for c in new)


def test_known_circles_are_still_there():
    found = circles()
    gone = [sorted(k) for k in KNOWN_CIRCLES if frozenset(k) not in found]
    assert not gone, f"known circles that are gone or smaller: update KNOWN_CIRCLES in {__file__}: {gone}"


def floor_lines():
    """{floor: lines of Python}, reported by ``python tests/test_floors.py``."""
    lines = dict.fromkeys(FLOORS, 0)
    for module, path in MODULES.items():
        lines[floor(module)] += len(path.read_text(encoding="utf-8").splitlines())
    return lines


if __name__ == "__main__":
    for name, n in floor_lines().items():
        print(f"{name:14s}{n:7,} lines")
    for c in circles():
        print(f"circle: {', '.join(sorted(c))}\n{describe(c)}")


def test_no_experiment_imports_another():
    """An experiment is one file: what several share lives in a helper module (``albert_arms``,
    ``takase_arms``), never in a sibling experiment, so changing one cannot change another."""
    experiments = [m for m in MODULES if m.startswith("minishare.experiments.exp_")]
    assert len(experiments) >= 15, experiments
    crossing = [f"{where(module, line)}: {module} imports {other}" for module in experiments
                for line, other in GRAPH[module] if other in experiments and other != module]
    assert crossing == []
