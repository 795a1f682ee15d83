"""gpula.distributed: problems that outgrow one GPU.

* Several GPUs of one node (cusolverMg, in the CUDA toolkit): ``cholesky``, ``solve`` and
  ``eigh`` of one host (NumPy) float32/float64 matrix, spread over ``devices`` (default: every
  visible GPU) in a 1-D block-cyclic column distribution of ``block_size`` columns. Results are
  NumPy arrays. With one device this runs on one GPU, so code can be developed there.
* Block-cyclic helpers (host, ScaLAPACK conventions, 0-based): ``numroc``, ``owner``,
  ``global_to_local``, ``local_to_global``, ``BlockCyclic`` with ``local_shape``, ``scatter``
  (a rank's local piece of a global matrix, column-major as ScaLAPACK) and ``gather``.
* Several processes, one GPU each, any number of nodes (cuSOLVERMp / cuBLASMp over NCCL, an
  optional build: ``has_mp()``): ``init`` finds the process group (torchrun's RANK /
  WORLD_SIZE / LOCAL_RANK, else mpi4py under an MPI launcher, else one process);
  ``cholesky``, ``solve``, ``eigh`` and ``matmul`` with ``layout=`` take this rank's local
  piece (a column-major CuPy / PyTorch array on its GPU, as ``BlockCyclic.scatter`` cuts it)
  and work in place. The NCCL communicator is made on first use; its unique id travels over
  torch.distributed or MPI when there are several ranks.

Example:
    >>> import numpy as np, gpula as gl
    >>> gl.distributed.numroc(10, 2, 0, 0, 3)
    4
    >>> d = gl.distributed.BlockCyclic(m=4, n=4, mb=2, nb=2, nprow=2, npcol=1)
    >>> d.local_shape(1, 0)
    (2, 4)
"""

from __future__ import annotations

import operator
import os
import sys
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from . import _gpula
from ._gpula import DTypeError, InvalidArgument, NotCompiled
from ._interop import FRAMEWORK, export, is_gpu_array, package_of


