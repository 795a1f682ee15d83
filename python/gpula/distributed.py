"""gpula.distributed: problems that outgrow one GPU.

* Several GPUs of one node (cusolverMg, in the CUDA toolkit): ``cholesky``, ``solve`` and
  ``eigh`` of one host (NumPy) float32/float64 matrix, spread over ``devices`` (default: every
  visible GPU) in a 1-D block-cyclic column distribution of ``block_size`` columns. Results are
  NumPy arrays. With one device this runs on one GPU, so code can be developed there.
* Block-cyclic helpers (host, ScaLAPACK conventions, 0-based): ``numroc``, ``owner``,
  ``global_to_local``, ``local_to_global``, ``BlockCyclic`` with ``local_shape``, ``scatter``
  (a rank's local piece of a global matrix, column-major as ScaLAPACK) and ``gather``.
* Several nodes (cuSOLVERMp / cuBLASMp over NCCL): ``init`` records the process group (None:
  one process; an mpi4py communicator; or "torch" for torch.distributed). The multi-node
  engines are not implemented yet: ``matmul`` raises gl.NotCompiled, as do the solvers when the
  group has more than one rank.

Example:
    >>> import numpy as np, gpula as gl
    >>> gl.distributed.numroc(10, 2, 0, 0, 3)
    4
    >>> d = gl.distributed.BlockCyclic(m=4, n=4, mb=2, nb=2, nprow=2, npcol=1)
    >>> d.local_shape(1, 0)
    (2, 4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _gpula
from ._gpula import InvalidArgument, NotCompiled

__all__ = [
    "BlockCyclic",
    "ProcessGroup",
    "init",
    "numroc",
    "owner",
    "global_to_local",
    "local_to_global",
    "cholesky",
    "solve",
    "eigh",
    "matmul",
    "has_mp",
]

numroc = _gpula.distributed_numroc
owner = _gpula.distributed_owner
global_to_local = _gpula.distributed_global_to_local
local_to_global = _gpula.distributed_local_to_global


def has_mp() -> bool:
    """Whether this build has the multi-node engines (cuSOLVERMp / cuBLASMp)."""
    return bool(_gpula.distributed_has_mp())


@dataclass(frozen=True)
class BlockCyclic:
    """A 2-D block-cyclic layout of an ``m x n`` matrix over an ``nprow x npcol`` process grid
    (blocks ``mb x nb``, first block on process ``(rsrc, csrc)``), as a ScaLAPACK descriptor.

    Example:
        >>> import numpy as np, gpula as gl
        >>> d = gl.distributed.BlockCyclic(m=3, n=3, mb=2, nb=2)
        >>> a = np.arange(9.0).reshape(3, 3)
        >>> np.array_equal(d.scatter(a, 0, 0), a)
        True
    """

    m: int
    n: int
    mb: int = 64
    nb: int = 64
    nprow: int = 1
    npcol: int = 1
    rsrc: int = 0
    csrc: int = 0

    def _tuple(self) -> tuple[int, ...]:
        return (self.m, self.n, self.mb, self.nb, self.nprow, self.npcol, self.rsrc, self.csrc)

    def local_shape(self, prow: int, pcol: int) -> tuple[int, int]:
        """(local rows, local columns) of process (prow, pcol)."""
        if not (0 <= prow < self.nprow and 0 <= pcol < self.npcol):
            raise InvalidArgument(
                f"[distributed.local_shape] process expected inside the {self.nprow}x"
                f"{self.npcol} grid, got ({prow}, {pcol})"
            )
        return (
            numroc(self.m, self.mb, prow, self.rsrc, self.nprow),
            numroc(self.n, self.nb, pcol, self.csrc, self.npcol),
        )

    def scatter(self, a: Any, prow: int, pcol: int) -> np.ndarray:
        """Process (prow, pcol)'s local piece of host matrix ``a``, column-major (Fortran)."""
        a = np.asarray(a)
        local = np.empty(self.local_shape(prow, pcol), dtype=a.dtype, order="F")
        _gpula.distributed_scatter(a, self._tuple(), prow, pcol, local)
        return local

    def gather(self, local: Any, prow: int, pcol: int, out: np.ndarray) -> np.ndarray:
        """Writes process (prow, pcol)'s entries of ``out`` (m x n, host) from ``local``."""
        _gpula.distributed_gather(np.asarray(local), self._tuple(), prow, pcol, out)
        return out


