"""Recordings as ``.lens`` files: the format (:mod:`.format`), the one writer (:mod:`.writer`), the
gzip container and its header (:mod:`.container`), the checked reader (:mod:`.reader`), and files
by path (:mod:`.files`). Reading a file imports no torch and runs nothing in it.

>>> from app.core.model.graph import Graph
>>> from app.core.model.program import Program
>>> from app.core.model.timeline import Step, Timeline
>>> first = Step(0, "forward", None, None, {}, {}, 0)
>>> rec = Recording(Program("x = 1\\n"), "cpu", "2.13.0", Graph((), ()), Timeline((first,)), {}, ())
>>> recording_from_bytes(lens_bytes(rec)) == rec
True
"""

from app.core.lensfile.files import lens_preview, open_lens, preread_lens, read_lens, recording_from_bytes
from app.core.lensfile.format import SUFFIX, VERSION, LensError, code_refusal, is_lens
from app.core.lensfile.writer import lens_bytes, save_lens
from app.core.model.recording import Recording

__all__ = [
    "SUFFIX",
    "VERSION",
    "LensError",
    "Recording",
    "code_refusal",
    "is_lens",
    "lens_bytes",
    "lens_preview",
    "open_lens",
    "preread_lens",
    "read_lens",
    "recording_from_bytes",
    "save_lens",
]
