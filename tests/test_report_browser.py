"""The report page in headless Chromium at 1400 and 800 px: nothing spills out of the page sideways, and
every "not reproduced" verdict is on screen without a click or a sideways scroll.

Skipped where Chromium is not installed (CI does not depend on it): `apt-get install chromium`.
"""
from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess

import pytest

CHROMIUM = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(name)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs chromium (apt-get install chromium)")

# Appended to a copy of the page: after the figures are drawn, list what sticks out on the right
# of the viewport without being inside a horizontally scrolling box (tables scroll in their own box).
MEASURE = """
<script>
setTimeout(function () {
  var width = document.documentElement.clientWidth, out = [];
  function scrolls(el) {
    for (var p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden') return true;
    }
    return false;
  }
  document.querySelectorAll('body *').forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.width && r.right > width + 1 && !scrolls(el)) {
      out.push(el.tagName.toLowerCase() + '.' + (el.className && el.className.baseVal === undefined ? el.className : '')
               + ' right=' + Math.round(r.right));
    }
  });
  var figures = Array.prototype.map.call(document.querySelectorAll('figure'), function (f) {
    var svg = f.querySelector('.vega svg, .svg svg');
    return svg ? Math.round(svg.getBoundingClientRect().width) / Math.round(f.getBoundingClientRect().width) : null;
  });
  // The smallest text of each figure as drawn (its font size times the figure's scale), in CSS px.
  var fonts = Array.prototype.map.call(document.querySelectorAll('figure .vega svg'), function (svg) {
    var box = svg.viewBox && svg.viewBox.baseVal, scale = box && box.width ? svg.getBoundingClientRect().width / box.width : 1;
    var sizes = Array.prototype.map.call(svg.querySelectorAll('text'), function (t) {
      return parseFloat(getComputedStyle(t).fontSize) || parseFloat(t.getAttribute('font-size'));
    }).filter(function (s) { return s > 0; });
    return sizes.length ? Math.round(10 * Math.min.apply(null, sizes) * scale) / 10 : null;
  });
  // A verdict cell is hidden when a closed <details> holds it, when it lies right of the window, or when a
  // box that clips (a scroll box) cuts it off in either direction: then a reader must click or scroll sideways.
  function hidden(el) {
    if (el.closest('details:not([open])')) return 'in a closed details';
    var r = el.getBoundingClientRect();
    if (!r.width || !r.height) return 'not drawn';
    if (r.left < 0 || r.right > width + 1) return 'outside the window: left=' + Math.round(r.left) + ' right=' + Math.round(r.right);
    for (var p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      var s = getComputedStyle(p);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      var b = p.getBoundingClientRect();
      if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1)
        return 'cut off by ' + p.tagName.toLowerCase() + '.' + p.className;
    }
    return null;
  }
  var notReproduced = [], hiddenCells = [];
  document.querySelectorAll('td.verdict').forEach(function (td) {
    if (!/^not reproduced/i.test(td.textContent.trim())) return;
    var inFindings = !!td.closest('#audit-table');
    notReproduced.push(inFindings ? 'findings' : 'section');
    var why = hidden(td);
    if (why) hiddenCells.push((td.closest('section') || {}).id + ': ' + td.parentElement.textContent.slice(0, 80) + ' — ' + why);
  });
  var pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify({viewport: width, scrollWidth: document.documentElement.scrollWidth,
                                    overflowing: out.slice(0, 20), figures: figures, fonts: fonts,
                                    not_reproduced: notReproduced, hidden_verdicts: hiddenCells.slice(0, 20)});
  document.body.appendChild(pre);
}, 8000);
</script>
"""  # noqa: E501 (code in a string, kept as it runs)


