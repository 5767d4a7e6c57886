"""``cpsettle-witness``: a witness for the replicas' audit logs, a program of its own
(docs/AUDIT.md, "The witness").

==============  ===================================================================
``store``       the durable record: each log and the checkpoints cosigned (SQLite, PostgreSQL)
``service``     c2sp.org/tlog-witness's add-checkpoint, the export, the HTTP server, the CLI
==============  ===================================================================
"""

__all__ = ["service", "store"]
