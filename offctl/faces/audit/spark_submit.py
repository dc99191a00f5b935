"""`offctl audit` under spark-submit, on a cluster:

    spark-submit --master yarn [spark options] "$(python -m offctl.faces.audit.spark_submit)" [offctl audit options]

`python -m offctl.faces.audit.spark_submit` prints this file's path; `python -m offctl.faces.audit.spark_submit --log4j`
prints the path of offctl's quiet log4j2 settings, for spark-submit's `--driver-java-options`. Run by spark-submit, the
audit uses the session spark-submit sets up (its master and settings) and otherwise behaves exactly as `offctl audit`.

spark-submit runs this driver with its stderr merged into its stdout (PythonRunner: redirectErrorStream),
which would put offctl's messages inside `--output json`. So the driver writes its stderr to spark-submit's
own stderr (its parent's file descriptor 2, on Linux), and stdout carries only the document.
"""

import os
import sys


def _stderr_to_parents() -> None:
    """Point fd 2 at the parent JVM's stderr (spark-submit's), so that stdout is the document alone."""
    try:
        with open(f"/proc/{os.getppid()}/comm") as comm:
            if comm.read().strip() != "java":
                return
        fd = os.open(f"/proc/{os.getppid()}/fd/2", os.O_WRONLY | os.O_APPEND)
    except OSError:
        return  # not Linux, or not allowed: messages stay merged into stdout, as spark-submit makes them
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)


if __name__ == "__main__" and __spec__ is not None:  # python -m offctl.faces.audit.spark_submit [--log4j]
    if sys.argv[1:] == ["--log4j"]:
        from importlib import resources

        print(resources.files("offctl").joinpath("log4j2-quiet.properties"))
    else:
        print(os.path.abspath(__file__))
elif __name__ == "__main__":  # spark-submit .../offctl/faces/audit/spark_submit.py
    # Run as a script, this file puts its folder (offctl/faces/audit/) first on sys.path, where a module of
    # the folder would shadow a top-level one of the same name: keep the folder off.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    _stderr_to_parents()

    from offctl.commands.app import main

    sys.argv = ["offctl", "audit", *sys.argv[1:]]  # through main(): the same boundary checks as `offctl audit`
    main()
