"""Launch the ros_vi simulator (and rviz2) for a shipped model or any URDF.

    ros2 launch ros_vi simulator.launch.py                       # the acrobot, with rviz2
    ros2 launch ros_vi simulator.launch.py model:=cartpole rviz:=false
    ros2 launch ros_vi simulator.launch.py urdf_file:=/path/robot.urdf params_file:=my.yaml

Arguments: ``model`` (pendulum, cartpole, acrobot, arm7: urdf/<model>.urdf with
config/<model>.yaml), ``urdf_file`` (any .urdf/.xacro; replaces the model's URDF and,
unless ``params_file`` is given, its parameter file by config/simulator.yaml),
``params_file`` (extra parameters, applied over config/simulator.yaml), ``rviz``
(true/false), ``use_sim_time`` (true/false, for the simulator and rviz2),
``rviz_config``.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from ros_vi.ros.swingup_launch import rviz

PACKAGE = 'ros_vi'
MODELS = ('pendulum', 'cartpole', 'acrobot', 'arm7')
DEFAULT_MODEL = 'acrobot'
DEFAULTS_FILE = 'simulator.yaml'          # config/: every parameter's default
RVIZ_CONFIG = 'ros_vi.rviz'               # rviz/: RobotModel (topic) + TF


def _simulator(context):
    share = get_package_share_directory(PACKAGE)
    model = LaunchConfiguration('model').perform(context)
    urdf_file = LaunchConfiguration('urdf_file').perform(context)
    params_file = LaunchConfiguration('params_file').perform(context)
    use_sim_time = LaunchConfiguration('use_sim_time').perform(context).lower() == 'true'
    parameters = [os.path.join(share, 'config', DEFAULTS_FILE)]
    if not urdf_file:
        if model not in MODELS:
            raise RuntimeError('model %r is not one of %s (or give urdf_file)'
                               % (model, ', '.join(MODELS)))
        parameters.append(os.path.join(share, 'config', model + '.yaml'))
        urdf_file = os.path.join(share, 'urdf', model + '.urdf')
    if params_file:
        parameters.append(params_file)
    parameters.append({'urdf_file': urdf_file, 'use_sim_time': use_sim_time})
    return [Node(package=PACKAGE, executable='simulator', name='simulator',
                 output='screen', emulate_tty=True, parameters=parameters)]


def generate_launch_description():
    share = get_package_share_directory(PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument('model', default_value=DEFAULT_MODEL,
                              description='shipped model: ' + ', '.join(MODELS)),
        DeclareLaunchArgument('urdf_file', default_value='',
                              description='URDF/xacro file to simulate instead of a model'),
        DeclareLaunchArgument('params_file', default_value='',
                              description='extra simulator parameter file (YAML)'),
        DeclareLaunchArgument('rviz', default_value='true', description='start rviz2'),
        DeclareLaunchArgument('use_sim_time', default_value='true',
                              description='nodes follow the simulator /clock'),
        DeclareLaunchArgument('rviz_config',
                              default_value=os.path.join(share, 'rviz', RVIZ_CONFIG),
                              description='rviz2 configuration file'),
        OpaqueFunction(function=_simulator),
        OpaqueFunction(function=rviz),       # only where rviz2 is installed
    ])
