"""Each name is imported from the module that defines it: no package re-exports another
module's names (a facade adds a hop for the reader and hides which layer a caller depends
on). A models package is the exception Django expects: it gathers its app's models."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = (
    "annotation", "api", "audit", "config", "content", "core", "dashboards", "demo", "imports",
    "exports", "judging", "metrics", "notifications", "operations", "projects", "setup",
    "webhooks",
)  # fmt: skip
# config/__init__.py starts Celery with Django, as Celery's own layout asks.
ALLOWED = {"config/__init__.py"}


def _modules():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if "migrations" in parts or "models" in parts:
                continue
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text())


def test_no_package_init_imports_names_to_pass_them_on():
    facades = [
        name
        for name, tree in _modules()
        if name.endswith("__init__.py")
        and name not in ALLOWED
        and any(
            isinstance(node, ast.ImportFrom) and node.names[0].name != "*" for node in tree.body
        )
        and not any(isinstance(node, ast.FunctionDef | ast.ClassDef) for node in tree.body)
    ]
    assert facades == []


def test_no_module_lists_names_it_imports_as_its_own():
    reexports = []
    for name, tree in _modules():
        if name in ALLOWED:
            continue
        imported = {
            alias.asname or alias.name
            for node in tree.body
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
        }
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
            ):
                listed = {elt.value for elt in node.value.elts if isinstance(elt, ast.Constant)}
                reexports += [f"{name}: {listed & imported}"] if listed & imported else []
    assert reexports == []
