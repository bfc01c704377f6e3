"""No widgets: the view model, work off the GUI thread or after a paint, settings, the exception handler."""
