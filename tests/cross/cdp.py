"""A small client of the Chrome DevTools Protocol (CDP) for the tests that open pages in headless Chromium (Debian's
`chromium` package): start the browser on a free debugging port, open a page, collect console errors, exceptions,
log errors and network requests, evaluate script, click with the mouse, take screenshots. The websocket is aiohttp's
(pinned in requirements-test.txt for the remote tests).

    with Browser.start() as b:
        page = b.open("file:///tmp/report.html")
        page.evaluate("document.title")
        page.problems()          # console errors, exceptions, log errors
        page.requests()          # URLs the page asked for
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import aiohttp

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The browser's executable, or None."""
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Page:
    """One tab, driven through its websocket on the browser's own event loop."""

    def __init__(self, browser: Browser, ws, session):
        self.browser, self.ws, self.session = browser, ws, session
        self.next_id = 0
        self.pending: dict[int, asyncio.Future] = {}
        self.events: list[dict] = []
        self.reader = browser.loop.create_task(self._read())

    async def _read(self):
        async for msg in self.ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                break
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self.pending:
                self.pending.pop(data["id"]).set_result(data)
            elif "method" in data:
                self.events.append(data)

    async def _call(self, method: str, params: dict, timeout: float):
        self.next_id += 1
        fut = self.browser.loop.create_future()
        self.pending[self.next_id] = fut
        await self.ws.send_str(json.dumps({"id": self.next_id, "method": method, "params": params}))
        answer = await asyncio.wait_for(fut, timeout)
        if "error" in answer:
            raise RuntimeError(f"CDP {method}: {answer['error']}")
        return answer.get("result", {})

    def call(self, method: str, timeout: float = 30, **params):
        """Sends a command and returns its result."""
        return self.browser.loop.run_until_complete(self._call(method, params, timeout))

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        """The first event `method` (already received, or waited for)."""

        async def wait():
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                for e in self.events:
                    if e["method"] == method:
                        return e
                await asyncio.sleep(0.05)
            raise TimeoutError(f"no {method} within {timeout} s")

        return self.browser.loop.run_until_complete(wait())

    def evaluate(self, expression: str):
        """The value of a script expression (JSON-able), evaluated in the page; an exception fails."""
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"script failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def click(self, x: float, y: float):
        """A left mouse click at viewport coordinates (press and release)."""
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def screenshot(self) -> bytes:
        """The viewport as PNG bytes."""
        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])

    def problems(self) -> list[str]:
        """Console errors and assertions, uncaught exceptions, and log entries of level error."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(f"console.{p['type']}: {[a.get('value', a.get('description')) for a in p.get('args', [])]}")
            elif e["method"] == "Runtime.exceptionThrown":
                out.append(f"exception: {p.get('exceptionDetails')}")
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} ({p['entry'].get('url')})")
        return out

    def requests(self) -> list[str]:
        """Every URL the page requested (the document itself included)."""
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]


class Browser:
    """Headless Chromium with a debugging port; a context manager that ends the process it started."""

    def __init__(self, proc: subprocess.Popen, port: int, profile: str):
        self.proc, self.port, self.profile = proc, port, profile
        self.loop = asyncio.new_event_loop()
        self.session = None
        self.pages: list[Page] = []

    @classmethod
    def start(cls, exe: str | None = None, timeout: float = 60) -> Browser:
        exe = exe or find_chromium()
        if exe is None:
            raise FileNotFoundError("no chromium executable (apt-get install chromium)")
        profile = tempfile.mkdtemp(prefix="rntuple-chromium-")
        args = [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0", f"--user-data-dir={profile}",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
                "--window-size=1100,900", "about:blank"]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if port_file.exists() and port_file.read_text().strip():
                return cls(proc, int(port_file.read_text().split()[0]), profile)
            if proc.poll() is not None:
                break
            time.sleep(0.1)
        proc.kill()
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
        raise RuntimeError(f"{exe} did not open its debugging port within {timeout} s (exit {proc.poll()})")

    def open(self, url: str, timeout: float = 60) -> Page:
        """A new tab on `url`, once its load event fired; console, log and network events are recorded from the start."""

        async def connect():
            if self.session is None:
                self.session = aiohttp.ClientSession()
            async with self.session.put(f"http://127.0.0.1:{self.port}/json/new?about:blank") as r:
                target = await r.json(content_type=None)
            ws = await self.session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
            return ws

        ws = self.loop.run_until_complete(connect())
        page = Page(self, ws, self.session)
        self.pages.append(page)
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.call(f"{domain}.enable")
        page.call("Emulation.setDeviceMetricsOverride", width=1100, height=900, deviceScaleFactor=1, mobile=False)
        page.call("Page.navigate", url=url)
        page.wait_for("Page.loadEventFired", timeout)
        return page

    def close(self):
        async def finish():
            for p in self.pages:
                await p.ws.close()
                p.reader.cancel()
                await asyncio.gather(p.reader, return_exceptions=True)
            if self.session is not None:
                await self.session.close()

        self.loop.run_until_complete(finish())
        self.loop.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
