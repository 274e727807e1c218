"""Render the README's pictures from the real notebooks: each runs in JupyterLab in Chromium, and the output of
its cell tagged ``readme-picture`` is captured as ``docs/pictures/<notebook>.png``.

    .venv/bin/python docs/pictures/render.py            # every notebook
    .venv/bin/python docs/pictures/render.py 02_run     # the notebooks whose name starts so

Offline, as the notebooks are by default; the pictures show what a new user sees on the shipped data.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from labdriver import CHROMIUM, CHROMIUM_ARGS, error_outputs, open_notebook, run_all, start_lab  # noqa: E402

OUT = Path(__file__).resolve().parent
TAG = "readme-picture"


def tagged_cell(notebook: Path) -> int | None:
    """The index of the notebook's cell tagged readme-picture, if it has one."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return next((i for i, c in enumerate(cells) if TAG in c.get("metadata", {}).get("tags", [])), None)


def main(prefixes: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    notebooks = [
        p
        for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
        if not prefixes or any(p.stem.startswith(x) for x in prefixes)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "lab", Path(tmp) / "home"
        shutil.copytree(ROOT / "notebooks", root / "notebooks")
        shutil.copytree(ROOT / "goldens", root / "goldens")
        with start_lab(root, home) as lab, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for notebook in notebooks:
                index = tagged_cell(notebook)
                if index is None:
                    print(f"{notebook.name}: no cell tagged {TAG}; skipped")
                    continue
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                open_notebook(page, lab, f"notebooks/{notebook.name}")
                run_all(page)
                errors = error_outputs(page)
                if errors:
                    print(f"{notebook.name}: {errors}", file=sys.stderr)
                    return 1
                output = page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-Cell-outputWrapper")
                output.scroll_into_view_if_needed()
                page.wait_for_timeout(1500)  # charts draw after the kernel is idle
                target = OUT / f"{notebook.stem}.png"
                output.screenshot(path=str(target))
                print(f"{notebook.name}: {target.relative_to(ROOT)}")
                page.close()
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
