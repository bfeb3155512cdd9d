"""cdp.py: headless Chromium driven through the DevTools protocol over a
pipe (--remote-debugging-pipe), with the standard library only: the tests
of the HTML report open pages, read the console, run script in the page,
click and take screenshots in the real browser, with no driver to install.

Messages are JSON objects ended by a NUL byte; the browser reads them on its
fd 3 and writes on its fd 4."""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(Exception):
    pass


class Browser:
    """One headless Chromium with one page (a tab) attached."""

    def __init__(self, chrome, width=1280, height=900, timeout=120):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix='sp-chromium-')
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def plumb():  # in the child: the pipes on the fds Chromium expects
            # Through fds above 4 first: a pipe may already sit on 3 or 4,
            # where dup2 onto itself would keep its close-on-exec flag.
            high_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            high_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen(
            [chrome, '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
             '--no-first-run', '--no-default-browser-check', '--disable-extensions',
             '--hide-scrollbars', '--mute-audio', '--remote-debugging-pipe',
             '--user-data-dir=' + self.profile, 'about:blank'],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            # Not pass_fds: the fds kept are closed after preexec_fn runs,
            # and 3 and 4 are made there.
            preexec_fn=plumb, close_fds=False)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b''
        self.next_id = 0
        self.events = []
        self.session = None
        target = self.call('Target.createTarget', {'url': 'about:blank'})['targetId']
        self.session = self.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
        for domain in ('Page', 'Runtime', 'Log'):
            self.call(domain + '.enable')
        self.call('Emulation.setDeviceMetricsOverride',
                  {'width': width, 'height': height, 'deviceScaleFactor': 1, 'mobile': False})

    def close(self):
        try:
            self.call('Browser.close', session=False)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.to_chrome, self.from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read_message(self, deadline):
        while b'\0' not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError('no answer from Chromium in %d s' % self.timeout)
            ready, _, _ = select.select([self.from_chrome], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                err = self.proc.stderr.read().decode('utf-8', 'replace') if self.proc.poll() is not None else ''
                raise BrowserError('Chromium closed the pipe' + (': ' + err[-2000:] if err else ''))
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def call(self, method, params=None, session=True):
        """Sends one command and returns its result; events that arrive
        meanwhile are kept in self.events."""
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session and self.session:
            msg['sessionId'] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b'\0')
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get('id') == self.next_id:
                if 'error' in m:
                    raise BrowserError('%s: %s' % (method, m['error']))
                return m.get('result', {})
            if 'method' in m:
                self.events.append(m)

    def wait_event(self, method, deadline):
        while True:
            for i, e in enumerate(self.events):
                if e['method'] == method:
                    return self.events.pop(i)
            m = self._read_message(deadline)
            if 'method' in m:
                self.events.append(m)

    def open(self, path):
        """Loads a file and waits for its load event; returns the errors
        the page reported so far (see errors())."""
        self.events = []
        self.call('Page.navigate', {'url': 'file://' + os.path.abspath(path)})
        self.wait_event('Page.loadEventFired', time.monotonic() + self.timeout)

    def errors(self):
        """Uncaught exceptions, console.error/assert calls and error log
        entries (CSP violations, failed loads) seen since open()."""
        # A round trip, so that events sent before it have arrived.
        self.evaluate('1')
        out = []
        for e in self.events:
            p = e.get('params', {})
            if e['method'] == 'Runtime.exceptionThrown':
                d = p.get('exceptionDetails', {})
                out.append('exception: %s %s' % (d.get('text', ''), d.get('exception', {}).get('description', '')))
            elif e['method'] == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'assert', 'warning'):
                out.append('console.%s: %s' % (p['type'], ' '.join(str(a.get('value', a.get('description')))
                                                                   for a in p.get('args', []))))
            elif e['method'] == 'Log.entryAdded' and p.get('entry', {}).get('level') in ('error', 'warning'):
                out.append('log %s: %s' % (p['entry'].get('source'), p['entry'].get('text')))
        return out

    def evaluate(self, expression):
        r = self.call('Runtime.evaluate', {'expression': expression, 'returnByValue': True,
                                           'awaitPromise': True})
        if 'exceptionDetails' in r:
            d = r['exceptionDetails']
            raise BrowserError('evaluate(%s): %s %s' % (expression[:80], d.get('text'),
                                                        d.get('exception', {}).get('description', '')))
        return r['result'].get('value')

    def click(self, selector, index=0):
        """A real mouse click at the centre of the index-th match."""
        box = self.evaluate('(() => { const e = document.querySelectorAll(%s)[%d]; e.scrollIntoView();'
                            ' const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()'
                            % (json.dumps(selector), index))
        for kind in ('mousePressed', 'mouseReleased'):
            self.call('Input.dispatchMouseEvent', {'type': kind, 'x': box[0], 'y': box[1], 'button': 'left',
                                                   'clickCount': 1})

    def screenshot(self, path, width=1280, max_height=6000):
        """The page's top, up to max_height pixels (the whole page when shorter)."""
        height = self.evaluate('document.documentElement.scrollHeight')
        self.call('Emulation.setDeviceMetricsOverride',
                  {'width': width, 'height': min(int(height), max_height), 'deviceScaleFactor': 1, 'mobile': False})
        shot = self.call('Page.captureScreenshot', {'format': 'png'})
        with open(path, 'wb') as f:
            f.write(base64.b64decode(shot['data']))
