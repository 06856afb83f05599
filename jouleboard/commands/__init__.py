"""One module per command of ``jouleboard``: each has ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``, and imports what it runs inside ``run``, so ``jouleboard --help`` and
the light commands start fast. cli.py builds the parser from them and dispatches."""
