"""The main window and its parts: commands, docks, files, the stage, exports."""
