"""`_core.pyi` matches the compiled module: same names, same signatures, same exception bases."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from nandstack import _core

REQUIRED = "<required>"
STUB = Path(_core.__file__).with_name("_core.pyi")


def stub_tree() -> ast.Module:
    if STUB.is_file():
        return ast.parse(STUB.read_text())
    # Fall back to the source tree when the package is installed without its stub.
    return ast.parse((Path(__file__).parents[1] / "python" / "nandstack" / "_core.pyi").read_text())


def stub_names(tree: ast.Module) -> dict[str, ast.AST]:
    names: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


def test_stub_and_module_expose_the_same_names():
    public = {n for n in dir(_core) if not n.startswith("_")} | {"__version__", "__build__"}
    assert set(stub_names(stub_tree())) == public


def test_function_signatures_match():
    for name, node in stub_names(stub_tree()).items():
        if not isinstance(node, ast.FunctionDef):
            continue
        runtime = inspect.signature(getattr(_core, name))
        params = node.args.args
        defaults = [None] * (len(params) - len(node.args.defaults)) + list(node.args.defaults)
        stub = [(p.arg, REQUIRED if d is None else ast.literal_eval(d)) for p, d in zip(params, defaults)]
        actual = [
            (p.name, REQUIRED if p.default is inspect.Parameter.empty else p.default)
            for p in runtime.parameters.values()
        ]
        assert stub == actual, name


def test_exception_bases_match():
    for name, node in stub_names(stub_tree()).items():
        if isinstance(node, ast.ClassDef):
            bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
            assert bases == [b.__name__ for b in getattr(_core, name).__bases__], name


def test_return_annotations_match_what_the_functions_return():
    """The stub's return types hold for the functions that are cheap to call."""
    calls = {
        "default_config_toml": (),
        "config_reference_markdown": (),
        "validate_config": ("{}",),
    }
    names = stub_names(stub_tree())
    for name, args in calls.items():
        node = names[name]
        assert isinstance(node, ast.FunctionDef) and isinstance(node.returns, ast.Name), name
        value = getattr(_core, name)(*args)
        assert type(value).__name__ == node.returns.id, name


def test_every_stub_has_a_docstring():
    for name, node in stub_names(stub_tree()).items():
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            assert ast.get_docstring(node), f"{name}: no docstring in the stub"


def test_package_ships_its_stub_and_py_typed():
    package = Path(_core.__file__).parent
    assert (package / "_core.pyi").is_file()
    assert (package / "py.typed").is_file()
