"""``pymysql.optionfile`` of the PyMySQL flavour: a parser for MySQL option files
(``my.cnf``)."""

import configparser

__all__ = ["Parser"]


class Parser(configparser.RawConfigParser):
    """``configparser`` for option files: options without a value are allowed,
    ``-`` and ``_`` in option names are the same, and one pair of surrounding
    quotes (``"`` or ``'``) is removed from values."""

    def __init__(self, **kwargs):
        kwargs["allow_no_value"] = True
        super().__init__(**kwargs)

    def optionxform(self, key):
        return key.lower().replace("_", "-")

    def get(self, section, option, **kwargs):
        value = super().get(section, option, **kwargs)
        if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] \
                and value[0] in "'\"":
            return value[1:-1]
        return value
