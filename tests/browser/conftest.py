"""JupyterLab and headless Chromium for the browser tests, always shut down.

The tests need Debian's ``chromium`` (``/usr/bin/chromium``, no browser download) and
Playwright for Python. Without them the tests are skipped, loudly; with
``WORKBENCH_REQUIRE_BROWSER=1`` (set by ``.ci/run``) a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("WORKBENCH_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"


def _missing() -> str:
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed"
    return ""


def pytest_collection_modifyitems(config, items):
    why = _missing()
    if not why:
        return
    if os.environ.get("WORKBENCH_REQUIRE_BROWSER") == "1":
        raise pytest.UsageError(f"browser tests required (WORKBENCH_REQUIRE_BROWSER=1) but {why}")
    for item in items:
        if "browser" in str(item.fspath):
            item.add_marker(pytest.mark.skip(reason=f"BROWSER TESTS SKIPPED: {why}"))


def pytest_terminal_summary(terminalreporter):
    why = _missing()
    if why:
        terminalreporter.write_sep("!", f"browser tests skipped: {why}", red=True, bold=True)


def _terminate(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """A JupyterLab server on a free loopback port, with a token and throwaway settings, over a copy of notebooks/."""
    work = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", work / "notebooks")
    port, token = _free_port(), uuid.uuid4().hex
    tracker = work / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text('{"windowingMode": "none"}')  # every cell in the DOM, so the test can see all outputs
    news = work / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text('{"fetchNews": "false", "checkForUpdates": false}')  # no network, no pop-up
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(work / "config"), "JUPYTER_RUNTIME_DIR": str(work / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(work / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(work / "workspaces"),
           "WORKBENCH_DB": str(work / "progress.sqlite3")}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work / 'notebooks'}",
           "--ServerApp.disable_check_xsrf=False", "--LabApp.expose_app_in_browser=True",
           "--LabApp.news_url=", "--LabServerApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    log = open(work / "lab.log", "w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"JupyterLab did not start; see {work / 'lab.log'}:\n"
                                       + (work / "lab.log").read_text()[-3000:]) from None
                time.sleep(0.5)
        def shutdown_kernels() -> None:
            """Stop every kernel the notebooks started (the next notebook gets the CPU)."""
            sessions = json.loads(urllib.request.urlopen(f"{base}/api/sessions?token={token}", timeout=10).read())
            for s in sessions:
                req = urllib.request.Request(f"{base}/api/sessions/{s['id']}?token={token}", method="DELETE")
                urllib.request.urlopen(req, timeout=30)

        previous = signal.signal(signal.SIGTERM, _terminate)  # a killed run still cleans up
        try:
            yield {"base": base, "token": token, "root": work / "notebooks", "shutdown_kernels": shutdown_kernels}
        finally:
            signal.signal(signal.SIGTERM, previous)
    finally:  # the server and its kernels, whatever happened
        for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
            try:
                os.killpg(proc.pid, sig)
                proc.wait(timeout=wait)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
        log.close()


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium driven by Playwright; closed whatever happens."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield b
        finally:
            b.close()
