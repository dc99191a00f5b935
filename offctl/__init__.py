"""offctl: inspect and repair the consumer offsets of Apache Storm Kafka spouts."""

import time as _time

__version__ = "0.1.0"

# When this process began offctl, before the command line's imports (a third of a second): storm-kafka-monitor's
# --deadline counts from here, as Storm UI's wait does from the process's start.
STARTED = _time.monotonic()
