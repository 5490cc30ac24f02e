"""The simulator node's ``record`` parameter: what the node publishes, into a ROS 2 MCAP file.

The file is :class:`ros_vi.recording.mcap.McapWriter`'s (joint_states, tf, tf_static,
clock, robot_description, energy, with the node's name and parameters as metadata); this
module decides when a state is written (each newly published one, once) and what happens
when writing fails (the simulation goes on, the file keeps what it had and is finished).
"""
import os

from .parameters import ParameterError

__all__ = ['NodeRecorder']


class NodeRecorder:
    """The MCAP recording of a simulator ``node`` (its ``cfg.record`` path); raises
    :class:`ParameterError` naming ``record`` when the file cannot be opened."""

    def __init__(self, node):
        # imported here: a node that does not record needs no MCAP library
        from ..recording.mcap import McapWriter
        cfg, sim = node.cfg, node.sim
        self.node = node
        self.path = os.path.abspath(os.path.expanduser(cfg.record))
        namespace = node.get_namespace()
        robot = sim.robot
        metadata = {'source': 'ros_vi simulator node', 'node': node.get_fully_qualified_name(),
                    'model': robot.name if robot is not None else '', 'rate': cfg.rate,
                    'substeps': cfg.substeps, 'publish_rate': cfg.publish_rate,
                    'clock_rate': cfg.clock_rate, 'lockstep': cfg.lockstep,
                    'prefix': cfg.prefix, 'gravity': cfg.gravity, 'dt': sim.dt}
        try:
            self._writer = McapWriter(self.path, node.setup.text, metadata,
                                      namespace='' if namespace == '/' else namespace,
                                      clock=cfg.publish_clock)
        except ValueError as err:
            raise ParameterError('parameter record: %s' % err) from None
        self._recorded = None
        node.get_logger().info('recording to %s' % self.path)

    def record(self, state, transforms):
        """Append a newly published state (and its moving ``transforms``) to the file; a
        state published again (as on unpause in lockstep) is recorded once."""
        writer = self._writer
        if writer is None or state is self._recorded:
            return
        try:
            writer.append(state, transforms, None if writer.count
                          else self.node.sim.static_transforms())
        except (OSError, ValueError) as err:
            self.node.get_logger().error('recording stopped at t=%.6f s: %s' % (state.t, err))
            self.close()
            return
        self._recorded = state

    def close(self):
        """Finish the file (the simulation's end time and faults in its metadata)."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        sim = self.node.sim
        writer.metadata.update({'end_time': sim.t, 'failures': sim.failures,
                                'last_error': sim.last_error or ''})
        try:
            writer.close()
        except (OSError, ValueError) as err:
            self.node.get_logger().error('recording %s: %s' % (writer.path, err))
