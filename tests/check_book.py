#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check_book.py BOOK [SHOTS]: open every page of the book (make docs's
docs/html) in headless Chromium, served over HTTP on localhost, and fail
unless each page loads with all its images drawn and each link inside the
book leads to a page that exists, and to an anchor on it that exists.
Screenshots of the first chapter after the contents and of the first page
with a figure go to the folder SHOTS, if given, for a person to look at.

The browser runs a page of this script's (check.html) that loads each
book page in turn in a frame, and writes what it found into its own
document, which Chromium prints with --dump-dom."""

import functools
import html
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading

CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--hide-scrollbars"]

CHECKER = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>book check</title></head>
<body><pre id="result">running</pre><iframe id="frame" width="1000" height="800"></iframe>
<script>
const pages = %s;
const frame = document.getElementById("frame");
function load(url) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), 20000);
    frame.onload = () => { clearTimeout(timer); resolve(true); };
    frame.src = url;
  });
}
async function settled(img) {
  if (!img.complete) await new Promise((r) => { img.onload = img.onerror = r; });
  return img.naturalWidth > 0;
}
async function main() {
  const problems = [], links = new Map();
  let images = 0, anchors = 0;
  for (const page of pages) {
    if (!await load("book/" + page)) { problems.push(page + ": did not load"); continue; }
    const doc = frame.contentDocument;
    if (!doc || !doc.body || !doc.body.textContent.trim()) {
      problems.push(page + ": empty page"); continue;
    }
    for (const img of doc.images) {
      images++;
      if (!await settled(img)) problems.push(page + ": image " + img.getAttribute("src") + " is not drawn");
    }
    for (const a of doc.querySelectorAll("a[href]")) {
      const url = new URL(a.getAttribute("href"), frame.contentWindow.location.href);
      if (url.origin !== location.origin) continue;
      anchors++;
      const key = url.pathname + url.hash;
      if (!links.has(key)) links.set(key, page);
    }
  }
  const parsed = new Map();
  for (const [key, from] of links) {
    const [path, hash] = key.split("#");
    if (!parsed.has(path)) {
      const response = await fetch(path);
      parsed.set(path, response.ok ?
        new DOMParser().parseFromString(await response.text(), "text/html") : null);
    }
    const doc = parsed.get(path);
    if (!doc) problems.push(from + ": link to " + path + ", which does not exist");
    else if (hash && !doc.getElementById(decodeURIComponent(hash)))
      problems.push(from + ": link to " + key + ", whose anchor does not exist");
  }
  document.getElementById("result").textContent = JSON.stringify(
    {pages: pages.length, images: images, links: anchors, targets: links.size, problems: problems});
}
main().catch((e) => { document.getElementById("result").textContent = JSON.stringify({error: String(e)}); });
</script></body></html>
"""


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main():
    book = sys.argv[1]
    shots = sys.argv[2] if len(sys.argv) > 2 else None
    pages = sorted(p for p in os.listdir(book) if p.endswith(".html"))
    if "index.html" not in pages:
        sys.exit("%s has no index.html: run make docs" % book)
    with tempfile.TemporaryDirectory() as root:
        os.symlink(os.path.abspath(book), os.path.join(root, "book"))
        with open(os.path.join(root, "check.html"), "w") as f:
            f.write(CHECKER % json.dumps(pages))
        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Quiet, directory=root))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = "http://127.0.0.1:%d/" % server.server_address[1]
        with tempfile.TemporaryDirectory() as profile:
            browser = CHROMIUM + ["--user-data-dir=" + profile]
            dom = subprocess.run(browser + ["--virtual-time-budget=120000", "--dump-dom",
                                            base + "check.html"],
                                 capture_output=True, text=True, timeout=300).stdout
            found = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
            if not found:
                sys.exit("Chromium printed no result of the check:\n" + dom[-2000:])
            result = json.loads(html.unescape(found.group(1)))
            index = open(os.path.join(book, "index.html")).read()
            first = re.search(r'<li><a href="([^"]+)"', index).group(1)
            figure = next((p for p in pages
                           if "<img" in open(os.path.join(book, p)).read()), None)
            if shots:
                os.makedirs(shots, exist_ok=True)
            for page in filter(None, (first, figure)) if shots else ():
                shot = os.path.join(shots, page.replace(".html", ".png"))
                subprocess.run(browser + ["--window-size=1200,1500", "--screenshot=" + shot,
                                          base + "book/" + page],
                               capture_output=True, timeout=120, check=True)
                print("screenshot: %s" % shot)
        server.shutdown()
    if "error" in result:
        sys.exit("the check page failed: %s" % result["error"])
    print("%(pages)d pages, %(images)d images, %(links)d links to %(targets)d places" % result)
    for problem in result["problems"]:
        print("broken: " + problem)
    if not figure:
        print("broken: no page of the book has a figure")
    sys.exit(1 if result["problems"] or not figure else 0)


if __name__ == "__main__":
    main()