__all__ = [
    "BlockCyclic",
    "ProcessGroup",
    "init",
    "communicator",
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

def _int(op: str, name: str, v: Any) -> int:
    """Integer argument ``name`` of distributed.<op> as a Python int: int-like (operator.index;
    a bool is refused as a likely mistake), DTypeError otherwise; InvalidArgument outside int64."""
    if isinstance(v, (bool, np.bool_)):
        raise DTypeError(f"[distributed.{op}] {name} expected an integer, got bool {v!r}")
    try:
        i = operator.index(v)
    except TypeError:
        raise DTypeError(
            f"[distributed.{op}] {name} expected an integer, got {type(v).__name__} {v!r}"
        ) from None
    if not -(2**63) <= i < 2**63:
        raise InvalidArgument(f"[distributed.{op}] {name} expected a value within int64, got {i}")
    return i


def numroc(n: int, nb: int, iproc: int, isrcproc: int, nprocs: int) -> int:
    """How many of n rows (or columns), cut into blocks of nb dealt round-robin over nprocs
    processes from isrcproc, process iproc owns (ScaLAPACK's numroc).

    Example:
        >>> import gpula as gl
        >>> [gl.distributed.numroc(10, 3, p, 0, 2) for p in (0, 1)]
        [6, 4]
    """
    op = "numroc"
    return _gpula.distributed_numroc(
        _int(op, "n", n), _int(op, "nb", nb), _int(op, "iproc", iproc),
        _int(op, "isrcproc", isrcproc), _int(op, "nprocs", nprocs),
    )


def owner(g: int, nb: int, isrcproc: int, nprocs: int) -> int:
    """The process that owns global index g (ScaLAPACK's indxg2p, 0-based).

    Example:
        >>> import gpula as gl
        >>> [gl.distributed.owner(g, 3, 0, 2) for g in (0, 3, 7, 9)]
        [0, 1, 0, 1]
    """
    op = "owner"
    return _gpula.distributed_owner(
        _int(op, "g", g), _int(op, "nb", nb), _int(op, "isrcproc", isrcproc),
        _int(op, "nprocs", nprocs),
    )


def global_to_local(g: int, nb: int, nprocs: int) -> int:
    """Local index of global index g on its owner (ScaLAPACK's indxg2l, 0-based).

    Example:
        >>> import gpula as gl
        >>> gl.distributed.global_to_local(7, 3, 2)
        4
    """
    op = "global_to_local"
    return _gpula.distributed_global_to_local(
        _int(op, "g", g), _int(op, "nb", nb), _int(op, "nprocs", nprocs)
    )


def local_to_global(l: int, nb: int, iproc: int, isrcproc: int, nprocs: int) -> int:  # noqa: E741
    """Global index of local index l on process iproc (ScaLAPACK's indxl2g, 0-based);
    InvalidArgument where it passes int64.

    Example:
        >>> import gpula as gl
        >>> gl.distributed.local_to_global(4, 3, 0, 0, 2)
        7
    """
    op = "local_to_global"
    return _gpula.distributed_local_to_global(
        _int(op, "l", l), _int(op, "nb", nb), _int(op, "iproc", iproc),
        _int(op, "isrcproc", isrcproc), _int(op, "nprocs", nprocs),
    )


def _host(op: str, name: str, x: Any) -> np.ndarray:
    """Host array x as NumPy (torch CPU tensors through their adapter: lazy negative/conjugate
    views resolved, autograd detached); DTypeError naming ``name`` for a GPU or non-array x."""
    if is_gpu_array(x):
        raise DTypeError(f"[distributed.{op}] {name} expected a host array, got a GPU array")
    try:
        if type(x).__module__.split(".")[0] == "torch":
            return package_of(x, f"distributed.{op}", name).to_numpy(x)
        return np.asarray(x)
    except (TypeError, ValueError, RuntimeError) as e:
        raise DTypeError(f"[distributed.{op}] {name} expected a host array, got {e}") from None


def _check_writable(op: str, name: str, x: Any) -> None:
    """InvalidArgument where output ``x`` cannot take writes: a read-only NumPy array, one
    whose elements overlap (a zero stride over an axis longer than 1: broadcast_to, expand), or
    a torch tensor whose memory does not hold its values as they read (a lazy negative or
    conjugate view) or that requires grad (writes would bypass autograd)."""
    if isinstance(x, np.ndarray):
        if not x.flags.writeable:
            raise InvalidArgument(f"[distributed.{op}] {name} is read-only; pass a writable array")
        strides = x.strides
    elif callable(getattr(x, "stride", None)) and hasattr(x, "shape"):  # torch
        if x.is_neg() or x.is_conj():
            raise InvalidArgument(
                f"[distributed.{op}] {name} is a lazy negative/conjugate view, which gpula cannot "
                "write in place; pass a tensor of its own (x.resolve_neg().resolve_conj())"
            )
        if x.requires_grad:
            raise InvalidArgument(
                f"[distributed.{op}] {name} requires grad; gpula writes it in place outside "
                "autograd (pass a detached tensor)"
            )
        strides = tuple(x.stride())
    else:
        return
    if 0 not in tuple(x.shape) and any(s == 0 and d > 1 for s, d in zip(strides, x.shape)):
        raise InvalidArgument(
            f"[distributed.{op}] {name} has overlapping elements (a zero stride, as from "
            f"broadcast_to or expand), strides {tuple(strides)}; pass an array of its own"
        )


def has_mp() -> bool:
    """Whether this build has the multi-process engines (cuSOLVERMp / cuBLASMp over NCCL).

    Example:
        >>> import gpula as gl
        >>> isinstance(gl.distributed.has_mp(), bool)
        True
    """
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

    def __post_init__(self) -> None:
        op = "BlockCyclic"
        for f in fields(self):  # int-like fields become ints
            object.__setattr__(self, f.name, _int(op, f.name, getattr(self, f.name)))
        if (
            self.m < 0 or self.n < 0 or self.mb < 1 or self.nb < 1 or self.nprow < 1
            or self.npcol < 1 or not 0 <= self.rsrc < self.nprow
            or not 0 <= self.csrc < self.npcol
        ):
            raise InvalidArgument(
                f"[distributed.{op}] expected m, n >= 0, mb, nb >= 1, a grid nprow x npcol of at "
                f"least 1x1 and its source (rsrc, csrc) inside it, got m={self.m} n={self.n} "
                f"mb={self.mb} nb={self.nb} nprow={self.nprow} npcol={self.npcol} "
                f"rsrc={self.rsrc} csrc={self.csrc}"
            )

    def _tuple(self) -> tuple[int, ...]:
        return (self.m, self.n, self.mb, self.nb, self.nprow, self.npcol, self.rsrc, self.csrc)

    def _process(self, op: str, prow: Any, pcol: Any) -> tuple[int, int]:
        """(prow, pcol) as ints inside the grid; typed errors of distributed.<op> naming them."""
        prow, pcol = _int(op, "prow", prow), _int(op, "pcol", pcol)
        for name, p, count in (("prow", prow, self.nprow), ("pcol", pcol, self.npcol)):
            if not 0 <= p < count:
                raise InvalidArgument(
                    f"[distributed.{op}] {name} expected inside the {self.nprow}x{self.npcol} "
                    f"grid (0 <= {name} < {count}), got {p}"
                )
        return prow, pcol

    def local_shape(self, prow: int, pcol: int) -> tuple[int, int]:
        """(local rows, local columns) of process (prow, pcol)."""
        prow, pcol = self._process("local_shape", prow, pcol)
        return (
            numroc(self.m, self.mb, prow, self.rsrc, self.nprow),
            numroc(self.n, self.nb, pcol, self.csrc, self.npcol),
        )

    def scatter(self, a: Any, prow: int, pcol: int) -> Any:
        """Process (prow, pcol)'s local piece of host matrix ``a``, column-major (Fortran); a
        NumPy array, or a torch tensor for a (CPU) torch ``a``."""
        prow, pcol = self._process("scatter", prow, pcol)
        host = _host("scatter", "a", a)
        local = np.empty(self.local_shape(prow, pcol), dtype=host.dtype, order="F")
        _gpula.distributed_scatter(host, self._tuple(), prow, pcol, local)
        if type(a).__module__.split(".")[0] == "torch":
            return sys.modules["torch"].from_numpy(local)
        return local

    def gather(self, local: Any, prow: int, pcol: int, out: Any) -> Any:
        """Writes process (prow, pcol)'s entries of ``out`` (m x n, host, writable) from
        ``local``; returns ``out``."""
        prow, pcol = self._process("gather", prow, pcol)
        _check_writable("gather", "out", out)
        _gpula.distributed_gather(_host("gather", "local", local), self._tuple(), prow, pcol, out)
        return out


@dataclass(frozen=True)
class ProcessGroup:
    """The processes that share one distributed problem: this one's rank, their count, how they
    talk ("single", "mpi" or "torch") and this process's GPU (``device``). :func:`init` makes it.

    Example:
        >>> import gpula as gl
        >>> g = gl.distributed.init()      # no launcher: this process alone
        >>> (g.rank, g.size, g.backend)
        (0, 1, 'single')
    """

    rank: int
    size: int
    backend: str
    comm: Any = None
    device: int = 0


_group: ProcessGroup | None = None
_communicator_cache: Any = None


def _env_int(*names: str) -> int | None:
    for n in names:
        v = os.environ.get(n)
        if v is not None and v.strip().lstrip("-").isdigit():
            return int(v)
    return None


_MPI_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")
_LOCAL_RANK_VARS = ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID")


def _torch_group(device: int | None) -> ProcessGroup:
    import torch.distributed as tdist

    if not tdist.is_initialized():
        if _env_int("RANK") is None:
            raise InvalidArgument(
                "[distributed.init] comm 'torch' expected torch.distributed to be initialized "
                "(or torchrun's RANK / WORLD_SIZE)"
            )
        tdist.init_process_group(backend="gloo")  # carries only the NCCL unique id
    dev = device if device is not None else _env_int("LOCAL_RANK") or 0
    return ProcessGroup(tdist.get_rank(), tdist.get_world_size(), "torch", "torch", dev)


def init(comm: Any = None, *, backend: str = "nccl", device: int | None = None) -> ProcessGroup:
    """Finds the process group and this process's GPU; returns the ProcessGroup.

    ``comm``: None (torchrun's RANK / WORLD_SIZE -> torch.distributed; an MPI launcher's
    variables with mpi4py importable -> MPI.COMM_WORLD; else one process), an mpi4py
    communicator, or "torch" (torch.distributed). ``backend``: "nccl" (the only one).
    ``device``: this process's GPU, default LOCAL_RANK (or the MPI launcher's local rank), else
    0. The NCCL communicator itself is made on first use by a multi-process call.

    Example:
        >>> import gpula as gl
        >>> gl.distributed.init().size
        1
    """
    global _group, _communicator_cache
    if backend != "nccl":
        raise InvalidArgument(f"[distributed.init] backend expected 'nccl', got {backend!r}")
    if device is not None and (not isinstance(device, int) or device < 0):
        raise InvalidArgument(
            f"[distributed.init] device expected a GPU ordinal >= 0, got {device!r}"
        )
    local = device if device is not None else (_env_int(*_LOCAL_RANK_VARS) or 0)
    if comm is None:
        if _env_int("RANK") is not None and _env_int("WORLD_SIZE") is not None:
            group = _torch_group(device)
        elif _env_int(*_MPI_SIZE_VARS) is not None:
            try:
                from mpi4py import MPI
            except ImportError:
                group = ProcessGroup(0, 1, "single", None, local)
            else:
                w = MPI.COMM_WORLD
                group = ProcessGroup(int(w.Get_rank()), int(w.Get_size()), "mpi", w, local)
        else:
            group = ProcessGroup(0, 1, "single", None, local)
    elif isinstance(comm, str):
        if comm != "torch":
            raise InvalidArgument(
                f"[distributed.init] comm expected None, an mpi4py communicator or 'torch', "
                f"got {comm!r}"
            )
        group = _torch_group(device)
    elif hasattr(comm, "Get_rank") and hasattr(comm, "Get_size"):
        group = ProcessGroup(int(comm.Get_rank()), int(comm.Get_size()), "mpi", comm, local)
    else:
        raise InvalidArgument(
            f"[distributed.init] comm expected None, an mpi4py communicator or 'torch', "
            f"got {type(comm).__name__}"
        )
    if _group != group:
        _communicator_cache = None
    _group = group
    return _group


def communicator() -> Any:
    """This process's native NCCL communicator (gpula::distributed::Communicator), made on the
    first call (collective: every rank calls it): rank 0 makes the unique id and sends it over
    the group. Raises gl.NotCompiled without the cuSOLVERMp / cuBLASMp build.

    Example:
        >>> import gpula as gl
        >>> comm = gl.distributed.communicator()  # doctest: +SKIP
    """
    return _communicator("communicator")


def _communicator(op: str) -> Any:
    """communicator() for distributed.<op>: its NotCompiled names op."""
    global _communicator_cache
    if _communicator_cache is not None:
        return _communicator_cache
    g = _group if _group is not None else init()
    try:
        uid = _gpula.distributed_unique_id() if g.rank == 0 else None
    except NotCompiled as e:
        raise NotCompiled(f"[distributed.{op}] {e}") from None
    if g.size > 1:
        if g.backend == "mpi":
            uid = g.comm.bcast(uid, root=0)
        elif g.backend == "torch":
            import torch.distributed as tdist

            box = [uid]
            tdist.broadcast_object_list(box, src=0)
            uid = box[0]
    _communicator_cache = _gpula.distributed_communicator(g.rank, g.size, uid, g.device)
    return _communicator_cache


def _single_process(op: str) -> None:
    if _group is not None and _group.size > 1:
        raise InvalidArgument(
            f"[distributed.{op}] a host matrix goes to the GPUs of one process (cusolverMg); "
            f"with {_group.size} ranks pass each rank's local piece with layout="
        )


def _layouts(op: str, layout: Any, count: int) -> tuple[tuple[int, ...], ...]:
    items = (layout,) if count == 1 else layout
    if (
        not isinstance(items, (tuple, list))
        or len(items) != count
        or not all(isinstance(x, BlockCyclic) for x in items)
    ):
        want = "a BlockCyclic" if count == 1 else f"a tuple of {count} BlockCyclic"
        raise InvalidArgument(f"[distributed.{op}] layout expected {want}, got {layout!r}")
    return tuple(x._tuple() for x in items)


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
    a: Any,
    lower: bool = True,
    *,
    layout: BlockCyclic | None = None,
    devices: Any = None,
    block_size: int = 256,
    check_info: bool = True,
) -> Any:
    """Cholesky factor, raising gl.NotPositiveDefinite.

    * ``layout=None``: ``a`` is a host (NumPy) symmetric positive definite matrix, factored
      over several GPUs of this process (cusolverMgPotrf, ``devices``, ``block_size``); returns
      a new array as gl.linalg.cholesky (the other triangle zero).
    * ``layout=BlockCyclic(...)``: ``a`` is this rank's local piece (column-major CuPy /
      PyTorch array on its GPU), factored in place over every rank (cusolverMpPotrf; square
      blocks); the other triangle keeps its input. Returns ``a``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
        >>> l = gl.distributed.cholesky(a, devices=[0])  # doctest: +SKIP
    """
    if layout is not None:
        (la,) = _layouts("cholesky", layout, 1)
        _check_writable("cholesky", "a", a)  # factored in place
        _gpula.distributed_cholesky_mp(
            _communicator("cholesky"), a, la, bool(lower), bool(check_info)
        )
        return a
    _single_process("cholesky")
    return _gpula.distributed_cholesky(
        _host("cholesky", "a", a), bool(lower), _devices("cholesky", devices), int(block_size),
        bool(check_info),
    )


