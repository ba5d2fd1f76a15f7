"""Wrist load: the vertical force the arm carries at the tool flange, from a simulated F/T sensor.

Why: a deep grasp whose object slides down between clamped pads looks held to the fingers (gap and
effort unchanged); only the arm feels that the weight stayed on the table. On a real UR5e this is
the e-Series tool-flange force-torque sensor (RTDE `actual_TCP_force`); here it is PyBullet's
`enableJointForceTorqueSensor` on the fixed tool0 -> gripper_palm joint, read with
`getJointState(...)[2]` (the reaction force on the palm, in the palm link's frame) and turned
into the world's vertical axis.
"""

from __future__ import annotations

import numpy as np
import pybullet as pb

PALM_JOINT = b"tool0-gripper_palm"


class WristLoadSensor:
    """Reads the load (N, downward positive) the gripper and anything it lifts put on the wrist."""

    def __init__(self, client: int, robot: int) -> None:
        self.client = client
        self.robot = robot
        self.joint = next(j for j in range(pb.getNumJoints(robot, physicsClientId=client))
                          if pb.getJointInfo(robot, j, physicsClientId=client)[1] == PALM_JOINT)
        pb.enableJointForceTorqueSensor(robot, self.joint, True, physicsClientId=client)
        self.empty_n = self._gripper_weight()

    def _gripper_weight(self) -> float:
        """The empty gripper's load (N): the links beyond the sensor, from the model's masses. A
        real F/T sensor is tared with the empty gripper; this is the same number without a tare."""
        c, below = self.client, {self.joint}
        for j in range(self.joint + 1, pb.getNumJoints(self.robot, physicsClientId=c)):
            if pb.getJointInfo(self.robot, j, physicsClientId=c)[16] in below:  # parent link index
                below.add(j)
        mass = sum(pb.getDynamicsInfo(self.robot, j, physicsClientId=c)[0] for j in below)
        return mass * abs(pb.getPhysicsEngineParameters(physicsClientId=c)["gravityAccelerationZ"])

    def read(self) -> float:
        """Vertical component of the palm's reaction force, in newtons (gripper weight ~6.9 N)."""
        fx, fy, fz = pb.getJointState(self.robot, self.joint, physicsClientId=self.client)[2][:3]
        orn = pb.getLinkState(self.robot, self.joint, computeForwardKinematics=True,
                              physicsClientId=self.client)[5]
        R = np.array(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
        return float((R @ np.array([fx, fy, fz]))[2])
