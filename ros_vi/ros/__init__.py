"""ROS 2 layer of ros_vi: the only package that imports rclpy and message packages.

- :mod:`ros_vi.ros.conversions`: numpy <-> message helpers (times, transforms, joint states)
- :mod:`ros_vi.ros.qos`: the QoS profiles of the topics
- :mod:`ros_vi.ros.parameters`: the nodes' parameters (dataclasses), declared, read and checked
- :mod:`ros_vi.ros.simulator_node`: the ``simulator`` node (console script ``simulator``)
- :mod:`ros_vi.ros.controller_node`: the ``lqr_controller`` and ``swingup_controller`` nodes
- :mod:`ros_vi.ros.demo_loop`: simulator + controller over DDS in one process (ros_vi.demo)
- :mod:`ros_vi.ros.swingup_launch`: the launch description the swing-up launch files share
  (imported only by ``launch/*_swingup.launch.py``: it needs ``launch`` and ``launch_ros``)
"""
