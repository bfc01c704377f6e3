"""Graph layout (Graphviz, once) and per-step styling; no widgets."""
