"""No file imports another package's underscore module.

A module whose own name starts with ``_`` (``__init__``, ``__main__`` and ``__future__`` aside) is
private to the package that holds it: only the files of that package (its folder and the folders
below) may import it.  Modules shared across packages are public and named by their role (as
``heuristics/kafka_orders.py`` and ``models/cpsat/ranked.py``).  Checked on every tracked Python
file (the product's packages, the peers, the benchmarks and the tests) and the notebooks' code, by
parsing their imports (:mod:`ast`, nothing is imported):

* a first-party import (``problems``, ``models.cpsat``, the tests' ``support``, the benchmarks'
  ``timing``, relative imports) is resolved to its file; ``from package import _name`` counts when
  ``_name`` is a module of the package;
* a third-party module path (``numpy._typing``) is refused wherever it appears: its private
  modules are no one else's to import.
"""

from __future__ import annotations

import ast
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
#: Folders whose modules import each other by their names relative to the folder (the tests'
#: ``support`` package, the benchmarks' ``timing``), after the repository's root.
SOURCE_ROOTS = ("", "tests", "benchmarks")
DUNDER = frozenset({"__init__", "__main__", "__future__"})


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
