"""No file imports another package's underscore module; the product's imports flow one way, in no cycle.

A module whose own name starts with ``_`` (``__init__``, ``__main__`` and ``__future__`` aside) is
private to the package that holds it: only the files of that package (its folder and the folders
below) may import it.  Modules shared across packages are public and named by their role (as
``heuristics/kafka_orders.py`` and ``models/common/cpsat_ranked.py``).  Checked on every tracked Python
file (the product's packages, the peers, the benchmarks and the tests) and the notebooks' code, by
parsing their imports (:mod:`ast`, nothing is imported):

* a first-party import (``problems``, ``models.common``, the tests' ``support``, the benchmarks'
  ``timing``, relative imports) is resolved to its file; ``from package import _name`` counts when
  ``_name`` is a module of the package;
* a third-party module path (``numpy._typing``) is refused wherever it appears: its private
  modules are no one else's to import.

The product's packages are layered (DESIGN.md section 1): ``problems`` <- ``heuristics`` <- ``models``
<- ``clients`` <- ``experiments``, each importing only the ones before it; nothing imports
``experiments`` from below and only the tests and the benchmarks import ``peers``.  Every import of
a product module counts, at module level or inside a function (an import inside a function runs
too, later): an import against the layers is an offence, and so is a cycle between product
modules.  An import names the module it resolves to (``from models.sticky import cpsat`` the module
``models.sticky.cpsat``), not the packages Python runs on the way (``models/__init__.py``), so the
registry's lazy backend imports are edges like any other and close no cycle.  Imports under
``if TYPE_CHECKING:`` never run: they count for the layers, not for cycles.
"""

from __future__ import annotations

import ast
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
#: Folders whose modules import each other by their names relative to the folder (the tests'
#: ``support`` package, the benchmarks' ``timing``), after the repository's root.
SOURCE_ROOTS = ("", "tests", "benchmarks")
DUNDER = frozenset({"__init__", "__main__", "__future__"})
#: The product's packages, lowest first: each imports only itself and the packages before it.
LAYERS = ("problems", "heuristics", "models", "clients", "experiments")
#: Other implementations, imported only by the tests and the benchmarks.
TESTS_ONLY = ("peers",)


@dataclass(frozen=True)
class Offence:
    path: str
    line: int
    module: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: imports {self.module} ({self.reason})"


def is_private(name: str) -> bool:
    return name.startswith("_") and name not in DUNDER


def module_files(paths: list[str]) -> dict[str, str]:
    """Dotted module name -> file, for every Python file under each of :data:`SOURCE_ROOTS`."""
    modules: dict[str, str] = {}
    for root in reversed(SOURCE_ROOTS):  # the repository's root wins a name both have
        for path in paths:
            pure = PurePosixPath(path)
            if pure.suffix != ".py" or (root and not path.startswith(root + "/")):
                continue
            parts = (
                pure.relative_to(root).with_suffix("").parts if root else pure.with_suffix("").parts
            )
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and all(part.isidentifier() for part in parts):
                modules[".".join(parts)] = path
    return modules


def imported_modules(tree: ast.AST, package: str) -> list[tuple[int, str, list[str]]]:
    """``(line, module, names)`` of each import; relative imports made absolute from ``package``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, module] if module else base)
            found.append((node.lineno, module, [alias.name for alias in node.names]))
    return found


def source_of(path: str, text: str) -> str:
    """The Python code of a file: a notebook's code cells joined (IPython's ``%`` and ``!`` lines left out)."""
    if not path.endswith(".ipynb"):
        return text
    cells = json.loads(text)["cells"]
    lines = [
        line
        for cell in cells
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if not line.lstrip().startswith(("%", "!"))
    ]
    return "\n".join(lines)


def offences(root: Path, paths: list[str]) -> list[Offence]:
    """Every import of another package's underscore module among the files ``paths`` of ``root``."""
    modules = module_files(paths)
    package_of = {file: name for name, file in modules.items()}
    found = []
    for path in paths:
        if not path.endswith((".py", ".ipynb")):
            continue
        source = source_of(path, (root / path).read_text(encoding="utf-8"))
        tree = ast.parse(source, filename=path)
        name = package_of.get(path, "")
        package = name if path.endswith("/__init__.py") else name.rpartition(".")[0]
        for line, module, names in imported_modules(tree, package):
            for target in [module] + [f"{module}.{n}" for n in names if n != "*"]:
                parts = target.split(".")
                private = next((i for i, part in enumerate(parts) if is_private(part)), None)
                if private is None:
                    continue
                owner_module = ".".join(parts[:private])
                if target in modules or owner_module in modules:
                    private_file = modules.get(".".join(parts[: private + 1]))
                    if private_file is None:  # a name of a public module, not a module
                        continue
                    folder = str(PurePosixPath(private_file).parent)
                    if not path.startswith(folder + "/"):
                        found.append(Offence(path, line, target, f"private to {folder}/"))
                        break
                elif target == module:  # third party: only a module path is surely a module
                    found.append(Offence(path, line, target, "a third-party private module"))
                    break
    return found


