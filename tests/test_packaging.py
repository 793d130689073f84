"""Packaging facts a user relies on: one version number, extras that name what each
feature imports, and ImportError messages that name the extra to install.

Unit tests (no server).  The pyproject checks read the source tree's pyproject.toml,
so they run where that file is beside tests/ (the source tree, the unpacked sdist).
"""

import os
import subprocess
import sys

import pytest

import mysqlc
from mysqlc import _version

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYPROJECT = os.path.join(ROOT, "pyproject.toml")


def _pyproject():
    tomllib = pytest.importorskip("tomllib")   # 3.11+; the source-tree suite runs on 3.11
    if not os.path.exists(PYPROJECT):
        pytest.skip("no pyproject.toml beside tests/ (an installed-wheel run)")
    with open(PYPROJECT, "rb") as f:
        return tomllib.load(f)


def test_version_is_defined_once():
    assert mysqlc.__version__ == _version.__version__
    assert mysqlc.version_info == _version.version_info
    major, minor, micro, level, serial = mysqlc.version_info
    assert level == "final" and serial == 0
    assert mysqlc.__version__ == "%d.%d.%d" % (major, minor, micro)
    assert mysqlc.get_client_info() == mysqlc.__version__


def test_pyproject_reads_the_version_and_licence():
    meta = _pyproject()
    assert meta["project"]["dynamic"] == ["version"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "mysqlc._version.__version__"}
    assert meta["project"]["license"] == "MIT"
    for name in meta["project"]["license-files"]:
        assert os.path.exists(os.path.join(ROOT, name))
    with open(os.path.join(ROOT, "LICENSE")) as f:
        text = f.read()
    assert text.startswith("MIT License") and "the mysqlc authors" in text
    assert os.path.exists(os.path.join(ROOT, "mysqlc", "py.typed"))


def test_classifiers_match_requires_python():
    project = _pyproject()["project"]
    assert project["requires-python"] == ">=3.9"
    versions = sorted((c.rsplit(" ", 1)[1] for c in project["classifiers"]
                       if c.startswith("Programming Language :: Python :: 3.")),
                      key=lambda v: tuple(map(int, v.split("."))))
    assert versions == ["3.9", "3.10", "3.11", "3.12", "3.13"]
    assert "Typing :: Typed" in project["classifiers"]
    assert "Operating System :: POSIX :: Linux" in project["classifiers"]
    # PEP 639: no licence classifier next to a licence expression (setuptools refuses it)
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]


def test_extras_pull_what_each_feature_imports():
    extras = _pyproject()["project"]["optional-dependencies"]

    def names(extra):
        out = set()
        for req in extras[extra]:
            if req.startswith("mysqlc["):
                for sub in req[len("mysqlc["):-1].split(","):
                    out |= names(sub)
            else:
                out.add(req.split(">")[0].split("<")[0].split("=")[0].strip().lower())
        return out

    assert names("arrow") == {"pyarrow"}
    assert names("pandas") == {"pandas", "pyarrow"}     # to_pandas() of an Arrow table
    assert names("polars") == {"polars"}                # the Arrow C stream: no pyarrow
    assert names("numpy") == {"numpy"}                  # from the Arrow buffers: no pyarrow
    assert names("ed25519") == {"pynacl"}
    assert names("sqlalchemy") == {"sqlalchemy"}
    assert names("aio") == {"greenlet"}
    assert names("dask") == {"dask[dataframe]", "distributed", "pyarrow", "pandas"}
    assert names("ray") == {"ray[data]", "pyarrow"}
    # every extra but test, dask and ray (cluster engines, Ray some hundreds of MB:
    # docs/cluster.md) is in all: a user who asks for everything gets mysqlc.aio too
    everything = set()
    for extra in extras:
        if extra not in ("all", "test", "dask", "ray"):
            everything |= names(extra)
    assert names("all") == everything == {
        "pyarrow", "pandas", "polars", "numpy", "pynacl", "sqlalchemy", "greenlet"}


# Each case: modules made unimportable, code run, the extra the message must name.
HIDDEN_CASES = {
    "read_sql arrow": (["pyarrow"], "mysqlc.columnar._need('pyarrow', 'read_sql()')", "arrow"),
    "fetchnumpy": (["numpy"], "mysqlc.columnar._need('numpy', 'fetchnumpy()')", "numpy"),
    "fetch_df": (["pandas"], "mysqlc.columnar._need('pandas', 'fetch_df()')", "pandas"),
    "fetch_polars": (["polars"], "mysqlc.columnar._need('polars', 'fetch_polars()')",
                     "polars"),
    "read_sql polars": (["polars"], "mysqlc.read_sql('mysql://u@127.0.0.1:1/d', 'SELECT 1',"
                        " 'polars')", "polars"),
    "load_table": (["pyarrow"], "import mysqlc.bulk; mysqlc.bulk._pyarrow('pyarrow data')",
                   "arrow"),
    "ed25519": (["nacl", "nacl.bindings"],
                "import mysqlc._secure; mysqlc._secure.client_ed25519(b'pw', b'n' * 32)",
                "ed25519"),
    "aio": (["greenlet"], "import mysqlc.aio", "aio"),
}


