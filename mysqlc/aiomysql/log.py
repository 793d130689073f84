"""``aiomysql.log``: the ``aiomysql`` logger (``echo=True`` writes statements to it)."""

import logging

#: aiomysql's logger
logger = logging.getLogger("aiomysql")
