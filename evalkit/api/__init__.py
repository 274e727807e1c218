"""The front door: the one place a run is put together, then summarised, reported and gated.

``evalkit run``, ``evalkit gate`` and ``evalkit report``, the live probes and a notebook all call these, so a
notebook's gate and CI's gate give one answer on one run.

```python
import evalkit as ek
run = ek.run("goldens/support-triage", "baseline")
run.pass_rate(by="slice")
```
"""

from evalkit._lazy import INTERNAL, attach
from evalkit.api._compare import RunComparison
from evalkit.api._execute import estimate, resume, run, run_async
from evalkit.api._gate import gate
from evalkit.api._history import history
from evalkit.api._html import HTMLReport
from evalkit.api._merge import merge_runs
from evalkit.api._run import Run, load_run
from evalkit.api._runs import runs

if INTERNAL:
    from evalkit.api._ab import rank_runs
    from evalkit.api._changes import setup_changes
    from evalkit.api._execute import as_run_system, prepare, suite_judge
    from evalkit.api._reference import committed_baseline
    from evalkit.api._stored import republish

__getattr__, __dir__, __all__ = attach(__name__, __file__)
