"""Build script for the C extension ``mysqlc._core``.

Headers and libraries for OpenSSL (libssl, libcrypto) and zlib are found with pkg-config.
Override with environment variables:

    MYSQLC_CFLAGS   extra compiler flags (e.g. "-I/opt/openssl/include")
    MYSQLC_LDFLAGS  extra linker flags   (e.g. "-L/opt/openssl/lib -lssl -lcrypto -lz")
    MYSQLC_DEBUG=1  build with -O0 -g
    MYSQLC_SANITIZE=1  build with AddressSanitizer and UBSan
    MYSQLC_SANITIZE=nostack  the same without ASan's stack instrumentation (no redzones
                    around the extension's stack variables, no use-after-scope): heap,
                    globals and UBSan as with 1 (GCC's flags); what
                    tools/sanitize-test.sh runs the greenlet-based asyncio tests on
"""
import glob
import os
import shlex
import subprocess
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBIAN_PACKAGES = {"openssl": "libssl-dev", "zlib": "zlib1g-dev"}
HEADERS = {"openssl": "openssl/ssl.h", "zlib": "zlib.h"}


def pkg_config(name, what):
    try:
        out = subprocess.run(["pkg-config", what, name], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return shlex.split(out)


def dependency_flags():
    cflags, ldflags = [], []
    env_c = os.environ.get("MYSQLC_CFLAGS")
    env_l = os.environ.get("MYSQLC_LDFLAGS")
    if env_c is not None or env_l is not None:
        return shlex.split(env_c or ""), shlex.split(env_l or "-lssl -lcrypto -lz")
    for name in ("openssl", "zlib"):
        c = pkg_config(name, "--cflags")
        l = pkg_config(name, "--libs")
        if c is None or l is None:
            c, l = [], (["-lssl", "-lcrypto"] if name == "openssl" else ["-lz"])
        cflags += c
        ldflags += l
    return cflags, ldflags


def _compiles(compiler, source, extra_args, include_dirs=()):
    """True when `compiler` compiles the C text `source` (in a temporary directory)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "check.c")
        with open(src, "w") as f:
            f.write(source)
        try:
            compiler.compile([src], output_dir=tmp, extra_preargs=extra_args,
                             include_dirs=list(include_dirs))
        except Exception:
            return False
    return True


def missing_build_requirement(compiler, extra_args, include_dirs=()):
    """What the build lacks, as the message for the user, or None when nothing.

    Checked in order, so that each message names the first thing missing: a C compiler
    that works at all (a program with no #include), Python's headers (<Python.h>),
    then the OpenSSL and zlib headers.  Without the first, every later check would
    fail too and blame a header."""
    cc = getattr(compiler, "compiler_so", None) or getattr(compiler, "compiler", None) or ["cc"]
    if not _compiles(compiler, "int main(void) { return 0; }\n", extra_args):
        return ("no working C compiler: %r cannot compile an empty program (set CC to\n"
                "another compiler). On Debian/Ubuntu install one with:\n"
                "    apt-get install gcc\n"
                "or install the prebuilt wheel, which needs no compiler." % (cc[0],))
    if not _compiles(compiler, "#include <Python.h>\nint main(void) { return 0; }\n",
                     extra_args, include_dirs):
        return ("cannot find <Python.h> (Python's development headers). On Debian/Ubuntu "
                "install them with:\n    apt-get install python3-dev")
    for name, header in HEADERS.items():
        if not _compiles(compiler, "#include <%s>\nint main(void) { return 0; }\n" % header,
                         extra_args):
            return ("cannot find <%s> (%s). On Debian/Ubuntu install it with:\n"
                    "    apt-get install %s pkg-config\n"
                    "or point MYSQLC_CFLAGS / MYSQLC_LDFLAGS at it." % (
                        header, name, DEBIAN_PACKAGES[name]))
    return None


class BuildExt(build_ext):
    def build_extensions(self):
        ext = self.extensions[0]
        problem = missing_build_requirement(self.compiler, ext.extra_compile_args,
                                            self.include_dirs or ())
        if problem is not None:
            sys.stderr.write("\nmysqlc: %s\n\n" % problem)
            raise SystemExit(1)
        super().build_extensions()


cflags, ldflags = dependency_flags()
extra_compile = ["-std=c99", "-Wall", "-Wextra", "-Wno-unused-parameter",
                 "-Wno-missing-field-initializers", "-fno-strict-aliasing"]
if os.environ.get("MYSQLC_DEBUG"):
    extra_compile += ["-O0", "-g3"]
else:
    extra_compile += ["-O2"]
if os.environ.get("MYSQLC_SANITIZE"):
    extra_compile += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g"]
    ldflags += ["-fsanitize=address,undefined"]
    if os.environ["MYSQLC_SANITIZE"] == "nostack":
        extra_compile += ["--param=asan-stack=0", "-fno-sanitize-address-use-after-scope"]

setup(
    ext_modules=[
        Extension(
            "mysqlc._core",
            sources=sorted(glob.glob("src/*.c")),
            depends=sorted(glob.glob("src/*.h")),
            extra_compile_args=extra_compile + cflags,
            extra_link_args=ldflags,
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
