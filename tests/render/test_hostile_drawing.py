"""Names from a program or a stranger's file reach Graphviz escaped, and no drawing or file keeps an
address of the process that made it.

A control character in a node's name or a program's title made Graphviz write JSON and SVG that
cannot be read (no graph in the window, exit 2 from the HTML export). ``make_dot`` names its nodes
``str(id(fn))`` and a ``.lens`` kept each saved value's storage data pointer: addresses, in files
that are shared.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import torch
from torchviz import make_dot

from app.core import load_builtin, record
from app.core.lensfile import lens_bytes, recording_from_bytes, save_lens
from app.core.model.graph import Graph
from app.core.model.program import Program
from app.render.dot_source import dot_source
from app.render.torchviz_export import write_torchviz

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "w\x01\x1b[2J\u202e\x7f"


def test_control_characters_in_names_draw_and_export(tmp_path: Path) -> None:
    rec = record(load_builtin("two-losses"))
    nodes = tuple(replace(n, name=n.name + HOSTILE) for n in rec.graph.nodes)
    hostile = replace(rec, graph=Graph(nodes, rec.graph.edges), program=replace(rec.program, title=HOSTILE))
    assert all(c.isprintable() or c in "\n\t" for c in dot_source(hostile.graph))
    lens = tmp_path / "names.lens"
    save_lens(hostile, lens)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "export",
            str(lens),
            "--format",
            "html",
            "--out",
            str(tmp_path / "p.html"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "p.html").stat().st_size > 0


def test_torchviz_dot_holds_no_object_ids_and_escapes_names(tmp_path: Path) -> None:
    w = torch.ones(2, requires_grad=True)
    y = (w * 2).exp().sum()
    source = make_dot(y, params={HOSTILE: w}).source
    addresses = {str(id(fn)) for fn in (y.grad_fn, *(f for f, _ in y.grad_fn.next_functions))} | {str(id(w))}
    assert addresses & set(re.findall(r"\d+", source))  # make_dot's own ids: addresses
    files = write_torchviz(source, tmp_path)
    written = files[0].read_text(encoding="utf-8")
    assert not addresses & set(re.findall(r"\d+", written))
    ids = {int(i) for i in re.findall(r"(?m)^\s*(\d+) \[", written)}
    assert ids == set(range(len(ids))) and len(ids) == source.count(" [label=")
    svg = ET.parse(tmp_path / "torchviz.svg").getroot()
    texts = ["".join(t.itertext()) for t in svg.iter() if t.tag.endswith("}text")]
    assert any(text.startswith("w\\x01") for text in texts), texts


SHARED = (
    "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\n"
    "y = x * x\nz = y.exp()\nz.sum().backward()\n"
)


def test_a_lens_file_holds_no_storage_address() -> None:
    """``x * x`` saves ``x`` twice (one buffer), ``exp`` its result (another): numbered 1 and 2."""
    rec = record(Program(SHARED, name="shared"))
    data = lens_bytes(rec)
    lens = json.loads(gzip.decompress(data[data.index(b"\x1f\x8b") :]))
    written = {
        (n["name"], s["name"]): [r[1] for r in s.get("storages", [])]
        for n in lens["graph"]["nodes"]
        for s in n.get("saved", [])
        if s.get("storages")
    }
    assert written == {
        ("MulBackward0", "self"): [1],
        ("MulBackward0", "other"): [1],
        ("ExpBackward0", "result"): [2],
    }
    back = recording_from_bytes(data)
    assert back == rec and [r.nbytes for n in back.graph.nodes for s in n.saved for r in s.storages] == [
        8,
        8,
        8,
    ]
