"""Worker processes the event loop hands engine work to, each on a pipe of its own.

Both pools of the service are built on this: SettleStream's (api/pool.py) and the one that
takes unary calls whose work may run long (api/offload.py). ``WorkerSet`` keeps up to ``size``
processes, forked by multiprocessing's fork server (never fork a process that holds gRPC
threads; the fork server imports the engine once and every worker forks from it ready to go).

Why not ``concurrent.futures.ProcessPoolExecutor``: its workers share one result pipe, so a
worker killed while it writes a result leaves half a message in it, and the executor's thread
then waits for the rest for ever: every batch after it hung (issue 24, part 6). Here each worker
has its own pair of pipes; a worker that dies loses only its own task (``WorkerLost``) and the
next task gets a new process.

The event loop never blocks on a worker: it writes a task and reads an answer without blocking
(``add_writer``/``add_reader``, length-prefixed frames), so a slow or niced worker holds up
nothing but its own call.

Stopping a task (``run`` cancelled: the call's deadline passed, the client left): the server
writes the task's number into the worker's shared cell and sends it SIGUSR1; the worker's
handler raises ``Interrupted`` inside the computation when that number is its current task's
(a signal meant for a task already finished is ignored), and the worker answers and is free
again at once. A worker that has not answered ``INTERRUPT_GRACE`` seconds later (stuck in C
code) is killed; a new one replaces it for the next task.

Workers run at a lower CPU priority (``nice``) and, where the kernel has it, in the idle
scheduling class (``SCHED_IDLE``: the server process preempts them the moment it wakes, which
``nice`` alone does not promise; docs/DECISIONS.md 40). They ignore SIGINT and SIGTERM (the server
drains on those, then closes the set), and end by themselves the moment the server process
ends, however it ends (``die_with``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import multiprocessing
import os
import pickle
import select
import signal
import struct
import threading
import time
from collections import deque
from multiprocessing.connection import Connection
from typing import Any

from ..errors import WorkerLost

__all__ = [
    "INTERRUPT_GRACE",
    "Interrupted",
    "NotTaken",
    "Worker",
    "WorkerLost",
    "WorkerSet",
    "die_with",
    "worker_main",
]

INTERRUPT_SIGNAL = signal.SIGUSR1
INTERRUPT_GRACE = 1.0  # seconds an interrupted worker has to answer before it is killed
WATCH_INTERVAL = 0.5  # seconds between looks at the parent process, where pidfd is missing
_HEADER = struct.Struct("!Q")


class NotTaken(WorkerLost):
    """The worker had ended before it could take the task (nothing of it ran)."""


class Interrupted(BaseException):
    """Raised inside a worker's computation when its task is stopped (BaseException: no
    ``except Exception`` of the engine may swallow it)."""


# --------------------------------------------------------------------------- the worker's side


def die_with(parent_pid: int) -> None:
    """End this process as soon as ``parent_pid`` ends, however it ends (SIGKILL included).

    A worker's parent is the fork server, not the process that asked for it, and the fork
    server lives as long as any worker (they hold its "alive" pipe): a death signal from the
    parent (PR_SET_PDEATHSIG) would never come. So a daemon thread watches that process itself:
    on Linux it waits on a pidfd, which becomes readable the moment the process exits; elsewhere
    it looks every ``WATCH_INTERVAL`` seconds whether the process is still there. The thread
    blocks the interrupt signal, so that it always reaches the main thread (the computation).
    """
    try:
        pidfd = os.pidfd_open(parent_pid)  # type: ignore[attr-defined,unused-ignore]
    except ProcessLookupError:
        os._exit(1)  # already gone
    except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
        pidfd = None

    def watch() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {INTERRUPT_SIGNAL})
        if pidfd is not None:
            select.select([pidfd], [], [])
        else:
            while _alive(parent_pid):
                time.sleep(WATCH_INTERVAL)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="parent-watchdog").start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_exact(fd: int, n: int) -> bytes:
    parts = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def worker_main(
    module: str,
    initargs: tuple[Any, ...],
    parent_pid: int,
    nice: int,
    task_pipe: Connection,
    answer_pipe: Connection,
    cell: Any,
) -> None:
    """A worker process: ``module.init(*initargs)`` once, then for each task (number, function
    name, argument) ``module.<name>(argument)``, answered as (number, "ok", result), (number,
    "error", exception) or (number, "interrupted", None)."""
    tasks, answers = task_pipe.fileno(), answer_pipe.fileno()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server drains on these, then closes us
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    current = 0

    def interrupt(signum: int, frame: Any) -> None:
        if current and cell.value == current:
            raise Interrupted

    signal.signal(INTERRUPT_SIGNAL, interrupt)
    die_with(parent_pid)
    if nice:
        os.nice(nice)
        with contextlib.suppress(AttributeError, OSError):  # Linux only; else nice alone
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    target = importlib.import_module(module)
    target.init(*initargs)
    while True:
        try:
            size = _HEADER.unpack(_read_exact(tasks, _HEADER.size))[0]
            number, name, argument = pickle.loads(_read_exact(tasks, size))
        except Interrupted:
            continue  # meant for a task that had already finished
        except EOFError:
            os._exit(0)  # the server closed the set
        try:
            current = number
            try:
                answer: tuple[Any, ...] = (number, "ok", getattr(target, name)(argument))
            finally:
                current = 0
        except Interrupted:
            answer = (number, "interrupted", None)
        except Exception as e:  # the server decides what a failure answers
            answer = (number, "error", _picklable(e))
        while True:
            try:
                data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
                _write_all(answers, _HEADER.pack(len(data)) + data)
                break
            except Interrupted:
                continue  # late: the answer goes out all the same


def _settle(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_result(None)


def _picklable(error: Exception) -> Exception:
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")


# --------------------------------------------------------------------------- the server's side


class Worker:
    """One worker process and its pipes, as the server sees it."""

    def __init__(self, context: Any, module: str, initargs: tuple[Any, ...], nice: int) -> None:
        task_read, self._task_write = os.pipe()
        self._answer_read, answer_write = os.pipe()
        # Connections, so that the fork server hands the worker its own copies of the fds
        tasks = Connection(task_read, writable=False)
        answers = Connection(answer_write, readable=False)
        self.cell = context.RawValue("q", 0)
        self.process = context.Process(
            target=worker_main,
            daemon=True,
            name="cpsettle-worker",
            args=(module, initargs, os.getpid(), nice, tasks, answers, self.cell),
        )
        try:
            self.process.start()
        finally:
            tasks.close()  # the worker has its own copies now
            answers.close()
        os.set_blocking(self._task_write, False)
        os.set_blocking(self._answer_read, False)
        self.pid: int = self.process.pid
        self.number = 0  # the task in hand (0: idle)
        self.dead = False
        self._buffer = bytearray()
        self._answer: asyncio.Future[tuple[Any, ...]] | None = None

    async def call(self, number: int, name: str, argument: Any) -> tuple[str, Any]:
        """Send the task, wait for its answer: ("ok", result), ("error", exception) or
        ("interrupted", None). ``WorkerLost`` when the process ends before answering."""
        loop = asyncio.get_running_loop()
        self.number = number
        self.cell.value = 0
        data = pickle.dumps((number, name, argument), protocol=pickle.HIGHEST_PROTOCOL)
        self._answer = loop.create_future()
        loop.add_reader(self._answer_read, self._readable)
        try:
            await self._send(loop, _HEADER.pack(len(data)) + data)
        except BaseException:
            self._unwatch(loop)
            raise
        return await self.answer(number, watching=True)

    async def answer(self, number: int, watching: bool = False) -> tuple[str, Any]:
        """The answer to task ``number`` (the one in hand), when it comes."""
        loop = asyncio.get_running_loop()
        if self._answer is None:
            raise WorkerLost("no task in hand")
        if not watching:
            if self.dead:
                raise WorkerLost("a worker process ended while it worked")
            loop.add_reader(self._answer_read, self._readable)
        try:
            while True:
                got, status, value = await asyncio.shield(self._answer)
                if got == number:
                    return status, value
                self._answer = loop.create_future()  # an answer to an earlier task: dropped
        finally:
            self._unwatch(loop)

    def _unwatch(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._answer_read != -1:
            loop.remove_reader(self._answer_read)

    async def _send(self, loop: asyncio.AbstractEventLoop, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._task_write, view) :]
            except BlockingIOError:
                pass
            except (BrokenPipeError, OSError):
                self._lost()
                raise NotTaken("a worker process ended before it took its task") from None
            if view:
                writable: asyncio.Future[Any] = loop.create_future()
                loop.add_writer(self._task_write, _settle, writable)
                answer = self._answer
                assert answer is not None
                try:
                    await asyncio.wait({writable, answer}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    loop.remove_writer(self._task_write)
                if self._answer is not None and self._answer.done():
                    self._answer.result()  # raises WorkerLost

    def _readable(self) -> None:
        try:
            chunk = os.read(self._answer_read, 1 << 20)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._lost()
            return
        self._buffer += chunk
        while len(self._buffer) >= _HEADER.size:
            size = _HEADER.unpack_from(self._buffer)[0]
            end = _HEADER.size + size
            if len(self._buffer) < end:
                break
            answer = pickle.loads(bytes(self._buffer[_HEADER.size : end]))
            del self._buffer[:end]
            if self._answer is not None and not self._answer.done():
                self._answer.set_result(answer)

    def _lost(self) -> None:
        self.dead = True
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(WorkerLost("a worker process ended while it worked"))
            self._answer.exception()  # retrieved here too: nobody may be waiting any more

    def interrupt(self) -> None:
        """Ask the worker to stop the task in hand (SIGUSR1, with the task's number)."""
        if self.number and not self.dead and self.process.is_alive():
            self.cell.value = self.number
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, INTERRUPT_SIGNAL)

    def kill(self) -> None:
        """End the process now and let go of its pipes."""
        self.dead = True
        with contextlib.suppress(OSError, ValueError):
            self.process.kill()
        for fd in (self._task_write, self._answer_read):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._task_write = self._answer_read = -1

    def reap(self, seconds: float = 5.0) -> None:
        """Wait for the ended process (blocking: from a thread, or at close)."""
        self.process.join(seconds)


