"""Swing up and balance the shipped acrobot (Spong's parameters, elbow torque <= 20 N m): simulator + controller (+ rviz2).

    ros2 launch ros_vi acrobot_swingup.launch.py                    # swing-up and balance, rviz2
    ros2 launch ros_vi acrobot_swingup.launch.py rviz:=false controller:=lqr

Arguments and parameter files: see ros_vi/ros/swingup_launch.py (shared by the three
swing-up launch files).
"""
from ros_vi.ros.swingup_launch import swingup_launch_description

MODEL = 'acrobot'


def generate_launch_description():
    return swingup_launch_description(MODEL)
