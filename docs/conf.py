"""Sphinx configuration of the mysqlc documentation (built by tools/docs.sh).

The pages are the Markdown files of docs/ (every ``docs/*.md``, by glob in index.rst:
adding a page needs no change here) and the API reference under docs/api/, made by
autodoc from the numpydoc docstrings (sphinx.ext.napoleon reads their sections).
The package is imported from the source tree; the C extension is used if it is built
(``mysqlc`` imports without it, and the reference documents the Python API).
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import mysqlc  # noqa: E402

project = "mysqlc"
author = "the mysqlc authors"
copyright = "2026, the mysqlc authors"
release = mysqlc.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# requirements.txt is no page
exclude_patterns = ["_build", "requirements.txt", "Thumbs.db", ".DS_Store"]

napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True          # "Attributes" sections: fields, not a second entry
# an inherited docstring (SQLAlchemy's, for the dialects) is not about mysqlc
autodoc_inherit_docstrings = False
autodoc_member_order = "bysource"
# the sync and asyncio APIs both have a Connection and a BaseCursor: an unqualified name
# in a signature matches both ("more than one target found"); the link goes to the first
suppress_warnings = ["ref.python"]
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
myst_heading_anchors = 3

html_theme = "alabaster"
html_title = "mysqlc %s" % release
