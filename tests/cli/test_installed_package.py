"""The package as a user installs it: the wheel built from the checkout, installed with the tested
pins into a fresh virtualenv outside the source tree, and each command the README shows run from
another folder and compared with the same command run from the source tree.

Every other test imports ``app`` from the checkout (an editable install), so a package or a resource
file left out of the wheel would pass them all. The wheel is built and installed once for this file,
by pip, with its commands; its dependencies are the ones the tests run with (the pinned versions of
``requirements/constraints.txt``), which the virtualenv reaches through a ``.pth`` file rather than a
second copy of torch (a gigabyte, unpacked in 17 s of CPU), and pip resolves the wheel's declared
requirements, with those pins, to them.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import torch
from PySide6.QtGui import QImage

from app.core import builtin_names
from tests.support.json_steps import full_states
from tests.support.plain_errors import plain_forgot_retain_error

pytestmark = [pytest.mark.slow, pytest.mark.wheel]

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "requirements" / "constraints.txt"
INSTALL_TIMEOUT_S = 600
RUN_TIMEOUT_S = 180
# Neither side inherits these: each runs its own code (the virtualenv's, or the checkout's through
# PYTHONPATH), and both cache byte code.
NOT_INHERITED = ("PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")

SCRIPT = """\
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1))
x = torch.randn(4, 3)
loss = model(x).pow(2).mean()
loss.backward()
print("loss", loss.item())
"""

LENS_RECORD = """\
import json
import torch
from app import lens

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
with lens.record() as rec:
    (x.square() * x).sum().backward()
print(json.dumps({"grad": rec.recording.grads_at_end(0)["x"].tolist(), "recording": rec.to_json()}))
"""


class Installed(NamedTuple):
    wheel: Path
    bin: Path  # the fresh virtualenv's scripts
    work: Path  # each side runs in a folder of its own here, with the same files in it


class Ran(NamedTuple):
    returncode: int
    stdout: str
    stderr: str
    folder: Path


def checkout_files() -> list[str]:
    """What a clone holds, plus new files not yet added (ignored ones left out), as git lists them."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the wheel is built from the files git lists")
    inside = subprocess.run(
        ["git", "rev-parse", "--is-inside-work-tree"], cwd=ROOT, capture_output=True, check=False
    )
    if inside.returncode != 0:
        pytest.skip("not a git checkout: the wheel is built from the files git lists")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    return sorted(name for name in listed.stdout.decode().split("\0") if name and (ROOT / name).is_file())


def pip(*args: str | Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", *map(str, args)],
        check=False,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    assert done.returncode == 0, f"pip {' '.join(map(str, args))}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("installed")
    # Built from a copy: setuptools leaves build/ in the tree it builds, and what a stale build/lib
    # holds goes into the next wheel.
    tree = base / "checkout"
    for name in checkout_files():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tree / name)
    # the build backend pyproject.toml names, as this environment has it (no isolated copy of it)
    pip("wheel", "--no-deps", "--no-build-isolation", "--quiet", "--wheel-dir", base / "dist", tree)
    (wheel,) = (base / "dist").glob("*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=RUN_TIMEOUT_S)
    python = venv / "bin" / "python"
    # This pip, run for the virtualenv's Python, saves putting a pip of its own in it (about 8 s).
    pip("--python", python, "install", "--quiet", "--no-deps", "--no-index", wheel)
    # The dependencies: this environment's folder, named in a .pth file of the virtualenv's own
    # site-packages, so after it on sys.path. A folder a .pth names is not a site folder: the
    # editable install's hook there never runs, and `app` is the wheel's.
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=RUN_TIMEOUT_S,
    ).stdout.strip()
    (Path(site) / "tested-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # the wheel's requirements resolve, with the pins and nothing to fetch, to the tested versions
    pip("--python", python, "install", "--dry-run", "--quiet", "--no-index", "-c", CONSTRAINTS, wheel)
    yield Installed(wheel, venv / "bin", base / "work")


def run_both(installed: Installed, command: list[str], **env: str) -> tuple[Ran, Ran]:
    """``command`` (``autograd-lens ...``, ``autograd-lens-gui`` or ``python ...``) from the virtualenv
    in the folder ``installed/``, and the same from the source tree in ``source/``; both at once."""
    name, *args = command
    from_checkout = {"autograd-lens": ["-m", "app"], "autograd-lens-gui": ["-m", "app", "gui"], "python": []}
    sides = {
        "installed": ([str(installed.bin / name), *args], {}),
        "source": ([sys.executable, *from_checkout[name], *args], {"PYTHONPATH": str(ROOT)}),
    }
    base = {
        k: v for k, v in os.environ.items() if k not in NOT_INHERITED and not k.startswith("AUTOGRAD_LENS_")
    }
    running = []
    for side, (argv, own) in sides.items():
        folder = installed.work / side
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "out.txt").open("wb") as out, (folder / "err.txt").open("wb") as err:
            started = subprocess.Popen(argv, cwd=folder, env={**base, **env, **own}, stdout=out, stderr=err)
        running.append((started, folder))
    ran = []
    for started, folder in running:
        try:
            code = started.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            for other, _ in running:
                other.kill()
            raise
        read = [(folder / f).read_text(encoding="utf-8") for f in ("out.txt", "err.txt")]
        ran.append(Ran(code, *read, folder))
    return ran[0], ran[1]


def write_on_both_sides(installed: Installed, name: str, text: str) -> None:
    for side in ("installed", "source"):
        (installed.work / side).mkdir(parents=True, exist_ok=True)
        (installed.work / side / name).write_text(text, encoding="utf-8")


