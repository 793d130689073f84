"""Type conversion registry, as ``MySQLdb.converters``.

:data:`conversions` maps two kinds of keys, like MySQLdb's dict of the same name:

* ``FIELD_TYPE`` codes (ints) -> *decoder* ``f(text) -> object``.  The C core
  decodes every built-in type itself (in one pass, without calling Python), so
  these entries are only a reference of what the defaults do.  A ``conv`` dict
  given to :func:`mysqlc.connect` whose entry for a field type is *not* the
  default here makes the core call that function for every non-NULL value of that
  type, with what mysqlclient's ``_mysql`` hands a converter: the wire ``bytes``
  for numbers (integers, YEAR, FLOAT, DOUBLE; the converter ``str`` gets the
  text), the ASCII text (``str``) for DECIMAL, dates and times, ``bytes`` for
  binary-charset columns and BIT; for a text column the ``str`` (``bytes`` with
  ``use_unicode=False``), where mysqlclient with ``use_unicode`` replaces a string
  type's converter by its own str/bytes rule.
* Python types -> *encoder* ``f(obj, conv) -> str | bytes`` giving the SQL
  literal, with MySQLdb's two-argument signature.  The core builds literals for
  the built-in types in C; a ``conv`` entry that differs from the default here is
  passed to the core as a one-argument encoder and is consulted first.

Entries may also be sequences of ``(flag_mask, decoder)`` pairs, MySQLdb's way of
choosing a decoder by column flags (used for the string types, where
``FLAG.BINARY`` means "binary charset").  mysqlc resolves such a sequence into
one function that picks the ``FLAG.BINARY`` decoder for ``bytes`` values and the
catch-all (``None`` mask) decoder for ``str`` values.

Unlike MySQLdb, field types *missing* from a user's ``conv`` keep the built-in
decoding (MySQLdb returns them as strings).  Copy and extend :data:`conversions`
rather than modifying it::

    conv = mysqlc.converters.conversions.copy()
    conv[FIELD_TYPE.TIME] = my_time_parser
    mysqlc.connect(..., conv=conv)

The string helpers :func:`escape_string`, :func:`string_literal`,
:func:`escape` and :func:`literal` use the core with the connection defaults
(utf8mb4, backslash escapes on); :class:`mysqlc.connections.Connection` has
methods of the same names that use the connection's actual settings.
"""

import array
import datetime
import operator
import time
import uuid
from decimal import Decimal

from .constants import FIELD_TYPE, FLAG
from .errors import ProgrammingError
from .times import (
    Date2literal, DateTime2literal, DateTime_or_None, DateTimeDelta2literal, Date_or_None,
    Time2literal, TimeDelta_or_None,
)

try:
    from . import _core
    _core_error = None
except ImportError as exc:   # not built yet; the helpers below raise when called
    _core = None
    _core_error = exc

__all__ = [
    "conversions", "escape", "escape_item", "escape_string", "string_literal", "literal",
    "Bool2Str", "Set2Str", "Thing2Str", "Float2Str", "None2NULL", "Thing2Literal",
    "Decimal2Literal", "array2Str", "bytes_or_str",
]

NoneType = type(None)


def _require_core():
    """Return ``mysqlc._core``, or raise ImportError when the extension is not built."""
    if _core is None:
        raise ImportError(
            "mysqlc._core (the C extension) is not built or failed to import; build it "
            "with 'python setup.py build_ext --inplace' or 'pip install .' (%s)"
            % (_core_error,)) from _core_error
    return _core


# ---------------------------------------------------------------- string helpers

