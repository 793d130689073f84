"""The TYPE_CHECKING declarations of mysqlc.aio (what mypy sees) stay in step with what
runs: connect()'s declared parameters are mysqlc.connect()'s plus aiomysql's, and every
method or attribute the shells generate (install()) is declared.  Unit tests, no server;
tools/typecheck.sh checks the types themselves (tests/typing/usage_aio.py)."""

import ast
import inspect
import os

import pytest

pytest.importorskip("greenlet")

from mysqlc import connections  # noqa: E402
from mysqlc.aio import connection as aio_connection, cursors as aio_cursors  # noqa: E402

AIO = os.path.join(os.path.dirname(connections.__file__), "aio")


def _type_checking_defs(path):
    """{scope: set of names} declared under ``if TYPE_CHECKING:`` (scope "" = module)."""
    tree = ast.parse(open(path).read())
    out = {}

    def names(body):
        got = set()
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                got.add(node.name)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                got.add(node.target.id)
        return got

    def visit(body, scope):
        for node in body:
            if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
                out.setdefault(scope, set()).update(names(node.body))
                out.setdefault(scope + ":nodes", []).extend(node.body)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, node.name)
    visit(tree.body, "")
    return out


def test_connect_declares_the_sync_parameters():
    decl = _type_checking_defs(os.path.join(AIO, "connection.py"))
    fn = [n for n in decl[":nodes"] if isinstance(n, ast.FunctionDef) and n.name == "connect"]
    assert len(fn) == 1
    a = fn[0].args
    declared = [x.arg for x in a.args + a.kwonlyargs]
    sync = [n for n in inspect.signature(connections.Connection.__init__).parameters
            if n != "self"]
    assert declared == sync + ["loop", "echo"]
    assert [x.arg for x in a.args] == [
        n for n, p in inspect.signature(connections.Connection.__init__).parameters.items()
        if p.kind is p.POSITIONAL_OR_KEYWORD and n != "self"]
    # the same annotations (source text; both modules use postponed annotations), except
    # cursorclass, which also takes mysqlc.aio's cursor classes (ssl once drifted: 2026-12)
    sync_ann = {n: p.annotation for n, p in
                inspect.signature(connections.Connection.__init__).parameters.items()}
    for x in a.args + a.kwonlyargs:
        if x.arg in ("cursorclass", "loop", "echo"):
            continue
        assert x.annotation is not None, x.arg
        assert ast.unparse(x.annotation) == sync_ann[x.arg], x.arg


@pytest.mark.parametrize("cls", [aio_connection.Connection, aio_cursors.BaseCursor])
def test_every_generated_name_is_declared(cls):
    path = os.path.join(AIO, "connection.py" if cls is aio_connection.Connection
                        else "cursors.py")
    declared = _type_checking_defs(path).get(cls.__name__, set())
    # install()'s methods have the bare name as __qualname__, its properties this doc
    generated = {name for name, value in vars(cls).items()
                 if getattr(value, "__qualname__", None) == name
                 or (isinstance(value, property)
                     and (value.__doc__ or "").startswith("The sync object's"))}
    assert generated and not generated - declared, sorted(generated - declared)
    if cls is aio_cursors.BaseCursor:
        fetch = {"fetchone", "fetchmany", "fetchall"}
        for sub in (aio_cursors.Cursor, aio_cursors.DictCursor, aio_cursors.SSCursor,
                    aio_cursors.SSDictCursor):
            # declared for type checkers, or a method of the class's own whose return
            # type is annotated (SSCursor.fetchone)
            assert fetch <= (_type_checking_defs(path)[sub.__name__]
                             | _annotated_methods(path, sub.__name__)), sub


def _annotated_methods(path, class_name):
    """Names of the methods defined in class `class_name`'s own body (not under
    ``if TYPE_CHECKING:``) with a return annotation."""
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {f.name for f in node.body
                    if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and f.returns is not None}
    return set()
