"""What a stranger's ``.lens`` file cannot make the command line do.

Reading a recording runs nothing and imports no PyTorch: its fixes are proven (by recording the
edited program in the limited child) only when the person asks with ``--prove-fixes``. And no file
is written where the recording's own text says: an export's page is named by the person.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from app.core import load_builtin, record
from app.core.lensfile import save_lens

ROOT = Path(__file__).resolve().parents[2]


def run_app(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
    )


@pytest.fixture(scope="module")
def forgot_retain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lens") / "forgot.lens"
    save_lens(record(load_builtin("forgot-retain")), path)
    return path


@pytest.mark.parametrize("name", ["../escaped", "/ABSOLUTE/escaped", "sub/../../escaped"])
def test_an_html_export_into_a_folder_is_named_by_the_person(tmp_path: Path, name: str) -> None:
    rec = record(load_builtin("forgot-retain"))
    target = tmp_path / "ABSOLUTE"
    target.mkdir()
    hostile = replace(rec, program=replace(rec.program, name=name.replace("/ABSOLUTE", str(target))))
    lens = tmp_path / "given.lens"
    save_lens(hostile, lens)
    out = tmp_path / "out"
    out.mkdir()
    done = run_app("export", str(lens), "--format", "html", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert [p.name for p in out.iterdir()] == ["given.html"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ABSOLUTE", "given.lens", "out"]
    assert list(target.iterdir()) == []


def test_reading_a_lens_file_records_nothing_and_imports_no_torch(forgot_retain: Path) -> None:
    probe = (
        "import sys\nfrom app.cli import main\n"
        f"status = main(['trace', '--json', {str(forgot_retain)!r}])\n"
        "assert status == 0, status\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["fixes"] == []


def test_fixes_of_a_lens_file_are_proven_on_request(forgot_retain: Path) -> None:
    done = run_app("trace", "--json", "--prove-fixes", str(forgot_retain))
    assert done.returncode == 0, done.stderr
    fixes = json.loads(done.stdout)["fixes"]
    assert fixes and all(f["checked"]["error_gone"] for f in fixes)
    table = run_app("trace", str(forgot_retain))
    assert table.returncode == 0 and "add --prove-fixes" in table.stdout
    assert "Fix 1:" not in table.stdout and "recorded: no error" not in table.stdout
