"""The output folder: its safety, the one writer, static files."""
