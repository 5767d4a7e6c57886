"""Live calls first: bulk work waits its turn while live unary calls are in flight.

A unary Settle spends part of its life awaiting (its audit line being written by the log's
thread, its answer being sent); a bulk stream that settled hand after hand meanwhile would hold
the event loop and the GIL, and every live call would wait behind it (measured: live p50 5 ms
to 66-93 ms beside one bulk stream). So between two hands the stream asks ``wait_turn``: it
goes on at once when no live call is in flight, and otherwise waits until none is, for at most
``most`` seconds, so that bulk work still moves under steady live traffic.
``bench/bench_bulk_yield.py`` measures the effect.

A unary call is bulk work too when it brings a profile the resolver has not cached (an inline
profile or overrides seen for the first time, or never valid): reading and checking a maximal
one costs milliseconds of the event loop, and eight such calls queued ahead of a live Settle
held it up for over 100 ms. With worker processes (api/offload.py) such a call's profile is
read in a worker the first time, and on the loop only when it comes back (to be cached there);
that read takes ``bulk_turn``: it stops counting as live, waits for the one bulk slot, in its
caller's queue (callers served round robin: api/fair.py), and for its turn, and runs; the next
one starts only after the loop has run for as long again (so cold work takes at most half of
the loop's time, and a live call that arrived meanwhile is in flight, and counted, before the
next one starts).
``bench/bench_hostile.py`` measures the effect.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress

from .fair import FairGate, WaitBudget


class LiveFirst:
    """Counts live (unary) calls in flight; lets bulk work wait until there are none."""

    def __init__(
        self, bulk_limit: int | None = None, refused: Callable[[str], BaseException] = RuntimeError
    ) -> None:
        self.live = 0
        # the most unary calls that may wait for bulk turns (None: no limit), shared by the
        # server's gates (profile reads here, worker slots in the servicer); past it a call is
        # refused, so that waiting bulk work never fills the budget of live calls
        self.budget = WaitBudget(bulk_limit)
        self.refused = refused
        self._idle: asyncio.Event | None = None  # made in the loop that first waits
        # one profile read on the loop at a time, callers served round robin
        self.reading = FairGate(1, self.budget, refused)
        self._bulk_rest = 0.0  # perf_counter time before which no bulk body starts

    @property
    def bulk_limit(self) -> int | None:
        return self.budget.limit

    @property
    def bulk_waiting(self) -> int:
        """Unary calls waiting for a bulk turn (a profile read, a worker)."""
        return self.budget.waiting

    def enter(self) -> None:
        self.live += 1
        if self._idle is not None:
            self._idle.clear()

    def leave(self) -> None:
        self.live -= 1
        if self.live == 0 and self._idle is not None:
            self._idle.set()

    async def wait_turn(self, most: float = 0.05) -> None:
        """Give the loop back; while live calls are in flight, wait (``most`` s at most)."""
        if self.live == 0:
            await asyncio.sleep(0)
            return
        if self._idle is None:
            self._idle = asyncio.Event()
        with suppress(TimeoutError):  # then bulk work moves on, one piece, under
            await asyncio.wait_for(self._idle.wait(), most)  # steady live traffic

    def bulk_full(self) -> bool:
        """Whether ``bulk_limit`` calls already wait for bulk turns."""
        return self.budget.full()

    @asynccontextmanager
    async def away(self) -> AsyncIterator[None]:
        """The body awaits work done elsewhere (a worker process): the call does not count as
        live meanwhile, so bulk streams need not wait for it."""
        self.leave()
        try:
            yield
        finally:
            self.enter()

    @asynccontextmanager
    async def bulk_turn(self, caller: str = "", most: float = 0.05) -> AsyncIterator[None]:
        """The body is bulk work inside a live call (one that ``enter`` counted), on the loop.

        While it waits the call does not count as live. Bulk bodies run one at a time, the
        callers waiting served round robin (``fair.FairGate``); each starts after the loop has
        run for as long as the one before it took (a live call that came in meanwhile is in
        flight, and counted, by then) and after ``wait_turn(most)``. The body must not await:
        it is the work itself, and the call counts as live again while it runs, so that its
        bookkeeping balances however it ends."""
        self.leave()
        entered = False
        try:
            async with self.reading.turn(caller):
                rest = self._bulk_rest - time.perf_counter()
                if rest > 0:
                    await asyncio.sleep(rest)
                await self.wait_turn(most)
                self.enter()
                entered = True
                start = time.perf_counter()
                try:
                    yield
                finally:
                    now = time.perf_counter()
                    self._bulk_rest = now + min(now - start, most)
        finally:
            if not entered:
                self.enter()
