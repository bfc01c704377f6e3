"""Autograd Lens: watch PyTorch autograd run, node by node."""

__version__ = "0.1.0"
