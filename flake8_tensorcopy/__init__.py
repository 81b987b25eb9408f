"""flake8-tensorcopy: find and fix misuse of PyTorch's copy operations."""

__version__ = "0.1.0"
