"""``pymysql.charset`` of the PyMySQL flavour: MySQL charsets and collations by
name and id, from mysqlc's tables (:mod:`mysqlc._charsets`)."""

from .. import _charsets

__all__ = ["Charset", "Charsets", "charsets", "charset_by_name", "charset_by_id"]

# PyMySQL's Python codec names for MySQL charsets (its ``Charset.encoding``)
_ENCODINGS = {"utf8mb4": "utf8", "utf8mb3": "utf8", "latin1": "cp1252",
              "koi8r": "koi8_r", "koi8u": "koi8_u"}


class Charset:
    """One collation: ``id``, charset ``name``, ``collation`` name, ``is_default``
    (the charset's default collation)."""

    def __init__(self, id, name, collation, is_default=False):
        self.id, self.name, self.collation = id, name, collation
        self.is_default = is_default

    def __repr__(self):
        return "Charset(id=%d, name=%r, collation=%r)" % (self.id, self.name, self.collation)

    def __eq__(self, other):
        if not isinstance(other, Charset):
            return NotImplemented
        return (self.id, self.name, self.collation) == (other.id, other.name, other.collation)

    __hash__ = object.__hash__

    @property
    def encoding(self):
        """The Python codec name PyMySQL uses for this charset."""
        return _ENCODINGS.get(self.name, self.name)

    @property
    def is_binary(self):
        """True for the ``binary`` collation (id 63)."""
        return self.id == 63


class Charsets:
    """Collections of :class:`Charset` by id and, for default collations, by name."""

    def __init__(self):
        self._by_id = {}
        self._by_name = {}

    def add(self, c):
        self._by_id[c.id] = c
        if c.is_default:
            self._by_name[c.name] = c

    def by_id(self, id):
        """The Charset of collation `id`; KeyError when unknown."""
        return self._by_id[id]

    def by_name(self, name):
        """The default Charset of charset `name` (case-insensitive; ``utf8`` is
        utf8mb4, as PyMySQL 1.1+); KeyError when unknown."""
        name = name.lower()
        if name == "utf8":
            name = "utf8mb4"
        return self._by_name[name]


def _build():
    out = Charsets()
    by_id = {}
    for collation, cid in _charsets.COLLATIONS.items():
        name = _charsets.COLLATION_CHARSETS.get(cid)
        if name is not None and cid not in by_id:
            by_id[cid] = (name, collation)
    defaults = {}
    for name, (default_id, _codec) in _charsets.CHARSETS.items():
        if name != "utf8":
            defaults[default_id] = name
    for cid in sorted(by_id):
        name, collation = by_id[cid]
        out.add(Charset(cid, name, collation, defaults.get(cid) == name))
    return out


charsets = _build()
charset_by_name = charsets.by_name
charset_by_id = charsets.by_id
