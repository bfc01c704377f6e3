"""``torch.utils.data`` in programs: ``TensorDataset``, ``DataLoader`` and ``random_split``.

# NOTE [data loaders]
A program's data is in memory already (tensors it made, lists it built), so only the
in-memory pieces are listed, each a checked proxy over PyTorch's own object. A loader is
PyTorch's ``DataLoader`` with ``num_workers=0``: batches, shuffling and the random numbers it
draws from torch's generator are exactly a plain run's (worker processes change where a batch
is made, not what it holds; ``pin_memory`` where it is pinned). A loop over a loader makes
the whole pass's batches when the loop starts, inside one call of the language, so the size
guard sees every index and ``stack`` that makes them (NOTE [size guard]); a program's data is
sized already, and a pass holds one copy of it. A ``TensorDataset``'s batch is taken with one
index per tensor (``x[indices]``), which is what stacking its samples one by one makes: a pass
over 60,000 samples is then a few hundred operations, not 120,000 (a call of the language may
run 20,000). ``sampler``, ``collate_fn`` and worker settings
that run code of their own are refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import torch
from torch.utils import data

from app.core.language.hints import refused
from app.core.language.instances import BaseMarker, ProgramObject
from app.core.language.objects import Checked

__all__ = [
    "DATASET_BASES",
    "DataLoaderFactory",
    "DataLoaderProxy",
    "DatasetProxy",
    "ProgramLoader",
    "data_members",
]

# ``class Pairs(Dataset):`` and ``class Stream(IterableDataset):``: the program's own datasets,
# whose __len__, __getitem__ and __iter__ the evaluator runs (NOTE [program datasets]).
DATASET_BASES = (BaseMarker("torch.utils.data.Dataset"), BaseMarker("torch.utils.data.IterableDataset"))

# Settings of DataLoader a program may give, besides the dataset; the rest run code or processes.
LOADER_SETTINGS = frozenset({"batch_size", "shuffle", "drop_last", "num_workers", "pin_memory"})
REFUSED_LOADER_SETTINGS: Mapping[str, str] = MappingProxyType(
    {
        "sampler": "a sampler is code of its own: use shuffle=True",
        "batch_sampler": "a sampler is code of its own: use batch_size= and shuffle=",
        "collate_fn": "a collate_fn is code of its own: the default stacks the samples",
        "worker_init_fn": "programs run in one process",
        "generator": "the loader draws from torch's generator, seeded with the program",
    }
)
MAX_WORKERS = 64  # num_workers is accepted (a pasted snippet has it) and runs as 0


def data_members() -> dict[str, Any]:
    """``torch.utils.data``'s listed members, by name.

    >>> sorted(data_members())
    ['DataLoader', 'Dataset', 'IterableDataset', 'TensorDataset', 'random_split']
    """
    return {
        "TensorDataset": tensor_dataset,
        "DataLoader": DataLoaderFactory(),
        "random_split": random_split,
        "Dataset": DATASET_BASES[0],
        "IterableDataset": DATASET_BASES[1],
    }


class DatasetProxy(Checked):
    """A dataset as a program holds it: ``len(ds)``, ``for x, y in ds``, and a loader's input.

    >>> ds = tensor_dataset(torch.arange(6.0).view(3, 2), torch.tensor([0, 1, 0]))
    >>> len(ds), [y.item() for _, y in ds]
    (3, [0, 1, 0])
    """

    def __init__(self, dataset: data.Dataset[Any], kind: str) -> None:
        self._dataset = dataset
        self.kind = kind

    def __len__(self) -> int:
        return len(self._dataset)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[Any]:
        """Every sample, made at once (NOTE [data loaders])."""
        return iter([self._dataset[i] for i in range(len(self))])

    def __repr__(self) -> str:
        return f"<{self.kind} of {len(self)} samples>"

    def named_tensors(self) -> Iterator[tuple[str, torch.Tensor]]:
        dataset = self._dataset
        if isinstance(dataset, data.TensorDataset):
            for index, tensor in enumerate(dataset.tensors):
                yield f"tensors[{index}]", tensor


class _Batch(list[Any]):
    """A batch made whole by a dataset (NOTE [data loaders]): collated already."""


class _BatchedTensors(data.TensorDataset):
    """PyTorch's ``TensorDataset``, whose batch of samples is one index per tensor.

    >>> ds = _BatchedTensors(torch.arange(6.0).view(3, 2), torch.tensor([4, 5, 6]))
    >>> [t.tolist() for t in _collate(ds.__getitems__([2, 0]))]
    [[[4.0, 5.0], [0.0, 1.0]], [6, 4]]
    """

    def __getitems__(self, indices: list[int]) -> _Batch:
        index = torch.tensor(indices, dtype=torch.long)
        return _Batch(tensor[index.to(tensor.device)] for tensor in self.tensors)


def _collate(batch: Any) -> Any:
    """A loader's batch: a dataset's whole batch as it is, else PyTorch's default stacking."""
    return list(batch) if isinstance(batch, _Batch) else data.default_collate(batch)


