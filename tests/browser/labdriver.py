"""Driving JupyterLab in Chromium: open a notebook, run it, read its errors, take a screenshot."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@dataclass
class Lab:
    root: Path
    url: str
    token: str

    def notebook_url(self, name: str) -> str:
        # reset: the lab's saved workspace would reopen every notebook an earlier test opened, and one of them
        # could be the current tab
        return f"{self.url}/lab/tree/{name}?reset&token={self.token}"


CHROMIUM = os.environ.get("EVALKIT_CHROMIUM", "/usr/bin/chromium")
# what the workplace's closed network needs: no background fetches, no update checks, no sandbox as root
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def start_lab(root: Path, home: Path) -> Iterator[Lab]:
    """`jupyter lab` serving `root` on a free loopback port, with a random token; config and logs under `home`."""
    settings = home / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    # the news prompt asks to fetch from the internet: answered "no" up front
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
    )
    env.pop("ANTHROPIC_API_KEY", None)
    log = (home / "lab.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={token}",
            "--LabApp.expose_app_in_browser=True",
            f"--LabApp.workspaces_dir={home / 'workspaces'}",
            f"--ServerApp.root_dir={root}",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    try:
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"jupyter lab did not start; see {home / 'lab.log'}") from None
                time.sleep(0.3)
        yield Lab(root, url, token)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


KERNEL_STATUS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const s = w && w.sessionContext && w.sessionContext.session;
  return s && s.kernel ? s.kernel.status : null;
}"""


def open_notebook(page: Any, lab: Lab, name: str, timeout_s: float = 120) -> None:
    """Open a notebook and wait until its kernel is idle."""
    page.goto(lab.notebook_url(name))
    opened = f"""() => {{
      const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
      return !!(w && w.context && w.context.path === {name!r} && ({KERNEL_STATUS})() === 'idle');
    }}"""
    page.wait_for_function(opened, timeout=timeout_s * 1000)


def run_all(page: Any, timeout_s: float = 300) -> None:
    """Run every cell and wait until the kernel has finished them all, or one has raised (run-all stops there)."""
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # read from the notebook's model: JupyterLab draws only the cells in view, so the page lacks the others
    page.wait_for_function(
        f"""() => {{
          if (({KERNEL_STATUS})() !== 'idle') return false;
          const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
          let ran = true;
          for (let i = 0; i < cells.length; i++) {{
            const cell = cells.get(i);
            if (cell.type !== 'code') continue;
            for (let j = 0; j < cell.outputs.length; j++) {{
              if (cell.outputs.get(j).toJSON().output_type === 'error') return true;
            }}
            if (cell.executionCount === null) ran = false;
          }}
          return ran;
        }}""",
        timeout=timeout_s * 1000,
    )


def error_outputs(page: Any) -> list[str]:
    """Every error output of the open notebook (from its model: stderr text such as a warning is not one)."""
    return page.evaluate(
        """() => {
          const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
          const errors = [];
          for (let i = 0; i < cells.length; i++) {
            const cell = cells.get(i);
            if (cell.type !== 'code') continue;
            for (let j = 0; j < cell.outputs.length; j++) {
              const out = cell.outputs.get(j).toJSON();
              if (out.output_type === 'error') errors.push(`cell ${i}: ${out.ename}: ${out.evalue}`);
            }
          }
          return errors;
        }"""
    )


def cell_count(page: Any) -> int:
    return int(page.evaluate("window.jupyterapp.shell.currentWidget.content.model.cells.length"))


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path
