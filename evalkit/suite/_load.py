"""Loading a suite: read its files, collect every problem with its file and line, and the warnings."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from evalkit.errors import EvalkitError, Problem, SuiteValidationError
from evalkit.suite._cases import read_cases
from evalkit.suite._checks import SchemaCheck, SqlRowsMatchCheck, UserCheck
from evalkit.suite._registry import IMPORT_TIMEOUT_FACTOR, UserModule, load_user_module, probe_user_module
from evalkit.suite._schemas import load_schema_file, schema_problems, schema_warnings
from evalkit.suite._settings import SuiteConfig, read_config
from evalkit.suite._suite import Suite
from evalkit.suite._tools_file import load_tools_file


def _model_id_warnings(config: SuiteConfig, shown: str, lines: dict[str, int]) -> list[Problem]:
    """An undated alias (name the dated id to pin), or an id nobody knows (its cost will be unknown)."""
    from evalkit._client import DEFAULT_PRICES, PINNED_IDS, current_prices, sdk_model_ids

    try:
        prices = current_prices()
    except EvalkitError:  # a broken EVALKIT_PRICES file is reported where prices are used
        prices = DEFAULT_PRICES
    out: list[Problem] = []
    for fld, name in (("model.name", config.model.name), ("judge.model", config.judge.model)):
        key = fld.split(".")[1]
        line = lines.get(fld)
        dated = PINNED_IDS.get(name)
        if dated:
            out.append(
                Problem(
                    shown,
                    line,
                    fld,
                    f"{name!r} is an undated alias: the snapshot behind it can change, and the results with it",
                    f'pin the dated id: {key} = "{dated[-1]}"',
                )
            )
        elif name not in prices and name not in sdk_model_ids():
            out.append(
                Problem(
                    shown,
                    line,
                    fld,
                    f"{name!r} is in neither the price table nor the anthropic SDK's model list: "
                    "its cost will be unknown",
                    "check the spelling; if the id is right, price it in a file named by EVALKIT_PRICES "
                    "(see evalkit/_client/_pricing.py)",
                )
            )
    return out


def _cross_check(suite: Suite, lines: dict[str, int], shown: str, user_error: str | None) -> list[Problem]:
    problems: list[Problem] = []
    for case in suite.cases:
        line = lines.get(case.id)
        for i, chk in enumerate(case.checks):
            where = f"checks[{i}]"
            problems.extend(
                Problem(shown, line, f"{where}.{key}", msg, hint)
                for key, msg, hint in chk.input_problems(case.input)
            )
            if isinstance(chk, UserCheck):
                if suite.user is None:
                    hint = (
                        user_error
                        or "set checks = 'checks.py' in suite.toml and register it with @evalkit.check"
                    )
                    problems.append(
                        Problem(shown, line, f"{where}.name", f"user check {chk.name!r} not found", hint)
                    )
                elif suite.user.lookup(chk.name) is None:
                    known = ", ".join(sorted(suite.user.checks)) or "none"
                    problems.append(
                        Problem(
                            shown,
                            line,
                            f"{where}.name",
                            f"user check {chk.name!r} is not registered (registered: {known})",
                            f"add @evalkit.check({chk.name!r}) in {suite.user.path.name}",
                        )
                    )
            elif isinstance(chk, SchemaCheck):
                if chk.model is not None:
                    obj = suite.user.model(chk.model) if suite.user else None
                    if not (isinstance(obj, type) and issubclass(obj, BaseModel)):
                        problems.append(
                            Problem(
                                shown,
                                line,
                                f"{where}.model",
                                f"no pydantic model {chk.model!r} in the suite's checks file",
                                "define it in checks.py",
                            )
                        )
                elif chk.json_schema is not None:
                    problems.extend(
                        Problem(
                            shown, line, f"{where}.schema" + ("" if at == "(schema)" else f"/{at}"), msg, hint
                        )
                        for at, msg, hint in schema_problems(chk.json_schema)
                    )
                elif suite.output_schema is None:
                    problems.append(
                        Problem(
                            shown,
                            line,
                            where,
                            "schema check with no schema",
                            "give 'schema' in the check or output_schema in suite.toml",
                        )
                    )
            elif isinstance(chk, SqlRowsMatchCheck) and not suite.resolve(chk.fixture).exists():
                problems.append(
                    Problem(
                        shown,
                        line,
                        f"{where}.fixture",
                        f"fixture {chk.fixture!r} not found",
                        f"paths are relative to {suite.base_dir}",
                    )
                )
    return problems


def _system_warnings(config: SuiteConfig, root: Path, toml_lines: dict[str, int]) -> list[Problem]:
    """What `evalkit run` without --system would stumble on, found without importing anything."""
    shown, line = str(root / "suite.toml"), toml_lines.get("default_system")
    found: list[Problem] = []
    prompt = root / config.prompt
    if prompt.exists() and not prompt.read_text(encoding="utf-8").strip():
        found.append(Problem(str(prompt), None, "(prompt)", "the prompt is empty", "write the system prompt"))
    spec = config.default_system
    if spec == "claude" and not prompt.exists():
        found.append(
            Problem(
                shown, line, "default_system", f"is claude, but {prompt} is not there", "write the prompt"
            )
        )
    elif spec == "baseline" and "default_system" in toml_lines and not (root / config.baseline).exists():
        found.append(
            Problem(
                shown,
                line,
                "default_system",
                f"is baseline, but {root / config.baseline} is not there",
                "add the file, or name another system",
            )
        )
    elif spec not in ("claude", "baseline"):
        target = spec.rsplit(":", 1)[0] if ":" in spec else ""
        if not target:
            found.append(
                Problem(
                    shown,
                    line,
                    "default_system",
                    f"{spec!r} is not a system",
                    "use baseline, claude, module:function or path/file.py:function",
                )
            )
        elif target.endswith(".py") and not (root / target).exists() and not Path(target).is_absolute():
            found.append(
                Problem(
                    shown,
                    line,
                    "default_system",
                    f"{root / target} is not there",
                    "fix the path (it is read from the suite's folder)",
                )
            )
    return found


def _import_checks(path: Path, limit: float) -> tuple[UserModule | None, str | None]:
    """Import a suite's checks file; (module, None), or (None, what went wrong).

    With a time limit the file is imported in a forked child first: one that calls os._exit or loops at
    import cannot end or hang this process. Then it is imported here, where its checks are used.
    """
    if limit > 0:
        failed = probe_user_module(path, timeout_s=limit * IMPORT_TIMEOUT_FACTOR)
        if failed:
            return None, f"{path.name}: {failed}"
    try:
        return load_user_module(path), None
    except (Exception, SystemExit) as exc:
        # sys.exit() at import must not end validate with its code and no word
        return None, f"{path.name}: failed to import: {type(exc).__name__}: {exc}"


def validate_suite(path: str | Path) -> tuple[Suite | None, list[Problem]]:
    """Load a suite folder or .jsonl file and collect every problem; never raises for bad input."""
    p = Path(path)
    if p.is_dir():
        root: Path | None = p
        cases_file = p / "cases.jsonl"
        if not cases_file.exists():
            return None, [
                Problem(str(p), None, "(suite)", "no cases.jsonl in this folder", "add one case per line")
            ]
        read = read_config(p)
        config, problems, toml_lines = read.config, read.problems, read.lines
        config_warnings = (
            [] if config is None else _model_id_warnings(config, str(p / "suite.toml"), toml_lines)
        )
    elif p.suffix == ".jsonl" and p.exists():
        root, cases_file = None, p
        config, problems = SuiteConfig(name=p.stem), []
        config_warnings, toml_lines = [], {}
    else:
        hint = "give a suite folder (goldens/<name>/) or a .jsonl file"
        return None, [Problem(str(p), None, "(path)", "not found" if not p.exists() else "not a suite", hint)]

    shown = str(cases_file)
    numbered, case_problems = read_cases(cases_file, shown)
    problems.extend(case_problems)
    if config is None:
        return None, problems

    base = root if root is not None else cases_file.parent
    schema = None
    if config.output_schema:
        schema, found = load_schema_file(base / config.output_schema)
        problems.extend(found)
    tools = None
    tools_rel = config.tools or (
        "tools.json" if root is not None and (base / "tools.json").exists() else None
    )
    if tools_rel:
        tools, found = load_tools_file(base / tools_rel)
        problems.extend(found)
    tool_module = None
    if tools is not None and root is not None and (base / "tools.py").exists():
        tool_module, tools_error = _import_checks(base / "tools.py", config.check_timeout_s)
        if tools_error:
            problems.append(Problem(str(base / "tools.py"), None, "(import)", tools_error, "fix the file"))
    user = None
    user_error = None
    checks_rel = config.checks or (
        "checks.py" if (base / "checks.py").exists() and root is not None else None
    )
    if checks_rel:
        checks_path = base / checks_rel
        if not checks_path.exists():
            problems.append(
                Problem(
                    str(base / "suite.toml"),
                    toml_lines.get("checks"),
                    "checks",
                    "file not found",
                    "fix the path",
                )
            )
        else:
            user, user_error = _import_checks(checks_path, config.check_timeout_s)
            if user_error:
                problems.append(Problem(str(checks_path), None, "(import)", user_error, "fix the file"))

    lines = {c.id: n for n, c in numbered}
    suite = Suite(
        config=config,
        cases=[c for _, c in numbered],
        cases_file=cases_file,
        root=root,
        output_schema=schema,
        user=user,
        lines=lines,
        tools=tools,
        tool_module=tool_module,
    )
    problems.extend(_cross_check(suite, lines, shown, user_error))
    problems.extend(_tool_names(suite, lines, shown, tools_rel))
    suite.warnings = list(config_warnings)
    if root is not None:
        suite.warnings.extend(_system_warnings(config, root, toml_lines))
    if schema is not None and config.output_schema and not problems:
        suite.warnings.extend(schema_warnings(schema, str(base / config.output_schema)))
    return (suite if not problems else None), _in_reading_order(problems)


def _tool_names(suite: Suite, lines: dict[str, int], shown: str, tools_file: str | None) -> list[Problem]:
    """A recorded tool result or a tool check naming a tool the suite does not declare."""
    names = {t["name"] for t in suite.tools or []}
    if suite.tools is None and tools_file:
        return []  # the tools file itself is wrong: said already
    fix = f"declare it in {tools_file}" if tools_file else "declare the suite's tools in tools.json"
    out = []
    for case in suite.cases:
        for j, recorded in enumerate(case.tool_results):
            if recorded.tool not in names:
                out.append(
                    Problem(
                        shown,
                        lines.get(case.id),
                        f"tool_results[{j}].tool",
                        f"no tool {recorded.tool!r}",
                        fix,
                    )
                )
        if suite.tools is None:
            continue
        for i, check in enumerate(case.checks):
            for tool in [getattr(check, "tool", None), *getattr(check, "tools", [])]:
                if (
                    isinstance(tool, str)
                    and check.kind.startswith(("tool_", "max_tool"))
                    and tool not in names
                ):
                    out.append(
                        Problem(shown, lines.get(case.id), f"checks[{i}].tool", f"no tool {tool!r}", fix)
                    )
    return out


def _in_reading_order(problems: list[Problem]) -> list[Problem]:
    """Problems file by file (in the order files were read), line by line: checks made across cases (unknown
    user checks, duplicate ids) come after the line-by-line pass, but are listed at their line."""
    files: dict[str, int] = {}
    for problem in problems:
        files.setdefault(problem.path, len(files))
    return sorted(problems, key=lambda p: (files[p.path], -1 if p.line is None else p.line))


def load_suite(path: str | Path) -> Suite:
    """Load a valid suite, or raise SuiteValidationError carrying every problem."""
    suite, problems = validate_suite(path)
    if problems or suite is None:
        raise SuiteValidationError(problems)
    return suite
