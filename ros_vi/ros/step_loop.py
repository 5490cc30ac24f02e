"""The simulator node's step thread: ticks paced by the wall clock, in lockstep with a
controller, or on request (``~/step``), and the inbox through which callbacks reach it.

One thread alone touches the :class:`~ros_vi.simulation.Simulation` once the node runs.
Subscriptions and services (run by the executor) post their work to its inbox
(:meth:`StepLoop.post`); services await the answer (:meth:`StepLoop.call`) without holding
the executor, woken through a guard condition when the job is done.  So a busy step loop
never leaves a call unanswered and a slow call never stalls the loop.

Pacing: free running, ticks are due every ``1 / (rate * real_time_factor)`` wall seconds
(:class:`~ros_vi.ros.pacing.Pacer`, catch-up bounded by ``max_catch_up``), as fast as possible
with ``real_time_factor`` 0; the loop works in slices of :data:`SLICE` wall seconds so
posted work waits no longer.  In lockstep each tick waits for the command that answers the
last published state (stamped with its time; an unstamped array command counts), or for
``lockstep_timeout``.

The node (:class:`~ros_vi.ros.simulator_node.SimulatorNode`) provides what the loop calls:
``tick(force_publish)``, ``publish_state(joint_states_only)``, ``publish_clock()``,
``publish_diagnostics()``, ``following()``, ``command_publishers(stamped)``,
``state_subscribers()`` and ``get_logger()``.
"""
import collections
import threading
import time

from . import tasks
from .pacing import Pacer

__all__ = ['StepLoop', 'Job', 'SLICE', 'IDLE_WAIT', 'REPUBLISH_PERIOD']

SLICE = 0.005             # wall s the step thread ticks before it looks at its inbox again
IDLE_WAIT = 0.5           # wall s between looks while paused (diagnostics come on time too)
REPUBLISH_PERIOD = 0.2    # lockstep: wall s between re-sends of a state not yet answered


class Job:
    """A request run on the step thread; the caller (a service callback) waits for it."""

    def __init__(self, fn, ticks=0):
        self.fn = fn                  # run once on the step thread
        self.ticks = ticks            # ~/step: ticks still to run
        self.failed = 0               # ~/step: ticks that failed (state held)
        self.done = threading.Event()
        self.result = None
        self.error = None