def escape_string(s, no_backslash_escapes=False, charset="utf8mb4", encoding="utf-8"):
    """Escape `s` for use inside a quoted SQL string, without adding quotes.

    As ``mysql_real_escape_string``: NUL, ``\\n``, ``\\r``, ``\\``, ``'``, ``"``
    and ``\\x1a`` get a backslash; with `no_backslash_escapes` only ``'`` is
    doubled.  Whole multibyte characters of big5/gbk/gb18030/sjis/cp932 are kept
    intact.

    Parameters
    ----------
    s : str or bytes-like
        ``str`` is encoded with `encoding` first.
    no_backslash_escapes : bool
        The server's NO_BACKSLASH_ESCAPES sql_mode is on.
    charset : str
        MySQL character set of the connection (matters for the multibyte sets).
    encoding : str
        Python codec for ``str`` input.

    Returns
    -------
    bytes
        Always bytes, as mysqlclient's ``escape_string`` (PyMySQL returns str
        for str input).
    """
    return _require_core().escape_string(s, no_backslash_escapes=no_backslash_escapes,
                                         charset=charset, encoding=encoding)


def string_literal(obj, no_backslash_escapes=False, charset="utf8mb4", encoding="utf-8"):
    """Return `obj` as a quoted SQL string literal (``bytes``), e.g. ``b"'it\\\\'s'"``.

    ``bytes``-like objects are escaped as they are, ``str`` is encoded with
    `encoding`, anything else is converted with ``str()`` first (as MySQLdb's
    ``string_literal``).  Parameters as for :func:`escape_string`.
    """
    if not isinstance(obj, (str, bytes, bytearray, memoryview)):
        obj = str(obj)
    return b"'" + escape_string(obj, no_backslash_escapes, charset, encoding) + b"'"


def literal(obj, encoders=None, no_backslash_escapes=False, charset="utf8mb4",
            encoding="utf-8", binary_prefix=False):
    """Return the SQL literal of `obj` as ``bytes``, built by the C core.

    ``None`` -> ``NULL``, numbers as digits, ``str``/``bytes`` quoted and escaped,
    date/time types quoted, sequences and sets as ``(a,b,...)``.

    Parameters
    ----------
    obj : object
    encoders : dict[type, callable(obj) -> bytes | str], optional
        One-argument encoders consulted before the built-in rules (for types
        other than the exact built-ins None/bool/int/float/str/bytes).
    no_backslash_escapes, charset, encoding
        As for :func:`escape_string`.
    binary_prefix : bool
        Write ``_binary'...'`` for bytes.

    Raises
    ------
    ProgrammingError
        For a type with no rule, or a float/Decimal NaN or infinity.
    """
    return _require_core().literal(obj, no_backslash_escapes=no_backslash_escapes,
                                   charset=charset, encoding=encoding,
                                   encoders=encoders, binary_prefix=binary_prefix)


def escape(obj, mapping=None):
    """Return the SQL literal of `obj` using the encoders in `mapping`.

    Follows MySQLdb's ``_mysql.escape(obj, dict)``: the encoder registered for
    ``type(obj)`` (exact type) in `mapping` is called as ``f(obj, mapping)`` and
    its result (``str`` or ``bytes``) is returned as is; ``str`` and bytes-like
    objects without an encoder become quoted string literals (``bytes``); any
    other type without an encoder is given to the core's :func:`literal`.

    Parameters
    ----------
    obj : object
    mapping : dict, optional
        A conversion dict like :data:`conversions` (its default).

    Returns
    -------
    str or bytes
    """
    if mapping is None:
        mapping = conversions
    encoder = mapping.get(type(obj))
    if encoder is not None and not isinstance(encoder, (list, tuple)):
        return encoder(obj, mapping)
    if isinstance(obj, (str, bytes, bytearray, memoryview)):
        return string_literal(obj)
    return literal(obj)


def escape_item(val, charset="utf8mb4", mapping=None):
    """PyMySQL-style ``escape_item(val, charset, mapping)``: as :func:`escape`.

    `charset` is accepted for signature compatibility; literals are built for
    utf8mb4 (use ``Connection.escape`` for another connection charset).
    """
    return escape(val, mapping)


# ---------------------------------------------------------------- MySQLdb encoders
# Signature (obj, conv) -> str | bytes, return types as in MySQLdb.

