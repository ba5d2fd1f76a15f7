"""The verifier's public names in one place: the implementation lives in bt_grasp.verifier, whose
package file imports none of it."""

from bt_grasp.verifier.core import verify_tree
from bt_grasp.verifier.report import VerifyResult
from bt_grasp.verifier.static import keys_read, static_bounds, unrouted_labels

__all__ = ["VerifyResult", "keys_read", "static_bounds", "unrouted_labels", "verify_tree"]
