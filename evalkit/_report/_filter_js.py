"""The failures table's filters and sorting: inline script, added only when JavaScript runs.

The rows are plain HTML, so a page opened with scripts off still lists every failing case; the script builds the
slice and check selectors and makes the first three headers sort the rows.
"""

FILTER_JS = """
(function () {
  var table = document.getElementById("failures");
  var box = document.getElementById("failure-filters");
  if (!table || !box) return;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  function values(get) {
    var seen = {};
    rows.forEach(function (r) { get(r).forEach(function (v) { seen[v] = true; }); });
    return Object.keys(seen).sort();
  }
  function select(label, options) {
    var l = document.createElement("label");
    l.textContent = label + " ";
    var s = document.createElement("select");
    var all = document.createElement("option");
    all.value = ""; all.textContent = "all";
    s.appendChild(all);
    options.forEach(function (v) {
      var o = document.createElement("option");
      o.value = v; o.textContent = v; s.appendChild(o);
    });
    l.appendChild(s); box.appendChild(l);
    return s;
  }
  var slice = select("slice", values(function (r) { return [r.getAttribute("data-slice")]; }));
  var check = select("check", values(function (r) { return JSON.parse(r.getAttribute("data-checks")); }));
  var shown = document.createElement("span");
  box.appendChild(shown);
  function apply() {
    var n = 0;
    rows.forEach(function (r) {
      var ok = (!slice.value || r.getAttribute("data-slice") === slice.value) &&
        (!check.value || JSON.parse(r.getAttribute("data-checks")).indexOf(check.value) >= 0);
      r.style.display = ok ? "" : "none";
      if (ok) n++;
    });
    shown.textContent = n + " of " + rows.length + " shown";
  }
  slice.onchange = apply; check.onchange = apply;
  var dir = {};
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    if (!th.classList.contains("sort")) return;
    th.title = "sort";
    th.onclick = function () {
      var col = +th.getAttribute("data-col");
      dir[col] = -(dir[col] || -1);
      rows.sort(function (a, b) {
        var x = a.cells[col].textContent, y = b.cells[col].textContent;
        return dir[col] * (x < y ? -1 : x > y ? 1 : 0);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    };
  });
  apply();
})();
"""
