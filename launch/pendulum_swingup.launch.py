"""Swing up and balance trep's tutorial pendulum (|u| <= 5 N m): simulator + controller (+ rviz2).

    ros2 launch ros_vi pendulum_swingup.launch.py                    # swing-up and balance, rviz2
    ros2 launch ros_vi pendulum_swingup.launch.py rviz:=false controller:=lqr

Parameters come from config/pendulum_swingup.yaml (one file, a section per node, shared model
parameters under /**); params_file adds a file applied over it to both nodes.  The
simulator runs in lockstep at real time: each tick waits for the controller's answer to the
last state (up to lockstep_timeout), so the loop is the one the demo and the tests run.
Arguments: controller (swingup: swingup_controller owning swing-up and LQR catch;
lqr: lqr_controller alone), rviz, use_sim_time, params_file, rviz_config.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = 'ros_vi'
MODEL = 'pendulum'
PARAMS_FILE = 'pendulum_swingup.yaml'         # config/
CONTROLLERS = {'swingup': 'swingup_controller', 'lqr': 'lqr_controller'}
RVIZ_CONFIG = 'ros_vi.rviz'               # rviz/


def _nodes(context):
    share = get_package_share_directory(PACKAGE)
    controller = LaunchConfiguration('controller').perform(context)
    if controller not in CONTROLLERS:
        raise RuntimeError('controller %r is not one of %s' % (controller, ', '.join(CONTROLLERS)))
    use_sim_time = LaunchConfiguration('use_sim_time').perform(context).lower() == 'true'
    params_file = LaunchConfiguration('params_file').perform(context)
    parameters = [os.path.join(share, 'config', PARAMS_FILE)]
    if params_file:
        parameters.append(params_file)
    parameters.append({'urdf_file': os.path.join(share, 'urdf', MODEL + '.urdf'),
                       'use_sim_time': use_sim_time})
    return [
        Node(package=PACKAGE, executable='simulator', name='simulator', output='screen',
             emulate_tty=True, parameters=parameters),
        Node(package=PACKAGE, executable=CONTROLLERS[controller], name=CONTROLLERS[controller],
             output='screen', emulate_tty=True, parameters=parameters),
    ]


def generate_launch_description():
    share = get_package_share_directory(PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument('controller', default_value='swingup',
                              description='swingup (swing-up + LQR catch) or lqr (LQR alone)'),
        DeclareLaunchArgument('params_file', default_value='',
                              description='extra parameter file applied over ' + PARAMS_FILE),
        DeclareLaunchArgument('rviz', default_value='true', description='start rviz2'),
        DeclareLaunchArgument('use_sim_time', default_value='true',
                              description='nodes follow the simulator /clock'),
        DeclareLaunchArgument('rviz_config',
                              default_value=os.path.join(share, 'rviz', RVIZ_CONFIG),
                              description='rviz2 configuration file'),
        OpaqueFunction(function=_nodes),
        Node(package='rviz2', executable='rviz2', name='rviz2', output='screen',
             arguments=['-d', LaunchConfiguration('rviz_config')],
             parameters=[{'use_sim_time': LaunchConfiguration('use_sim_time')}],
             condition=IfCondition(LaunchConfiguration('rviz'))),
    ])
