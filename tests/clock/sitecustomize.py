"""The clock a year ahead for every Python process of a test run (tests/clock/ahead puts this folder on PYTHONPATH,
so the offctl processes the tests start read the same shifted clock as the tests themselves).

time-machine moves the wall clock only (time.time, datetime.now and their kin), as a day a year from now would;
the monotonic clock, the JVMs and librdkafka keep the machine's. libfaketime, which shifts every process, stalls a
Kafka broker's group coordinator and librdkafka's timed waits, and fails Python's sleep (EINVAL)."""

import os

_days = os.environ.get("OFFCTL_CLOCK_AHEAD_DAYS")
if _days:
    import time

    import time_machine

    time_machine.travel(time.time() + float(_days) * 86_400, tick=True).start()
