"""No widgets: the view model, work off the GUI thread, settings, the exception handler."""