def probe(page_path, tmp_path, script: str, pre_id: str, width: int = 1400, *options: str) -> dict:
    """The page with `script` appended before its last </body> (the bundle's JS may hold the string), run in
    headless Chromium at `width` x 1000 px; the JSON the script wrote into <pre id=pre_id>."""
    copy = tmp_path / f"{pre_id}_{width}.html"
    head, tail = page_path.read_text().rsplit("</body>", 1)
    copy.write_text(head + script + "</body>" + tail)
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                          f"--window-size={width},1000", "--virtual-time-budget=15000", *options,
                          "--dump-dom",
                          copy.as_uri()], capture_output=True, text=True, timeout=300).stdout
    found = re.search(rf'<pre id="{pre_id}">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def measure(page_path, tmp_path, width: int) -> dict:
    return probe(page_path, tmp_path, MEASURE, "measured", width)


@pytest.mark.parametrize("width", [1400, 800])
def test_report_fits_the_window(smoke_all, tmp_path, width):
    measured = measure(smoke_all.results() / "report.html", tmp_path, width)
    assert measured["viewport"] <= width
    assert measured["scrollWidth"] <= measured["viewport"], measured
    assert measured["overflowing"] == [], measured
    # every figure drawn; one wider than a narrow window scrolls inside its frame (checked above) rather
    # than shrinking: its smallest text stays at least 10 px at both widths (it used to be about 6 px at 800;
    # the figures set 11 px and up: costlab.report.charts.FONT_SIZES)
    assert measured["figures"] and all(f is not None for f in measured["figures"]), measured
    assert measured["fonts"] and min(measured["fonts"]) >= 10, measured["fonts"]
    # figures use the page's width (they used to sit at about 60 % of it at 1400 px)
    ratios = sorted(measured["figures"])
    assert ratios[len(ratios) // 2] >= 0.8, measured
    # Nothing that decides is hidden: every "not reproduced" cell, in the findings table and in the studies'
    # verdict tables, is on screen without a click (no closed details) or a sideways scroll (no clipping box).
    assert measured["hidden_verdicts"] == [], measured["hidden_verdicts"]
    with (smoke_all.results() / "findings.csv").open(newline="") as handle:
        expected = sum((row["verdict"] or "").startswith("not reproduced") for row in csv.DictReader(handle))
    assert measured["not_reproduced"].count("findings") == expected, measured["not_reproduced"]


# The end of a probe: its `out` as JSON in <pre id=pre_id>, where probe() reads it.
_WRITE_OUT = """  var pre = document.createElement('pre');
  pre.id = '{pre_id}';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
"""


# Appended to a copy of the page: use the audit table's filters and sort as a reader would, then report
# what is shown. Chromium runs with every host name unresolvable: the page works with no network.
FILTER_PROBE = """
<script>
setTimeout(function () {
  var table = document.getElementById('audit-table'), controls = document.getElementById('audit-controls');
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  function visible() { return rows.filter(function (r) { return !r.hidden; }); }
  function choose(name, value) {
    var select = controls.querySelector('select[name=' + name + ']');
    select.value = value;
    select.dispatchEvent(new Event('change'));
  }
  var out = {controls_shown: !controls.hidden, total: rows.length};
  choose('study', 'arraygrowth');
  out.study = visible().map(function (r) { return r.getAttribute('data-filter-study'); });
  choose('verdict', 'reproduced');
  out.study_and_verdict = visible().map(function (r) { return r.cells[0].textContent + '|' + r.cells[1].firstChild.textContent; });  // the verdict, not its risk under it
  out.shown_text = document.getElementById('audit-shown').textContent;
  choose('study', ''); choose('verdict', '');
  out.all_shown = visible().length;
  table.tHead.rows[0].cells[5].click();   // ratio, ascending
  out.ratios = Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[5].getAttribute('data-sort'); });
  var claims = document.querySelectorAll('#claims table.claims-table tr');
  out.claims = Array.prototype.map.call(claims, function (r) { return r.cells[0].textContent; });
  var first = document.querySelector('#claims table.claims-table td.verdict').getBoundingClientRect();
  out.first_claim_top = Math.round(first.top);
  var yours = document.getElementById('your-schema');
  out.your_schema_bottom = yours ? Math.round(yours.getBoundingClientRect().bottom) : null;
}, 3000);
</script>
""".replace("}, 3000);", _WRITE_OUT.format(pre_id="filtered") + "}, 3000);")  # noqa: E501 (code in a string, kept as it runs)


def test_the_audit_table_filters_and_sorts_offline_and_the_claims_come_first(smoke_all, tmp_path):
    # every host name unresolvable: the page works with no network
    out = probe(smoke_all.results() / "report.html", tmp_path, FILTER_PROBE, "filtered", 1400,
                "--host-resolver-rules=MAP * ~NOTFOUND")
    with (smoke_all.results() / "findings.csv").open(newline="") as handle:
        # the audit holds every row but your variants' ("Your schema" opens the page with them)
        rows = [r for r in csv.DictReader(handle) if r["kind"] != "user variant"]
    arraygrowth = [r for r in rows if r["study"] == "arraygrowth"]
    assert out["controls_shown"] and out["total"] == len(rows)
    assert out["study"] == ["arraygrowth"] * len(arraygrowth) and arraygrowth
    reproduced = [r for r in arraygrowth if r["verdict"] == "reproduced"]
    shown = [r["verdict"] + (f" ({r['reason']})" if r.get("reason") else "") for r in reproduced]
    assert out["study_and_verdict"] == ["arraygrowth|" + text for text in shown]
    assert out["shown_text"] == f"{len(reproduced)} of {len(rows)} rows shown"
    assert out["all_shown"] == len(rows)   # clearing the filters shows every row again
    # sorted by ratio: the rows with one ascending, then those without
    ratios = sorted(float(r["ratio"]) for r in rows if r["ratio"] not in ("", None))
    assert [float(v) for v in out["ratios"] if v] == ratios
    assert out["ratios"][len(ratios):] == [""] * (len(rows) - len(ratios))
    # the claims come first (right after Your schema when the config declares variants), each with a verdict
    assert out["claims"] and all(out["claims"]), out
    top = out["first_claim_top"] - (out["your_schema_bottom"] or 0)
    assert 0 < top < 1000, out


# Appended to a copy of the page: what the first screen (1400 x 1000 px) shows of Your schema.
YOUR_SCHEMA_PROBE = """
<script>
setTimeout(function () {
  var block = document.getElementById('your-schema'), ran = document.getElementById('what-ran');
  var out = {present: !!block, follows: !!block && ran.nextElementSibling === block, width: document.documentElement.clientWidth};
  if (block) {
    out.rows = Array.prototype.map.call(block.querySelectorAll('table.yours tbody tr'), function (tr) {
      var r = tr.getBoundingClientRect();
      function text(css) { return tr.querySelector(css).textContent.trim(); }
      return {study: tr.closest('table').getAttribute('data-your-schema'), variant: tr.getAttribute('data-variant'),
              cost: tr.cells[1].textContent.trim(), value: text('td.value'), ratio: text('td.ratio'),
              interval: text('td.interval'), top: Math.round(r.top), bottom: Math.round(r.bottom), right: Math.round(r.right)};
    });
    out.figures = Array.prototype.map.call(block.querySelectorAll('figure'), function (f) {
      return {id: f.id, drawn: !!f.querySelector('.vega svg'), marks: f.querySelectorAll('.vega svg path, .vega svg rect').length};
    });
  }
}, 8000);
</script>
""".replace("}, 8000);", _WRITE_OUT.format(pre_id="yours") + "}, 8000);")  # noqa: E501 (code in a string, kept as it runs)


def test_the_first_screen_shows_your_schema_costs_ratios_and_intervals(smoke_all, tmp_path):
    """Issue 47: the smoke config declares one variant of each kind (appversions' appV5R3_month, docsize's
    ticket, arraygrowth's job_run); at 1400 px the page opens, right after "What ran", with their absolute
    costs, each beside its compare_to as "× compare_to" with the ratio's interval, all on the first screen
    (1000 px), and one figure per study drawing them."""
    out = probe(smoke_all.results() / "report.html", tmp_path, YOUR_SCHEMA_PROBE, "yours")
    assert out["present"] and out["follows"], out
    first_screen = [r for r in out["rows"] if r["bottom"] <= 1000 and r["right"] <= out["width"]]
    for study, variant, compared in (
        ("appversions", "appV5R3_month", "appV5R3"),
        ("docsize", "ticket", "orders"),
        ("arraygrowth", "job_run", "push"),
    ):
        mine = [r for r in first_screen if r["study"] == study and r["variant"] == variant]
        # an absolute cost with its unit, and the ratio to its compare_to with that ratio's interval
        shown = [r for r in mine if r["value"] not in ("", "—") and r["ratio"].endswith(f"× {compared}")
                 and re.search(r"\d to \d|exact|one run|a fit over|too few for a bootstrap", r["interval"])]
        assert shown, (study, mine or out["rows"])
    # the BSON bytes and storage per event of the variant, and its size a year, among them
    costs = {r["cost"] for r in first_screen if r["variant"] == "appV5R3_month"}
    assert {"BSON bytes per event", "storage per event"} <= costs, costs
    assert any(c.startswith("storage + index a year at ") for c in costs), costs
    # the docsize rows: the ratio's interval over the queries (at the smoke scale's 3 queries a shape, the row
    # says they are too few for one; tests/test_your_schema.py holds the interval at 10)
    assert any(re.search(r"\(9\d\.\d%, \d+ queries\)|too few for a bootstrap", r["interval"])
               for r in first_screen if r["variant"] == "ticket"), out["rows"]
    drawn = {f["id"]: f for f in out["figures"]}
    for study in ("appversions", "docsize", "arraygrowth"):
        figure = drawn.get(f"fig-{study}-your_schema-box")
        assert figure and figure["drawn"] and figure["marks"] > 0, out["figures"]
