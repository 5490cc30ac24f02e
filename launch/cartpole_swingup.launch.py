"""Swing up and balance the shipped cart-pole (cart force <= 30 N): simulator + controller (+ rviz2).

    ros2 launch ros_vi cartpole_swingup.launch.py                    # swing-up and balance, rviz2
    ros2 launch ros_vi cartpole_swingup.launch.py rviz:=false controller:=lqr

Arguments and parameter files: see ros_vi/ros/swingup_launch.py (shared by the three
swing-up launch files).
"""
from ros_vi.ros.swingup_launch import swingup_launch_description

MODEL = 'cartpole'


def generate_launch_description():
    return swingup_launch_description(MODEL)
