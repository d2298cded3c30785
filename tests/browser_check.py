#!/usr/bin/env python3
"""The live view of glcv serve in a real browser: headless Chromium driven through the DevTools
protocol (websocket-client, Debian's python3-websocket).

usage: browser_check.py URL TOKEN CAMERA FRAMES_DIR MASKS_DIR THRESHOLD SCREENSHOT.png

On the page at URL (the service's /), with the token given after '#token=':
  - the camera list comes (/cameras with the bearer token) and CAMERA is in it;
  - CAMERA's stream is watched until 20 pictures were applied; the page freezes one picture and
    reports its camera frame index I; the page then compares it with FRAMES_DIR/frame_IIII.png
    (R, G, B within THRESHOLD) and its alpha with MASKS_DIR/frame_IIIIII_mask.png (exactly), and
    reports back;
  - the tracked objects' boxes reach the page (the camera has objects on);
  - a screenshot of the page goes to SCREENSHOT.png.
Then the same page without a token (the stream must be refused: "token required", the list
"the token is needed") and with a wrong token ("wrong token").
Prints one line per check ("ok ..." or "FAILED ..."); exit status 1 when one failed, 77 when no
Chromium can be started."""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import websocket


class Browser:
    def __init__(self):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if not exe:
            print("browser_check: no chromium: skipped")
            sys.exit(77)
        self.dir = tempfile.mkdtemp(prefix="glcv_browser.")
        args = [exe, "--headless=new", "--remote-debugging-port=0", f"--user-data-dir={self.dir}",
                "--no-first-run", "--no-default-browser-check", "--force-color-profile=srgb",
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--window-size=900,600",
                "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.dir, "DevToolsActivePort")
        deadline = time.time() + 30
        while not os.path.exists(port_file) or len(open(port_file).read().split("\n")) < 2:
            if time.time() > deadline or self.proc.poll() is not None:
                self.close()
                print("browser_check: chromium did not start: skipped")
                sys.exit(77)
            time.sleep(0.1)
        port, path = open(port_file).read().split("\n")[:2]
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=60)
        self.next_id = 0

    def send(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def page(self, url):
        target = self.send("Target.createTarget", {"url": url})["targetId"]
        return self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def evaluate(self, session, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                "returnByValue": True}, session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait(self, session, expression, seconds):
        """Evaluates `expression` until it is truthy: its value, or None after `seconds`."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                value = self.evaluate(session, expression)
            except RuntimeError:
                value = None
            if value:
                return value
            time.sleep(0.1)
        return None

    def close(self):
        try:
            self.proc.kill()
            self.proc.wait(10)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


failures = 0


def check(ok, what, detail=""):
    global failures
    print(("ok " if ok else "FAILED ") + what + (f": {detail}" if detail else ""))
    failures += not ok


def b64(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def main():
    if len(sys.argv) != 8:
        print(__doc__)
        return 2
    url, token, camera, frames, masks, threshold, shot = sys.argv[1:]
    browser = Browser()
    try:
        page = browser.page(f"{url}#token={token}")
        listed = browser.wait(page, "[...document.querySelectorAll('#cameras button')].map(b => b.dataset.id)", 20)
        check(listed is not None and camera in listed, "the camera list has the camera", str(listed))
        browser.evaluate(page, f"glcvLive.watch({json.dumps(camera)})")
        # until 20 pictures, an error or the end of the stream (a source that ended before 20 is a failure too)
        state = browser.wait(page, "(s => s && (s.applied >= 20 || s.error || s.ended) && s)(glcvLive.state())", 60)
        check(state is not None and state.get("applied", 0) >= 20 and not state.get("error"),
              "20 pictures decoded with the token", json.dumps(state))
        held = browser.wait(page, "glcvLive.hold()", 10)
        check(held is not None, "the page knows the camera frame of its picture", json.dumps(held))
        if held:
            i = held["index"]
            frame_png = os.path.join(frames, f"frame_{i:04d}.png")
            mask_png = os.path.join(masks, f"frame_{i:06d}_mask.png")
            have = os.path.exists(frame_png) and os.path.exists(mask_png)
            check(have, f"the reference frame and mask of frame {i} exist", f"{frame_png} {mask_png}")
            if have:
                result = browser.evaluate(
                    page, f"glcvLive.check('{b64(frame_png)}', '{b64(mask_png)}', {int(threshold)})")
                check(result["withinThreshold"], f"frame {i}: the picture within {threshold} of the source frame",
                      json.dumps(result))
                check(result["maskDiffers"] == 0, f"frame {i}: the mask drawn is the service's mask",
                      json.dumps(result))
        objects = browser.wait(page, "(s => s && s.objects.length && s)(glcvLive.state())", 20)
        check(objects is not None and all(0 <= x and 0 <= y and w > 0 and h > 0 for _, x, y, w, h in objects["objects"]),
              "the tracked objects' boxes reach the page", json.dumps(objects and objects["objects"]))
        time.sleep(0.5)  # a few more pictures, for the screenshot
        shot_png = browser.send("Page.captureScreenshot", {"format": "png"}, page)["data"]
        with open(shot, "wb") as f:
            f.write(base64.b64decode(shot_png))
        check(os.path.getsize(shot) > 1000, "a screenshot written", shot)

        for name, tok, want in (("without a token", "", "token required"),
                                ("with a wrong token", "not-the-token-0123456789", "wrong token")):
            other = browser.page(f"{url}#token={tok}")
            # a new target is about:blank, "complete", until the page's navigation commits
            browser.wait(other, "document.readyState === 'complete' && typeof glcvLive !== 'undefined'", 20)
            browser.evaluate(other, f"glcvLive.watch({json.dumps(camera)})")
            state = browser.wait(other, "(s => s && (s.error || s.applied) && s)(glcvLive.state())", 30)
            check(state is not None and want in (state.get("error") or "") and state.get("applied") == 0 and
                  not state.get("objects") and state.get("index") is None,
                  f"the stream refused {name}, nothing of the camera sent", json.dumps(state))
            if not tok:
                listing = browser.wait(other, "(t => t.includes('token') && t)(document.getElementById('cameras')"
                                              ".textContent)", 10)
                check(listing is not None, "the camera list refused without a token", str(listing))
    finally:
        browser.close()
    print(f"browser_check: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
