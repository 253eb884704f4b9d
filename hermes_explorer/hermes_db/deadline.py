"""Statement deadlines for the state.db: each statement gets a budget (:func:`query_budget`)
when it starts, and an SQLite progress handler interrupts it once spent, during ``execute``
and fetches alike.
"""

from __future__ import annotations

import contextvars
import time

from django.conf import settings
from django.db.utils import OperationalError

from .current import scoped

_budget: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "hermes_query_budget", default=None
)
_cap: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "hermes_statement_cap", default=None
)

# SQLite VM instructions between two deadline checks: few enough to stop within milliseconds,
# many enough that the callback, which needs Python's lock, does not slow other threads (a
# summary build took 7.3-7.8 s at 20,000, 6.9-7.0 s at 100,000 on the 1M-message store).
PROGRESS_STEPS = 100_000


class QueryTimeout(OperationalError):
    """A statement on the state.db ran past its deadline and was interrupted."""

    def __init__(self, budget: float, *, capped: bool = False):
        self.budget = budget
        # True when the statement cap stopped it, not the budget: the work can be cut smaller.
        self.capped = capped
        super().__init__(f"The query ran longer than its {budget:g} s limit and was stopped.")


def current_budget() -> float:
    value = _budget.get()
    return value if value is not None else float(settings.HERMES_QUERY_TIMEOUT)


def query_budget(seconds: float | None):
    """Give every statement started inside the block ``seconds`` to finish."""
    return scoped(_budget, seconds)


def statement_cap(seconds: float | None):
    """Stop every statement started inside the block after ``seconds`` at most."""
    return scoped(_cap, seconds)


class Deadline:
    """The per-connection clock the progress handler looks at."""

    __slots__ = ("budget", "capped", "expires_at")

    def __init__(self) -> None:
        self.budget = 0.0
        self.capped = False
        self.expires_at = float("inf")

    def start(self) -> None:
        budget = current_budget()
        cap = _cap.get()
        self.capped = cap is not None and cap < budget
        self.budget = cap if self.capped else budget
        self.expires_at = time.monotonic() + self.budget

    def timeout(self) -> QueryTimeout:
        return QueryTimeout(self.budget, capped=self.capped)

    def expired(self) -> int:
        # Called by SQLite: a non-zero return aborts the running statement.
        return 1 if time.monotonic() > self.expires_at else 0
