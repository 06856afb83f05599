"""Build the site: ``python build.py [--out DIR] [--data DIR] [--base-url /path/]``.

The same as ``jouleboard build``.
"""

import sys

from jouleboard.cli import run

if __name__ == "__main__":
    run(["build", *sys.argv[1:]])
