"""gpula.sparse: sparse matrices and what runs on them."""

from . import linalg  # noqa: F401
