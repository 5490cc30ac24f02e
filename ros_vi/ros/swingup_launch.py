"""The launch description shared by ``launch/<model>_swingup.launch.py``: simulator +
controller (+ rviz2) for one shipped model.

Parameters come from ``config/<model>_swingup.yaml`` (one file, a section per node, shared
model parameters under ``/**``); ``params_file`` adds a file applied over it to both nodes.
The simulator runs in lockstep at real time: each tick waits for the controller's answer to
the last state (up to ``lockstep_timeout``), so the loop is the one the demo and the tests
run.  Arguments: ``controller`` (``swingup``: swingup_controller owning swing-up and LQR
catch; ``lqr``: lqr_controller alone), ``rviz``, ``use_sim_time``, ``params_file``,
``rviz_config``.

Imported only by launch files (it needs the ``launch`` and ``launch_ros`` packages of a
ROS 2 install, which are not on PyPI).
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from ..resources import package_installed

PACKAGE = 'ros_vi'
CONTROLLERS = {'swingup': 'swingup_controller', 'lqr': 'lqr_controller'}
RVIZ_CONFIG = 'ros_vi.rviz'               # rviz/


def params_file_name(model):
    """config/ file of a shipped model's swing-up."""
    return model + '_swingup.yaml'


def swingup_launch_description(model):
    """LaunchDescription for ``urdf/<model>.urdf`` with ``config/<model>_swingup.yaml``."""
    share = get_package_share_directory(PACKAGE)
    params_name = params_file_name(model)

    def nodes(context):
        controller = LaunchConfiguration('controller').perform(context)
        if controller not in CONTROLLERS:
            raise RuntimeError('controller %r is not one of %s'
                               % (controller, ', '.join(CONTROLLERS)))
        use_sim_time = LaunchConfiguration('use_sim_time').perform(context).lower() == 'true'
        extra = LaunchConfiguration('params_file').perform(context)
        parameters = [os.path.join(share, 'config', params_name)]
        if extra:
            parameters.append(extra)
        parameters.append({'urdf_file': os.path.join(share, 'urdf', model + '.urdf'),
                           'use_sim_time': use_sim_time})
        return [
            Node(package=PACKAGE, executable='simulator', name='simulator', output='screen',
                 emulate_tty=True, parameters=parameters),
            Node(package=PACKAGE, executable=CONTROLLERS[controller],
                 name=CONTROLLERS[controller], output='screen', emulate_tty=True,
                 parameters=parameters),
        ]

    return LaunchDescription([
        DeclareLaunchArgument('controller', default_value='swingup',
                              description='swingup (swing-up + LQR catch) or lqr (LQR alone)'),
        DeclareLaunchArgument('params_file', default_value='',
                              description='extra parameter file applied over ' + params_name),
        DeclareLaunchArgument('rviz', default_value='true', description='start rviz2'),
        DeclareLaunchArgument('use_sim_time', default_value='true',
                              description='nodes follow the simulator /clock'),
        DeclareLaunchArgument('rviz_config',
                              default_value=os.path.join(share, 'rviz', RVIZ_CONFIG),
                              description='rviz2 configuration file'),
        OpaqueFunction(function=nodes),
        OpaqueFunction(function=rviz),
    ])


def rviz(context):
    """rviz2 when ``rviz:=true`` and rviz2 is installed; where it is not (ROS 2 ros-base,
    containers) a message says so and the other nodes run on, instead of the whole launch
    failing and leaving them orphaned."""
    if LaunchConfiguration('rviz').perform(context).lower() != 'true':
        return []
    if not package_installed('rviz2'):
        return [LogInfo(msg='rviz:=true but rviz2 is not installed here (ros-base or a '
                            'container?): running without it; install ros-$ROS_DISTRO-rviz2 '
                            'or pass rviz:=false')]
    use_sim_time = LaunchConfiguration('use_sim_time').perform(context).lower() == 'true'
    return [Node(package='rviz2', executable='rviz2', name='rviz2', output='screen',
                 arguments=['-d', LaunchConfiguration('rviz_config').perform(context)],
                 parameters=[{'use_sim_time': use_sim_time}])]
