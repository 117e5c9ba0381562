"""The package's floors, read from its own source: which modules sit on which floor (kernel, lab,
grader, command line), how many lines each floor holds, and how many imports go from one floor to
another. The contributor's page of the book draws it (``plot_floors``), so the picture is the
code's, not a drawing of what the code was meant to be. ``tests/test_floors.py`` holds the rule
(no floor imports one above it) with its own reading of the imports."""
import ast
import collections
import os

FLOORS = ("kernel", "lab", "grader", "command line")      # bottom to top
WHAT = {"kernel": "tensor, autograd, ops, nn, sharing, models, optim, data, train, run",
        "lab": "analysis (measurements, figures), experiments (reproduce, the ledger)",
        "grader": "exercises: release, check, grade in a sandbox",
        "command line": "python -m minishare ..."}


def floor_of(module):
    """The floor of a dotted module name of the package."""
    if module in ("minishare.cli", "minishare.__main__"):
        return "command line"
    if module.startswith("minishare.grader"):
        return "grader"
    if module.startswith(("minishare.analysis", "minishare.experiments")):
        return "lab"
    return "kernel"


def read(package_dir):
    """{"lines": {floor: lines of code}, "modules": {floor: count}, "imports": {(from floor, to
    floor): count}} of the package in ``package_dir`` (every import statement, those inside
    functions too, relative ones resolved)."""
    root = os.path.dirname(os.path.abspath(package_dir))
    lines, modules, imports = collections.Counter(), collections.Counter(), collections.Counter()
    for folder, _, files in os.walk(package_dir):
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            dotted = os.path.relpath(path, root)[:-3].replace(os.sep, ".").removesuffix(".__init__")
            with open(path, encoding="utf-8") as f:
                text = f.read()
            here = floor_of(dotted)
            lines[here] += text.count("\n")
            modules[here] += 1
            for target in _imported(ast.parse(text), dotted, name == "__init__.py"):
                if target.split(".")[0] == "minishare":
                    imports[here, floor_of(target)] += 1
    return {"lines": dict(lines), "modules": dict(modules), "imports": dict(imports)}


def _imported(tree, module, is_package):
    """The dotted names ``tree`` (the source of ``module``) imports."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = base[:len(base) - node.level + 1] if node.level else []
            yield ".".join(parts + ([node.module] if node.module else []))


def plot_floors(found, title="minishare's floors, read from its imports"):
    """One box per floor, bottom to top, with its lines and modules, and an arrow for each pair
    of floors that imports go between, labelled with their count. An arrow that pointed up would
    be an import the floors forbid; the figure would show it in red."""
    from minishare.analysis.figure_style import new_figure
    fig, axes = new_figure(height=5.2)
    ax = axes[0][0]
    y = {floor: 1.6 * i for i, floor in enumerate(FLOORS)}
    for floor in FLOORS:
        ax.add_patch(_box(y[floor]))
        ax.text(0.05, y[floor] + 0.72, f"{floor}: {found['lines'].get(floor, 0):,} lines, "
                f"{found['modules'].get(floor, 0)} modules", fontsize=11, weight="bold", va="center")
        ax.text(0.05, y[floor] + 0.32, WHAT[floor], fontsize=9, va="center")
    between = sorted((pair, count) for pair, count in found["imports"].items() if pair[0] != pair[1])
    for i, ((source, target), count) in enumerate(between):
        up = FLOORS.index(target) > FLOORS.index(source)
        x = 7.4 + 0.6 * i
        ax.annotate("", xy=(x, y[target] + (0 if up else 1.0)), xytext=(x, y[source] + (1.0 if up else 0)),
                    arrowprops=dict(arrowstyle="->", color="tab:red" if up else "0.3", lw=1.2))
        ax.text(x + 0.05, (y[source] + y[target]) / 2 + 0.5, str(count), fontsize=8, rotation=90, va="center")
    ax.text(7.2, -0.15, "arrows: import statements from one floor to another", fontsize=8, va="top")
    ax.set(xlim=(0, 7.4 + 0.6 * len(between) + 0.2), ylim=(-0.5, 1.6 * len(FLOORS)), title=title)
    ax.axis("off")
    return fig


def _box(y):
    from matplotlib.patches import FancyBboxPatch
    return FancyBboxPatch((0, y), 7.0, 1.0, boxstyle="round,pad=0.02", facecolor="0.93", edgecolor="0.5")
