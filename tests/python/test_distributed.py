"""gpula.distributed: block-cyclic helpers (host, run everywhere), process-group setup, and the
cusolverMg solvers on the GPUs there are (one is enough) against NumPy/SciPy float64."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import gpula as gl

dist = gl.distributed


def _brute_numroc(n, nb, p, src, np_):
    return sum(1 for g in range(n) if (src + g // nb) % np_ == p)


@pytest.mark.parametrize("n", [0, 1, 10, 65])
@pytest.mark.parametrize("nb", [1, 2, 16])
@pytest.mark.parametrize("nprocs", [1, 3, 4])
def test_numroc_matches_brute_force(n, nb, nprocs):
    for src in range(nprocs):
        counts = [dist.numroc(n, nb, p, src, nprocs) for p in range(nprocs)]
        assert counts == [_brute_numroc(n, nb, p, src, nprocs) for p in range(nprocs)]
        assert sum(counts) == n


def test_index_maps_round_trip():
    for g in range(40):
        p = dist.owner(g, 3, 1, 4)
        lidx = dist.global_to_local(g, 3, 4)
        assert dist.local_to_global(lidx, 3, p, 1, 4) == g


@pytest.mark.parametrize(
    "layout",
    [
        dist.BlockCyclic(1, 1, 1, 1),
        dist.BlockCyclic(13, 9, 4, 2, 2, 3, 1, 2),
        dist.BlockCyclic(7, 20, 3, 5, 3, 1),
    ],
)
def test_scatter_gather_round_trip(layout):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((layout.m, layout.n))
    a_before = a.copy()
    out = np.full_like(a, np.nan)
    for p in range(layout.nprow):
        for q in range(layout.npcol):
            local = layout.scatter(a, p, q)
            assert local.shape == layout.local_shape(p, q)
            assert local.flags.f_contiguous
            rows = [dist.local_to_global(i, layout.mb, p, layout.rsrc, layout.nprow)
                    for i in range(local.shape[0])]
            cols = [dist.local_to_global(j, layout.nb, q, layout.csrc, layout.npcol)
                    for j in range(local.shape[1])]
            np.testing.assert_array_equal(local, a[np.ix_(rows, cols)])
            layout.gather(local, p, q, out)
    np.testing.assert_array_equal(out, a)
    np.testing.assert_array_equal(a, a_before)


def test_scatter_non_contiguous_input():
    a = np.arange(64.0).reshape(8, 8)[::2, ::-1]
    layout = dist.BlockCyclic(4, 8, 2, 3, 2, 2)
    out = np.zeros((4, 8))
    for p in range(2):
        for q in range(2):
            layout.gather(layout.scatter(a, p, q), p, q, out)
    np.testing.assert_array_equal(out, a)


def test_helper_errors():
    with pytest.raises(gl.InvalidArgument, match=r"\[distributed.numroc\]"):
        dist.numroc(-1, 2, 0, 0, 1)
    with pytest.raises(gl.InvalidArgument, match=r"local_shape"):
        dist.BlockCyclic(4, 4, 2, 2).local_shape(1, 0)
    with pytest.raises(gl.InvalidArgument, match=r"local expected shape"):
        dist.BlockCyclic(4, 4, 2, 2, 2, 1).gather(np.zeros((4, 4)), 0, 0, np.zeros((4, 4)))
    with pytest.raises(gl.DTypeError):
        dist.BlockCyclic(2, 2, 1, 1).gather(np.zeros((2, 2), np.float32), 0, 0, np.zeros((2, 2)))


@pytest.mark.parametrize(
    "f, args",
    [
        (dist.numroc, dict(n=10, nb=3, iproc=1, isrcproc=0, nprocs=2)),
        (dist.owner, dict(g=10, nb=3, isrcproc=1, nprocs=2)),
        (dist.global_to_local, dict(g=10, nb=3, nprocs=2)),
        (dist.local_to_global, dict(l=4, nb=3, iproc=1, isrcproc=0, nprocs=2)),
    ],
)
def test_index_arguments_are_typed(f, args):
    op = f"[distributed.{f.__name__}]"
    want = f(*args.values())
    assert f(*(np.int64(v) for v in args.values())) == want  # int-like (operator.index)
    for name in args:
        for bad, err, word in ((1.5, gl.DTypeError, "float"), (None, gl.DTypeError, "NoneType"),
                               ("3", gl.DTypeError, "str"), (True, gl.DTypeError, "bool"),
                               (2**70, gl.InvalidArgument, str(2**70))):
            with pytest.raises(err) as e:
                f(*{**args, name: bad}.values())
            msg = str(e.value)
            assert msg.startswith(op) and f" {name} " in msg and word in msg, msg


def test_index_maps_at_the_int64_edge():
    big = 2**62
    # the reference: Python's unbounded ints
    assert dist.global_to_local(10, 3, big) == (10 // (3 * big)) * 3 + 10 % 3
    assert dist.owner(2**63 - 1, 1, 2**63 - 2, 2**63 - 1) == (2**63 - 2 + 2**63 - 1) % (2**63 - 1)
    assert dist.numroc(2**63 - 1, 1, 0, 2**63 - 2, 2**63 - 1) == 1
    assert dist.local_to_global(big - 1, 1, 1, 0, 2) == 2 * (big - 1) + 1
    for args in ((big, 3, 1, 0, 2), (4, 3, 1, 0, big)):  # the result passes int64
        with pytest.raises(gl.InvalidArgument,
                           match=r"^\[distributed.local_to_global\] .*overflows"):
            dist.local_to_global(*args)


def test_block_cyclic_checks_its_fields_and_process():
    d = dist.BlockCyclic(np.int64(4), 4)
    assert d.m == 4 and type(d.m) is int
    with pytest.raises(gl.InvalidArgument, match=r"^\[distributed.BlockCyclic\] .*m=-5 .*mb=0"):
        dist.BlockCyclic(m=-5, n=4, mb=0)
    with pytest.raises(gl.InvalidArgument, match=r"rsrc=2"):
        dist.BlockCyclic(4, 4, nprow=2, rsrc=2)
    with pytest.raises(gl.DTypeError, match=r"^\[distributed.BlockCyclic\] nb expected an int"):
        dist.BlockCyclic(4, 4, nb=2.0)
    d = dist.BlockCyclic(5, 4, 2, 2, nprow=2)
    for op, call in (("local_shape", lambda p, q: d.local_shape(p, q)),
                     ("scatter", lambda p, q: d.scatter(np.zeros((5, 4)), p, q)),
                     ("gather", lambda p, q: d.gather(np.zeros((2, 4)), p, q, np.zeros((5, 4))))):
        with pytest.raises(gl.InvalidArgument, match=rf"^\[distributed.{op}\] prow .* got -1"):
            call(-1, 0)
        with pytest.raises(gl.InvalidArgument, match=rf"^\[distributed.{op}\] pcol .* got 1"):
            call(1, 1)
        with pytest.raises(gl.DTypeError, match=rf"^\[distributed.{op}\] prow expected an integer"):
            call("1", 0)


def test_scatter_gather_name_a_and_out():
    d = dist.BlockCyclic(5, 4, 2, 2, nprow=2)
    local = np.arange(8.0).reshape(2, 4)
    for a, err, words in ((np.zeros((0, 4)), gl.InvalidArgument, "a expected shape (5, 4)"),
                          (np.zeros((5, 4), bool), gl.DTypeError, "a: dtype bool"),
                          (None, gl.DTypeError, "a: dtype object")):
        with pytest.raises(err) as e:
            d.scatter(a, 1, 0)
        assert str(e.value).startswith("[distributed.scatter] ") and words in str(e.value)
    out = np.zeros((5, 4))
    ro = out.copy()
    ro.flags.writeable = False
    for bad, err, words in ((ro, gl.InvalidArgument, "out is read-only"),
                            (np.zeros((5, 4), np.int32), gl.DTypeError, "out and local"),
                            (np.zeros((5, 0)), gl.InvalidArgument, "out expected shape (5, 4)"),
                            (None, gl.DTypeError, "out "),
                            ([[0.0] * 4] * 5, gl.DTypeError, "out ")):
        with pytest.raises(err) as e:
            d.gather(local, 1, 0, bad)
        assert str(e.value).startswith("[distributed.gather] ") and words in str(e.value)
    np.testing.assert_array_equal(ro, 0)
    torch = pytest.importorskip("torch")
    with pytest.raises(gl.InvalidArgument, match=r"out has overlapping elements"):
        d.gather(local, 1, 0, torch.zeros(1, 4, dtype=torch.float64).expand(5, 4))
    a = torch.arange(20.0, dtype=torch.float64).reshape(5, 4)
    piece = d.scatter(a, 1, 0)
    assert isinstance(piece, torch.Tensor)
    np.testing.assert_array_equal(piece.numpy(), a.numpy()[[2, 3], :])
    t_out = torch.zeros(5, 4, dtype=torch.float64)
    assert d.gather(piece, 1, 0, t_out) is t_out
    np.testing.assert_array_equal(t_out.numpy()[[2, 3], :], a.numpy()[[2, 3], :])


@pytest.mark.skipif(gl.devices()["cuda_compiled"], reason="a build without CUDA")
def test_not_compiled_names_the_operation():
    a = np.eye(3)
    for op, call in (("cholesky", lambda: dist.cholesky(a)), ("solve", lambda: dist.solve(a, a)),
                     ("eigh", lambda: dist.eigh(a)), ("communicator", dist.communicator)):
        with pytest.raises(gl.NotCompiled, match=rf"^\[distributed.{op}\] gpula was built without"):
            call()
    if not dist.has_mp():
        with pytest.raises(gl.NotCompiled, match=r"^\[distributed.cholesky\] "):
            dist.cholesky(a, layout=dist.BlockCyclic(3, 3))


def test_init_single_process_and_errors():
    g = dist.init()
    assert (g.rank, g.size, g.backend) == (0, 1, "single")
    with pytest.raises(gl.InvalidArgument, match=r"\[distributed.init\]"):
        dist.init("nccl")
    with pytest.raises(gl.InvalidArgument, match=r"\[distributed.init\]"):
        dist.init(42)

    class FakeComm:  # the two methods init reads from an mpi4py communicator
        def Get_rank(self):
            return 1

        def Get_size(self):
            return 2

    g2 = dist.init(FakeComm())
    assert (g2.rank, g2.size, g2.backend) == (1, 2, "mpi")
    with pytest.raises(gl.InvalidArgument, match="layout="):
        dist.cholesky(np.eye(2))
    with pytest.raises(gl.InvalidArgument, match="backend expected 'nccl'"):
        dist.init(backend="gloo")
    with pytest.raises(gl.InvalidArgument, match="device expected"):
        dist.init(device=-1)
    assert dist.init(device=3).device == 3
    dist.init()


def test_init_reads_torchrun_and_mpi_environment(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
              "PMIX_SIZE", "MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
              "SLURM_LOCALID"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("LOCAL_RANK", "2")
    g = dist.init()
    assert (g.rank, g.size, g.backend, g.device) == (0, 1, "single", 2)
    monkeypatch.delenv("LOCAL_RANK")
    dist.init()


def test_init_with_mpi4py_one_rank():
    mpi = pytest.importorskip("mpi4py.MPI")
    g = dist.init(mpi.COMM_WORLD)
    assert g.backend == "mpi" and 0 <= g.rank < g.size
    dist.init()


def test_matmul_and_front_errors_without_device():
    assert isinstance(dist.has_mp(), bool)
    with pytest.raises(gl.InvalidArgument, match="local pieces"):
        dist.matmul(np.eye(2), np.eye(2))
    d = dist.BlockCyclic(2, 2)
    with pytest.raises(gl.InvalidArgument, match="layout expected a tuple of 3 BlockCyclic"):
        dist.matmul(np.eye(2), np.eye(2), np.eye(2), layout=d)
    with pytest.raises(gl.InvalidArgument, match="layout expected a BlockCyclic"):
        dist.cholesky(np.eye(2), layout=(2, 2))
    if not dist.has_mp():
        with pytest.raises(gl.NotCompiled, match="GPULA_CUSOLVERMP_ROOT"):
            dist.cholesky(np.eye(2), layout=d)
        with pytest.raises(gl.NotCompiled):
            dist.communicator()
    with pytest.raises(gl.InvalidArgument, match="square"):
        dist.cholesky(np.zeros((2, 3)))
    with pytest.raises(gl.DTypeError):
        dist.eigh(np.eye(2, dtype=np.int32))
    with pytest.raises(gl.InvalidArgument, match="distinct"):
        dist.cholesky(np.eye(2), devices=[0, 0])
    with pytest.raises(gl.InvalidArgument, match="b expected shape"):
        dist.solve(np.eye(2), np.ones(3))
    with pytest.raises(gl.NotSupported, match="sym"):
        dist.solve(np.eye(2), np.ones(2), assume_a="sym")
    assert dist.cholesky(np.zeros((0, 0))).shape == (0, 0)


def _spd(rng, n):
    x = rng.standard_normal((n, n))
    return x @ x.T + n * np.eye(n)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cholesky_solve_eigh_on_gpus(dtype):
    rng = np.random.default_rng(11)
    n = 300
    tol = 1e-3 if dtype == "float32" else 1e-9
    a = _spd(rng, n).astype(dtype)
    a_before = a.copy()
    for lower in (True, False):
        c = dist.cholesky(a, lower, devices=[0], block_size=64)
        ref = scipy.linalg.cholesky(a.astype(np.float64), lower=lower)
        np.testing.assert_allclose(c, ref, atol=tol * np.abs(ref).max())
    np.testing.assert_array_equal(a, a_before)
    g = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, 4)).astype(dtype)
    x = dist.solve(g, b, devices=[0], block_size=64)
    ref = np.linalg.solve(g.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(x, ref, atol=tol * 100 * np.abs(ref).max())
    x1 = dist.solve(a, b[:, 0], assume_a="pos", lower=True)  # every GPU, 1-D b
    assert x1.shape == (n,)
    np.testing.assert_allclose(x1, np.linalg.solve(a.astype(np.float64), b[:, 0]),
                               atol=tol * np.abs(x1).max())
    s = (g + g.T) / 2
    w, v = dist.eigh(s, devices=[0], block_size=64)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s.astype(np.float64)),
                               atol=tol * 10 * np.abs(w).max())
    np.testing.assert_allclose(s @ v, v * w[None, :], atol=tol * 10 * np.abs(w).max())
    w_up = dist.eigh(s, lower=False, eigvals_only=True, devices=[0])
    np.testing.assert_allclose(w_up, w, atol=tol * 10 * np.abs(w).max())


@pytest.mark.gpu
def test_failures_on_gpus():
    rng = np.random.default_rng(12)
    a = _spd(rng, 64)
    a[30, 30] = -1e6
    # cusolverMgPotrf reports this as CUSOLVER_STATUS_INTERNAL_ERROR (seen on the H200).
    with pytest.raises((gl.NotPositiveDefinite, gl.CusolverError)):
        dist.cholesky(a, devices=[0])
    s = rng.standard_normal((64, 64))
    s[5] = 0.0
    with pytest.raises(gl.SingularMatrix):
        dist.solve(s, np.ones(64), devices=[0])
    with pytest.raises(gl.InvalidArgument, match="ordinals below"):
        dist.cholesky(np.eye(4), devices=[4096])


_mp_gpu = pytest.mark.skipif(not dist.has_mp(), reason="built without cuSOLVERMp / cuBLASMp")


def _gpu_lib():
    """(to_device, to_host): column-major GPU arrays of torch, else CuPy."""
    try:
        import torch

        def dev(x):
            x = np.asarray(x)
            r, c = x.shape
            t = torch.empty_strided((r, c), (1, max(r, 1)), dtype=getattr(torch, str(x.dtype)),
                                    device="cuda")
            return t.copy_(torch.from_numpy(np.ascontiguousarray(x)))

        return dev, lambda t: t.cpu().numpy()
    except ImportError:
        cp = pytest.importorskip("cupy")
        return (lambda x: cp.asarray(np.asfortranarray(x))), cp.asnumpy


@pytest.mark.gpu
@_mp_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mp_cholesky_solve_eigh_one_rank(dtype):
    dev, host = _gpu_lib()
    dist.init()
    rng = np.random.default_rng(21)
    n = 300
    tol = 1e-3 if dtype == "float32" else 1e-9
    layout = dist.BlockCyclic(n, n, 64, 64)
    a = _spd(rng, n).astype(dtype)
    local = dev(layout.scatter(a, 0, 0))  # Fortran order: column-major
    assert dist.cholesky(local, layout=layout) is local
    ref = scipy.linalg.cholesky(a.astype(np.float64), lower=True)
    np.testing.assert_allclose(np.tril(host(local)), ref, atol=tol * np.abs(ref).max())

    g = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, 3)).astype(dtype)
    lb = dist.BlockCyclic(n, 3, 64, 64)
    ga, bb = dev(layout.scatter(g, 0, 0)), dev(lb.scatter(b, 0, 0))
    x = dist.solve(ga, bb, layout=(layout, lb))
    ref = np.linalg.solve(g.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(host(x), ref, atol=tol * 100 * np.abs(ref).max())
    pa, pb = dev(layout.scatter(a, 0, 0)), dev(lb.scatter(b, 0, 0))
    x = dist.solve(pa, pb, "pos", lower=True, layout=(layout, lb))
    np.testing.assert_allclose(host(x), np.linalg.solve(a.astype(np.float64), b),
                               atol=tol * np.abs(ref).max())

    s = ((g + g.T) / 2).astype(dtype)
    w, v = dist.eigh(dev(layout.scatter(s, 0, 0)), layout=layout)
    assert tuple(w.shape) == (n,) and tuple(v.shape) == (n, n)
    w, v = host(w), host(v)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s.astype(np.float64)),
                               atol=tol * 10 * np.abs(w).max())
    np.testing.assert_allclose(s @ v, v * w[None, :], atol=tol * 10 * np.abs(w).max())
    with pytest.raises(gl.NotSupported, match="lower=false"):
        dist.eigh(dev(layout.scatter(s, 0, 0)), lower=False, layout=layout)


@pytest.mark.gpu
@_mp_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mp_matmul_one_rank(dtype):
    dev, host = _gpu_lib()
    dist.init()
    rng = np.random.default_rng(22)
    m, k, n = 300, 200, 100
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = rng.standard_normal((m, n)).astype(dtype)
    da, db, dc = (dist.BlockCyclic(r, q, 64, 64) for r, q in ((m, k), (k, n), (m, n)))
    loc = [dev(d.scatter(x, 0, 0)) for d, x in ((da, a), (db, b), (dc, c))]
    out = dist.matmul(*loc, layout=(da, db, dc), alpha=2.0, beta=0.5)
    assert out is loc[2]
    ref = 2.0 * a.astype(np.float64) @ b + 0.5 * c
    tol = 1e-3 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(host(out), ref, atol=tol * np.abs(ref).max())
    with pytest.raises(gl.InvalidArgument, match="column-major"):
        dist.matmul(dev(a.T).T, *loc[1:], layout=(da, db, dc))  # row-major (C order)


@pytest.mark.gpu
@_mp_gpu
def test_mp_failures_one_rank():
    dev, _ = _gpu_lib()
    dist.init()
    rng = np.random.default_rng(23)
    a = _spd(rng, 128)
    a[70, 70] = -1e6
    d = dist.BlockCyclic(128, 128, 64, 64)
    with pytest.raises(gl.NotPositiveDefinite):
        dist.cholesky(dev(d.scatter(a, 0, 0)), layout=d)
    with pytest.raises(gl.InvalidArgument, match=r"grid 2x1 expected comm\.size"):
        d2 = dist.BlockCyclic(128, 128, 64, 64, nprow=2)
        dist.cholesky(dev(d.scatter(a, 0, 0)), layout=d2)


def test_docstring_examples():
    import doctest

    result = doctest.testmod(dist, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0 and result.attempted > 0
    dist.init()
