"""The type stub _dvfslab.pyi names exactly what the extension defines."""
import ast
import os

import dvfslab
from dvfslab import _dvfslab


def stub_names():
    path = os.path.join(os.path.dirname(dvfslab.__file__), "_dvfslab.pyi")
    tree = ast.parse(open(path).read())
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = {item.name if not isinstance(item, ast.AnnAssign) else item.target.id
                                for item in node.body if isinstance(item, (ast.FunctionDef, ast.AnnAssign))}
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = None
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = None
    return names


def public(names):
    return {name for name in names if not name.startswith("__") or name == "__version__"}


def test_the_stub_matches_the_extension():
    stub = stub_names()
    assert public(stub) == public(dir(_dvfslab)) - {"Any"}
    for name, members in stub.items():
        if members is None or name.endswith("Error"):
            continue
        defined = getattr(_dvfslab, name)
        own = {member for member in vars(defined) if not member.startswith("_")}
        assert own - {"__init__"} == {member for member in members if not member.startswith("_")}, name
