"""The module layering of the Python layer (docs/architecture.md, "Python layer"): read
from the source with ``ast``, no server needed.

* The imports between mysqlc's modules, as they run at import time (module level, not
  under ``if TYPE_CHECKING:``), form no cycle.
* The modules of the query path import mysqlc modules at the top only; inside a
  function they import only what ``import mysqlc`` must not load: ``_core`` (the C
  extension, which may be missing) and ``_arrow_numpy`` (ctypes).
"""

import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parent.parent / "mysqlc"

#: the modules whose function-local imports of mysqlc modules are restricted
QUERY_PATH = ["mysqlc._arrow", "mysqlc._dsn", "mysqlc._state", "mysqlc.bulk",
              "mysqlc.columnar", "mysqlc.connections", "mysqlc.cursors"]
LAZY_ALLOWED = {"mysqlc._core", "mysqlc._arrow_numpy"}


def _modules():
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        out[".".join(parts)] = (path, is_pkg)
    return out


MODULES = _modules()
#: importable names: the Python modules and the C extension
KNOWN = set(MODULES) | {"mysqlc._core"}


def _is_type_checking(node):
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _targets(module, is_pkg, node):
    """The mysqlc modules an import statement loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "mysqlc"]
    if node.level == 0:
        base = node.module or ""
        if base.split(".")[0] != "mysqlc":
            return []
    else:
        pkg = module.split(".") if is_pkg else module.split(".")[:-1]
        pkg = pkg[:len(pkg) - (node.level - 1)]
        base = ".".join(pkg + ([node.module] if node.module else []))
    out = []
    for alias in node.names:
        sub = base + "." + alias.name
        out.append(sub if sub in KNOWN else base)
    return out


def _imports(module):
    """(top-level targets, function-local targets) of `module`'s import statements."""
    path, is_pkg = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top, local = set(), set()

    def walk(nodes, in_function):
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node):
                walk(node.orelse, in_function)
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                (local if in_function else top).update(_targets(module, is_pkg, node))
                continue
            inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                     ast.Lambda))
            walk(ast.iter_child_nodes(node), inner)

    walk(tree.body, False)
    top.discard(module)
    return top, local


def test_import_time_graph_has_no_cycle():
    graph = {m: _imports(m)[0] for m in MODULES}
    # importing a submodule runs its package's __init__ first: a submodule's edge to its
    # own package is not a cycle of the import order
    for m in graph:
        graph[m] = {t for t in graph[m] if not m.startswith(t + ".")}
    state = {}
    path = []

    def visit(m):
        state[m] = "open"
        path.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == "open":
                pytest.fail("import cycle: " + " -> ".join(path[path.index(t):] + [t]))
            if t not in state:
                visit(t)
        path.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)


@pytest.mark.parametrize("module", QUERY_PATH)
def test_query_path_imports_mysqlc_modules_at_the_top(module):
    assert module in MODULES
    _top, local = _imports(module)
    assert local <= LAZY_ALLOWED, sorted(local - LAZY_ALLOWED)


def test_layering_order():
    """The direction documented in docs/architecture.md: each module imports only those
    below it."""
    order = ["mysqlc._dsn", "mysqlc._state", "mysqlc._arrow", "mysqlc.bulk",
             "mysqlc.cursors", "mysqlc.connections", "mysqlc.columnar"]
    for i, module in enumerate(order):
        top, _local = _imports(module)
        above = set(order[i + 1:]) & top
        assert not above, "%s imports %s, which are above it" % (module, sorted(above))


#: the engine's files (docs/architecture.md, "Layers"): protocol flows on C arguments
ENGINE_FILES = ["framing.c", "packets.c", "session.c", "results.c", "prepared.c"]
#: what belongs to the driver layer above them: parsing a method's Python arguments,
#: the thread guard, a method table
DRIVER_ONLY = ["PyArg_Parse", "mc_conn_enter", "mc_conn_leave", "METH_"]


@pytest.mark.parametrize("name", ENGINE_FILES)
def test_engine_files_take_c_arguments_only(name):
    """No engine file parses a method's Python arguments, takes the thread guard or
    defines a method table: those are the driver's (conn.c, prepared_methods.c, ...)."""
    path = PKG.parent / "src" / name
    lines = path.read_text(encoding="utf-8").splitlines()
    found = ["%s:%d: %s" % (name, i, line.strip()) for i, line in enumerate(lines, 1)
             for word in DRIVER_ONLY if word in line]
    assert not found, "\n".join(found)