def solve(
    a: Any,
    b: Any,
    assume_a: str = "gen",
    *,
    lower: bool = False,
    layout: Any = None,
    devices: Any = None,
    block_size: int = 256,
    check_info: bool = True,
) -> Any:
    """x with a x = b: assume_a "gen" (LU with partial pivoting) or "pos" (Cholesky, reading
    the ``lower`` else upper triangle). Raises gl.SingularMatrix / gl.NotPositiveDefinite.

    * ``layout=None``: host (NumPy) ``a`` and ``b`` ((n,) or (n, k)) over several GPUs of this
      process (cusolverMg); returns a new array.
    * ``layout=(a_layout, b_layout)``: this rank's local pieces (column-major, on its GPU) over
      every rank (cuSOLVERMp); ``b`` is overwritten by x and ``a`` by its factors. Returns ``b``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> x = gl.distributed.solve(np.eye(3), np.ones(3))  # doctest: +SKIP
    """
    if layout is not None:
        la, lb = _layouts("solve", layout, 2)
        for name, x in (("a", a), ("b", b)):  # factored and solved in place
            _check_writable("solve", name, x)
        _gpula.distributed_solve_mp(
            _communicator("solve"), a, la, b, lb, assume_a, bool(lower), bool(check_info)
        )
        return b
    _single_process("solve")
    return _gpula.distributed_solve(
        _host("solve", "a", a), _host("solve", "b", b), assume_a, bool(lower), _devices("solve", devices),
        int(block_size), bool(check_info),
    )


