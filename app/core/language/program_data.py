"""Loaders over the program's own datasets, run by the evaluator (NOTE [program datasets] in
``data.py``): the dataset's ``__len__``, ``__getitem__`` and ``__iter__`` are the program's code."""

from __future__ import annotations

import ast
from typing import Any

from app.core.language.data import ProgramLoader, collate
from app.core.language.evaluation import Evaluation
from app.core.language.hints import with_run_hint
from app.core.sizing.limits import MAX_SEQUENCE

__all__ = ["loader_batches", "loader_length"]


def loader_length(ev: Evaluation, loader: ProgramLoader, node: ast.expr) -> int:
    """``len(loader)``: how many batches one pass makes."""
    if loader.iterable:
        raise ev.error("len() of a DataLoader over an IterableDataset is not known before it runs", node)
    length: int = ev.classes.special(loader.dataset, "__len__", [], node)
    size = loader.batch_size or 1
    return length // size if loader.drop_last else -(-length // size)


def loader_batches(ev: Evaluation, loader: ProgramLoader, node: ast.expr) -> list[Any]:
    """One pass's batches, in PyTorch's order, each collated by PyTorch."""
    classes = ev.classes
    if loader.iterable:
        items = ev.statements.all_items(loader.dataset, node, loop=True)
        size = loader.batch_size or 1
        groups = [items[i : i + size] for i in range(0, len(items), size)]
        if loader.drop_last and groups and len(groups[-1]) < size:
            groups.pop()
    else:
        length = classes.special(loader.dataset, "__len__", [], node)
        most = min(ev.limits.max_iterations, MAX_SEQUENCE)  # a pass is made all at once (NOTE [caps])
        if length > most:
            raise ev.error(
                with_run_hint(f"this dataset has {length:,} samples; a pass may take {most:,}"), node
            )
        indices = ev.apply(loader.index_batches, [length], {}, node)
        groups = [
            [classes.special(loader.dataset, "__getitem__", [i], node) for i in batch] for batch in indices
        ]
    if loader.batch_size is None:
        return [item for group in groups for item in group]
    return [ev.apply(collate, [group], {}, node) for group in groups]
