"""The slot ledger: the state of every saved tensor slot, read from PyTorch, and what changed since
the last step.

A slot is ``alive`` while its node has not run, ``retained`` when it ran and kept its buffers
(``retain_graph=True``), ``freed`` once PyTorch released them (or the node was let go), and
``modified`` when the saved tensor was written in place after it was saved. States are never
assumed: :func:`probe_slot` reads them from the node, and the ledger only keeps what the last
probe said, with the bytes the held storages take and the version counters of the held tensors.

>>> import torch
>>> from app.core.recorder.capture import GraphCapture
>>> x = torch.ones(2, requires_grad=True)
>>> y = x.exp()
>>> capture = GraphCapture()
>>> new = capture.add_roots([y.grad_fn])
>>> ledger = SlotLedger(capture)
>>> ledger.add_node(new[0])
>>> y.sum().backward()
>>> ledger.ran(new[0])
>>> ledger.probe_node(new[0], call=0)
>>> ledger.take_changes()[0], ledger.freed_by
({('n0', 'result'): 'freed'}, {('n0', 'result'): 0})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from app.core.model.graph import SavedSlot, StorageRef
from app.core.model.timeline import SlotKey, SlotState
from app.core.recorder.capture import (
    INPUTS_SLOT,
    NOT_HOOKED,
    RAW_PREFIX,
    GraphCapture,
    hooked_packed,
    raw_saved_tensors,
    read_saved,
    storage_ref,
)

__all__ = ["HOLDING", "SlotLedger", "probe_slot", "released"]

MODIFIED_MARK = "modified by an inplace operation"  # part of PyTorch's message for a version error
HOLDING = frozenset(("alive", "retained", "modified"))  # states whose slot keeps its storage


def probe_slot(fn: Any, name: str, has_run: bool) -> SlotState:
    """The state of one tensor slot, read from PyTorch (never assumed).

    >>> x = torch.ones(2, requires_grad=True)
    >>> y = x.exp()
    >>> probe_slot(y.grad_fn, "result", has_run=False)
    'alive'
    >>> y.sum().backward()
    >>> probe_slot(y.grad_fn, "result", has_run=True)
    'freed'
    """
    if released(fn, name):
        return "freed"
    if hooked_packed(fn, name) is not NOT_HOOKED:  # NOTE [saved-tensor hooks]: never unpacked here
        return "retained" if has_run else "alive"
    try:
        read_saved(fn, name)
    except RuntimeError as exc:
        if MODIFIED_MARK in str(exc):
            return "modified"
        return "freed"
    return "retained" if has_run else "alive"


def released(fn: Any, name: str) -> bool:
    """True when the slot's raw saved tensors hold no data: PyTorch released them.

    Asking ``_saved_<name>`` of a released slot says the same by raising, but a
    C++ error with its long message costs ~10 us, and a backward call without
    retain_graph releases every slot it passes (most probes of a recording).
    """
    try:
        raw = getattr(fn, RAW_PREFIX + name)
    except (AttributeError, RuntimeError):
        return False
    if not isinstance(raw, (list, tuple)):
        return raw is None or raw.data is None
    return bool(raw) and all(r is None or r.data is None for r in raw)


class SlotLedger:
    """Each captured slot's state and version, the storages held, and the changes not stepped yet.

    ``watch_writes`` keeps each held slot's tensors with their version counters, so that the
    slots written in place since they were last looked at are found without probing every slot
    (a trusted script's lines: NOTE [written slots] in ``script_recorder.py``).
    """

    def __init__(self, capture: GraphCapture, *, watch_writes: bool = False) -> None:
        self.capture = capture
        self.states: dict[SlotKey, SlotState] = {}
        self.versions: dict[SlotKey, int] = {}
        self.has_run: set[str] = set()  # nodes whose post-hook fired: their kept slots are retained
        self.freed_by: dict[SlotKey, int] = {}  # slot -> the autograd call that released it
        self.held_bytes = 0  # bytes of the storages some held slot keeps
        self._held: dict[tuple[str, int], int] = {}  # (device, pointer) -> slots holding it
        self._bytes_of: dict[tuple[str, int], int] = {}
        self._pending: dict[SlotKey, SlotState] = {}
        self._pending_versions: dict[SlotKey, int] = {}
        self._watched: dict[SlotKey, tuple[tuple[torch.Tensor, int], ...]] | None = (
            {} if watch_writes else None
        )
        # NOTE [freed leaves written]: freed slots that had saved a leaf, with the leaf's version
        self._freed_leaves: dict[SlotKey, tuple[torch.Tensor, int]] = {}
        self._leaf_storages: tuple[int, dict[StorageRef, torch.Tensor]] = (0, {})
        self._leaf_tensors: Mapping[str, torch.Tensor] = {}

    # -- what changed -------------------------------------------------
    @property
    def changed(self) -> bool:
        return bool(self._pending or self._pending_versions)

    def take_changes(self) -> tuple[dict[SlotKey, SlotState], dict[SlotKey, int]]:
        """The states and versions changed since the last step, handed over (not copied)."""
        slots, versions = self._pending, self._pending_versions
        if slots:
            self._pending = {}
        if versions:
            self._pending_versions = {}
        return slots, versions

    # -- reading PyTorch ----------------------------------------------
    def ran(self, node_id: str) -> None:
        self.has_run.add(node_id)

    def add_node(self, node_id: str) -> None:
        """The slots of a node just captured: read a moment ago by the capture, so what a probe
        would say unless that read raised."""
        capture = self.capture
        has_run = node_id in self.has_run
        for slot in capture.tensor_slots(node_id):
            key = (node_id, slot.name)
            readable = key not in capture.unreadable and not has_run
            self.set_state(key, "alive" if readable else self._probe(key), slot)
            if slot.saved_version is not None:  # the version read with it, unless the read raised
                now = None if readable else self._version_now(key)
                self.set_version(key, slot.saved_version if now is None else now)

    def probe_node(self, node_id: str, call: int | None) -> None:
        """Read every tensor slot of ``node_id``; a slot freed now is freed by ``call``."""
        fn = self.capture.fns.get(node_id)
        if fn is None:
            return
        has_run = node_id in self.has_run
        states = self.states
        for slot in self.capture.tensor_slots(node_id):
            key = (node_id, slot.name)
            state = self._probe(key) if slot.name == INPUTS_SLOT else probe_slot(fn, slot.name, has_run)
            if state == "freed" and call is not None and states.get(key) != "freed":
                self.freed_by[key] = call
            self.set_state(key, state, slot)
            if state in HOLDING:
                self.set_version(key, self._version_now(key))

    def probe_all(self, call: int | None) -> None:
        for node_id in list(self.capture.fns):
            self.probe_node(node_id, call)

    def let_go(self, node_id: str) -> None:
        """The node is gone (nothing reaches it): the slots it held are freed with it."""
        for slot in self.capture.tensor_slots(node_id):
            key = (node_id, slot.name)
            if self.states.get(key) in HOLDING:
                self.set_state(key, "freed", slot)

    def _probe(self, key: SlotKey) -> SlotState:
        if key[1] == INPUTS_SLOT and key[0] in self.capture.frames:  # NOTE [checkpoint inputs]
            return "alive" if self.capture.inputs_held(key[0]) else "freed"
        return probe_slot(self.capture.fns[key[0]], key[1], key[0] in self.has_run)

    def _version_now(self, key: SlotKey) -> int | None:
        fn = self.capture.fns.get(key[0])
        tensors = raw_saved_tensors(fn, key[1]) if fn is not None else []
        return tensors[0]._version if len(tensors) == 1 else None

    # -- keeping the books --------------------------------------------
    def set_version(self, key: SlotKey, version: int | None) -> None:
        if version is not None and self.versions.get(key) != version:
            self.versions[key] = version
            self._pending_versions[key] = version

    def set_state(self, key: SlotKey, state: SlotState, slot: SavedSlot | None = None) -> None:
        old = self.states.get(key)
        if old == state:
            if self._watched is not None:  # looked at again: versions moved since are known now
                self._watch(key, state)
            return
        slot = slot or next(s for s in self.capture.tensor_slots(key[0]) if s.name == key[1])
        change = (state in HOLDING) - (old in HOLDING)
        for ref in slot.storages:  # a storage is held while any slot holding it is
            storage = ref.device, ref.pointer
            before, old_bytes = self._held.get(storage, 0), self._bytes_of.get(storage, 0)
            self._held[storage] = after = before + change
            self._bytes_of[storage] = ref.nbytes
            # A running total: summing every storage on every step was O(steps x storages).
            self.held_bytes += (ref.nbytes if after > 0 else 0) - (old_bytes if before > 0 else 0)
        self.states[key] = state
        self._pending[key] = state
        if state == "freed":
            self._watch_freed_leaf(key, slot)
        elif old == "freed":
            self._freed_leaves.pop(key, None)
        if self._watched is not None:
            self._watch(key, state)

    # -- slots written in place ---------------------------------------
    def _watch(self, key: SlotKey, state: SlotState) -> None:
        assert self._watched is not None
        fn = self.capture.fns.get(key[0]) if state in HOLDING else None
        if fn is None:
            self._watched.pop(key, None)
        else:
            self._watched[key] = tuple((t, t._version) for t in raw_saved_tensors(fn, key[1]))

    def written_nodes(self) -> list[str]:
        """Nodes with a held slot whose tensor's version moved since it was last looked at, in
        capture order (``watch_writes`` only)."""
        watched = self._watched or {}
        written = {key[0] for key, held in watched.items() if any(t._version != v for t, v in held)}
        return sorted(written, key=lambda n: int(n[1:]))

    # NOTE [freed leaves written]
    # A slot freed by a backward can no longer be read, nor its version: PyTorch let go of it. When
    # what it had saved is a leaf the program holds (a weight), the leaf itself still tells its
    # version; an optimizer step that writes it in place before a second backward through the same
    # graph is then a version change of the freed slot, on the step of the line that wrote it. The
    # fixes read it: retain_graph=True alone would trade the freed error for the version error.
    def watch_leaves(self, leaf_tensors: Mapping[str, torch.Tensor]) -> None:
        """The leaves the program holds, by name (a live mapping: leaves are only ever added)."""
        self._leaf_tensors = leaf_tensors

    def _watch_freed_leaf(self, key: SlotKey, slot: SavedSlot) -> None:
        if len(slot.storages) != 1:
            return
        known, by_storage = self._leaf_storages
        if known != len(self._leaf_tensors):
            by_storage = {storage_ref(t): t for t in self._leaf_tensors.values()}
            self._leaf_storages = (len(self._leaf_tensors), by_storage)
        leaf = by_storage.get(slot.storages[0])  # the slot's own storage ref, made the same way
        if leaf is not None:
            self._freed_leaves[key] = (leaf, leaf._version)

    def note_freed_leaves_written(self) -> None:
        if not self._freed_leaves:
            return
        for key, (leaf, version) in list(self._freed_leaves.items()):
            if key[0] not in self.capture.fns:  # the node is gone: no backward can reach it
                del self._freed_leaves[key]
            elif leaf._version != version:
                self._freed_leaves[key] = (leaf, leaf._version)
                self.set_version(key, leaf._version)
