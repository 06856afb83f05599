import sys

from jouleboard.cli import main

sys.exit(main())
