"""The verifier: explicit run states, exhaustive search, compositional bounds and the report."""

from bt_grasp.verifier.core import verify_tree
from bt_grasp.verifier.report import VerifyResult
from bt_grasp.verifier.static import keys_read, static_bounds, unrouted_labels

__all__ = ["VerifyResult", "keys_read", "static_bounds", "unrouted_labels", "verify_tree"]
