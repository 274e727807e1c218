"""Driving JupyterLab in Chromium: open a notebook, run it, read its errors, take a screenshot."""

from __future__ import annotations

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
        return f"{self.url}/lab/tree/{name}?token={self.token}"


KERNEL_STATUS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const s = w && w.sessionContext && w.sessionContext.session;
  return s && s.kernel ? s.kernel.status : null;
}"""


def open_notebook(page: Any, lab: Lab, name: str, timeout_s: float = 120) -> None:
    """Open a notebook and wait until its kernel is idle."""
    page.goto(lab.notebook_url(name))
    page.wait_for_function(f"({KERNEL_STATUS})() === 'idle'", timeout=timeout_s * 1000)


def run_all(page: Any, timeout_s: float = 300) -> None:
    """Run every cell and wait until the kernel has finished them all."""
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # busy first, then idle with no cell still queued ("[*]")
    page.wait_for_function(
        f"""() => {{
          const status = ({KERNEL_STATUS})();
          const prompts = [...document.querySelectorAll('.jp-InputPrompt')].map(p => p.textContent);
          return status === 'idle' && prompts.length > 0 && prompts.every(t => !t.includes('*') && /\\d/.test(t) || t.trim() === '');
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
