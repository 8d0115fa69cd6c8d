"""The clock of generation's stages: a line every so often while one runs long, and the run's time budget over all of them."""
from __future__ import annotations

import contextlib
import signal
import threading
import time

HEARTBEAT_S = 10.0  # a stage that runs longer says so this often


class BudgetSpent(BaseException):
    """The run's time budget ran out during a generation stage. A BaseException, as KeyboardInterrupt:
    the model's own code, run while loading and capturing, may catch Exception."""

    def __init__(self, stage: str, budget: float | None = None) -> None:
        super().__init__(f"time budget spent while {stage}")
        self.stage, self.budget = stage, budget


class StageClock:
    """`with clock.stage("loading the model file"):` logs "still loading the model file (N s)" every
    `every` seconds while the stage runs, and raises BudgetSpent(stage) once `deadline`
    (time.monotonic()) has passed: at once when a stage starts after it, else by SIGALRM (on the
    main thread; a running Rust or C++ call ends first, Python code stops at its next bytecode)."""

    def __init__(self, deadline: float | None = None, log=lambda s: None, every: float = HEARTBEAT_S,
                 budget: float | None = None) -> None:
        self.deadline, self.log, self.every, self.budget = deadline, log, every, budget
        self.seconds: dict[str, float] = {}

    def left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    @contextlib.contextmanager
    def stage(self, name: str, key: str | None = None):
        left = self.left()
        if left is not None and left <= 0:
            raise BudgetSpent(name, self.budget)
        t0 = time.monotonic()
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.every):
                self.log(f"still {name} ({time.monotonic() - t0:.0f} s)")

        th = threading.Thread(target=beat, daemon=True, name="stage-heartbeat")
        th.start()
        alarm = left is not None and threading.current_thread() is threading.main_thread()
        if alarm:
            def ring(signum, frame):
                raise BudgetSpent(name, self.budget)
            previous = signal.signal(signal.SIGALRM, ring)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))
        try:
            yield
        finally:
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
            stop.set()
            k = key or name
            self.seconds[k] = self.seconds.get(k, 0.0) + time.monotonic() - t0
