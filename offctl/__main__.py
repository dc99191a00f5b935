"""`offctl` and `python -m offctl`. Ctrl-C and SIGTERM are offctl's from this module's first lines: importing
the command line takes a third of a second (Typer, rich, the store clients), and an interrupt then ends it
with the one line and the exit code of any other interrupt, not a traceback."""

import os
import signal


def _interrupted_at_start_up(signum, frame) -> None:
    os.write(2, b"offctl: interrupted\n")
    os._exit(130)  # nothing is written yet: no file to close, no buffer to flush


signal.signal(signal.SIGINT, _interrupted_at_start_up)
signal.signal(signal.SIGTERM, _interrupted_at_start_up)


def main() -> None:
    from offctl.commands.app import main as run  # installs offctl's own handling (offctl/interrupts.py)

    run()


def storm_kafka_monitor() -> None:
    """The `storm-kafka-monitor` program: Storm UI's lag script, every argument KafkaOffsetLagUtil's
    (offctl/commands/lagmonitor.py)."""
    import sys

    sys.argv = [sys.argv[0], "storm-kafka-monitor", "--", *sys.argv[1:]]
    main()


if __name__ == "__main__":
    main()
