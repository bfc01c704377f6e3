"""Autograd Lens benchmarks: ``python benchmarks/bench.py [--json]`` gathers the modules beside it.

Each module measures one thing (step latency, recording cost, start-up, heartbeat, memory, shared
recordings, the language); ``common`` holds what they share and imports none of them.
"""
