"""Checks the DOM Chromium rendered from a `kiln bench --html` page against the JSON report
of the same run: every chart is an <svg class="kiln-chart"> with one mark per measurement.

usage: check_html_dom.py DOM.html REPORT.json
"""
import json
import sys
from html.parser import HTMLParser


class Charts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts = {}  # data-chart -> {tag: count}
        self.current = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "kiln-chart" in (a.get("class") or "").split():
            self.current = a.get("data-chart")
            self.charts[self.current] = {}
        elif self.current is not None:
            counts = self.charts[self.current]
            counts[tag] = counts.get(tag, 0) + 1

    def handle_endtag(self, tag):
        if tag == "svg":
            self.current = None


def main():
    dom, report_path = sys.argv[1], sys.argv[2]
    with open(report_path) as f:
        report = json.load(f)
    measured = [e for e in report["engines"] if e["status"] == "ok"]
    samples = sum(len(e["samples_ms"]) for e in measured)
    parser = Charts()
    with open(dom, encoding="utf-8") as f:
        parser.feed(f.read())
    want = {
        "latency-distribution": ("circle", samples),
        "latency-percentiles": ("rect", 3 * len(measured)),
        "latency-by-round": ("polyline", len(measured)),
    }
    problems = []
    for chart, (tag, count) in want.items():
        got = parser.charts.get(chart)
        if got is None:
            problems.append(f"no {chart} chart")
        elif got.get(tag, 0) != count:
            problems.append(f"{chart}: {got.get(tag, 0)} <{tag}> elements, expected {count}")
    if problems:
        sys.exit(f"{dom}: " + "; ".join(problems))
    print(f"{dom}: {len(want)} charts, {samples} samples drawn")


if __name__ == "__main__":
    main()
