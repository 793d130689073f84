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
    assert names("all") == {"pyarrow", "pandas", "polars", "numpy", "pynacl", "sqlalchemy"}


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
