"""cpsettle's service: the settlement engine behind a gRPC API (docs/DESIGN.md).

The wings, each using only those below it (``tests/test_import_cycles.py`` keeps them so):

====================  ==============================================================
``server``, ``local``  the process: settings, the gRPC server, shutdown; the same service
                       in process for the CLI's ``--local``
``api``                gRPC: requests mapped to the domain and answers written back
``observability``      logging, metrics, tracing
``proof``              seal, digests, events, the audit log, keys, times, integrity
``profile_files``      presets and house profiles read from disk
``wireformat``         protobuf's wire format written by hand
``errors``, ``config``  every error cpsettle raises; the ``CPSETTLE_*`` settings
``domain``             the rules engine: pure, the standard library only
====================  ==============================================================
"""

__all__ = [
    "api",
    "config",
    "domain",
    "errors",
    "local",
    "observability",
    "profile_files",
    "proof",
    "server",
    "wireformat",
]
