"""Fair turns for bulk work: per-caller queues served round robin (issue 24, part 4).

Work that a live table's call must not wait behind (reading a profile the server has not
cached, engine work that may run long) takes a turn at a ``FairGate``: ``slots`` turns at a
time, and when they are all taken the callers wait in queues of their own, served one caller
after the other, so that one caller with many calls in the queue waits behind its own calls,
not in front of everyone else's: a caller with one call waits at most one turn per other
caller waiting.

How many calls may wait is bounded (``WaitBudget``, shared by the gates of a server: half of
``CPSETTLE_MAX_CONCURRENT_RPCS``, so that waiting bulk work never takes the whole budget of
live calls). When it is full, a newcomer from a caller with fewer calls waiting than the
caller with the most takes the place of that caller's newest call, which is refused
(RESOURCE_EXHAUSTED, retryable); a newcomer from the caller with the most is refused itself.
So a caller that floods the queue is refused, not the others.

Who the caller is (``caller_of``, decided in docs/DECISIONS.md): the bearer token's caller name
when tokens are on (``CALLER``, set by the interceptor), else the peer's address without its
port (a client does not get more turns by opening more connections).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

# The authenticated caller's name (tokens on), for the call in hand; "" when tokens are off.
CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("cpsettle_caller", default="")


def peer_host(peer: str) -> str:
    """``ipv4:10.0.0.7:51234`` -> ``ipv4:10.0.0.7``; ``ipv6:[::1]:5`` -> ``ipv6:[::1]``; any
    other form (``unix:…``) as it is."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return f"ipv4:{rest.rpartition(':')[0] or rest}"
    if kind == "ipv6" and rest.startswith("["):
        return f"ipv6:{rest[: rest.find(']') + 1]}"
    return peer


def caller_of(context: Any) -> str:
    """The caller a call's bulk work queues under: the token's caller, else the peer's host."""
    name = CALLER.get()
    if name:
        return f"token:{name}"
    try:
        return peer_host(str(context.peer()))
    except Exception:  # a context without a peer (tests, in-process calls)
        return ""


class WaitBudget:
    """How many calls may wait at the gates that share it (None: no limit)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.waiting = 0

    def full(self) -> bool:
        return self.limit is not None and self.waiting >= self.limit


class FairGate:
    """``slots`` turns at a time, handed to waiting callers round robin (``turn``)."""

    def __init__(
        self, slots: int, budget: WaitBudget, refused: Callable[[str], BaseException]
    ) -> None:
        self.slots = slots
        self.free = slots
        self.budget = budget
        self._refused = refused
        # callers with calls waiting, in the order they are served; each one's calls in order
        self._queues: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def waiting_for(self, caller: str) -> int:
        queue = self._queues.get(caller)
        return len(queue) if queue else 0

    def _make_room(self, caller: str) -> None:
        """The budget is full: refuse the newest call of the caller with the most waiting, if
        that is someone with more than ``caller`` has; else refuse ``caller``'s call."""
        mine = self.waiting_for(caller)
        longest = max(self._queues, key=lambda c: len(self._queues[c]), default=None)
        if longest is None or longest == caller or len(self._queues[longest]) <= mine + 1:
            raise self._refused(
                f"{self.budget.waiting} calls with bulk work (profiles this replica has not "
                f"read yet, or long engine work) are waiting, the most it queues, {mine} of "
                "them yours; retry shortly"
            )
        victim = self._queues[longest].pop()
        self.budget.waiting -= 1
        if not self._queues[longest]:
            del self._queues[longest]
        victim.set_exception(
            self._refused(
                "calls from other callers need the queue for bulk work this call was waiting in; "
                "retry shortly"
            )
        )

    @asynccontextmanager
    async def turn(self, caller: str) -> AsyncIterator[None]:
        """The body runs in one of the ``slots``; it waits for a free one, in ``caller``'s
        queue, when none is. Refused (``refused``'s exception) when the budget is full."""
        if self.free > 0 and not self._queues:
            self.free -= 1
        else:
            if self.budget.full():
                self._make_room(caller)
            granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._queues.setdefault(caller, deque()).append(granted)
            self.budget.waiting += 1
            try:
                await granted
            except BaseException:
                if granted.done() and not granted.cancelled() and granted.exception() is None:
                    self._release()  # the turn came just as the call ended: pass it on
                else:
                    self._forget(caller, granted)
                raise
        try:
            yield
        finally:
            self._release()

    def _forget(self, caller: str, granted: asyncio.Future[None]) -> None:
        queue = self._queues.get(caller)
        if queue is not None and granted in queue:
            queue.remove(granted)
            self.budget.waiting -= 1
            if not queue:
                del self._queues[caller]

    def _release(self) -> None:
        """Hand the freed slot to the next caller in turn, or keep it free."""
        while self._queues:
            caller, queue = next(iter(self._queues.items()))
            granted = queue.popleft()
            self.budget.waiting -= 1
            if queue:
                self._queues.move_to_end(caller)  # its next call waits for the others' turns
            else:
                del self._queues[caller]
            if not granted.done():
                granted.set_result(None)
                return
        self.free += 1
