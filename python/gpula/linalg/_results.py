"""The named tuples gpula.linalg returns: NumPy 2's (numpy.linalg) names, and lstsq's and
lu_factor's, which are gpula's."""

from __future__ import annotations

from typing import Any, NamedTuple


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class LstsqResult(NamedTuple):
    """numpy.linalg.lstsq's four results, named as torch.linalg.lstsq names them."""

    solution: Any
    residuals: Any
    rank: Any
    singular_values: Any


class LUFactorResult(NamedTuple):
    """scipy.linalg.lu_factor's pair."""

    lu: Any
    piv: Any
