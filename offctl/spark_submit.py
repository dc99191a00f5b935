"""`offctl audit` under spark-submit, on a cluster:

    spark-submit --master yarn [spark options] "$(python -m offctl.spark_submit)" [offctl audit options]

`python -m offctl.spark_submit` prints this file's path. Run by spark-submit, the audit uses the session
spark-submit sets up (its master and settings) and otherwise behaves exactly as `offctl audit`.
"""

import os
import sys

if __name__ == "__main__" and __spec__ is not None:  # python -m offctl.spark_submit
    print(os.path.abspath(__file__))
elif __name__ == "__main__":  # spark-submit .../offctl/spark_submit.py
    # Run as a script, this file puts its folder (offctl/) first on sys.path, where offctl's inspect.py
    # would shadow the standard library's inspect.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]

    from offctl.commands.app import main

    sys.argv = ["offctl", "audit", *sys.argv[1:]]  # through main(): the same boundary checks as `offctl audit`
    main()
