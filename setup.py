from glob import glob
import os

from setuptools import find_packages, setup

package_name = 'ros_vi'


def share(folder, pattern):
    """data_files entry installing <folder>/<pattern> into share/ros_vi/<folder>."""
    return (os.path.join('share', package_name, folder),
            sorted(glob(os.path.join(folder, pattern))))


setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*']),
    data_files=[
        ('share/ament_index/resource_index/packages',
            ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        share('launch', '*.launch.py'),
        share('config', '*.yaml'),
        share('urdf', '*.urdf'),
        share('worlds', '*.yaml'),
        share('rviz', '*.rviz'),
    ],
    # mcap: recordings (ros_vi.recording.mcap); pillow, trimesh, imageio-ffmpeg: ros-vi
    # animate (ros_vi.visual, ros_vi.urdf.shapes); coal, pyyaml: distance queries and their
    # obstacle files (ros_vi.collision); viser: ros-vi view (ros_vi.visual.viewer);
    # dask[distributed] (and pyyaml for the spec): ros-vi sweep (ros_vi.sweep)
    install_requires=['setuptools', 'numpy', 'scipy', 'numba', 'mcap>=1.1',
                      'mcap-ros2-support>=0.5,<0.7', 'pillow', 'trimesh', 'imageio-ffmpeg',
                      'coal>=3.0', 'pyyaml', 'viser>=1.1', 'dask[distributed]>=2024.1'],
    zip_safe=True,
    maintainer='ros_vi maintainers',
    maintainer_email='ros_vi@example.com',
    description=('Variational integrators for mechanical systems '
                 '(a Python 3 re-creation of trep) with ROS 2 nodes.'),
    license='BSD-3-Clause',
    entry_points={
        'console_scripts': [
            'ros-vi = ros_vi.cli:main',
            'simulator = ros_vi.ros.simulator_node:main',
            'lqr_controller = ros_vi.ros.controller_node:main_lqr',
            'swingup_controller = ros_vi.ros.controller_node:main_swingup',
        ],
    },
)
