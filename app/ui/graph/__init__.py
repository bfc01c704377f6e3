"""The graph view: drawing, zoom and pan, module groups, the preview of a big file."""
