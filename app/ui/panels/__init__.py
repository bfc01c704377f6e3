"""The views around the graph, each taking the session it shows."""
