"""uji: a coding agent for the terminal that you shape with Lua."""

__version__ = "0.1.0"
