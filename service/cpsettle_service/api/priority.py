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
held it up for over 100 ms. Such a call takes ``bulk_turn``: it stops counting as live, waits
for the one bulk slot and for its turn, and runs; the next one starts only after the loop has
run for as long again (so cold work takes at most half of the loop's time, and a live call that
arrived meanwhile is in flight, and counted, before the next one starts).
``bench/bench_hostile.py`` measures the effect.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class LiveFirst:
    """Counts live (unary) calls in flight; lets bulk work wait until there are none."""

    def __init__(self, bulk_limit: int | None = None) -> None:
        self.live = 0
        # the most unary calls that may wait for the bulk slot (None: no limit); past it such a
        # call is refused, so that waiting bulk work never fills the budget of live calls
        self.bulk_limit = bulk_limit
        self._idle: asyncio.Event | None = None  # made in the loop that first waits
        # one unary call's bulk work at a time (the lock binds to the loop that first waits)
        self.bulk_slot = asyncio.Lock()
        self.bulk_waiting = 0  # unary calls waiting for the bulk slot
        self._bulk_rest = 0.0  # perf_counter time before which no bulk body starts

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
        try:
            await asyncio.wait_for(self._idle.wait(), most)
        except asyncio.TimeoutError:
            pass  # bulk work moves on, one piece, under steady live traffic

    def bulk_full(self) -> bool:
        """Whether ``bulk_limit`` calls already wait for the bulk slot."""
        return self.bulk_limit is not None and self.bulk_waiting >= self.bulk_limit

    @asynccontextmanager
    async def bulk_turn(self, most: float = 0.05) -> AsyncIterator[None]:
        """The body is bulk work inside a live call (one that ``enter`` counted).

        While it waits the call does not count as live. Bulk bodies run one at a time; each
        starts after the loop has run for as long as the one before it took (a live call that
        came in meanwhile is in flight, and counted, by then) and after ``wait_turn(most)``.
        The body must not await: it is the work itself, and the call counts as live again
        while it runs, so that its bookkeeping balances however it ends."""
        self.leave()
        entered = False
        self.bulk_waiting += 1
        queued = True
        try:
            async with self.bulk_slot:
                self.bulk_waiting -= 1
                queued = False
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
            if queued:
                self.bulk_waiting -= 1  # cancelled while waiting for the slot
            if not entered:
                self.enter()
