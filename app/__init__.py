"""Autograd Lens: watch PyTorch autograd run, node by node."""

import warnings

__version__ = "0.1.0"

# A CPU build of torch without NumPy warns once at import time that NumPy is
# missing. Autograd Lens never converts to NumPy (programs may not), so the
# warning would only confuse a learner reading the terminal.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)