@dataclass(frozen=True)
class Edge:
    """One import of a product module by a product module: where it is, what it imports."""

    path: str
    line: int
    source: str
    target: str
    runs: bool  # False under ``if TYPE_CHECKING:``

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.source} imports {self.target}"


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """The lines of the imports under ``if TYPE_CHECKING:`` (they never run)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.Import | ast.ImportFrom):
                        lines.add(sub.lineno)
    return lines


def product_edges(root: Path, paths: list[str]) -> list[Edge]:
    """Every import of a product module by a product module (:data:`LAYERS`, :data:`TESTS_ONLY`),
    at module level or inside a function, resolved to the module it names."""
    packages = (*LAYERS, *TESTS_ONLY)
    product = [p for p in paths if p.endswith(".py") and p.split("/")[0] in packages]
    modules = {
        name: file
        for name, file in module_files(product).items()
        if file.split("/")[0] == name.split(".")[0]
    }
    name_of = {file: name for name, file in modules.items()}
    edges = []
    for path in product:
        name = name_of.get(path)
        if name is None:
            continue
        tree = ast.parse((root / path).read_text(encoding="utf-8"), filename=path)
        hidden = _type_checking_lines(tree)
        package = name if path.endswith("/__init__.py") else name.rpartition(".")[0]
        for line, module, names in imported_modules(tree, package):
            targets = [f"{module}.{n}" for n in names if f"{module}.{n}" in modules]
            if len(targets) < len(names) or not names:  # names of the module itself
                parts = module.split(".")
                while parts and ".".join(parts) not in modules:
                    parts.pop()
                targets += [".".join(parts)] if parts else []
            for target in dict.fromkeys(targets):
                if target != name:
                    edges.append(Edge(path, line, name, target, line not in hidden))
    return edges


def layer_offences(edges: list[Edge]) -> list[str]:
    """Each import that runs against the layers: a package importing a later one, anyone but the
    tests and the benchmarks importing ``peers``."""
    found = []
    for edge in edges:
        source, target = edge.source.split(".")[0], edge.target.split(".")[0]
        if source == target:
            continue
        if target in TESTS_ONLY:
            found.append(f"{edge} (only the tests and the benchmarks import {target})")
        elif source in LAYERS and target in LAYERS and LAYERS.index(target) > LAYERS.index(source):
            found.append(f"{edge} ({source} is below {target})")
    return found


def _components(graph: dict[str, list[Edge]]) -> Iterator[list[str]]:
    """The strongly connected components of ``graph`` (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            out = graph.get(node, [])
            if i < len(out):
                work.append((node, i + 1))
                nxt = out[i].target
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                yield component
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])


def import_cycles(edges: list[Edge]) -> list[list[Edge]]:
    """One cycle (its imports in order) in each group of product modules that import each other,
    imports under ``if TYPE_CHECKING:`` left out."""
    graph: dict[str, list[Edge]] = {}
    for edge in edges:
        if edge.runs:
            graph.setdefault(edge.source, []).append(edge)
    cycles = []
    for component in _components(graph):
        if len(component) < 2:
            continue
        inside = set(component)
        first = min(component)
        # The shortest way back to ``first`` (breadth first, inside the component).
        reached: dict[str, Edge | None] = {first: None}
        queue = [first]
        back: Edge | None = None
        while queue and back is None:
            node = queue.pop(0)
            for edge in graph.get(node, []):
                if edge.target == first:
                    back = edge
                    break
                if edge.target in inside and edge.target not in reached:
                    reached[edge.target] = edge
                    queue.append(edge.target)
        assert back is not None
        path = [back]
        while (step := reached[path[0].source]) is not None:
            path.insert(0, step)
        cycles.append(path)
    return cycles


def describe_cycle(cycle: list[Edge]) -> str:
    """``a -> b -> a`` and the file:line of each import."""
    modules = " -> ".join([cycle[0].source, *(edge.target for edge in cycle)])
    return modules + "".join(f"\n    {edge}" for edge in cycle)


def tracked_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return sorted(path for path in listed.split("\0") if path and (ROOT / path).exists())


