"""The design page's module map is the tree's: every product module listed once with its role (the
first sentence of its docstring), and no module listed that does not exist (docs/hooks/module_map.py)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "module_map", ROOT / "docs" / "hooks" / "module_map.py"
)
assert _spec is not None and _spec.loader is not None
module_map = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(module_map)

_ROW = re.compile(r"^\| `([^`]+\.py)` \| (.*) \|$", re.M)


def _listed() -> dict[str, str]:
    page = module_map.current((ROOT / "docs" / "design" / "index.md").read_text())
    rows = _ROW.findall(page)
    assert len(rows) == len({path for path, _ in rows}), "a module listed twice"
    return dict(rows)


def test_every_product_module_is_on_the_map_and_every_listed_module_exists():
    """Tests the map's rows against the tree: none missing, none that is not a module."""
    tree = {p.relative_to(ROOT).as_posix() for p in module_map.modules()}
    listed = set(_listed())
    assert sorted(tree - listed) == [], "modules missing from docs/design/index.md's map"
    assert sorted(listed - tree) == [], "docs/design/index.md's map names modules that do not exist"
    assert len(tree) > 100


def test_every_module_has_a_role_and_the_map_is_the_generated_one():
    """Tests that every module says its role in a docstring and the page holds the generated map
    (`python docs/hooks/module_map.py` rewrites it)."""
    assert [path for path, role in _listed().items() if not role.strip()] == []
    page = (ROOT / "docs" / "design" / "index.md").read_text()
    assert module_map.current(page) == module_map.module_map()


def test_a_new_module_is_missing_from_the_map(tmp_path):
    """Tests the check itself on a copy of one package with a module added: the generated map
    has the new module's row with its docstring's first sentence."""
    package = tmp_path / "problems"
    package.mkdir()
    (package / "__init__.py").write_text('"""A package.  More words."""\n')
    (package / "extra.py").write_text('"""The extra module, for the test. Not this."""\n')
    generated = module_map.module_map(tmp_path)
    assert "| `problems/extra.py` | The extra module, for the test. |" in generated
    assert "| `problems/__init__.py` | A package. |" in generated