def tensor_dataset(*tensors: Any) -> DatasetProxy:
    """``TensorDataset(x, y)``: tensors of the same first size, sample by sample."""
    for tensor in tensors:
        if not isinstance(tensor, torch.Tensor):
            raise refused(f"TensorDataset takes tensors, not {_kind(tensor)}")
    return DatasetProxy(_BatchedTensors(*tensors), "a TensorDataset")


def random_split(dataset: Any, lengths: Any) -> list[DatasetProxy]:
    """``random_split(ds, [80, 20])`` or ``[0.8, 0.2]``: parts drawn with torch's generator."""
    source = _dataset_of(dataset, "random_split")
    if not isinstance(lengths, (list, tuple)) or not all(isinstance(n, (int, float)) for n in lengths):
        raise refused("random_split takes the lengths of the parts as a list, e.g. [80, 20]")
    parts = data.random_split(source, list(lengths))
    return [DatasetProxy(part, "a part of a dataset (random_split)") for part in parts]


class DataLoaderFactory:
    """``DataLoader(dataset, batch_size=..., shuffle=...)`` in a program (NOTE [data loaders])."""

    def __init__(self) -> None:
        self.__name__ = self.__qualname__ = "DataLoader"
        self.__module__ = "torch.utils.data"

    def __repr__(self) -> str:
        return "DataLoader"

    def __call__(
        self, dataset: Any, batch_size: Any = 1, shuffle: Any = False, **settings: Any
    ) -> DataLoaderProxy | ProgramLoader:
        for name in settings:
            if name in REFUSED_LOADER_SETTINGS:
                raise refused(f"DataLoader(..., {name}=...): {REFUSED_LOADER_SETTINGS[name]}")
            if name not in LOADER_SETTINGS:
                listed = ", ".join(sorted(LOADER_SETTINGS))
                raise refused(f"DataLoader has no setting '{name}' in programs; it takes {listed}")
        workers = settings.pop("num_workers", 0)
        if not isinstance(workers, int) or not 0 <= workers <= MAX_WORKERS:
            raise refused(f"DataLoader takes num_workers from 0 to {MAX_WORKERS}")
        settings.pop("pin_memory", None)
        for name, value in {"batch_size": batch_size, "shuffle": shuffle, **settings}.items():
            if not isinstance(value, (bool, int, type(None))):
                raise refused(f"DataLoader takes a whole number or True/False for {name}")
        if isinstance(dataset, ProgramObject) and dataset.cls.root in DATASET_BASES:
            return ProgramLoader(dataset, batch_size, shuffle, settings.get("drop_last", False))
        source = _dataset_of(dataset, "DataLoader")
        loader = data.DataLoader(
            source, batch_size=batch_size, shuffle=shuffle, num_workers=0, collate_fn=_collate, **settings
        )
        held = dataset if isinstance(dataset, DatasetProxy) else DatasetProxy(source, "a dataset")
        return DataLoaderProxy(loader, held)