def Bool2Str(s, d):
    """``b"1"`` or ``b"0"``."""
    return b"1" if s else b"0"


def Thing2Str(s, d):
    """``str(s)``, unquoted (ints)."""
    return str(s)


def Float2Str(o, d):
    """``repr(o)`` with ``e0`` appended when it has no exponent, so the server
    reads a DOUBLE.  Raises ProgrammingError for nan and infinities."""
    s = repr(o)
    if s in ("inf", "-inf", "nan"):
        raise ProgrammingError(0, "%s can not be used with MySQL" % s)
    if "e" not in s:
        s += "e0"
    return s


def None2NULL(o, d):
    """``b"NULL"``."""
    return b"NULL"


def Thing2Literal(o, d):
    """Quoted string literal (``bytes``) of ``o`` (``str(o)`` for non-strings)."""
    return string_literal(o)


def Decimal2Literal(o, d):
    """``format(o, "f")``: the exact digits without an exponent (``str``)."""
    if not o.is_finite():
        raise ProgrammingError(0, "%s can not be used with MySQL" % o)
    return format(o, "f")


def Set2Str(s, d):
    """Quoted literal (``bytes``) of a set of strings joined by ``,`` (a SET value)."""
    return string_literal(",".join(s))


def array2Str(o, d):
    """Quoted literal (``bytes``) of the raw bytes of an ``array.array``."""
    return Thing2Literal(o.tobytes(), d)


#: MySQLdb's ``(flag mask, decoder)`` sequence for the string types: bytes for
#: binary-charset columns, str otherwise (the core's built-in behaviour).
bytes_or_str = ((FLAG.BINARY, bytes), (None, str))
_bytes_or_str = bytes_or_str   # MySQLdb's private name


conversions = {
    # Python type -> encoder (obj, conv) -> literal
    int: Thing2Str,
    float: Float2Str,
    NoneType: None2NULL,
    array.array: array2Str,
    bool: Bool2Str,
    datetime.date: Date2literal,
    datetime.datetime: DateTime2literal,
    datetime.time: Time2literal,
    datetime.timedelta: DateTimeDelta2literal,
    set: Set2Str,
    Decimal: Decimal2Literal,
    # FIELD_TYPE -> decoder text -> object (reference only; the core decodes these)
    FIELD_TYPE.TINY: int,
    FIELD_TYPE.SHORT: int,
    FIELD_TYPE.LONG: int,
    FIELD_TYPE.FLOAT: float,
    FIELD_TYPE.DOUBLE: float,
    FIELD_TYPE.DECIMAL: Decimal,
    FIELD_TYPE.NEWDECIMAL: Decimal,
    FIELD_TYPE.LONGLONG: int,
    FIELD_TYPE.INT24: int,
    FIELD_TYPE.YEAR: int,
    FIELD_TYPE.TIMESTAMP: DateTime_or_None,
    FIELD_TYPE.DATETIME: DateTime_or_None,
    FIELD_TYPE.TIME: TimeDelta_or_None,
    FIELD_TYPE.DATE: Date_or_None,
    FIELD_TYPE.NEWDATE: Date_or_None,
    FIELD_TYPE.TINY_BLOB: bytes_or_str,
    FIELD_TYPE.MEDIUM_BLOB: bytes_or_str,
    FIELD_TYPE.LONG_BLOB: bytes_or_str,
    FIELD_TYPE.BLOB: bytes_or_str,
    FIELD_TYPE.STRING: bytes_or_str,
    FIELD_TYPE.VAR_STRING: bytes_or_str,
    FIELD_TYPE.VARCHAR: bytes_or_str,
    FIELD_TYPE.JSON: str,
}

# The defaults, kept apart so that a user who mutates ``conversions`` in place
# (against the advice above) still gets overrides detected against the originals.
_DEFAULTS = dict(conversions)


