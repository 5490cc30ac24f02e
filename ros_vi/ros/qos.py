"""QoS profiles of the simulator's topics (as the standard ROS 2 tools expect them)."""
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy)

#: joint_states, commands, diagnostics: reliable, volatile, keep last 10 (rclpy's default).
STATE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                       reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE)

#: commands (joint_commands, effort_controller/commands): reliable, keep last 10.
COMMAND_QOS = STATE_QOS

#: /tf: as tf2_ros' DynamicBroadcasterQoS (reliable, volatile, depth 100).
TF_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                    reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE)

#: /tf_static and robot_description: latched (transient local, reliable, depth 1), so a
#: subscriber that joins late (rviz2, tf2 listeners) still receives them.
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)

#: /clock: reliable, depth 10 (matches rclpy's best-effort depth-1 time source too).
CLOCK_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                       reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE)

#: services of the simulator: reliable, keep last 100 requests (rclpy's default keeps 10,
#: so a burst of concurrent calls from one client would lose requests and hang callers).
SERVICE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
