"""What the tests share: the oracle that runs programs in plain PyTorch (``oracle``,
``torchviz_oracle``), hand-made recordings (``handmade``), hostile and broken programs with their
outcomes (``hostile_cases``), real models and small programs (``real_models``, ``programs``),
helpers for fixes, JSON steps and the web player, and the learners' scripts and pasted snippets the
tests record (``scripts/``, ``snippets/``: data, never collected).
"""
