"""A small floating robot shared by the free-body tests of the simulation layer
(test/test_sim_free_bodies.py) and of the simulator node over DDS
(test/ros/test_sim_floating.py): a box base and two legs on hips about y, every link with
a mass (so the free joint has a regular mass matrix)."""
import numpy as np

URDF = """<robot name="walker">
  <link name="base">
    <inertial><mass value="4"/>
      <inertia ixx="0.10" iyy="0.20" izz="0.25" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><box size="0.4 0.3 0.1"/></geometry></visual>
  </link>
  <link name="leg_left">
    <inertial><origin xyz="0 0 -0.2"/><mass value="1"/>
      <inertia ixx="0.014" iyy="0.014" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 -0.2"/><geometry><box size="0.05 0.05 0.4"/></geometry></visual>
  </link>
  <link name="leg_right">
    <inertial><origin xyz="0 0 -0.2"/><mass value="1"/>
      <inertia ixx="0.014" iyy="0.014" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 -0.2"/><geometry><box size="0.05 0.05 0.4"/></geometry></visual>
  </link>
  <joint name="hip_left" type="revolute">
    <parent link="base"/><child link="leg_left"/><origin xyz="0 0.12 -0.05"/>
    <axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="20" velocity="5"/>
  </joint>
  <joint name="hip_right" type="revolute">
    <parent link="base"/><child link="leg_right"/><origin xyz="0 -0.12 -0.05"/>
    <axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="20" velocity="5"/>
  </joint>
</robot>
"""
JOINTS = ['hip_left', 'hip_right']
FREE_CONFIGS = ['root_joint_' + p for p in ('x', 'y', 'z', 'rx', 'ry', 'rz')]
BASE = 'base'
G = 9.81
# a tumbling start: position and attitude (x, y, z, roll, pitch, yaw) [m, rad] and twist
# in the base's axes (vx, vy, vz, wx, wy, wz) [m/s, rad/s]
POSE = (0.1, -0.2, 1.5, 0.3, -0.4, 0.8)
TWIST = (0.5, -0.1, 0.3, 0.4, 1.2, -0.7)
HIPS = (0.3, -0.2)          # initial hip angles [rad]


def rotation_rpy(roll, pitch, yaw):
    """Rz(yaw) Ry(pitch) Rx(roll) (3, 3), written out (independent of the code tested)."""
    cr, sr, cp, sp, cy, sy = (np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch),
                              np.cos(yaw), np.sin(yaw))
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx
