"""``cpsettle audit``: the arguments, the wiring of reading, running and reporting, exit codes."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from ..backend import Backend, CliError
from ..escape import shown
from . import checkpoint as checkpoints
from .cluster import ShardRunner, is_sharded, list_shards
from .outcome import AuditFailure
from .progress import MODES, Progress
from .reading import RECORDED_FIELD, chunks, count_lines, read_lines
from .report import Report
from .running import LocalRunner, ServerRunner

DEFAULT_BATCH = 100
MAX_BATCH = 1000  # the server's limit per SettleStreamRequest
LOCAL_CHUNK = 1000  # lines a --local worker process takes at a time, at least

NEEDS_EXTRA = (
    "a sharded history and --cluster need the [cluster] extra: pip install 'cpsettle[cluster]'"
)

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_INVALID = 2
EXIT_UNAVAILABLE = 3
EXIT_UNCHECKED = 4  # the report leaves out lines a checkpoint claimed but could not show
EXIT_INTERRUPTED = 130


def _positive(limit: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < 1 or (limit is not None and value > limit):
            bound = f"1 to {limit}" if limit else "at least 1"
            raise argparse.ArgumentTypeError(f"must be {bound}, got {value}")
        return value

    return parse


def add_parser(sub: Any, connection: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "audit",
        help="re-check a day of hand history (JSON lines) against the recorded payouts",
        description="Settle every hand of a JSON-lines history and report each payout that "
        "differs from the settlement (docs/BULK_AUDIT.md).",
    )
    p.add_argument(
        "history",
        help=f"JSON lines: a SettleRequest per line, with "
        f"{RECORDED_FIELD!r} (PLAYER: net minor units); '-' = stdin",
    )
    p.add_argument(
        "--workers",
        type=_positive(),
        default=1,
        help="--local: processes; --server: parallel streams (default 1)",
    )
    p.add_argument(
        "--batch",
        type=_positive(MAX_BATCH),
        default=DEFAULT_BATCH,
        help=f"hands per SettleStreamRequest message (default {DEFAULT_BATCH})",
    )
    p.add_argument("--report", metavar="OUT.json", help="write the full report as JSON here")
    p.add_argument(
        "--html",
        metavar="REPORT.html",
        help="also write the report as a page: totals, bars per table and dealer, "
        "each hand with differences drawn and verified (docs/VIEWS.md)",
    )
    p.add_argument(
        "--start-line",
        type=_positive(),
        default=None,
        help="skip the lines before this one (default 1)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="go on from the checkpoint beside --report (OUT.json.checkpoint) that an "
        "interrupted, killed or failed run left: its totals and the next line",
    )
    p.add_argument(
        "--progress",
        choices=MODES,
        default="auto",
        help="auto: a bar on a terminal, plain lines otherwise",
    )
    p.add_argument(
        "--progress-interval",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="seconds between plain progress lines (default 5)",
    )
    p.add_argument(
        "--no-quick",
        action="store_true",
        help="--local: settle every hand the full way (each settlement written and "
        "sealed), not only those that differ or are invalid: slower, the same "
        "report (docs/BULK_AUDIT.md)",
    )
    p.add_argument(
        "--show",
        type=int,
        default=20,
        metavar="N",
        help="differences and invalid hands listed in the summary (default 20)",
    )
    p.add_argument(
        "--cluster",
        metavar="local|ADDRESS",
        help="audit the history's shards as tasks on Dask: 'local' starts a local "
        "cluster of --workers processes, else the address of a running "
        "scheduler (tcp://HOST:8786); the history may be a folder or an fsspec "
        "URL (s3://bucket/day/) of JSON-lines files, .gz allowed",
    )
    connection(p)
    p.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    return run(args)


def run(
    args: argparse.Namespace, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    path = args.history
    if getattr(args, "cluster", None) or is_sharded(path):
        return run_sharded(args, stdout, stderr)
    total: int | None = None
    if path != "-":
        try:
            total = count_lines(path)
        except OSError as e:
            raise CliError(f"cannot read {path}: {e.strerror or e}") from None
    for out in (args.report, getattr(args, "html", None)):
        folder = os.path.dirname(os.path.abspath(out)) if out else ""
        if out and not os.path.isdir(folder):
            raise CliError(f"cannot write the report: no folder {folder}")
    prefix = os.path.basename(path) if path != "-" else "stdin"
    local = bool(getattr(args, "local", False))
    settings: dict[str, Any] = {
        "mode": "local" if local else "server",
        "workers": args.workers,
        "batch": args.batch,
    }
    if not local:
        settings["server"] = args.server
    resume = _resume_point(args)
    first_line = resume.first_line if resume else (args.start_line or 1)
    report = Report(resume.source if resume else prefix, first_line, settings)
    lines: Iterator[tuple[int, bytes]] = read_lines(path, first_line)
    saver = None
    if args.report and path != "-":  # (--resume makes sure of both)
        digest = checkpoints.LinesDigest()
        saver = checkpoints.Checkpointer(checkpoints.path_for(args.report), digest, resume)
        if resume:
            report.restore(resume.outcome, resume.started_at, resume.elapsed)
            report.not_checked = list(resume.not_checked)
            try:
                lines = checkpoints.resumed(lines, digest, resume)
            except checkpoints.CheckpointError as e:
                raise CliError(str(e)) from None
        else:
            lines = digest.feed(lines)

    backend = None
    runner: LocalRunner | ServerRunner
    if local:
        runner = LocalRunner(
            args.workers,
            {
                "profile_dir": getattr(args, "profile_dir", None),
                "signing_key_file": getattr(args, "signing_key_file", None),
            },
            quick=not getattr(args, "no_quick", False),
        )
    else:
        backend = Backend(args)
        runner = ServerRunner(backend.client(), args.workers)
    progress = Progress(
        stderr,
        args.progress,
        total,
        report.last_line + 1,
        args.progress_interval,
        read_before=report.total.read,
    )
    reason = ""
    code = EXIT_OK
    restore = _sigterm_as_interrupt()
    try:
        # Worker processes take bigger chunks: a chunk checked the quick way takes about 1 ms
        # for 10 hands, and each costs the parent a pickle, a pipe and a merge.
        size = args.batch if not local or args.workers == 1 else max(args.batch, LOCAL_CHUNK)
        for outcome in runner.run(report.source, chunks(lines, size)):
            report.add(outcome)
            if saver is not None:
                saver.add(outcome)
                saver.maybe_save(report)
            progress.update(report)
    except KeyboardInterrupt:
        reason, code = "interrupted", EXIT_INTERRUPTED
    except AuditFailure as e:
        reason, code = f"error: {e}", EXIT_UNAVAILABLE
    except OSError as e:
        reason, code = f"error: cannot read {path}: {e.strerror or e}", EXIT_INVALID
    finally:
        try:
            runner.close(interrupted=bool(reason) or sys.exc_info()[0] is not None)
        except KeyboardInterrupt:  # a second Ctrl-C while stopping: the report still follows
            reason, code = "interrupted", EXIT_INTERRUPTED
        restore()
        if backend is not None:
            backend.__exit__(None, None, None)
    if not reason and report.not_checked:
        first, last, why = report.not_checked[0]
        reason, code = (
            (
                f"the checkpoint failed its checks: lines {first:,} to {last:,} were "
                f"not checked ({why}); audit them again without --resume"
            ),
            EXIT_UNCHECKED,
        )
    report.finish(complete=not reason, reason=reason)
    if saver is not None:
        if report.complete:
            saver.remove()
        else:
            saver.save(report)
            report.checkpointed = True
    return _conclude(args, report, progress, reason, code, stdout, stderr)


def _conclude(
    args: argparse.Namespace,
    report: Report,
    progress: Progress,
    reason: str,
    code: int,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """The report written and summed up; the exit code."""
    progress.update(report, final=True)
    if args.report:
        report.write_json(args.report)
    if getattr(args, "html", None):
        from .html import write_html

        write_html(report, args.html)
    print(report.summary(args.show, args.report), file=stdout)
    if reason and code != EXIT_INTERRUPTED:
        print(f"cpsettle: {shown(reason)}", file=stderr)
    if code == EXIT_OK and report.findings:
        code = EXIT_FINDINGS
    return code


def run_sharded(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """A folder or URL of shards (or any history with ``--cluster``): each shard a task, on a
    Dask cluster or (``--local``) in this process, merged in shard order (audit/cluster.py)."""
    address = getattr(args, "cluster", None)
    if not address and not getattr(args, "local", False):
        raise CliError("a folder or URL of shards is audited with --local or --cluster")
    if args.resume or args.start_line is not None:
        raise CliError(
            "--resume and --start-line are for one history file; a sharded audit "
            "is run again whole (each shard is a task the cluster retries)"
        )
    for out in (args.report, getattr(args, "html", None)):
        folder = os.path.dirname(os.path.abspath(out)) if out else ""
        if out and not os.path.isdir(folder):
            raise CliError(f"cannot write the report: no folder {folder}")
    try:
        shards = list_shards(args.history)
    except ImportError as e:
        raise CliError(f"{NEEDS_EXTRA} ({e})") from None
    except (OSError, ValueError) as e:
        raise CliError(f"cannot read {args.history}: {e}") from None
    settings: dict[str, Any] = {
        "mode": "cluster" if address else "local",
        "workers": args.workers,
        "batch": args.batch,
    }
    if address:
        settings["cluster"] = address
    settings["shards"] = len(shards)
    report = Report(args.history.rstrip("/"), 1, settings)
    options = {
        "profile_dir": getattr(args, "profile_dir", None),
        "signing_key_file": getattr(args, "signing_key_file", None),
    }
    try:
        runner = ShardRunner(
            address, args.workers, options, args.batch, quick=not getattr(args, "no_quick", False)
        )
    except CliError:
        raise
    except ImportError as e:
        raise CliError(f"{NEEDS_EXTRA} ({e})") from None
    except Exception as e:  # no cluster: said in a line, not a traceback
        raise CliError(
            f"cannot start or reach the cluster {address}: {e}", code=EXIT_UNAVAILABLE
        ) from None
    progress = Progress(stderr, args.progress, None, 1, args.progress_interval)
    reason = ""
    code = EXIT_OK
    restore = _sigterm_as_interrupt()
    try:
        for outcome in runner.run(shards):
            report.add(outcome)
            progress.update(report)
    except KeyboardInterrupt:
        reason, code = "interrupted", EXIT_INTERRUPTED
    except AuditFailure as e:
        reason, code = f"error: {e}", EXIT_UNAVAILABLE
    except OSError as e:
        reason, code = f"error: cannot read a shard: {e.strerror or e}", EXIT_INVALID
    finally:
        try:
            runner.close(interrupted=bool(reason) or sys.exc_info()[0] is not None)
        finally:
            restore()
    report.finish(complete=not reason, reason=reason)
    return _conclude(args, report, progress, reason, code, stdout, stderr)


def _resume_point(args: argparse.Namespace) -> checkpoints.Checkpoint | None:
    """The checkpoint ``--resume`` goes on from (None without ``--resume``)."""
    if not args.resume:
        return None
    if not args.report:
        raise CliError("--resume needs --report OUT.json: the checkpoint is OUT.json.checkpoint")
    if args.history == "-":
        raise CliError("--resume needs the history as a file, not stdin")
    if args.start_line is not None:
        raise CliError("give --resume or --start-line, not both")
    try:
        return checkpoints.load(checkpoints.path_for(args.report))
    except checkpoints.CheckpointError as e:
        raise CliError(str(e)) from None


def _sigterm_as_interrupt() -> Callable[[], None]:
    """SIGTERM stops the audit like Ctrl-C (a partial report); returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:
        return lambda: None

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore
