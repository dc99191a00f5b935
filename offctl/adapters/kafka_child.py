"""The Kafka client in a child process, for the faces that run for hours: serve, watch and mcp.

librdkafka, the Kafka client, is C: a crash inside it (a SIGSEGV, an abort) ends the process it runs in. A
one-shot command's supervisor (offctl/__main__.py) turns that into one message and exit 3. A face that runs for
hours must instead lose one cycle, or one tool call, and go on. So there the store's KafkaStore lives in a child
process, and ChildKafkaStore forwards each call of the LogWriter protocol (offctl/ports.py) to it. When the child
dies, the call raises StoreUnavailable (exit 3) naming the signal and what was under way, and the next store,
the next cycle's, starts a new child.

The children are forked by multiprocessing's fork server, never by the face itself: serve and mcp run HTTP
threads, and a fork of a threaded process copies the locks those threads hold. The fork server is a
single-threaded process started once, with the Kafka adapter imported (the first store waits for it: one
interpreter start, about 0.3 s); each store after that costs one fork of it. Calls and answers travel pickled
over a multiprocessing Pipe. Secrets in the client settings travel that way too, never on a command line.
"""

from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.context
import signal
import threading
import traceback
from collections.abc import Iterable, Mapping

from offctl.core.storm.releases import Isolation
from offctl.errors import CRASH_SIGNALS, OffctlError, StoreUnavailable

# What each call does, as a crash's message says it ("... while it was <doing>").
_DOING = {
    "start": "starting",
    "prefetch": "reading the cluster's metadata",
    "request_logs": "asking for log offsets",
    "logs": "reading log offsets",
    "list_groups": "listing the consumer groups",
    "group_commits": "reading group commits",
    "group_states": "reading group states",
    "read_messages": "reading messages",
    "read_broker_config": "reading the brokers' configuration",
    "read_topic_configs": "reading the topics' configuration",
    "api_versions": "asking the brokers their API versions",
    "offsets_for_times": "looking up offsets by time",
    "commit": "writing a group's commits",
    "delete_group": "deleting a group",
}
_WRITES = frozenset({"commit", "delete_group"})
_UNANSWERED = frozenset({"prefetch", "request_logs"})  # sent without waiting: they start reads that overlap others
_CLOSE_WAIT_S = 5.0

_context_lock = threading.Lock()
_context: multiprocessing.context.ForkServerContext | None = None


def _fork_server() -> multiprocessing.context.ForkServerContext:
    global _context
    with _context_lock:
        if _context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["offctl.adapters.kafka"])  # not __main__: the command line's module
            _context = context
        return _context


