"""NumPy arrays from the C core's Arrow record batches, without pyarrow.

The batch is an Arrow C Data Interface struct array (``ArrowSchema`` / ``ArrowArray``
in PyCapsules).  Fixed-width columns become NumPy views of the Arrow buffers (no copy;
the capsule, which frees the buffers, is kept alive by the array's base object);
strings, binary and decimals become object arrays.  Only the formats the C core
produces are read: c C s S i I l L g (numbers), tdD, tsu:, tDu, d:P,S[,256], u, z, n.
"""

import ctypes
import decimal

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _ArrowSchema(ctypes.Structure):
    pass


_ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(_ArrowSchema))),
    ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p)]


class _ArrowArray(ctypes.Structure):
    pass


_ArrowArray._fields_ = [
    ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(_ArrowArray))),
    ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p)]

_NUMERIC = {b"c": "i1", b"C": "u1", b"s": "<i2", b"S": "<u2", b"i": "<i4", b"I": "<u4",
            b"l": "<i8", b"L": "<u8", b"g": "<f8"}
_TEMPORAL = {b"tdD": ("<i4", "datetime64[D]"), b"tsu:": ("<i8", "datetime64[us]"),
             b"tDu": ("<i8", "timedelta64[us]")}


_EXACT = decimal.Context(prec=80)   # 76 digits fit: scaleb never rounds


def _view(np, address, nbytes, dtype, owner):
    """A NumPy array over `nbytes` at `address`, keeping `owner` alive."""
    if nbytes == 0:
        return np.zeros(0, dtype=dtype)
    raw = (ctypes.c_char * nbytes).from_address(address)
    raw.owner = owner   # the capsule that frees the memory
    return np.frombuffer(raw, dtype=dtype)


def _column(np, fmt, arr, owner):
    n = arr.length
    bufs = arr.buffers
    if fmt == b"n":
        return np.full(n, None, dtype=object), None
    valid = None
    if arr.null_count and bufs[0]:
        bits = _view(np, bufs[0], (n + 7) // 8, "u1", owner)
        valid = np.unpackbits(bits, bitorder="little")[:n].astype(bool)
    if fmt in _NUMERIC:
        dt = np.dtype(_NUMERIC[fmt])
        return _view(np, bufs[1], n * dt.itemsize, dt, owner), valid
    if fmt in _TEMPORAL:
        raw, unit = _TEMPORAL[fmt]
        dt = np.dtype(raw)
        values = _view(np, bufs[1], n * dt.itemsize, dt, owner)
        # date32 days widen to int64 (a copy); timestamps and durations are views
        return (values.astype(unit) if dt.itemsize == 4 else values.view(unit)), valid
    out = np.empty(n, dtype=object)
    if fmt.startswith(b"d:"):
        spec = fmt[2:].split(b",")
        scale = int(spec[1])
        width = 32 if len(spec) > 2 and spec[2] == b"256" else 16
        data = ctypes.string_at(bufs[1], n * width) if n else b""
        for i in range(n):
            if valid is None or valid[i]:
                v = int.from_bytes(data[i * width:(i + 1) * width], "little", signed=True)
                out[i] = decimal.Decimal(v).scaleb(-scale, _EXACT)
        return out, valid
    if fmt in (b"u", b"z"):
        offsets = _view(np, bufs[1], (n + 1) * 4, "<i4", owner)
        size = int(offsets[n]) if n else 0
        data = ctypes.string_at(bufs[2], size) if size else b""
        text = fmt == b"u"
        for i in range(n):
            if valid is None or valid[i]:
                v = data[offsets[i]:offsets[i + 1]]
                out[i] = v.decode("utf-8") if text else v
        return out, valid
    raise ValueError("no NumPy conversion for Arrow format %r" % fmt.decode())


def schema_fields(schema_capsule):
    """[(name, format)] of the children of a struct schema capsule (not consumed)."""
    sch = _ArrowSchema.from_address(_get_pointer(schema_capsule, b"arrow_schema"))
    if not sch.release:
        raise ValueError("this arrow_schema capsule has already been consumed")
    out = []
    for i in range(sch.n_children):
        child = sch.children[i].contents
        out.append((child.name.decode("utf-8"), child.format.decode("ascii")))
    return out


def struct_to_numpy(np, schema_capsule, array_capsule):
    """(names, [array or masked array per column]) of one record batch; with
    `array_capsule` None, empty arrays of the schema's types."""
    sch = _ArrowSchema.from_address(_get_pointer(schema_capsule, b"arrow_schema"))
    names, cols = [], []
    arr = None
    if array_capsule is not None:
        arr = _ArrowArray.from_address(_get_pointer(array_capsule, b"arrow_array"))
        if not arr.release:
            raise ValueError("this arrow_array capsule has already been consumed")
    for i in range(sch.n_children):
        child = sch.children[i].contents
        names.append(child.name.decode("utf-8"))
        fmt = child.format
        if arr is None:
            if fmt in _NUMERIC:
                values, valid = np.zeros(0, dtype=_NUMERIC[fmt]), None
            elif fmt in _TEMPORAL:
                values, valid = np.zeros(0, dtype=_TEMPORAL[fmt][1]), None
            else:
                values, valid = np.empty(0, dtype=object), None
        else:
            values, valid = _column(np, fmt, arr.children[i].contents, array_capsule)
        if valid is not None:   # the C core writes 0 in the value slot of a NULL
            values = np.ma.masked_array(values, mask=~valid)
        cols.append(values)
    return names, cols