class StepLoop:
    """The step thread of ``node`` (see the module doc); ``wake`` is a guard condition of
    the node that wakes the executor when a job is answered."""

    def __init__(self, node, wake):
        self.node = node
        self.cfg = node.cfg
        self.sim = node.sim
        self._wake_executor = wake
        self._inbox = collections.deque()
        self._step_jobs = collections.deque()
        self._wake = threading.Condition()
        self._stopping = False
        self._thread = None
        self._pacer = None
        # lockstep
        self.last_state_ns = None        # stamp [ns] of the last published state
        self.lockstep_timeouts = 0
        self._lock_ready = False
        self._lock_wait_since = time.monotonic()
        self._lock_republished = 0.0
        self._awaiting_controller = self.cfg.lockstep
        self._controller_wait_since = None

    # ------------------------------------------------------------------ the node's side
    def start(self):
        self._thread = threading.Thread(target=self._run, name='ros_vi step loop',
                                        daemon=True)
        self._thread.start()

    def stop(self):
        """Stop the thread (waits for the tick in progress) and answer the jobs still
        waiting with an error."""
        if self._thread is None:
            return
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._thread.join(timeout=10.0)
        for job in list(self._step_jobs) + [j for j in self._inbox if isinstance(j, Job)]:
            job.error = 'the node is shutting down'
            job.done.set()          # the executor is stopping: no wake-up needed

    @property
    def stopping(self):
        return self._stopping

    def post(self, item):
        """Hand a callable (or a :class:`Job`) to the step thread, which runs it before its
        next tick."""
        with self._wake:
            self._inbox.append(item)
            self._wake.notify()

    async def call(self, fn, ticks=0):
        """Run ``fn()`` on the step thread (then, for ~/step, ``ticks`` ticks) and wait for
        it without holding the executor; returns the :class:`Job` (``result``, ``error``)."""
        job = Job(fn, ticks)
        self.post(job)
        done = await tasks.until(job.done.is_set,
                                 lambda: not self._thread.is_alive() or self._stopping)
        if not done:
            job.error = job.error or 'the step loop is not running'
        return job

    def restart_pacing(self):
        """Forget the wall-clock schedule (after a reset or an unpause)."""
        self._pacer = None

    @property
    def pacer(self):
        """The :class:`Pacer` of the running schedule (None while paused)."""
        return self._pacer

    @property
    def awaiting_controller(self):
        """Lockstep: no controller has answered the first state yet."""
        return self._awaiting_controller

    def state_published(self, ns):
        """A state stamped ``ns`` went out: lockstep waits for its answer."""
        self.last_state_ns = ns
        self._lock_ready = False
        self._lock_wait_since = self._lock_republished = time.monotonic()

    def commanded(self):
        """A command arrived that answers the last state: lockstep may tick."""
        self._lock_ready = True

    # ------------------------------------------------------------------ the thread
    def _finish(self, job):
        """Answer a job: its waiting service task is woken through the guard condition."""
        job.done.set()
        self._wake_executor.trigger()

    def _drain(self):
        """Run what the callbacks posted, in arrival order."""
        inbox = self._inbox
        while inbox:
            item = inbox.popleft()
            if not isinstance(item, Job):
                item()
                continue
            try:
                item.result = item.fn()
            except Exception as err:        # a service's work failing answers the call
                item.error = str(err)
            if item.ticks > 0 and item.error is None:
                self._step_jobs.append(item)
            else:
                self._finish(item)

    def _run(self):
        """Drain the inbox, run what is due, sleep until the next thing is due or a
        callback posts work."""
        node = self.node
        while True:
            try:
                self._drain()
                if self._stopping:
                    return
                wait = self._advance()
                wait = min(wait, node.housekeeping())
            except Exception as err:            # never let the loop die silently
                if not node.context.ok():
                    # a signal shut the context down under a tick's publishing: the node is
                    # going away, nothing to report (and nowhere to publish it)
                    return
                node.get_logger().error('step loop: %s: %s' % (type(err).__name__, err),
                                        throttle_duration_sec=1.0)
                wait = 0.01
            if wait > 0:
                with self._wake:
                    if not self._inbox and not self._stopping:
                        self._wake.wait(wait)

    def _advance(self):
        """Run the ticks due now (at most one slice of wall time, so posted work waits no
        longer than that); returns the wall seconds until something is due again."""
        sim, node = self.sim, self.node
        if self._step_jobs:
            return self._run_step_jobs()
        if sim.paused:
            self._pacer = None
            return IDLE_WAIT
        if self.cfg.lockstep:
            return self._lockstep(time.monotonic())
        rtf = self.cfg.real_time_factor
        slice_end = time.monotonic() + SLICE
        if rtf == 0:
            while time.monotonic() < slice_end and not sim.paused and not self._inbox:
                node.tick()
            return 0.0
        now = time.monotonic()
        pacer = self._pacer
        if pacer is None:
            pacer = self._pacer = Pacer(1.0 / (self.cfg.rate * rtf), self.cfg.max_catch_up)
            pacer.start(now)
        slipped = pacer.slipped
        due = pacer.due(now)
        if pacer.slipped > slipped:
            node.get_logger().warning(
                'cannot hold %g Hz x %g: running behind real time (%.3f s dropped so far)'
                % (self.cfg.rate, rtf, pacer.slipped), throttle_duration_sec=5.0)
        while due > 0 and not sim.paused:
            node.tick()
            pacer.advance()
            due -= 1
            if self._inbox or time.monotonic() > slice_end:
                break
        return max(0.0, pacer.next_time() - time.monotonic())

    def _run_step_jobs(self):
        """~/step while paused: tick for the oldest job (a slice at a time), answer it when
        its ticks are done."""
        job = self._step_jobs[0]
        slice_end = time.monotonic() + SLICE
        while job.ticks > 0:
            result = self.node.tick(force_publish=(job.ticks == 1))
            job.ticks -= 1
            job.failed += not result.ok
            if self._inbox or time.monotonic() > slice_end:
                break
        if job.ticks == 0:
            self._step_jobs.popleft()
            job.result = self.sim.t
            self._finish(job)
        return 0.0

    def _lockstep(self, now):
        """Lockstep: tick when the command answering the last state is in (or the wait
        timed out) and, with a real-time factor, when the tick is due by the wall clock."""
        cfg, node = self.cfg, self.node
        log = node.get_logger()
        if self._awaiting_controller:
            if self._controller_wait_since is None:
                self._controller_wait_since = now
            publishers = node.command_publishers()
            if sum(publishers.values()) and node.state_subscribers():
                self._awaiting_controller = False
                log.info('lockstep: a controller is connected (%s); starting'
                         % ', '.join(t for t, n in publishers.items() if n))
                node.publish_clock()
                node.publish_state()
            elif now - self._controller_wait_since > cfg.controller_wait:
                self._awaiting_controller = False
                log.warning('lockstep: no controller publishes commands after %g s; stepping '
                            'with the commands as they are' % cfg.controller_wait)
                node.publish_clock()
                node.publish_state()
                self._lock_ready = True
            else:
                return 0.02
        if not self._lock_ready and not node.following():
            waited = now - self._lock_wait_since
            # the very first command may come from a controller still starting up
            limit = cfg.controller_wait if self.sim.ticks == 0 else cfg.lockstep_timeout
            if waited > limit:
                self.lockstep_timeouts += 1
                log.warning('lockstep: no command stamped %.9f s within %g s; stepping with '
                            'the previous command' % (self.last_state_ns * 1e-9, limit),
                            throttle_duration_sec=1.0)
            else:
                if now - self._lock_republished > REPUBLISH_PERIOD:
                    self._lock_republished = now
                    # a controller that joined after the state went out gets it again; only
                    # where answers are stamped: a second unstamped answer would unlock the
                    # tick after this one with this one's command
                    if not any(node.command_publishers(stamped=False).values()):
                        node.publish_state(joint_states_only=True)
                return min(limit - waited, REPUBLISH_PERIOD)
        rtf = cfg.real_time_factor
        if rtf > 0:
            pacer = self._pacer
            if pacer is None:
                pacer = self._pacer = Pacer(1.0 / (cfg.rate * rtf), cfg.max_catch_up)
                pacer.start(now - pacer.period)          # the first tick is due at once
            if not pacer.due(now):
                return pacer.next_time() - now
            pacer.advance()
        node.tick()
        return 0.0
