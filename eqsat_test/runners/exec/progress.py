"""The progress of one run's tasks: a bar on a terminal, a plain line every few seconds otherwise."""
from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eqsat_test.runners.records import Result


class Progress:
    """A bar on a terminal; a plain line every PLAIN_EVERY seconds otherwise (logs, CI, pipes), also
    while no task finishes (the first compiles take a while)."""

    PLAIN_EVERY = 10.0

    def __init__(self, total: int, enabled: bool, sweeps: int = 0) -> None:
        self.total, self.enabled, self.done, self.suspicious = total, enabled, 0, 0
        # the same count, in the same words, as the summary's "executed" line
        self.what = f" ({total - sweeps} program tasks + {sweeps} sweep tasks)" if sweeps else ""
        self.t0 = self.last = time.monotonic()
        self.bar = None
        self._lock, self._stop = threading.Lock(), threading.Event()
        if enabled and sys.stderr.isatty():
            try:
                from tqdm import tqdm  # optional: plain lines without it
                self.bar = tqdm(total=total, unit="task", file=sys.stderr, dynamic_ncols=True)
            except ImportError:
                pass
        if enabled and self.bar is None:
            threading.Thread(target=self._tick, daemon=True).start()

    def _tick(self) -> None:
        while not self._stop.wait(max(self.PLAIN_EVERY / 2, 0.1)):
            with self._lock:
                if time.monotonic() - self.last >= self.PLAIN_EVERY:
                    self._line()

    def _line(self) -> None:
        self.last = time.monotonic()
        print(f"eqsat-test: {self.done}/{self.total} tasks done{self.what}, {self.suspicious} suspicious, "
              f"{self.last - self.t0:.0f} s", file=sys.stderr, flush=True)

    def update(self, r: Result, suspicious: int) -> None:
        with self._lock:
            self.done += 1
            self.suspicious = suspicious
            if self.bar is not None:
                self.bar.set_postfix_str(f"suspicious={suspicious}")
                self.bar.update(1)
            elif self.enabled and (time.monotonic() - self.last >= self.PLAIN_EVERY or self.done == self.total):
                self._line()

    def close(self) -> None:
        self._stop.set()
        if self.bar is not None:
            self.bar.close()
