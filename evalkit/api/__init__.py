"""The notebook API: run a suite, read a run, compare two runs, show the report.

```python
import evalkit as ek
run = ek.run("goldens/support-triage", "baseline")
run.pass_rate(by="slice")
```
"""

from evalkit.api._changes import setup_changes
from evalkit.api._compare import RunComparison
from evalkit.api._execute import as_run_system, run, run_async
from evalkit.api._history import history
from evalkit.api._html import HTMLReport
from evalkit.api._run import Run, load_run
from evalkit.api._runs import runs

__all__ = [
    "HTMLReport",
    "Run",
    "RunComparison",
    "as_run_system",
    "history",
    "load_run",
    "run",
    "run_async",
    "runs",
    "setup_changes",
]