def test_the_check_finds_imports_of_other_packages_underscore_modules(tmp_path):
    """Tests the check on a small tree: a package's own files may import its underscore module (by
    name or relatively), the files of other packages and the tests may not, in any import form;
    underscore names of public modules and dunder modules pass; a third-party private module
    path fails everywhere."""
    files = {
        "pkg/__init__.py": "",
        "pkg/_private.py": "X = 1\n",
        "pkg/public.py": "from pkg import _private\nfrom . import _private as p\nfrom ._private import X\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/deep.py": "from .._private import X\nimport pkg._private\n",
        "pkg/sub/_inner.py": "",
        "other/__init__.py": "",
        "other/a.py": "from pkg import _private\n",
        "other/b.py": "import pkg._private as p\n",
        "other/c.py": "from pkg._private import X\n",
        "other/d.py": "from pkg.public import _name, X\nfrom __future__ import annotations\n",
        "other/e.py": "import numpy._typing\nfrom numpy import _private_name\n",
        "pkg/f.py": "from pkg.sub import _inner\n",
        "tests/support/__init__.py": "",
        "tests/support/_helpers.py": "",
        "tests/support/x.py": "from support import _helpers\n",
        "tests/pkg/test_y.py": "from support._helpers import X\nfrom pkg import _private\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    found = sorted((o.path, o.line, o.module) for o in offences(tmp_path, sorted(files)))
    assert found == [
        ("other/a.py", 1, "pkg._private"),
        ("other/b.py", 1, "pkg._private"),
        ("other/c.py", 1, "pkg._private"),
        ("other/e.py", 1, "numpy._typing"),
        ("pkg/f.py", 1, "pkg.sub._inner"),
        ("tests/pkg/test_y.py", 1, "support._helpers"),
        ("tests/pkg/test_y.py", 2, "pkg._private"),
    ]


def test_no_file_imports_another_packages_underscore_module():
    """Tests every tracked Python file and notebook of the repository (each offence listed)."""
    paths = tracked_files()
    assert any(p.startswith("problems/") for p in paths) and any(
        p.startswith("tests/") for p in paths
    )
    found = offences(ROOT, paths)
    for offence in found:
        print(offence)
    assert not found, "\n".join(map(str, found))


def test_the_layer_check_finds_upward_imports_and_cycles(tmp_path):
    """Tests the layer and cycle checks on a small tree: an upward import at module level or inside
    a function, an import of ``peers`` or ``experiments`` from below, and a cycle closed inside a
    function are found, with file:line; downward imports, an upward one under ``TYPE_CHECKING`` for
    cycles, and a lazy import of a module that does not import back pass."""
    files = {
        "problems/__init__.py": "",
        "problems/a.py": "from problems import b\n",
        "problems/b.py": "def f():\n    from problems.a import X\n",
        "problems/c.py": "def f():\n    import models.m\n",
        "heuristics/__init__.py": "",
        "heuristics/h.py": "from problems import a\nfrom experiments import e\n",
        "models/__init__.py": "from models import registry\n",
        "models/registry.py": "def load():\n    from models.fam import cpsat\n    return cpsat\n",
        "models/fam/__init__.py": "",
        "models/fam/cpsat.py": "from models.options import O\nfrom heuristics import h\n",
        "models/options.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from models.t import T\n"
        ),
        "models/t.py": "from models.options import O\n",
        "models/m.py": "import peers.p\n",
        "clients/__init__.py": "",
        "experiments/__init__.py": "",
        "experiments/e.py": "from clients import x\nimport peers\n",
        "peers/__init__.py": "",
        "peers/p.py": "from experiments import e\n",
        "tests/test_x.py": "import peers.p\nimport experiments.e\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    edges = product_edges(tmp_path, sorted(files))
    assert sorted(o.split(" (")[0] for o in layer_offences(edges)) == [
        "experiments/e.py:2: experiments.e imports peers",
        "heuristics/h.py:2: heuristics.h imports experiments.e",
        "models/m.py:1: models.m imports peers.p",
        "problems/c.py:2: problems.c imports models.m",
    ]
    cycles = [describe_cycle(c).splitlines() for c in import_cycles(edges)]
    assert cycles == [
        [
            "problems.a -> problems.b -> problems.a",
            "    problems/a.py:1: problems.a imports problems.b",
            "    problems/b.py:2: problems.b imports problems.a",
        ]
    ]
    # The TYPE_CHECKING import closes a cycle only if it counted; with it counted, it does.
    counted = [Edge(e.path, e.line, e.source, e.target, True) for e in edges]
    assert len(import_cycles(counted)) == 2


def test_imports_follow_the_layers():
    """Tests every product module's imports, at module level and inside functions, against
    problems <- heuristics <- models <- clients <- experiments (peers for tests and benchmarks)."""
    found = layer_offences(product_edges(ROOT, tracked_files()))
    assert not found, "\n".join(found)


def test_no_import_cycle_between_product_modules():
    """Tests that no product modules import each other in a cycle (each cycle printed as its
    path, with the file:line of every import in it)."""
    edges = product_edges(ROOT, tracked_files())
    assert len({e.source for e in edges}) > 100  # the check sees the product
    cycles = [describe_cycle(cycle) for cycle in import_cycles(edges)]
    assert not cycles, "\n".join(cycles)


def test_the_top_of_each_package_holds_only_its_entry_points():
    """Tests the family layout: the top of ``models/`` holds only its entry points (the registry,
    the options, the package's ``__init__``) beside the family folders, and ``heuristics/`` stays
    a short list of single-strategy modules beside its family folders."""
    models = sorted(p.name for p in (ROOT / "models").glob("*.py"))
    assert models == ["__init__.py", "options.py", "registry.py"]
    assert (ROOT / "models" / "trace" / "__init__.py").is_file()
    heuristics = list((ROOT / "heuristics").glob("*.py"))
    assert len(heuristics) <= 16, sorted(p.name for p in heuristics)
