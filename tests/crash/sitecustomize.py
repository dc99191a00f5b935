"""A real crash where librdkafka's would be, for the tests of issue 43's isolation
(tests/faults/test_kafka_child_e2e.py).

Loaded by every Python process started with this folder first on PYTHONPATH (the offctl command, its supervisor, the
fork server of its Kafka client's children). With OFFCTL_TEST_CRASH naming a file, the Kafka adapter's read of log
offsets (KafkaStore.logs, which waits on librdkafka's answers) crashes its process with a SIGSEGV made in C (a
read of address 0 through ctypes) whenever that file exists, and removes the file first: one crash per file the
test creates. OFFCTL_TEST_CRASH_IN names another KafkaStore method instead; "commit:after" crashes once the
method has returned (a write that landed, and a process that never said so). Without the variables nothing is
changed. A sitecustomize later on the path (tests/clock's, in a run
a year ahead) is loaded too."""

import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_flag = os.environ.get("OFFCTL_TEST_CRASH")
if _flag:
    import ctypes

    from offctl.adapters import kafka

    _method, _, _when = os.environ.get("OFFCTL_TEST_CRASH_IN", "logs").partition(":")
    _original = getattr(kafka.KafkaStore, _method)

    def _crashing(self, *args, **kwargs):
        if not os.path.exists(_flag):
            return _original(self, *args, **kwargs)
        if _when == "after":
            _original(self, *args, **kwargs)
        os.unlink(_flag)
        ctypes.string_at(0)  # SIGSEGV, in native code, as librdkafka issue 5040's

    setattr(kafka.KafkaStore, _method, _crashing)

_later = [p for p in sys.path if p and os.path.abspath(p) != _here]
_next = importlib.machinery.PathFinder.find_spec("sitecustomize", _later)
if _next is not None and _next.origin and os.path.dirname(os.path.abspath(_next.origin)) != _here:
    _module = importlib.util.module_from_spec(_next)
    _next.loader.exec_module(_module)