def _str_fallback(value, encoders):
    """`value`, or ``str(value)`` for a ``uuid.UUID`` the core cannot write.

    mysqlclient and PyMySQL write a parameter of any type they have no encoder
    for as the quoted ``str()`` of it.  Django 5 on MariaDB >= 10.7 relies on that
    for ``uuid.UUID`` values (UUIDField with a native UUID column).  mysqlc does
    the same for ``uuid.UUID`` (and its subclasses) only: for an arbitrary object
    ``str()`` is rarely the value meant, so other unknown types keep raising
    ProgrammingError.  Tuples and lists are looked into.  Returns
    ``(value, changed)``.
    """
    if encoders and type(value) in encoders:
        return value, False
    if isinstance(value, uuid.UUID):
        return str(value), True
    if isinstance(value, (tuple, list)):
        items = [_str_fallback(item, encoders) for item in value]
        if not any(changed for _, changed in items):
            return value, False
        items = [item for item, _ in items]
        return (items if isinstance(value, list) else tuple(items)), True
    return value, False


def _str_fallback_args(args, encoders):
    """Parameters (a sequence or a mapping) with :func:`_str_fallback` applied, or
    None when none of them needed it."""
    if isinstance(args, dict) or (not isinstance(args, (tuple, list))
                                  and hasattr(args, "items")):
        fixed = {key: _str_fallback(value, encoders) for key, value in args.items()}
        if not any(changed for _, changed in fixed.values()):
            return None
        return {key: value for key, (value, _) in fixed.items()}
    fixed, changed = _str_fallback(tuple(args), encoders)
    return fixed if changed else None


def _identity(value):
    return value


def _resolve_flag_sequence(seq):
    """One decoder for a MySQLdb ``((mask, func), ...)`` sequence (see module doc)."""
    binary_fn = text_fn = None
    for item in seq:
        if not (isinstance(item, tuple) and len(item) == 2):
            continue
        mask, fn = item
        if isinstance(mask, int):
            if binary_fn is None and mask & FLAG.BINARY:
                binary_fn = fn
        else:
            if text_fn is None:
                text_fn = fn
            if binary_fn is None:
                binary_fn = fn
    binary_fn = binary_fn or _identity
    text_fn = text_fn or _identity

    def decode(value):
        if isinstance(value, bytes):
            return binary_fn(value)
        return text_fn(value)
    return decode


def _split_conv(conv):
    """Split a user ``conv`` dict into the overrides the core needs.

    Returns
    -------
    decoders : dict[int, callable] or None
        FIELD_TYPE -> one-argument decoder, for entries that differ from the
        defaults (None when there are none).  A ``None`` value means "no
        conversion": the value is returned as the core hands it over (str, or
        bytes for binary columns).
    encoders : dict[type, callable(obj, conv)]
        Every Python-type key of `conv` (MySQLdb's ``Connection.encoders``).
    core_encoders : dict[type, callable(obj)] or None
        One-argument wrappers of the encoders that differ from the defaults.
    """
    decoders = {}
    encoders = {}
    core_encoders = {}
    for key, fn in conv.items():
        if isinstance(key, int) and not isinstance(key, bool):
            default = _DEFAULTS.get(key, _MISSING)
            if fn is default or (default is not _MISSING and fn == default):
                continue
            if fn is None:
                fn = _identity
            elif isinstance(fn, (list, tuple)):
                fn = _resolve_flag_sequence(fn)
            decoders[key] = fn
        else:
            encoders[key] = fn
            if fn is _DEFAULTS.get(key, _MISSING) or fn is None:
                continue
            core_encoders[key] = _bind_encoder(fn, conv)
    return decoders or None, encoders, core_encoders or None


_MISSING = object()


def _bind_encoder(fn, conv):
    def encode(obj):
        return fn(obj, conv)
    encode.__wrapped__ = fn
    return encode


# ---------------------------------------------------------------- odd parameter types

