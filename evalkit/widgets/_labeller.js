// The labeller's front end: one output at a time, keyboard first. Every action goes to Python, which saves it.
const KEYS = { p: "pass", f: "fail", s: "skip", j: "next", ArrowRight: "next", k: "back", ArrowLeft: "back" };
const MARK = { true: "✓", false: "✗", null: "·" };

function text(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function node(tag, cls, content) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (content !== undefined) el.textContent = content;
  return el;
}

function render({ model, el }) {
  el.classList.add("ek-labeller");
  // JupyterLab leaves keys alone inside an element carrying this attribute: `a`, `j` or `m` would
  // otherwise insert cells or turn the cell into Markdown
  el.setAttribute("data-lm-suppress-shortcuts", "true");
  el.tabIndex = 0;

  const head = node("div", "ek-head");
  const meta = node("div", "ek-meta");
  const panes = node("div", "ek-panes");
  const inputPane = node("pre", "ek-pane ek-input");
  const outputPane = node("pre", "ek-pane ek-output");
  panes.append(inputPane, outputPane);
  const rubric = node("ol", "ek-rubric");
  const judge = node("div", "ek-judge");
  const buttons = node("div", "ek-buttons");
  const reason = node("textarea", "ek-reason");
  reason.placeholder = "reason (press r to write, Esc to go back to the keys)";
  reason.rows = 2;
  const hints = node(
    "div",
    "ek-hints",
    "keys: p pass · f fail · s skip · 1–9 toggle a criterion · j/→ next · k/← back · r reason",
  );
  const status = node("div", "ek-status");
  for (const [label, action, key] of [
    ["Pass", "pass", "p"],
    ["Fail", "fail", "f"],
    ["Skip", "skip", "s"],
    ["← Back", "back", "k"],
    ["Next →", "next", "j"],
  ]) {
    const b = node("button", `ek-btn ek-${action}`, `${label} (${key})`);
    b.dataset.action = action;
    b.addEventListener("click", () => {
      model.send({ action });
      el.focus();
    });
    buttons.append(b);
  }
  el.append(head, meta, panes, rubric, judge, buttons, reason, hints, status);

  function draw() {
    const item = model.get("item") || {};
    const label = model.get("label") || {};
    const total = model.get("total");
    head.textContent = `${model.get("labelled")} / ${total} labelled · item ${Math.min(model.get("index") + 1, total)} of ${total}`;
    const kappa = model.get("kappa");
    if (kappa) head.textContent += ` · ${kappa}`;
    if (!item.case_id) {
      meta.textContent = "nothing to label";
      return;
    }
    meta.textContent = `${item.case_id} · ${item.check} · slice ${item.slice}`;
    const verdict = label.passed === true ? "pass" : label.passed === false ? "fail" : label.skipped ? "skipped" : "";
    meta.dataset.verdict = verdict;
    if (verdict) meta.textContent += ` · you said ${verdict}`;
    inputPane.textContent = text(item.input);
    outputPane.textContent = text(item.output);
    rubric.replaceChildren();
    const marks = label.criteria || [];
    (item.rubric || []).forEach((criterion, i) => {
      const li = node("li", "ek-criterion");
      const met = marks[i] === undefined ? null : marks[i];
      li.dataset.met = String(met);
      li.textContent = `${MARK[met]} ${criterion}`;
      li.addEventListener("click", () => model.send({ action: "toggle", criterion: i }));
      rubric.append(li);
    });
    judge.textContent =
      item.judge_passed === null || item.judge_passed === undefined
        ? "judge: not run on this output"
        : `judge: ${item.judge_passed ? "pass" : "fail"}${item.judge_reasoning ? " — " + item.judge_reasoning : ""}`;
    if (document.activeElement !== reason) reason.value = label.reason || "";
    status.textContent = model.get("message");
  }

  el.addEventListener("keydown", (e) => {
    if (e.target === reason) {
      if (e.key === "Escape") {
        el.focus();
        e.preventDefault();
      }
      e.stopPropagation();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    let handled = true;
    if (KEYS[e.key]) model.send({ action: KEYS[e.key] });
    else if (/^[1-9]$/.test(e.key)) model.send({ action: "toggle", criterion: Number(e.key) - 1 });
    else if (e.key === "r") reason.focus();
    else handled = false;
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
    }
  });
  reason.addEventListener("change", () => model.send({ action: "reason", text: reason.value }));

  for (const name of ["item", "label", "index", "total", "labelled", "kappa", "message"]) {
    model.on(`change:${name}`, draw);
  }
  draw();
}

export default { render };
