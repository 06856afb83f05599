"""Presentation: values -> tables, chart specs and display strings (no I/O)."""