def succeeded_alike(pair: tuple[Ran, Ran], *, same_stderr: bool = True) -> str:
    """Both runs succeeded with the same output (and the same warnings); that output."""
    mine, theirs = pair
    assert mine.returncode == 0, mine.stderr
    assert theirs.returncode == 0, theirs.stderr
    assert mine.stdout == theirs.stdout
    if same_stderr:
        assert mine.stderr == theirs.stderr
    return mine.stdout


def same_image(a: Path, b: Path) -> QImage:
    image = QImage(str(a))
    assert not image.isNull() and image.width() > 0
    assert image == QImage(str(b)), f"{a} and {b} differ"
    return image


def test_the_wheel_holds_every_module_and_resource_and_no_test(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    files = checkout_files()
    code = {name for name in files if name.startswith("app/")}
    assert {name for name in code if name.endswith(".py")}, "no module listed under app/"
    assert code - names == set()
    shown = {name for name in files if name.startswith("resources/") and not Path(name).name.startswith(".")}
    assert "resources/programs/forgot-retain.toml" in shown
    assert {"autograd_lens_resources/" + name.removeprefix("resources/") for name in shown} - names == set()
    tops = {name.split("/")[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"app", "autograd_lens_resources"}
    not_shipped = re.compile(r"(^|/)(tests?|benchmarks?)/|(^|/)(conftest|test_\w*|\w*_test)\.py$|\.pyc$")
    assert sorted(filter(not_shipped.search, names)) == []


def test_the_installed_package_is_its_own_not_the_checkouts(installed):
    where = subprocess.run(
        [
            installed.bin / "python",
            "-c",
            "import importlib.metadata, app, autograd_lens_resources; "
            "print(app.__file__, autograd_lens_resources.__file__, importlib.metadata.version('torch'))",
        ],
        cwd=installed.wheel.parent,
        env={k: v for k, v in os.environ.items() if k not in NOT_INHERITED},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=True,
    )
    app_file, resources_file, torch_version = where.stdout.split()
    site = installed.bin.parent / "lib"
    assert Path(app_file).is_relative_to(site)
    assert Path(resources_file).is_relative_to(site)
    assert torch_version == importlib.metadata.version("torch")


def test_programs_lists_the_builtins(installed):
    listed = succeeded_alike(run_both(installed, ["autograd-lens", "programs"]))
    assert [line.split()[0] for line in listed.splitlines()] == builtin_names()


def test_trace_json_ends_at_the_error_in_pow_backward(installed):
    report: dict[str, Any] = json.loads(
        succeeded_alike(run_both(installed, ["autograd-lens", "trace", "forgot-retain", "--json"]))
    )
    (failed,) = [call for call in report["calls"] if call["error"] is not None]
    names = {node["id"]: node["name"] for node in report["nodes"]}
    assert names[failed["failed_node"]] == "PowBackward0"
    assert failed["error"] == plain_forgot_retain_error()


def test_trace_saves_a_lens_file_that_trace_reads_back(installed):
    table = succeeded_alike(
        run_both(installed, ["autograd-lens", "trace", "forgot-retain", "--save", "fr.lens"])
    )
    read_back = run_both(installed, ["autograd-lens", "trace", "fr.lens", "--prove-fixes"])
    steps = succeeded_alike(read_back)
    assert "PowBackward0" in steps
    assert table.startswith(steps)  # and then a line saying where it was saved


def test_run_records_a_script_with_a_module(installed):
    write_on_both_sides(installed, "net.py", SCRIPT)
    report: dict[str, Any] = json.loads(
        succeeded_alike(run_both(installed, ["autograd-lens", "run", "--json", "net.py"]))
    )
    plain: dict[str, Any] = {}
    with torch.random.fork_rng():
        exec(compile(SCRIPT, "net.py", "exec"), plain)  # trusted test text: PyTorch as the oracle
    grads = full_states(report)[-1]["grads"]  # the steps carry changes: the state at the end
    for name, parameter in plain["model"].named_parameters():
        torch.testing.assert_close(torch.tensor(grads[f"model.{name}"]), parameter.grad)
    assert {node.get("module") for node in report["nodes"]} >= {"model.0", "model.2"}


def test_export_draws_the_same_pictures(installed, forgot_retain):
    succeeded_alike(
        run_both(installed, ["autograd-lens", "export", "forgot-retain", "--out", "steps", "--format", "png"])
    )
    mine = sorted(p.name for p in (installed.work / "installed" / "steps").glob("*.png"))
    assert mine == [f"step-{i:03d}.png" for i in range(len(forgot_retain.timeline))]
    for name in mine:
        same_image(installed.work / "installed" / "steps" / name, installed.work / "source" / "steps" / name)


def test_lens_record_works_from_python(installed):
    # torch, imported before app, warns from its own (different) path
    printed = json.loads(
        succeeded_alike(run_both(installed, ["python", "-c", LENS_RECORD]), same_stderr=False)
    )
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x.square() * x).sum().backward()
    assert printed["grad"] == x.grad.tolist()
    assert [call["kind"] for call in printed["recording"]["calls"]] == ["backward"]


def test_the_window_saves_its_screenshot(installed):
    mine, theirs = run_both(
        installed,
        ["autograd-lens-gui"],
        QT_QPA_PLATFORM="offscreen",
        AUTOGRAD_LENS_SCREENSHOT="shot.png",
        AUTOGRAD_LENS_SETTINGS="settings.ini",
    )
    assert (mine.returncode, theirs.returncode) == (0, 0), mine.stderr + theirs.stderr
    image = same_image(mine.folder / "shot.png", theirs.folder / "shot.png")
    assert image.width() >= 400 and image.height() >= 300