class ChildKafkaStore:
    """A KafkaStore in a child process (see the module's docstring); the same calls, arguments and answers."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        config: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        targeted: bool = False,
    ) -> None:
        self.bootstrap_servers, self.timeout, self.targeted = bootstrap_servers, timeout, targeted
        self.notes: list[str] = []
        self._deferred: list[str] = []  # calls sent without waiting since the last answer, for a crash's message
        context = _fork_server()
        self._pipe, child_end = context.Pipe()
        settings = {
            "bootstrap_servers": bootstrap_servers,
            "config": dict(config or {}),
            "timeout": timeout,
            "targeted": targeted,
        }
        self._process = context.Process(
            target=_host, args=(child_end, settings), name="offctl-kafka-client", daemon=True
        )
        try:
            self._process.start()
        except OSError as exc:
            raise StoreUnavailable(
                f"Kafka at {bootstrap_servers}: cannot start the Kafka client's process ({exc})"
            ) from None
        finally:
            child_end.close()
        self._call("start")

    def _call(self, name: str, *args, **kwargs):
        """Send one call; wait for its answer unless it is one of _UNANSWERED."""
        try:
            self._pipe.send((name, args, kwargs))
            if name in _UNANSWERED:
                self._deferred.append(name)
                return None
            status, value, notes = self._pipe.recv()
        except (EOFError, OSError):  # the child ended: its end of the pipe closed with it
            raise self._ended(name) from None
        except BaseException:  # Ctrl-C, SIGTERM: the child ends with the call it was making
            self._kill()
            raise
        self._deferred.clear()
        self.notes.extend(notes)
        if status == "raise":
            raise value
        if status == "bug":
            raise RuntimeError(f"the Kafka client's process failed:\n{value}")
        return value

    def _ended(self, name: str) -> StoreUnavailable:
        self._process.join(_CLOSE_WAIT_S)
        code = self._process.exitcode
        if code is None:
            self._kill()
        doing = _DOING[self._deferred[0] if self._deferred else name]
        if code is not None and code < 0:
            what = (
                f"{CRASH_SIGNALS.get(-code, f'signal {-code}')} while {doing} (a crash inside librdkafka, the "
                f"Kafka client, most likely: offctl itself is Python)"
            )
        else:
            what = f"{f'exit status {code}' if code is not None else 'its pipe closed'} while {doing}"
        after = (
            "the write may have been sent"
            if name in _WRITES
            else "nothing was written; the next read starts a new client"
        )
        return StoreUnavailable(
            f"Kafka at {self.bootstrap_servers}: the Kafka client's process ended with {what}; {after}"
        )

    def _kill(self) -> None:
        if self._process.exitcode is None:
            self._process.kill()
            self._process.join()

    def close(self) -> None:
        """End the child: its KafkaStore closes its clients, or it is killed after a few seconds."""
        if self._process.exitcode is not None or self._pipe.closed:
            return
        try:
            self._pipe.send(("close", (), {}))
        except OSError:
            pass
        self._process.join(_CLOSE_WAIT_S)
        self._kill()
        self._pipe.close()

    # The LogWriter protocol (offctl/ports.py), and prefetch: each a call of the child's KafkaStore.
    def prefetch(self) -> None:
        self._call("prefetch")

    def request_logs(self, topics: Iterable[str], *, last_stable: bool = False) -> None:
        self._call("request_logs", list(topics), last_stable=last_stable)

    def logs(self):
        return self._call("logs")

    def list_groups(self) -> list[str]:
        return self._call("list_groups")

    def group_commits(self, groups: Iterable[str]):
        return self._call("group_commits", list(groups))

    def group_states(self, groups: Iterable[str]):
        return self._call("group_states", list(groups))

    def read_messages(
        self,
        positions,
        *,
        count: int = 1,
        budget_s: float | None = None,
        isolation_level: Isolation = Isolation.READ_UNCOMMITTED,
    ):
        return self._call(
            "read_messages", list(positions), count=count, budget_s=budget_s, isolation_level=isolation_level
        )

    def read_broker_config(self, names: Iterable[str]):
        return self._call("read_broker_config", list(names))

    def read_topic_configs(self, topics: Iterable[str]):
        return self._call("read_topic_configs", list(topics))

    def api_versions(self):
        return self._call("api_versions")

    def offsets_for_times(self, partitions, at_ms: int):
        return self._call("offsets_for_times", list(partitions), at_ms)

    def commit(self, group: str, offsets) -> None:
        self._call("commit", group, list(offsets))

    def delete_group(self, group: str) -> None:
        self._call("delete_group", group)


def _host(pipe, settings: dict) -> None:
    """The child: a KafkaStore, answering the parent's calls until it closes them or its pipe. A call sent without
    waiting that fails keeps its error for the next answer, and the calls after it are not made (in one process,
    the failure would have ended the run there)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C at the terminal is the parent's to act on
    gc.disable()  # as the cycle's own process holds its collector (pipeline.cyclic_gc_paused); the child lives a cycle
    from offctl.adapters.kafka import KafkaStore

    store, failed, noted = None, None, 0  # failed: the answer of an unanswered call that failed
    try:
        while True:
            try:
                name, args, kwargs = pipe.recv()
            except EOFError:
                return
            if name == "close":
                return
            reply = failed
            if reply is None:
                try:
                    if name == "start":
                        store, value = KafkaStore(**settings), None
                    else:
                        value = getattr(store, name)(*args, **kwargs)
                    reply = ("ok", value)
                except OffctlError as exc:
                    reply = ("raise", exc)
                except Exception:
                    reply = ("bug", traceback.format_exc())
            if name in _UNANSWERED:
                failed = reply if reply[0] != "ok" else None
                continue
            failed = None
            notes = store.notes[noted:] if store is not None else []
            noted += len(notes)
            pipe.send((*reply, notes))
    finally:
        if store is not None:
            store.close()
