"""Deprecated path of bt_grasp.verifier_api (the verifier's public names), kept for one release."""

from bt_grasp._renamed import alias

alias(__name__, "bt_grasp.verifier_api")
