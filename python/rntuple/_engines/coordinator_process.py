"""A :class:`~rntuple._engines.distributed.Coordinator` in a process of its own, for engines whose committing code
does not run in the process that planned the write (Spark: ``writer()``, each task and ``commit()`` run in Python
worker processes the JVM starts and reuses at will, so nothing of the planning process is sure to live until the
commit).

:func:`start` launches ``python -m rntuple._engines.coordinator_process`` in a session of its own; it creates the
file under its temporary name, hands out byte ranges to the tasks over TCP (the :class:`Ticket` they get) and waits
on a control socket (``multiprocessing.connection``, authenticated by a random key) for one ``commit`` or ``abort``
from any process holding the :class:`RemoteCoordinator`. It also gives up by itself (the file removed, nothing at the
output path) when the process it watches ends first: the Spark driver's JVM, so that a killed job leaves no process
and no file behind.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import secrets
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Client, Listener

from .distributed import Coordinator, Ticket

#: How often the coordinator process looks whether the process it watches still runs (seconds).
WATCH_SECONDS = 1.0


@dataclasses.dataclass(frozen=True)
class RemoteCoordinator:
    """The handle of a coordinator process (picklable): the tasks' :class:`Ticket`, and the control socket's address
    and key for :meth:`commit` and :meth:`abort`."""

    ticket: Ticket
    control: tuple
    authkey: bytes
    pid: int

    def _ask(self, request: tuple, timeout: float | None = None):
        with Client(self.control, authkey=self.authkey) as conn:
            conn.send(request)
            if timeout is not None and not conn.poll(timeout):
                raise TimeoutError(f"rntuple: the coordinator process {self.pid} did not answer {request[0]!r} in {timeout} s")
            status, value = conn.recv()
        if status != "ok":
            raise RuntimeError(f"rntuple: the coordinator process {self.pid} failed to {request[0]}: {value}")
        return value

    def commit(self, results: list[dict], ordered: bool = True) -> dict:
        """:meth:`Coordinator.commit` in the coordinator process (which then ends); returns its report."""
        return self._ask(("commit", results, ordered))

    def abort(self, why: str) -> None:
        """:meth:`Coordinator.abort` in the coordinator process (which then ends); quiet when it is gone already or
        has committed or aborted (Spark may call the abort after a commit that failed)."""
        try:
            self._ask(("abort", why), timeout=60)
        except (OSError, EOFError, RuntimeError):
            pass

    def counters(self) -> dict:
        """The coordinator's counters (``reserved_bytes``, ``requests``, ``end``)."""
        return self._ask(("counters",), timeout=60)


def start(path, ntuple: str, schema, options: dict, *, host: str = "127.0.0.1", watch_pid: int | None = None, timeout: float = 60.0) -> RemoteCoordinator:
    """Starts a coordinator process for a write of ``ntuple`` (``schema``, ``options`` as :class:`Coordinator`
    takes them) to ``path``; tasks reach it at ``host``. It gives up when ``watch_pid`` (default: this process) ends."""
    request = {"path": os.fspath(path), "ntuple": ntuple, "schema": schema, "options": options, "host": host,
               "watch_pid": os.getpid() if watch_pid is None else int(watch_pid)}
    # Started through a launcher that ends at once: the coordinator is nobody's child here (no zombie in a Python
    # worker that lives on) and in a session of its own (signals to the worker's group do not reach it).
    proc = subprocess.Popen([sys.executable, "-m", "rntuple._engines.coordinator_process", "--detach"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, close_fds=True)
    try:
        proc.stdin.write(pickle.dumps(request))
        proc.stdin.close()
        line = _read_line(proc, timeout)
    except BaseException:
        proc.kill()
        raise
    if not line:
        err = proc.stderr.read().decode(errors="replace").strip().splitlines()[-1:]  # the exception's line
        err = err[0] if err else ""
        proc.wait(timeout=10)
        raise RuntimeError(f"rntuple: the coordinator process for {path} did not start: {err or f'exit status {proc.returncode}'}")
    proc.wait(timeout=10)  # the launcher
    proc.stderr.close()
    ticket, control, authkey, pid = pickle.loads(bytes.fromhex(line.decode()))
    return RemoteCoordinator(ticket, control, authkey, pid)


def _read_line(proc, timeout: float) -> bytes:
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        raise TimeoutError(f"rntuple: the coordinator process {proc.pid} did not start within {timeout} s")
    return got[0].strip() if got else b""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (ended, not yet reaped) counts as ended
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _serve() -> None:
    request = pickle.loads(sys.stdin.buffer.read())
    coord = Coordinator(request["path"], request["ntuple"], request["schema"], request["options"], host=request["host"])
    authkey = secrets.token_bytes(32)
    listener = Listener((request["host"], 0), authkey=authkey)
    done = threading.Event()
    lock = threading.Lock()

    def give_up(why: str) -> None:
        with lock:
            if not done.is_set():
                done.set()
                coord.abort(why)
        os._exit(3)

    def watch() -> None:
        while not done.is_set():
            if not _alive(request["watch_pid"]):
                give_up(f"the process {request['watch_pid']} that started the write ended before its commit")
            time.sleep(WATCH_SECONDS)

    threading.Thread(target=watch, daemon=True).start()
    sys.stdout.write(pickle.dumps((coord.ticket, listener.address, authkey, os.getpid())).hex() + "\n")
    sys.stdout.flush()
    sys.stdout.close()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)  # nobody reads the launcher's pipes any more
    while True:
        try:
            conn = listener.accept()
        except Exception:  # a client with the wrong key, or one that hung up: not a request
            continue
        with conn:
            try:
                kind, *args = conn.recv()
            except (EOFError, OSError):
                continue
            try:
                with lock:
                    if kind == "counters":
                        conn.send(("ok", coord.counters))
                        continue
                    if done.is_set():
                        conn.send(("error", "the write was committed or aborted already"))
                        continue
                    done.set()
                    if kind == "commit":
                        value = coord.commit(*args)
                    elif kind == "abort":
                        value = coord.abort(*args)
                    else:
                        done.clear()
                        conn.send(("error", f"no request {kind!r}"))
                        continue
                conn.send(("ok", value))
            except Exception as e:  # the committing process learns why; this one ends
                coord.abort(str(e))
                conn.send(("error", f"{type(e).__name__}: {e}"))
        if done.is_set():
            break
    listener.close()


def _detach() -> None:
    """The launcher: starts the coordinator with this process's standard streams, in a session of its own, and ends."""
    subprocess.Popen([sys.executable, "-m", "rntuple._engines.coordinator_process"], start_new_session=True, close_fds=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--detach"]:
        _detach()
    else:
        _serve()
