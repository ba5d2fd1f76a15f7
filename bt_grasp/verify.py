"""`bt_grasp.verify` is kept for callers that import it: the verifier lives in bt_grasp.verifier."""

from bt_grasp.verifier import VerifyResult, keys_read, static_bounds, unrouted_labels, verify_tree

__all__ = ["VerifyResult", "keys_read", "static_bounds", "unrouted_labels", "verify_tree"]