class WorkerSet:
    """Up to ``size`` worker processes running ``module``'s functions (``module.init(*initargs)``
    first in each), started when first needed and replaced when they die. ``run`` takes an idle
    worker (waiting, in order of arrival, when all are busy), gives it one task and frees it
    when the task is answered, stopped or lost."""

    def __init__(self, size: int, module: str, initargs: tuple[Any, ...], nice: int = 10) -> None:
        self.size = size
        self._module = module
        self._initargs = initargs
        self._nice = nice
        self._idle: list[Worker] = []
        self._all: list[Worker] = []
        self._waiting: deque[asyncio.Future[Worker | None]] = deque()
        self._numbers = itertools.count(1)
        self._context: Any = None
        self._spawning = threading.Lock()
        self._starting = 0  # processes being started
        self.closed = False
        self.started = 0  # processes started so far (replacements included)

    def pids(self) -> list[int]:
        """The worker processes running now."""
        return [w.pid for w in self._all if not w.dead]

    def busy(self) -> int:
        return len(self._all) - len(self._idle)

    def _spawn(self) -> Worker:
        """A new worker process (blocking: the fork server answers with its pid; the first one
        starts the fork server itself, which imports the engine: run from a thread)."""
        with self._spawning:
            if self._context is None:
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload([self._module])
                self._context = context
            worker = Worker(self._context, self._module, self._initargs, self._nice)
        self.started += 1
        return worker

    async def _take(self) -> Worker:
        loop = asyncio.get_running_loop()
        while True:
            while self._idle:
                worker = self._idle.pop()
                if not worker.dead and worker.process.is_alive():
                    return worker
                self._drop(worker)
            if len(self._all) + self._starting < self.size:
                self._starting += 1
                spawn = asyncio.ensure_future(asyncio.to_thread(self._spawn))
                try:
                    worker = await asyncio.shield(spawn)
                except asyncio.CancelledError:
                    spawn.add_done_callback(self._adopt)  # its worker joins the idle ones
                    raise
                except BaseException:
                    self._starting -= 1
                    raise
                self._starting -= 1
                if self.closed:
                    worker.kill()
                    raise WorkerLost("the worker processes are closed")
                self._all.append(worker)
                return worker
            waiter: asyncio.Future[Worker | None] = loop.create_future()
            self._waiting.append(waiter)
            try:
                handed = await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._give_back(waiter.result())  # handed over just as we were cancelled
                raise
            finally:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(waiter)
            if handed is not None:
                return handed
            # None: a worker died and left room for a new one

    def _adopt(self, spawn: asyncio.Future[Worker]) -> None:
        """A worker started for a call that was cancelled meanwhile: kept for the next one."""
        self._starting -= 1
        if spawn.cancelled() or spawn.exception() is not None:
            self._wake(None)
            return
        worker = spawn.result()
        if self.closed:
            worker.kill()
            return
        self._all.append(worker)
        self._give_back(worker)

    async def prestart(self) -> None:
        """Start the fork server (it imports the engine: about a second) and one worker now,
        so that the first call sent to a worker does not wait for them."""
        if not self._all and not self._starting and not self.closed:
            self._starting += 1
            spawn = asyncio.ensure_future(asyncio.to_thread(self._spawn))
            spawn.add_done_callback(self._adopt)
            await asyncio.wait({spawn})

    def _give_back(self, worker: Worker | None) -> None:
        if worker is None:
            self._wake(None)
            return
        worker.number = 0
        if worker.dead or self.closed:
            self._drop(worker)
            self._wake(None)
            return
        if not self._wake(worker):
            self._idle.append(worker)

    def _wake(self, worker: Worker | None) -> bool:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(worker)
                return True
        return False

    def _drop(self, worker: Worker) -> None:
        if worker in self._all:
            self._all.remove(worker)
        worker.kill()
        threading.Thread(target=worker.reap, daemon=True, name="worker-reaper").start()

    async def run(self, name: str, argument: Any) -> Any:
        """``module.<name>(argument)`` in a worker: its result, or its exception raised here.
        Cancelled (a deadline, a client gone): the worker stops the task and is free again.
        ``WorkerLost`` when the worker died before answering."""
        for attempt in (1, 2):
            if self.closed:
                raise WorkerLost("the worker processes are closed")
            worker = await self._take()
            number = next(self._numbers)
            try:
                status, value = await worker.call(number, name, argument)
                break
            except NotTaken:
                self._give_back(worker)  # it had died idle: nothing of the task ran
                if attempt == 2:
                    raise
            except asyncio.CancelledError:
                asyncio.get_running_loop().create_task(self._stop(worker, number))
                raise
            except WorkerLost:
                worker.dead = True
                self._give_back(worker)
                raise
        self._give_back(worker)
        if status == "error":
            raise value
        if status == "interrupted":  # not asked by this server: as good as lost
            raise WorkerLost("the task was interrupted")
        return value

    async def _stop(self, worker: Worker, number: int) -> None:
        """Interrupt ``worker``'s task ``number``; free it once it answers, or kill it."""
        worker.interrupt()
        try:
            await asyncio.wait_for(worker.answer(number), INTERRUPT_GRACE)
        except (TimeoutError, WorkerLost):
            worker.dead = True
        except Exception:  # whatever it answered, the task is over
            pass
        self._give_back(worker)

    def close(self) -> None:
        """End every worker now (they hold nothing worth waiting for: nothing a worker does is
        issued until the server finishes it) and wait for them."""
        self.closed = True
        workers, self._all, self._idle = list(self._all), [], []
        for worker in workers:
            worker.kill()
        for worker in workers:
            worker.reap()
        for waiter in self._waiting:
            if not waiter.done():
                waiter.cancel()
