"""``ros-vi view`` in a real browser: headless Debian chromium (driven by playwright, never
its own browser download) loads the page served for the swinging pendulum; the 3D view
shows the robot, moves while playing and stands still when paused; the console has no
error and every request stays on 127.0.0.1.

Skipped only when chromium or playwright is missing (``.ci/run`` installs chromium)."""
import io
import os
import queue
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from PIL import Image

CHROMIUM = '/usr/bin/chromium'
if not os.access(CHROMIUM, os.X_OK):
    pytest.skip('%s is not installed (apt-get install chromium)' % CHROMIUM,
                allow_module_level=True)
sync_api = pytest.importorskip('playwright.sync_api',
                               reason='playwright is not installed (requirements.txt)')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BROWSER_ARGS = ['--no-sandbox', '--disable-gpu', '--enable-unsafe-swiftshader',
                '--use-angle=swiftshader', '--disable-background-networking',
                '--disable-component-update', '--no-first-run', '--disable-sync']
WIDTH, HEIGHT = 1100, 700
# the 3D view without the GUI panel (right), viser's "software WebGL" notice (top left)
# and the orientation gizmo (bottom left)
VIEW = (0, 160, 740, 640)          # left, top, right, bottom [px]
# the pendulum is drawn dark grey: every channel below DARK, within GREY of each other; of
# the rest of the view only the gravity arrow's thin outline (< 100 px) looks like it
DARK, GREY = 90, 25
ROBOT_PIXELS = 300


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture(scope='module')
def served():
    """``ros-vi view pendulum`` swinging from 1.5 rad, in its own process: its URL."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    proc = subprocess.Popen(
        [sys.executable, '-m', 'ros_vi', 'view', 'pendulum', '--initial', 'theta=1.5',
         '--port', str(port), '--duration', '300'],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout], daemon=True).start()
    url = 'http://127.0.0.1:%d' % port
    seen = []
    try:
        while True:
            try:
                line = lines.get(timeout=180)    # a cold start compiles the integrator
            except queue.Empty:
                pytest.fail('ros-vi view printed no URL: %s' % ''.join(seen))
            seen.append(line)
            if url in line:
                break
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope='module')
def browser():
    """One headless Chromium for the module (playwright's sync API runs one at a time)."""
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope='module')
def page(served, browser):
    pg = browser.new_page(viewport={'width': WIDTH, 'height': HEIGHT})
    pg.requests, pg.errors = [], []
    pg.on('request', lambda r: pg.requests.append(r.url))
    pg.on('websocket', lambda ws: pg.requests.append(ws.url))
    pg.on('console', lambda m: pg.errors.append(m.text) if m.type == 'error' else None)
    pg.on('pageerror', lambda e: pg.errors.append(str(e)))
    pg.goto(served)
    pg.get_by_role('button', name='Pause').wait_for(timeout=60000)
    time.sleep(3.0)                    # the scene arrives over the websocket
    yield pg
    pg.close()


def _view(pg):
    """The 3D view region of a screenshot as an (h, w, 3) int array."""
    img = Image.open(io.BytesIO(pg.screenshot())).convert('RGB').crop(VIEW)
    return np.asarray(img, dtype=int)


def _robot_pixels(img):
    return int(np.sum(np.all(img < DARK, axis=2) & (np.ptp(img, axis=2) < GREY)))


def test_swinging_then_paused(page):
    page.get_by_role('button', name='Reset').click()   # swinging from 1.5 rad again
    time.sleep(0.3)
    a = _view(page)
    time.sleep(0.5)
    b = _view(page)
    for img in (a, b):
        # not a blank page: a lit scene with the dark pendulum on a light ground
        assert img.std() > 10
        assert _robot_pixels(img) > ROBOT_PIXELS
    moved = np.any(np.abs(a - b) > 30, axis=2)
    assert moved.sum() > 100, 'the pendulum did not move between the screenshots'

    page.get_by_role('button', name='Pause').click()
    page.get_by_role('button', name='Play').wait_for(timeout=10000)
    time.sleep(0.5)
    c = _view(page)
    time.sleep(0.5)
    d = _view(page)
    assert _robot_pixels(c) > ROBOT_PIXELS
    assert np.abs(c - d).max() <= 8, 'the view changed while paused'

    page.get_by_role('button', name='Play').click()
    page.get_by_role('button', name='Pause').wait_for(timeout=10000)


def test_no_console_error_and_no_request_leaves_the_machine(page, served):
    assert page.requests, 'no request recorded'
    assert all(u.split('/')[2] == served.split('/')[2] for u in page.requests), \
        sorted(set(page.requests))
    assert page.errors == []


# ------------------------------------------------- trep.visual: a puppet's trajectory
@pytest.fixture(scope='module')
def puppet_page(browser):
    """A swinging marionette (PuppetVisual) served by visualize_3d without blocking, open in
    headless Chromium: (page, the ItemsView)."""
    import ros_vi as trep
    from test_trep_visual import swinging_puppet
    puppet, T, Q = swinging_puppet(steps=150, dt=0.02)       # 3 s of swinging
    view = trep.visual.visualize_3d([trep.puppets.PuppetVisual(puppet, T, Q)], serve=True,
                                    block=False, port=_free_port())
    try:
        pg = browser.new_page(viewport={'width': WIDTH, 'height': HEIGHT})
        pg.errors = []
        pg.on('pageerror', lambda e: pg.errors.append(str(e)))
        pg.goto('http://127.0.0.1:%d' % view.server.get_port())
        pg.get_by_role('button', name='Pause').wait_for(timeout=60000)
        time.sleep(3.0)                    # the scene arrives over the websocket
        yield pg, view
        pg.close()
    finally:
        view.stop()


def test_puppet_trajectory_plays_in_the_page(puppet_page):
    page, view = puppet_page
    a, ta = _view(page), view.t
    time.sleep(0.5)
    b, tb = _view(page), view.t
    for img in (a, b):
        assert img.std() > 10
        assert _robot_pixels(img) > ROBOT_PIXELS          # the dark puppet is drawn
    # the scene's bodies were posed at two different times, and the page shows it
    assert ta != tb
    assert np.any(np.abs(a - b) > 30, axis=2).sum() > 100, 'the puppet did not move'

    page.get_by_role('button', name='Pause').click()
    page.get_by_role('button', name='Play').wait_for(timeout=10000)
    time.sleep(0.5)
    t_paused, c = view.t, _view(page)
    time.sleep(0.5)
    d = _view(page)
    assert view.t == t_paused and not view.playback.playing
    assert np.abs(c - d).max() <= 8, 'the view changed while paused'
    page.get_by_role('button', name='Play').click()
    page.get_by_role('button', name='Pause').wait_for(timeout=10000)
    assert page.errors == []
