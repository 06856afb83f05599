"""jouleboard: GPU energy-efficiency leaderboards of AI models, as a static site."""

__version__ = "0.1.0"
