"""Progress reporting shared by the columnar reads and the bulk load."""

import threading


class Progress:
    """Counts rows and reports them to `callback`: ``callback(rows_so_far)``, or
    ``callback.update(rows_just_done)`` when it has an ``update`` method (a tqdm bar,
    which then counts by itself).  None reports nothing.  Thread-safe: partitioned
    reads report from several threads.

    Raises TypeError when `callback` is neither callable nor has ``update``.
    """

    def __init__(self, callback=None):
        self.total = 0
        self._fn = self._update = None
        self._lock = threading.Lock()
        if callback is None:
            return
        update = getattr(callback, "update", None)
        if callable(update):
            self._update = update
        elif callable(callback):
            self._fn = callback
        else:
            raise TypeError("progress must be callable or have an update(n) method")

    def __call__(self, n):
        if n <= 0 or (self._fn is None and self._update is None):
            return
        with self._lock:
            self.total += n
            if self._update is not None:
                self._update(n)
            else:
                self._fn(self.total)

    add = __call__
