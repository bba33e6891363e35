#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""test_flame.sh's browser driver: a person's session with a pea flame
graph, played in headless Chromium through the DevTools protocol on a
pipe (--remote-debugging-pipe: commands on fd 3, replies on fd 4, each a
JSON text ended by a NUL byte). The pointer and the keys are Chromium's
own input events (Input.dispatchMouseEvent, Input.dispatchKeyEvent), so
the browser hit-tests them as it would a mouse's.

  cdp_drive.py CHROMIUM SVG-URL WIDTH HEIGHT X Y OUTDIR

The session: the pointer moves to (X, Y) (the details line is read),
clicks there (the frames' state and a screenshot, zoom.png), clicks
"Reset zoom" (the state), clicks "Search" and answers its prompt with
"^spin$|write" (the matched line, the highlighted frames, a screenshot,
search.png), then presses Escape (the state). OUTDIR/session.json gets
what was read; flame_check.py cdp judges it. Every wait is bounded: the
whole session gives up after 60 s.
"""
import base64
import json
import os
import select
import subprocess
import sys
import time

DEADLINE = time.monotonic() + 60

STATE_JS = r"""JSON.stringify({
  zoom: document.documentElement.getAttribute('data-zoom'),
  matched: document.getElementById('matched').textContent,
  details: document.getElementById('details').textContent,
  frames: Array.from(document.querySelectorAll('g.f')).map(function (g) {
    var r = g.querySelector('rect');
    return { id: g.id, cls: g.getAttribute('class'), x: +r.getAttribute('x'),
             w: +r.getAttribute('width'), label: g.querySelector('text').textContent };
  })
})"""


class Browser:
    def __init__(self, binary, profile, log):
        cmd_r, self.cmd_w = os.pipe()
        self.evt_r, evt_w = os.pipe()

        def fds():
            os.dup2(cmd_r, 3)
            os.dup2(evt_w, 4)

        self.proc = subprocess.Popen(
            [binary, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
             '--remote-debugging-pipe', '--user-data-dir=' + profile,
             '--hide-scrollbars', '--force-device-scale-factor=1', 'about:blank'],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            close_fds=False, preexec_fn=fds)
        os.close(cmd_r)
        os.close(evt_w)
        self.buf = b''
        self.next_id = 0
        self.session = None
        self.prompt = None

    def close(self):
        try:
            self.send('Browser.close', session=False)
        except (OSError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def _read(self):
        left = DEADLINE - time.monotonic()
        if left <= 0:
            raise RuntimeError('Chromium did not answer within 60 s')
        ready, _, _ = select.select([self.evt_r], [], [], left)
        if not ready:
            raise RuntimeError('Chromium did not answer within 60 s')
        data = os.read(self.evt_r, 1 << 20)
        if not data:
            raise RuntimeError('Chromium closed its pipe (status %s)' % self.proc.poll())
        self.buf += data

    def _message(self):
        while b'\0' not in self.buf:
            self._read()
        text, self.buf = self.buf.split(b'\0', 1)
        return json.loads(text)

    def _post(self, method, params, session):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session and self.session:
            msg['sessionId'] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b'\0')
        return self.next_id

    def send(self, method, params=None, session=True):
        want = self._post(method, params, session)
        while True:
            msg = self._message()
            if msg.get('method') == 'Page.javascriptDialogOpening':
                # the search prompt: answered at once, as a person would
                self._post('Page.handleJavaScriptDialog',
                           {'accept': self.prompt is not None,
                            'promptText': self.prompt or ''}, True)
                continue
            if msg.get('id') != want:
                continue
            if 'error' in msg:
                raise RuntimeError('%s: %s' % (method, msg['error']))
            return msg.get('result', {})

    def eval(self, expr):
        res = self.send('Runtime.evaluate', {'expression': expr, 'returnByValue': True})
        if 'exceptionDetails' in res:
            raise RuntimeError('evaluate: %s' % res['exceptionDetails'])
        return res['result'].get('value')

    def mouse(self, kind, x, y):
        p = {'type': kind, 'x': x, 'y': y}
        if kind != 'mouseMoved':
            p.update(button='left', clickCount=1)
        self.send('Input.dispatchMouseEvent', p)

    def click(self, x, y):
        self.mouse('mouseMoved', x, y)
        self.mouse('mousePressed', x, y)
        self.mouse('mouseReleased', x, y)

    def key(self, key, code):
        for kind in ('rawKeyDown', 'keyUp'):
            self.send('Input.dispatchKeyEvent',
                      {'type': kind, 'key': key, 'code': code,
                       'windowsVirtualKeyCode': code == 'Escape' and 27 or 0})

    def screenshot(self, path):
        res = self.send('Page.captureScreenshot', {'format': 'png'})
        with open(path, 'wb') as f:
            f.write(base64.b64decode(res['data']))


def main(argv):
    binary, url, width, height, x, y, outdir = argv[1:8]
    width, height, x, y = int(width), int(height), int(x), int(y)
    log = open(os.path.join(outdir, 'cdp-chromium.log'), 'wb')
    b = Browser(binary, os.path.join(outdir, 'cdp-profile'), log)
    out = {}
    try:
        target = b.send('Target.createTarget', {'url': 'about:blank'}, False)['targetId']
        b.session = b.send('Target.attachToTarget',
                           {'targetId': target, 'flatten': True}, False)['sessionId']
        b.send('Page.enable')
        b.send('Emulation.setDeviceMetricsOverride',
               {'width': width, 'height': height, 'deviceScaleFactor': 1, 'mobile': False})
        b.send('Page.navigate', {'url': url})
        while b.eval("document.documentElement.getAttribute('data-ready')") != '1':
            if time.monotonic() > DEADLINE:
                raise RuntimeError('the SVG did not initialise')
            time.sleep(0.05)
        b.mouse('mouseMoved', x, y)
        out['hover'] = json.loads(b.eval(STATE_JS))['details']
        b.click(x, y)
        out['zoom'] = json.loads(b.eval(STATE_JS))
        b.mouse('mouseMoved', width - 5, height - 5)    # off the frames
        b.screenshot(os.path.join(outdir, 'zoom.png'))
        b.click(30, 15)                                 # "Reset zoom"
        out['reset'] = json.loads(b.eval(STATE_JS))
        b.prompt = '^spin$|write'
        b.click(width - 40, 15)                         # "Search"
        b.mouse('mouseMoved', width - 5, height - 5)
        out['search'] = json.loads(b.eval(STATE_JS))
        b.screenshot(os.path.join(outdir, 'search.png'))
        b.click(x, y)
        b.key('Escape', 'Escape')
        out['escape'] = json.loads(b.eval(STATE_JS))
    except (OSError, RuntimeError, ValueError, KeyError) as e:
        out['error'] = str(e)
    finally:
        b.close()
        log.close()
    with open(os.path.join(outdir, 'session.json'), 'w') as f:
        json.dump(out, f)
    return 1 if 'error' in out else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
