"""Commands with a module of their own (serve, init); cli.py dispatches."""
