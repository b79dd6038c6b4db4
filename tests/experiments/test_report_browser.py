"""The smoke suite's report as a user sees it: opened in headless Chromium (Debian's ``chromium``).

``make test`` installs Chromium when it is missing (``make test-setup``); the test is never skipped.
A copy of ``report.html`` gets a probe script as the first thing in its ``<head>``: it records
every script error and every resource that fails to load, and after the load event writes, into
the page, each image's natural size.  ``--dump-dom`` prints the page Chromium built; the test reads
the probe's verdict from it.  A screenshot of the page must not be blank.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

from experiments.plots import PLOTS

PROBE = """<script>
window.__problems = [];
window.addEventListener("error", e => window.__problems.push(
    e.target && e.target !== window ? "failed to load " + (e.target.src || e.target.href) : "error " + e.message),
  true);
window.addEventListener("load", () => {
  const images = [...document.images].map(i => ({alt: i.alt, complete: i.complete,
                                                  width: i.naturalWidth, height: i.naturalHeight}));
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({problems: window.__problems, images: images});
  document.body.appendChild(out);
});
</script>"""

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "chromium is missing: `make test` installs it (apt-get install chromium)"
    return found


def browse(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [chromium(), *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(scope="module")
def report(smoke_report) -> Path:
    """The smoke suite's HTML report (rendered once for the session, see conftest.py)."""
    return smoke_report / "report.html"


def test_report_loads_in_chromium_without_errors_and_every_image_shows(report, tmp_path):
    """Tests the page in a real browser: no script or load error, every figure decoded with a non-zero size."""
    probed = report.with_name("probed.html")
    probed.write_text(report.read_text().replace("<head>", "<head>" + PROBE, 1))
    done = browse(probed, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    match = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, flags=re.S)
    assert match, "the page never finished loading:\n" + done.stdout[-2000:]
    verdict = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert verdict["problems"] == []
    assert len(verdict["images"]) == len(PLOTS)
    assert {i["alt"] for i in verdict["images"]} == {plot.title for plot in PLOTS.values()}
    for shown in verdict["images"]:
        assert shown["complete"] and shown["width"] > 100 and shown["height"] > 100, shown
    for link in re.findall(r"href='([^']+)'", report.read_text()):  # the PNG and SVG files it links
        assert (report.parent / link).stat().st_size > 0


def test_report_screenshot_is_not_blank(report, tmp_path):
    """Tests that Chromium paints the page: a screenshot with text, tables and figures, not one flat colour."""
    shot = tmp_path / "shot.png"
    done = browse(report, tmp_path / "profile", "--window-size=1280,1600", f"--screenshot={shot}")
    assert done.returncode == 0 and shot.stat().st_size > 10_000, done.stderr[-2000:]
    pixels = image.imread(shot)
    assert pixels.shape[:2] == (1600, 1280)
    assert np.asarray(pixels[..., :3]).std() > 0.05