def eigh(
    a: Any,
    lower: bool = True,
    eigvals_only: bool = False,
    *,
    layout: BlockCyclic | None = None,
    devices: Any = None,
    block_size: int = 256,
    check_info: bool = True,
) -> Any:
    """Eigenvalues (ascending) and eigenvectors of symmetric ``a``: ``(w, v)``, or ``w`` with
    ``eigvals_only=True``.

    * ``layout=None``: host (NumPy) ``a`` over several GPUs of this process (cusolverMgSyevd).
    * ``layout=BlockCyclic(...)``: this rank's local piece on its GPU, over every rank
      (cusolverMpSyevd, lower triangle only); ``a`` is destroyed. ``w`` (n,) is on every rank's
      GPU, ``v`` is this rank's local piece of the eigenvectors (a's layout, column-major), both
      in a's package (CuPy / PyTorch).

    Example:
        >>> import numpy as np, gpula as gl
        >>> w, v = gl.distributed.eigh(np.diag([2.0, 1.0]))  # doctest: +SKIP
    """
    if layout is not None:
        (la,) = _layouts("eigh", layout, 1)
        _check_writable("eigh", "a", a)  # overwritten by the reduction
        fw = FRAMEWORK.get(package_of(a).name, 3)
        w, v, _ = _gpula.distributed_eigh_mp(
            _communicator("eigh"), a, la, bool(lower), bool(eigvals_only), bool(check_info), fw
        )
        if fw == 3:  # a generic DLPack array: CuPy or torch on the GPU
            gpu = package_of(a).gpu("distributed.eigh")  # type: ignore[attr-defined]
            w, v = (None if x is None else gpu.from_dlpack(x) for x in (w, v))
        return w if eigvals_only else (w, v)
    _single_process("eigh")
    w, v, _ = _gpula.distributed_eigh(
        _host("eigh", "a", a), bool(lower), bool(eigvals_only), _devices("eigh", devices),
        int(block_size), bool(check_info),
    )
    return w if eigvals_only else (w, v)