class DataLoaderProxy(Checked):
    """A loader as a program holds it: ``len(loader)``, ``for x, y in loader``, and its
    ``dataset`` and ``batch_size`` (``len(loader.dataset)`` in an accuracy).

    >>> ds = tensor_dataset(torch.arange(10.0), torch.arange(10))
    >>> loader = DataLoaderFactory()(ds, batch_size=4)
    >>> len(loader), [x.tolist() for x, _ in loader][-1], len(loader.get_attribute("dataset"))
    (3, [8.0, 9.0], 10)
    """

    kind = "a DataLoader"

    def __init__(self, loader: data.DataLoader[Any], dataset: DatasetProxy) -> None:
        self._loader = loader
        self._dataset = dataset

    def get_attribute(self, name: str) -> Any:
        """``dataset`` (the proxy it was given) or ``batch_size``."""
        if name == "dataset":
            return self._dataset
        if name == "batch_size":
            return self._loader.batch_size
        raise KeyError(name)

    def members(self) -> list[str]:
        return ["batch_size", "dataset"]

    def __len__(self) -> int:
        return len(self._loader)

    def __iter__(self) -> Iterator[Any]:
        """One pass's batches, made at once (NOTE [data loaders])."""
        return iter(list(self._loader))

    def __repr__(self) -> str:
        return f"<a DataLoader of {len(self)} batches>"


# NOTE [program datasets]
# A loader over the program's own Dataset is PyTorch's loader over the indices 0..len-1 (the
# same sampler, so shuffling draws what a plain run draws), each batch's samples then taken by
# the program's own __getitem__, in the order PyTorch takes them, and stacked by PyTorch's
# default collate; an IterableDataset's items come from its __iter__, batch_size at a time. The
# evaluator runs these methods (``program_data.py``): nothing here calls the program's code.


class ProgramLoader(Checked):
    """``DataLoader(MyDataset(), batch_size=..., shuffle=...)`` over the program's own dataset."""

    kind = "a DataLoader"

    def __init__(self, dataset: ProgramObject, batch_size: Any, shuffle: Any, drop_last: Any) -> None:
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.iterable = dataset.cls.root is DATASET_BASES[1]

    def get_attribute(self, name: str) -> Any:
        if name in ("dataset", "batch_size"):
            return getattr(self, name)
        raise KeyError(name)

    def members(self) -> list[str]:
        return ["batch_size", "dataset"]

    def index_batches(self, length: int) -> list[list[int]]:
        """The indices of each batch of one pass, drawn as PyTorch's loader draws them."""
        indices: list[int] = list(range(length))
        loader: data.DataLoader[int] = data.DataLoader(
            indices,  # type: ignore[arg-type]  # a list of indices is a map-style dataset
            batch_size=self.batch_size,
            shuffle=self.shuffle,
            drop_last=self.drop_last,
            collate_fn=list,
        )
        return [list(batch) for batch in loader]

    def __repr__(self) -> str:
        return "<a DataLoader>"


def collate(samples: list[Any]) -> Any:
    """PyTorch's default collate of a batch of samples."""
    return data.default_collate(samples)


def _dataset_of(value: Any, where: str) -> Any:
    """The dataset under a proxy, or a tensor or list the program made (a dataset as it is)."""
    if isinstance(value, DatasetProxy):
        return value._dataset
    if isinstance(value, torch.Tensor) and value.dim() > 0:
        return value
    if isinstance(value, (list, tuple)) and all(_is_sample(item) for item in value):
        return list(value)
    raise refused(
        f"{where} takes a dataset such as TensorDataset(x, y), a tensor or a list of samples, "
        f"not {_kind(value)}"
    )


def _is_sample(value: Any, depth: int = 0) -> bool:
    if isinstance(value, (torch.Tensor, bool, int, float)):
        return True
    return isinstance(value, (list, tuple)) and depth < 2 and all(_is_sample(v, depth + 1) for v in value)


def _kind(value: Any) -> str:
    if isinstance(value, Checked):
        return value.kind
    return "a tensor" if isinstance(value, torch.Tensor) else f"a {type(value).__name__}"
