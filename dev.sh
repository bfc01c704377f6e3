#!/usr/bin/env bash
# Set up everything Autograd Lens needs, then run it or its tests.
#
#   ./dev.sh run [PROGRAM]   install what is missing, open the window
#   ./dev.sh test [PYTEST ARGS]  install what is missing, run every check and test (on every core)
#
# Installs (only when missing): Graphviz's `dot`, Xvfb and Chromium from Debian/Ubuntu
# packages (apt-get, via sudo when not root), a virtualenv in .venv, and the
# pinned versions from requirements/constraints.txt.
set -euo pipefail
cd "$(dirname "$0")"

want_pkgs=()
command -v dot >/dev/null 2>&1 || want_pkgs+=(graphviz)
if [ "${1:-}" = "test" ] && ! command -v Xvfb >/dev/null 2>&1; then want_pkgs+=(xvfb); fi
# The HTML player's tests open its pages in the system's Chromium (Playwright drives it; no download).
if [ "${1:-}" = "test" ] && ! command -v chromium >/dev/null 2>&1; then want_pkgs+=(chromium); fi
# Libraries Qt's X11 (xcb) platform plugin loads: a real window, and the Xvfb screenshot test.
if command -v dpkg >/dev/null 2>&1; then
  for pkg in libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 \
             libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 libegl1 fontconfig; do
    dpkg -s "$pkg" >/dev/null 2>&1 || want_pkgs+=("$pkg")
  done
fi
if [ ${#want_pkgs[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "dev.sh: installing system packages: ${want_pkgs[*]}" >&2
    $sudo apt-get update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${want_pkgs[@]}" >/dev/null
  else
    echo "dev.sh: please install ${want_pkgs[*]} with your system's package manager" >&2
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.setup-stamp
want=$(cat pyproject.toml setup.py requirements/constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # torch first, alone and pinned: on machines with a local wheel this is seconds,
  # and nothing later may pull a different (multi-GB) build.
  .venv/bin/python -m pip install -q -c requirements/constraints.txt "torch==$(grep -i '^torch==' requirements/constraints.txt | cut -d= -f3)"
  .venv/bin/python -m pip install -q -c requirements/constraints.txt -e ".[test]"
  echo "$want" > "$stamp"
fi

cmd=${1:-run}; shift || true
case "$cmd" in
  run)
    exec .venv/bin/python -m app gui "$@"
    ;;
  test)
    export QT_QPA_PLATFORM=offscreen
    lint=(app tests)
    [ -d benchmarks ] && lint+=(benchmarks)
    .venv/bin/ruff format --check "${lint[@]}"
    .venv/bin/ruff check "${lint[@]}"
    .venv/bin/mypy
    # One worker per core (pytest-xdist; PYTEST_XDIST_AUTO_NUM_WORKERS sets how many). A file's
    # tests run together on one worker, in their order, sharing its module fixtures; `-n 0`
    # after the command runs them all in this process, as plain pytest does. A crashed worker
    # fails the run at once: xdist 3.8 can wait forever when it replaces a crashed worker under
    # `--dist loadfile`.
    exec .venv/bin/python -m pytest -n auto --dist loadfile --max-worker-restart 0 "$@"
    ;;
  *)
    echo "usage: ./dev.sh run [PROGRAM] | ./dev.sh test [PYTEST ARGS]" >&2
    exit 2
    ;;
esac