@pytest.mark.parametrize("case", sorted(HIDDEN_CASES))
def test_missing_package_message_names_the_extra(case):
    hidden, code, extra = HIDDEN_CASES[case]
    script = "\n".join([
        "import sys",
        "for name in %r: sys.modules[name] = None   # import raises ImportError" % (hidden,),
        "import mysqlc, mysqlc.columnar",
        "try:",
        "    " + code,
        "except (ImportError, mysqlc.OperationalError) as exc:",
        "    print(type(exc).__name__, exc)",
        "else:",
        "    print('no error')",
    ])
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert ("pip install 'mysqlc[%s]'" % extra) in out.stdout, out.stdout


# A finder ahead of every other one: greenlet (and its submodules) cannot be found, as
# in an environment where it was never installed (ModuleNotFoundError, name="greenlet")
_NO_GREENLET = """
import importlib.abc, sys
class NoGreenlet(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "greenlet" or name.startswith("greenlet."):
            raise ModuleNotFoundError("No module named %r" % name, name=name)
        return None
for name in [m for m in sys.modules if m == "greenlet" or m.startswith("greenlet.")]:
    del sys.modules[name]
sys.meta_path.insert(0, NoGreenlet())
"""


@pytest.mark.parametrize("statement", ["import mysqlc.aio", "from mysqlc.aio import connect",
                                       "import mysqlc.aio.pool"])
def test_aio_without_greenlet_names_the_extra(statement):
    script = _NO_GREENLET + "\n".join([
        "import mysqlc",
        "try:",
        "    " + statement,
        "except ModuleNotFoundError as exc:",
        "    print(type(exc).__name__, '|', exc.name, '|', exc)",
        "else:",
        "    print('no error')",
        "assert 'mysqlc.aio' not in sys.modules, 'a half-imported mysqlc.aio was kept'",
        "import mysqlc.columnar   # the sync API does not need greenlet",
        "print(mysqlc.connect.__name__)",
    ])
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()
    kind, name, message = first.split(" | ")
    assert kind == "ModuleNotFoundError" and name == "greenlet", first
    assert "pip install 'mysqlc[aio]'" in message, first
    assert second == "Connection"


def test_setup_names_a_missing_compiler(tmp_path):
    """A build without a working compiler says so (it blamed <openssl/ssl.h>: the header
    check compiles a file, and that failed for want of a compiler)."""
    setup_py = os.path.join(ROOT, "setup.py")
    if not os.path.exists(setup_py):
        pytest.skip("no setup.py beside tests/ (an installed-wheel run)")
    env = dict(os.environ, CC=str(tmp_path / "no-such-cc"))
    out = subprocess.run([sys.executable, setup_py, "-q", "build_ext", "--build-temp",
                          str(tmp_path / "t"), "--build-lib", str(tmp_path / "l")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert "no working C compiler" in out.stderr and "no-such-cc" in out.stderr, out.stderr
    assert "openssl" not in out.stderr.lower() and "Python.h" not in out.stderr, out.stderr
    assert not list(tmp_path.rglob("*.so"))   # it stopped before building anything


def test_every_subpackage_is_packaged():
    """Each directory of mysqlc/ with an __init__.py is in [tool.setuptools] packages
    (an unlisted one is missing from the wheel and the sdist's install: mysqlc.aio and
    mysqlc.pymysql once were)."""
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    source = os.path.join(ROOT, "mysqlc")
    found = {"mysqlc" + dirpath[len(source):].replace(os.sep, ".")
             for dirpath, _dirs, files in os.walk(source)
             if "__init__.py" in files and "__pycache__" not in dirpath}
    assert found - listed == set()
    assert listed - found == set()


def test_demo_prints_each_driver_distribution_version():
    """examples/demo.py (tools/demo.sh) names each driver with the version pip installed:
    PyMySQL's ``__version__`` is the mysqlclient version it claims for Django (2.2.8),
    not its release.  (Checked with pytest's distribution, which every run has, and a
    module whose ``__version__`` says something else.)"""
    import importlib.util
    import types
    from importlib import metadata
    path = os.path.join(ROOT, "examples", "demo.py")
    if not os.path.exists(path):
        pytest.skip("no examples/ beside tests/ (an installed-wheel run)")
    spec = importlib.util.spec_from_file_location("_mysqlc_demo", path)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    claims = types.SimpleNamespace(__version__="2.2.8")
    assert demo.version_of(claims, "pytest") == metadata.version("pytest") != "2.2.8"
    # no such distribution (mysqlc built in place, not installed): the module's own
    assert demo.version_of(claims, "no-such-distribution-mysqlc") == "2.2.8"
    assert demo.version_of(mysqlc, "mysqlc") == mysqlc.__version__
    assert [dist for _label, _module, dist in demo.PEERS] == ["mysqlc", "mysqlclient",
                                                                "PyMySQL"]
