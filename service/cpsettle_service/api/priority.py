"""Live calls first: bulk work (a SettleStream re-audit) waits its turn while unary calls are in
flight.

A unary Settle spends part of its life awaiting (its audit line being written by the log's
thread, its answer being sent); a bulk stream that settled hand after hand meanwhile would hold
the event loop and the GIL, and every live call would wait behind it (measured: live p50 5 ms
to 66-93 ms beside one bulk stream). So between two hands the stream asks ``wait_turn``: it
goes on at once when no live call is in flight, and otherwise waits until none is, for at most
``most`` seconds, so that bulk work still moves under steady live traffic.
``bench/bench_bulk_yield.py`` measures the effect.
"""

from __future__ import annotations

import asyncio


class LiveFirst:
    """Counts live (unary) calls in flight; lets bulk work wait until there are none."""

    def __init__(self) -> None:
        self.live = 0
        self._idle: asyncio.Event | None = None  # made in the loop that first waits

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
            pass  # bulk work moves on, one hand, under steady live traffic
