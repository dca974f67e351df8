"""The HTML report in a real browser: headless Chromium, driven over the DevTools protocol through a pipe.

``--remote-debugging-pipe`` makes the browser read JSON commands, each ended by a NUL byte, on fd 3 and
write its replies and events the same way on fd 4, so no Python package and no port is needed. The
page must render with no console error, no exception and no request but the file itself; every chart
the report says it holds must be there, after a summary of every scenario; and at 1280 px and 375 px a
screenshot must succeed with no element reaching past the page's width (a table or a chart may scroll
inside its wrapper, the wrapper may not) and no text, a chart's included, drawn below 10 px.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: No single exchange with the browser may take longer than this, so nothing hangs.
TIMEOUT_S = 30.0

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
]

#: Every element's right edge, against the page's width; inside a scrolling wrapper, the wrapper's.
OVERFLOW_JS = """
(() => {
  const limit = document.documentElement.clientWidth;
  const bad = [];
  for (const el of document.querySelectorAll('body, body *')) {
    const scroller = el.parentElement ? el.parentElement.closest('.scroll') : null;
    const box = (scroller || el).getBoundingClientRect();
    if (box.right > limit + 0.5) {
      bad.push(`${el.tagName.toLowerCase()}#${el.id} .${el.getAttribute('class') || ''} right ${box.right}`);
    }
  }
  return JSON.stringify({limit: limit, scroll: document.documentElement.scrollWidth, bad: bad.slice(0, 10)});
})()
"""


#: The smallest text on the page as drawn, in CSS pixels: HTML text by its computed size, a chart's SVG text
#: by its size in the SVG's units times the scale the chart is drawn at (its screen transform).
FONT_JS = """
(() => {
  let smallest = Infinity, where = '';
  for (const el of document.querySelectorAll('body *')) {
    if (!el.childNodes.length || ![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    if (el instanceof SVGElement && !(el instanceof SVGGraphicsElement)) continue;  // <title>: not drawn
    let size = parseFloat(getComputedStyle(el).fontSize);
    if (el instanceof SVGGraphicsElement) {
      const m = el.getScreenCTM();
      size *= Math.hypot(m.a, m.b);
    }
    if (size < smallest) {
      smallest = size;
      where = `${el.tagName.toLowerCase()} ${el.textContent.trim().slice(0, 30)}`;
    }
  }
  return JSON.stringify({smallest: smallest, where: where});
})()
"""


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class DevTools:
    """One browser over ``--remote-debugging-pipe``: commands out on its fd 3, replies and events in on fd 4."""

    def __init__(self, executable: str, profile: Path) -> None:
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # Above 4, so that placing them at 3 and 4 in the child cannot overwrite one with the other.
        child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def place() -> None:  # in the child, before exec: dup2 leaves 3 and 4 inheritable
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        self.log = (profile.parent / "browser-output.txt").open("wb")
        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            preexec_fn=place,
            close_fds=False,  # fds 3 and 4 must survive; every other descriptor here is close-on-exec
            start_new_session=True,  # its own process group, to end every process of the browser
        )
        os.close(child_in)
        os.close(child_out)
        self.writer = to_browser_w
        self.reader = from_browser_r
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self.next_id = 0
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        pending = b""
        try:
            while chunk := os.read(self.reader, 1 << 16):
                pending += chunk
                *whole, pending = pending.split(b"\0")
                for message in whole:
                    self.messages.put(json.loads(message))
        except OSError:
            pass
        self.messages.put(None)  # the browser went away

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """Send one command and wait for its reply, keeping the events that arrive meanwhile."""
        self.next_id += 1
        command: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session is not None:
            command["sessionId"] = session
        os.write(self.writer, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            message = self._next(deadline, method)
            if message.get("id") == self.next_id:
                assert "error" not in message, f"{method}: {message['error']}"
                return dict(message.get("result", {}))
            self.events.append(message)

    def wait_event(self, method: str, session: str) -> dict[str, Any]:
        """Wait for an event (one already received counts)."""
        for event in self.events:
            if event.get("method") == method and event.get("sessionId") == session:
                return event
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            message = self._next(deadline, method)
            self.events.append(message)
            if message.get("method") == method and message.get("sessionId") == session:
                return message

    def _next(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        try:
            message = self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no answer to {waiting_for} within {TIMEOUT_S:g} s") from None
        assert message is not None, f"the browser closed its pipe while waiting for {waiting_for}"
        return message

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                try:
                    os.write(self.writer, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
                    self.process.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(timeout=10)
            # Whatever the browser started (its renderer, its zygote) is in its process group: none may outlive it.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            for fd in (self.writer, self.reader):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self.thread.join(timeout=5)
            self.log.close()


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ckptcalc import api

    path = tmp_path_factory.mktemp("browser") / "review.html"
    # The loss curves and the plans' completion (the survival plot is drawn the same way: tests/test_report.py).
    text = api.report(["llama3-405b", "gemini-inmemory"], work="30d")
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[DevTools]:
    executable = _chromium()
    if executable is None:
        if not os.environ.get("CI"):
            pytest.skip("chromium is not installed (CI installs it: .ci/run)")
        pytest.fail("chromium is not installed, and CI needs the browser test to run")
    devtools = DevTools(executable, tmp_path / "profile")
    try:
        yield devtools
    finally:
        devtools.close()


def _evaluate(devtools: DevTools, session: str, expression: str) -> Any:
    reply = devtools.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
    assert "exceptionDetails" not in reply, reply["exceptionDetails"]
    return reply["result"]["value"]


def test_the_report_renders_alone_whole_and_within_the_page(browser: DevTools, report_file: Path) -> None:
    url = report_file.as_uri()
    charts = int(re.search(r'<meta name="ckptcalc-charts" content="(\d+)">', report_file.read_text()).group(1))  # type: ignore[union-attr]
    assert charts == 4  # two loss curves, two completion histograms

    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Network", "Runtime", "Log", "Page"):
        browser.call(f"{domain}.enable", {}, session)
    metrics = {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}
    browser.call("Emulation.setDeviceMetricsOverride", metrics, session)
    browser.call("Page.navigate", {"url": url}, session)
    browser.wait_event("Page.loadEventFired", session)

    assert _evaluate(browser, session, "document.querySelectorAll('svg').length") == charts
    assert _evaluate(browser, session, "document.querySelectorAll('svg.chart').length") == charts
    assert _evaluate(browser, session, "document.querySelectorAll('script').length") == 0
    # The summary comes first: every scenario side by side.
    first = _evaluate(browser, session, "document.querySelector('main article').id")
    assert first == "summary"
    rows = _evaluate(browser, session, "document.querySelectorAll('#summary tbody tr').length")
    assert rows == 2
    for width, mobile in ((1280, False), (375, True)):
        browser.call("Emulation.setDeviceMetricsOverride", {**metrics, "width": width, "mobile": mobile}, session)
        found = json.loads(_evaluate(browser, session, OVERFLOW_JS))
        assert width - 20 <= found["limit"] <= width  # less a vertical scroll bar, where one shows
        assert found["bad"] == [], found
        assert found["scroll"] <= found["limit"]
        text = json.loads(_evaluate(browser, session, FONT_JS))
        assert text["smallest"] >= 10.0, (width, text)
        shot = browser.call("Page.captureScreenshot", {"format": "png"}, session)
        assert base64.b64decode(shot["data"])[:8] == b"\x89PNG\r\n\x1a\n"

    # Printed: the print style sheet applies and the page makes a PDF.
    browser.call("Emulation.setEmulatedMedia", {"media": "print"}, session)
    assert _evaluate(browser, session, "getComputedStyle(document.querySelector('nav')).display") == "none"
    printed = browser.call("Page.printToPDF", {}, session)
    assert base64.b64decode(printed["data"])[:5] == b"%PDF-"

    mine = [event for event in browser.events if event.get("sessionId") == session]
    requested = [e["params"]["request"]["url"] for e in mine if e["method"] == "Network.requestWillBeSent"]
    assert requested == [url]
    errors = [e for e in mine if e["method"] == "Runtime.exceptionThrown"]
    errors += [e for e in mine if e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] == "error"]
    errors += [e for e in mine if e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"]
    assert errors == []
