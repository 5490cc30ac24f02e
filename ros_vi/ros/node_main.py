"""The console scripts' body, shared by every node (ros2/examples style): init, build the
node, spin, shut down."""
import signal
import time

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

__all__ = ['run_node', 'warm_kernels']


def warm_kernels(logger):
    """Before a node joins the graph: compile the numba kernels it needs if the cache is
    cold (the first start after an install), saying so, so that its peers never wait on a
    node that is compiling (a lockstep simulator would stall for the tens of seconds it
    takes)."""
    from .. import precompile
    if precompile.is_warm():
        return
    from ..kernel_cache import cache_root
    logger.info('compiling ros_vi\'s numba kernels into %s: the first start after an '
                'install takes about a minute (python -m ros_vi.precompile does it ahead); '
                'later starts load them in under a second' % cache_root())
    start = time.monotonic()
    precompile.precompile(batch=False)
    logger.info('kernels compiled in %.0f s' % (time.monotonic() - start))


def run_node(factory, name, args=None):
    """Run the node ``factory()`` (logger name ``name``) until shutdown; returns the exit
    code.

    Exit codes: 0 after a normal or signalled shutdown (also when the signal arrives while
    the node is still being built, and when a second Ctrl-C arrives while it shuts down: the
    shutdown is finished, not cut short), 2 when a parameter or the model is invalid (the
    message names it, logged as FATAL).
    """
    rclpy.init(args=args)
    node = None
    executor = SingleThreadedExecutor()
    try:
        warm_kernels(rclpy.logging.get_logger(name))
        node = factory()
        executor.add_node(node)
        executor.spin()
    except ValueError as err:       # ParameterError, URDFError, while building the node
        if node is not None:
            raise
        rclpy.logging.get_logger(name).fatal(str(err))
        return 2
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        # a callback (or the node's constructor) racing the signal handler's shutdown
        if rclpy.ok():
            raise
    finally:
        # the first signal started an orderly shutdown (rclpy's handler): a second Ctrl-C
        # (ros2 launch and impatient users send one) must not cut it short with a traceback
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        executor.shutdown()
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0