@dataclass(frozen=True)
class ProcessGroup:
    """The processes that share one distributed problem: this one's rank and their count."""

    rank: int
    size: int
    backend: str
    comm: Any = None


_group: ProcessGroup | None = None


def init(comm: Any = None) -> ProcessGroup:
    """Records the process group: None (one process), an mpi4py communicator, or "torch"
    (torch.distributed, which must be initialized). Returns the ProcessGroup.

    Example:
        >>> import gpula as gl
        >>> gl.distributed.init().size
        1
    """
    global _group
    if comm is None:
        _group = ProcessGroup(0, 1, "single")
    elif isinstance(comm, str):
        if comm != "torch":
            raise InvalidArgument(
                f"[distributed.init] comm expected None, an mpi4py communicator or 'torch', "
                f"got {comm!r}"
            )
        import torch.distributed as tdist

        if not tdist.is_initialized():
            raise InvalidArgument(
                "[distributed.init] comm 'torch' expected torch.distributed to be initialized"
            )
        _group = ProcessGroup(tdist.get_rank(), tdist.get_world_size(), "torch", comm)
    elif hasattr(comm, "Get_rank") and hasattr(comm, "Get_size"):
        _group = ProcessGroup(int(comm.Get_rank()), int(comm.Get_size()), "mpi", comm)
    else:
        raise InvalidArgument(
            f"[distributed.init] comm expected None, an mpi4py communicator or 'torch', "
            f"got {type(comm).__name__}"
        )
    return _group


def _single_process(op: str) -> None:
    if _group is not None and _group.size > 1:
        raise NotCompiled(
            f"[distributed.{op}] {_group.size} ranks need the cuSOLVERMp engine, which is not "
            "implemented yet; run one process per node with devices= instead"
        )


def _devices(op: str, devices: Any) -> list[int]:
    if devices is None:
        return []
    try:
        return [int(d) for d in devices]
    except (TypeError, ValueError):
        raise InvalidArgument(
            f"[distributed.{op}] devices expected None or a list of GPU ordinals, got {devices!r}"
        ) from None


def cholesky(
    a: Any, lower: bool = True, *, devices: Any = None, block_size: int = 256
) -> np.ndarray:
    """Cholesky factor of host symmetric positive definite ``a`` over several GPUs
    (cusolverMgPotrf), as gl.linalg.cholesky; raises gl.NotPositiveDefinite.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
        >>> l = gl.distributed.cholesky(a, devices=[0])  # doctest: +SKIP
    """
    _single_process("cholesky")
    return _gpula.distributed_cholesky(
        np.asarray(a), bool(lower), _devices("cholesky", devices), int(block_size)
    )


def solve(
    a: Any,
    b: Any,
    assume_a: str = "gen",
    *,
    lower: bool = False,
    devices: Any = None,
    block_size: int = 256,
) -> np.ndarray:
    """x with a x = b over several GPUs: assume_a "gen" (cusolverMgGetrf/Getrs) or "pos"
    (cusolverMgPotrf/Potrs). ``b`` is (n,) or (n, k). Raises gl.SingularMatrix /
    gl.NotPositiveDefinite.

    Example:
        >>> import numpy as np, gpula as gl
        >>> x = gl.distributed.solve(np.eye(3), np.ones(3))  # doctest: +SKIP
    """
    _single_process("solve")
    return _gpula.distributed_solve(
        np.asarray(a), np.asarray(b), assume_a, bool(lower), _devices("solve", devices),
        int(block_size),
    )


def eigh(
    a: Any,
    lower: bool = True,
    eigvals_only: bool = False,
    *,
    devices: Any = None,
    block_size: int = 256,
) -> Any:
    """Eigenvalues (ascending) and eigenvectors of host symmetric ``a`` over several GPUs
    (cusolverMgSyevd): ``(w, v)``, or ``w`` with ``eigvals_only=True``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> w, v = gl.distributed.eigh(np.diag([2.0, 1.0]))  # doctest: +SKIP
    """
    _single_process("eigh")
    w, v, _ = _gpula.distributed_eigh(
        np.asarray(a), bool(lower), bool(eigvals_only), _devices("eigh", devices),
        int(block_size),
    )
    return w if eigvals_only else (w, v)


def matmul(a: Any, b: Any) -> Any:
    """Distributed matrix product (cuBLASMp pgemm, bf16 included). Not implemented yet: raises
    gl.NotCompiled."""
    raise NotCompiled("[distributed.matmul] the cuBLASMp engine is not implemented yet")
