"""Coroutine callbacks that wait without holding the executor (no rclpy import here).

rclpy runs an ``async def`` callback as a task: each time the executor wakes it resumes the
pending tasks once.  A service or action callback that must wait for work done on another
thread (the simulator's step thread) awaits :func:`until`, and that thread triggers a guard
condition when it is done, which wakes the executor.  Nothing blocks, so this works on a
SingleThreadedExecutor, where a blocking wait would stall every other callback.
"""

__all__ = ['NextPass', 'until']


class NextPass:
    """Awaiting this yields once to the executor: the task resumes on its next pass."""

    def __await__(self):
        yield


async def until(predicate, give_up=lambda: False):
    """Yield to the executor until ``predicate()`` is true (returns True) or ``give_up()``
    is (returns False).  Whoever makes the predicate true must wake the executor (a guard
    condition's ``trigger()``), else the task resumes only with the next other event."""
    while not predicate():
        if give_up():
            return False
        await NextPass()
    return True
