"""One word for one thing: the code says room, never instance, but where users depend on it.

docs/architecture.md ("Words") lists what keeps "instance" and why; this walks every name
the code defines or uses and holds it to that list.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("scorch", "actors", "midi", "mcp_server")
WORD = re.compile("instance", re.IGNORECASE)

#: Names that keep the word, and why (docs/architecture.md, "Words").
KEPT = {
    "instance": "the MCP tools' argument and result field, and the routes' config key",
    "instances": "the config's [instances.NAME] tables and the results' rows (MCP, JSON)",
    "list_instances": "the MCP tool of that name, which clients and models call",
    "instance_methods": "SuperCollider's instance methods (an object's, not a room's), as its "
                        "help and the docs tool name them",
    "isinstance": "Python's built-in",
}
#: Of those, the ones kept as fields of a schema only: declared in a class body, passed as
#: a keyword, read as an attribute; never a variable, an argument or a function.
FIELDS = {"instance", "instances"}


def offences(path: Path, source: str) -> Iterator[str]:
    """Every name in ``source`` (the file at ``path``) that says instance where it may not."""
    where = path.relative_to(ROOT) if path.is_absolute() else path
    for part in where.with_suffix("").parts:
        if WORD.search(part):
            yield f"{where}: module or folder {part!r}"
    tree = ast.parse(source)
    in_class = {id(n) for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
                for s in c.body if isinstance(s, ast.AnnAssign) for n in ast.walk(s.target)}
    for node in ast.walk(tree):
        name, field = _name(node, in_class)
        if name is None or not WORD.search(name):
            continue
        if name in KEPT and (name not in FIELDS or field):
            continue
        yield f"{where}:{getattr(node, 'lineno', 0)}: {type(node).__name__} {name!r}"


def _name(node: ast.AST, in_class: set[int]) -> tuple[str | None, bool]:
    """The name ``node`` defines or uses, and whether it is a schema field's use."""
    if isinstance(node, ast.Name):
        return node.id, id(node) in in_class
    if isinstance(node, ast.Attribute):
        return node.attr, isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.keyword):
        return node.arg, True
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name, False
    if isinstance(node, ast.arg):
        return node.arg, False
    if isinstance(node, ast.alias):
        return (node.asname or node.name), False
    if isinstance(node, ast.ImportFrom):
        return node.module, False
    return None, False


def sources() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_no_name_in_the_code_says_instance_but_the_kept_schema_names() -> None:
    found = [o for path in sources() for o in offences(path, path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_walk_sees_every_package() -> None:
    seen = {path.relative_to(ROOT).parts[0] for path in sources()}
    assert seen == set(PACKAGES)


@pytest.mark.parametrize(("path", "source", "says"), [
    ("actors/instance/actor.py", "x = 1\n", "module or folder 'instance'"),
    ("scorch/app/instances.py", "x = 1\n", "module or folder 'instances'"),
    ("a.py", "class InstanceView:\n    pass\n", "ClassDef 'InstanceView'"),
    ("a.py", "def boot_instance():\n    pass\n", "FunctionDef 'boot_instance'"),
    ("a.py", "def boot(instance):\n    pass\n", "arg 'instance'"),
    ("a.py", "instance = 'lobby'\n", "Name 'instance'"),
    ("a.py", "for instances in x:\n    pass\n", "Name 'instances'"),
    ("a.py", "self.instances = {}\n", "Attribute 'instances'"),
    ("a.py", "tree.by_instance.get(x)\n", "Attribute 'by_instance'"),
    ("a.py", "from actors.instance import proxy\n", "ImportFrom 'actors.instance'"),
    ("a.py", "import x as one_instance\n", "alias 'one_instance'"),
    ("a.py", "f(instance_name='lobby')\n", "keyword 'instance_name'"),
    ("a.py", "def list_instances_now():\n    pass\n", "FunctionDef 'list_instances_now'"),
])
def test_a_planted_name_that_says_instance_is_found(path: str, source: str, says: str) -> None:
    found = list(offences(Path(path), source))
    assert len(found) == 1 and found[0].endswith(says), found


def test_the_kept_schema_names_pass_where_they_are_the_schema() -> None:
    source = ("class StatusArgs(Args):\n    instance: Selector = '*'\n"
              "class Config(BaseModel):\n    instances: dict[str, RoomConfig]\n"
              "out = Status(instances=rows, instance='lobby')\n"
              "for name in config.instances:\n    room = args.instance\n"
              "def list_instances(orch, args):\n    return isinstance(args, Args)\n")
    assert list(offences(Path("a.py"), source)) == []