def _numpy_scalar_value(v):
    """The Python value of NumPy scalar `v` (see :func:`_adapt_param`), or
    NotImplemented for the kinds without one (complex, void, object)."""
    import numpy
    if isinstance(v, numpy.datetime64):
        if numpy.isnat(v):
            return None
        unit = numpy.datetime_data(v.dtype)[0]
        if unit in ("Y", "M", "W", "D"):
            value = v.astype("datetime64[D]").item()
        else:
            value = v.astype("datetime64[us]").item()
        if not isinstance(value, datetime.date):   # an int: outside datetime's years
            raise ProgrammingError(
                0, "numpy.datetime64 %s is outside the years 1-9999 of a MySQL DATETIME"
                % (v,))
        return value
    if isinstance(v, numpy.timedelta64):
        if numpy.isnat(v):
            return None
        if numpy.datetime_data(v.dtype)[0] in ("Y", "M"):   # no fixed length
            raise ProgrammingError(0, "numpy.timedelta64 %r has no fixed length (years or "
                                   "months) and can not be written as a TIME" % (v,))
        value = v.astype("timedelta64[us]").item()
        if not isinstance(value, datetime.timedelta):
            raise ProgrammingError(0, "numpy.timedelta64 %s is out of range" % (v,))
        return value
    if isinstance(v, numpy.integer):       # after timedelta64, an integer subclass
        return int(v)
    if isinstance(v, numpy.bool_):
        return bool(v)
    if isinstance(v, numpy.floating):
        # the shortest decimal of the value at its own precision (str), as mysqlclient
        # and PyMySQL write it: float(numpy.float32(0.1)) is 0.10000000149011612
        return float(str(v))
    return NotImplemented


def _adapt_param(v):
    """A parameter of a type the C encoders have no rule of their own for, as a value
    they do have one for; ``NotImplemented`` when there is none.

    Called by the core (text literals, binary COM_STMT_EXECUTE / BULK parameters and
    load_table's LOAD DATA encoder) only after its exact-type fast paths failed, so
    plain int/float/str/bytes/datetime parameters never get here:

    * NumPy scalars as their Python values: integers of every width and sign ->
      int, ``numpy.bool_`` -> bool, ``float16``/``float32``/``longdouble`` -> the float
      of their ``str()`` (shortest decimal at their precision, as mysqlclient writes
      them), ``datetime64`` -> datetime (day or coarser units: date; below
      microseconds: truncated, as the server truncates extra digits), ``timedelta64``
      -> timedelta, NaT of either -> None (NULL);
    * ``uuid.UUID`` -> ``str(v)`` (what mysqlclient writes);
    * ``time.struct_time`` -> ``datetime(*v[:6])`` (PyMySQL's escape_struct_time);
    * set/frozenset -> the comma-joined SET literal of its str members (TypeError
      for other members, as mysqlclient);
    * other objects with ``__index__`` -> ``operator.index(v)``.

    Raises
    ------
    ProgrammingError
        A NumPy datetime64/timedelta64 outside what MySQL (and Python's datetime)
        can hold.
    TypeError
        A set with a member that is not str.
    """
    t = type(v)
    if t.__module__ == "numpy":
        value = _numpy_scalar_value(v)
        if value is not NotImplemented:
            return value
    if isinstance(v, uuid.UUID):
        return str(v)
    if t is time.struct_time:
        try:
            return datetime.datetime(*v[:6])
        except ValueError as exc:
            raise ProgrammingError(0, "time.struct_time %s is not a valid DATETIME: %s"
                                   % (tuple(v[:6]), exc)) from None
    if isinstance(v, (set, frozenset)):
        for member in v:
            if not isinstance(member, str):
                raise TypeError("set elements must be strings (a SET value is its member "
                                "names joined by ','), not %s" % type(member).__name__)
        return ",".join(v)
    if hasattr(t, "__index__") and not isinstance(v, float):
        return operator.index(v)
    return NotImplemented
