"""mysqlc's version: the one place it is defined.

``pyproject.toml`` reads ``__version__`` from here (setuptools' dynamic ``version``
attribute, parsed without importing the package), and :mod:`mysqlc` re-exports both
names.  A release changes this file and ``CHANGELOG.md``.
"""

#: The release, as :pep:`440` text.
__version__ = "0.1.0"

#: The same release as ``(major, minor, micro, releaselevel, serial)``, the shape of
#: :data:`sys.version_info` and of mysqlclient's ``MySQLdb.version_info``.
version_info = (0, 1, 0, "final", 0)