def matmul(
    a: Any,
    b: Any,
    c: Any = None,
    *,
    layout: Any = None,
    alpha: float = 1.0,
    beta: float = 0.0,
) -> Any:
    """c <- alpha a b + beta c over every rank (cublasMpGemm): this rank's local pieces of a
    (m x k), b (k x n) and c (m x n), column-major on its GPU, one dtype (float32, float64 or
    bfloat16, which accumulates in float32), ``layout=(a_layout, b_layout, c_layout)`` with
    chaining blocks (a's nb == b's mb, a's mb == c's mb, b's nb == c's nb). Returns ``c``.

    Example:
        >>> import gpula as gl
        >>> d = gl.distributed.BlockCyclic(m=4096, n=4096)
        >>> c = gl.distributed.matmul(a, b, c, layout=(d, d, d))  # doctest: +SKIP
    """
    if c is None or layout is None:
        raise InvalidArgument(
            "[distributed.matmul] expected this rank's local pieces a, b, c and "
            "layout=(a_layout, b_layout, c_layout)"
        )
    la, lb, lc = _layouts("matmul", layout, 3)
    _check_writable("matmul", "c", c)
    op = "distributed.matmul"
    _gpula.distributed_matmul_mp(  # a and b exported: a lazy view's values materialized
        _communicator("matmul"), export(a, op, "a"), la, export(b, op, "b"), lb, c, lc,
        float(alpha), float(beta)
    )
    return c
