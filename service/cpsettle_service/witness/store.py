"""The witness's durable record: per log (origin) the latest checkpoint it cosigned, and every
checkpoint it cosigned, in a real database: PostgreSQL in production
(``CPSETTLE_WITNESS_DATABASE=postgresql://...``), a local SQLite file as the embedded default.

The check-and-advance of c2sp.org/tlog-witness is atomic without a lock held across the
consistency check: ``advance`` moves a log from the size the check was made against, with one
conditional statement (``UPDATE ... WHERE size = old``, or an ``INSERT`` that does nothing when
the log exists), so two requests racing can never roll a log back; the loser answers 409.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = ["Stored", "Store", "open_store"]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS witnessed_logs (
        origin TEXT PRIMARY KEY,
        size BIGINT NOT NULL,
        root TEXT NOT NULL,
        note TEXT NOT NULL,
        registered TEXT NOT NULL,
        updated TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS cosigned_checkpoints (
        origin TEXT NOT NULL,
        size BIGINT NOT NULL,
        root TEXT NOT NULL,
        note TEXT NOT NULL,
        cosigned TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS cosigned_by_origin ON cosigned_checkpoints (origin, size)",
)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Stored:
    origin: str
    size: int
    root: str  # base64, as in the checkpoint
    note: str  # the checkpoint with the log's signature and the witness's cosignature
    registered: str
    updated: str


class Store:
    """One database: SQLite (a path) or PostgreSQL (a ``postgresql://`` URL)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.postgres = target.startswith(("postgresql://", "postgres://"))
        self._lock = threading.Lock()  # one connection, one statement at a time
        self._conn: Any
        if self.postgres:
            import psycopg

            self._conn = psycopg.connect(target, autocommit=False)
            self._mark = "%s"
        else:
            self._conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")  # durable before the answer
            self._mark = "?"
        with self._lock:
            self._run_all(_SCHEMA)

    def _sql(self, text: str) -> str:
        return text.replace("?", self._mark)

    def _run_all(self, statements: tuple[str, ...]) -> None:
        if self.postgres:
            with self._conn.transaction():
                for s in statements:
                    self._conn.execute(s)
        else:
            for s in statements:
                self._conn.execute(s)

    def latest(self, origin: str) -> Stored | None:
        with self._lock:
            row = self._conn.execute(
                self._sql(
                    "SELECT origin, size, root, note, registered, updated FROM witnessed_logs "
                    "WHERE origin = ?"
                ),
                (origin,),
            ).fetchone()
            if self.postgres:
                self._conn.commit()
        return Stored(*row) if row else None

    def advance(self, origin: str, old: int, size: int, root: str, note: str) -> int | None:
        """Move ``origin`` from ``old`` (0 = a new log) to ``size`` and record the cosigned
        checkpoint; None when done, else the size the log has now (a race lost: 409)."""
        now = _now()
        with self._lock:
            try:
                if not self.postgres:  # psycopg opens a transaction at the first statement
                    self._conn.execute("BEGIN IMMEDIATE")
                if old == 0:
                    cur = self._conn.execute(
                        self._sql(
                            "INSERT INTO witnessed_logs (origin, size, root, note, registered, "
                            "updated) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (origin) DO NOTHING"
                        ),
                        (origin, size, root, note, now, now),
                    )
                    moved = cur.rowcount == 1
                    if not moved:  # known already: at size 0 only may it take old 0
                        cur = self._conn.execute(
                            self._sql(
                                "UPDATE witnessed_logs SET size = ?, root = ?, note = ?, "
                                "updated = ? "
                                "WHERE origin = ? AND size = 0"
                            ),
                            (size, root, note, now, origin),
                        )
                        moved = cur.rowcount == 1
                else:
                    cur = self._conn.execute(
                        self._sql(
                            "UPDATE witnessed_logs SET size = ?, root = ?, note = ?, "
                            "updated = ? "
                            "WHERE origin = ? AND size = ?"
                        ),
                        (size, root, note, now, origin, old),
                    )
                    moved = cur.rowcount == 1
                if moved:
                    self._conn.execute(
                        self._sql(
                            "INSERT INTO cosigned_checkpoints (origin, size, root, note, cosigned) "
                            "VALUES (?, ?, ?, ?, ?)"
                        ),
                        (origin, size, root, note, now),
                    )
                    if self.postgres:
                        self._conn.commit()
                    else:
                        self._conn.execute("COMMIT")
                    return None
                if self.postgres:
                    self._conn.rollback()
                else:
                    self._conn.execute("ROLLBACK")
            except Exception:
                if self.postgres:
                    self._conn.rollback()
                else:
                    self._conn.execute("ROLLBACK")
                raise
            row = self._conn.execute(
                self._sql("SELECT size FROM witnessed_logs WHERE origin = ?"), (origin,)
            ).fetchone()
            if self.postgres:
                self._conn.commit()
        return int(row[0]) if row else 0

    def logs(self) -> list[Stored]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT origin, size, root, note, registered, updated FROM witnessed_logs "
                "ORDER BY registered, origin"
            ).fetchall()
            if self.postgres:
                self._conn.commit()
        return [Stored(*r) for r in rows]

    def history(self, origin: str) -> list[tuple[int, str, str]]:
        """Every checkpoint cosigned for ``origin``: (size, root, when), in order."""
        with self._lock:
            rows = self._conn.execute(
                self._sql(
                    "SELECT size, root, cosigned FROM cosigned_checkpoints WHERE origin = ? "
                    "ORDER BY size"
                ),
                (origin,),
            ).fetchall()
            if self.postgres:
                self._conn.commit()
        return [(int(a), b, c) for a, b, c in rows]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def open_store(target: str) -> Store:
    return Store(target)
