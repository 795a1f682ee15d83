"""gpula.torch.optim (issue 20): Muon and Shampoo, one optimizer built and stepped per case.

``make`` draws NumPy weights and gradients; ``call`` makes float64 torch Parameters of copies of
them, builds the optimizer with ``kw`` (the options: bad hyperparameters must raise
gl.InvalidArgument naming "[torch.optim.<Name>]" and the argument), takes one step and returns
the parameters. References: one step in float64 NumPy (Muon's Newton-Schulz in float64, compared
at bfloat16's tolerance, since gpula's Muon iterates in bfloat16; Shampoo's roots by eigh).
Scenarios: NaN/Inf gradients (no crash or hang; that parameter may turn NaN, as in torch.optim,
but a parameter of the same shape batched beside it must still be right), empty parameters,
parameters without gradients (skipped), complex parameters and sparse gradients
(gl.NotSupported), non-2-D parameters for Muon, and steps from several threads on one optimizer
(results may race, as in torch; no crash and no untyped error).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

import gpula as gl

from .catalog_optim import MUON, NS_TOL, newton_schulz
from .core import HAS_TORCH, Entry, Opt, as_np, judge_error, torch_module

_LAST: dict[str, Any] = {}


def _gt() -> Any:
    import gpula.torch as gt

    return gt


def _kw(d: dict) -> dict:
    return d.get("kw", {})


def _torch_kw(kw: dict) -> dict:
    """The options as the optimizer takes them (an ndarray lr: the tensor of it)."""
    torch = torch_module()
    return {k: torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v
            for k, v in kw.items()}


def _params(d: dict) -> list[Any]:
    """Parameters of copies of d["W"] (a list), their grads d["G"] (None: no gradient; "sparse":
    the gradient as a sparse tensor)."""
    torch = torch_module()
    out = []
    for w, g in zip(d["W"], d["G"]):
        p = torch.nn.Parameter(torch.from_numpy(np.array(w)))
        if g is not None:
            p.grad = torch.from_numpy(np.array(g))
        out.append(p)
    return out


def _call(name: str, steps: Callable[[Any, list], Any] | None = None) -> Callable[[dict], Any]:
    def call(d: dict) -> Any:
        _LAST.clear()
        _LAST["exc"] = None
        try:
            params = _params(d)
            if d.get("sparse"):
                params[0].grad = params[0].grad.to_sparse()
            opt = getattr(_gt().optim, name)(params, **_torch_kw(_kw(d)))
            if steps is not None:
                return steps(opt, params)
            opt.step()
            return tuple(p.detach() for p in params)
        except Exception as e:
            _LAST["exc"] = e
            raise

    return call


def _after(want: type) -> Callable[[dict, bool], str | None]:
    def after(d: dict, raised: bool) -> str | None:
        e = _LAST.get("exc")
        if isinstance(e, gl.Error) and not isinstance(e, want):
            return f"{type(e).__name__}, not gl.{want.__name__}: {e}"
        return None

    return after


def _rel(x: Any, r: np.ndarray, tol: float, what: str) -> str | None:
    x = np.asarray(as_np(x), dtype=np.float64)
    if x.shape != r.shape:
        return f"{what} shape {x.shape}, reference {r.shape}"
    if not np.isfinite(x).all():
        return f"{what} is not finite"
    err = np.linalg.norm(x - r) / max(np.linalg.norm(r), 1e-300)
    return None if err <= tol or not r.size else f"{what} off by {err:.2e} > {tol:.0e}"


def _check(tol: float, skip: tuple[int, ...] = ()) -> Callable:
    """Each returned parameter's step (W - result) against the reference's (relative); the
    parameters at ``skip`` (NaN gradients) only by shape and dtype."""

    def check(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
        if not (isinstance(r, tuple) and len(r) == len(ref)):
            return f"returns {type(r).__name__}, not the {len(ref)} parameters"
        for i, (x, want, w) in enumerate(zip(r, ref, d["W"])):
            if tuple(x.shape) != w.shape or str(x.dtype) != "torch.float64":
                return f"parameter {i}: {x.dtype} {tuple(x.shape)}, want float64 {w.shape}"
            if i in skip:
                continue
            if want is None:  # no gradient: untouched
                if not np.array_equal(as_np(x), w):
                    return f"parameter {i} (no gradient) changed"
                continue
            bad = _rel(w - as_np(x), w - want, tol, f"parameter {i}'s step")
            if bad:
                return bad
        return None

    return check


# ---------------------------------------------------------------------------------------------
# References: one step from a fresh state, float64 NumPy


def _lr(kw: dict) -> float:
    lr = kw.get("lr", 1e-3)
    return float(np.asarray(lr).reshape(-1)[0]) if isinstance(lr, np.ndarray) else float(lr)


def muon_step(w: np.ndarray, g: np.ndarray | None, kw: dict) -> np.ndarray | None:
    if g is None:
        return None
    lr, wd, mu = _lr(kw), kw.get("weight_decay", 0.1), kw.get("momentum", 0.95)
    buf = (1 - mu) * g
    update = g + mu * (buf - g) if kw.get("nesterov", True) else buf
    o = newton_schulz(update, kw.get("ns_steps", 5), kw.get("ns_coefficients", MUON),
                      kw.get("eps", 1e-7))
    a, b = w.shape
    if kw.get("adjust_lr_fn") == "match_rms_adamw":
        adj = lr * 0.2 * np.sqrt(max(a, b))
    else:
        adj = lr * np.sqrt(max(1.0, a / b)) if b else 0.0
    return w * (1 - lr * wd) - adj * o


def _inv4(m: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eigh(m)
    return (v * w ** -0.25) @ v.T


def shampoo_step(w: np.ndarray, g: np.ndarray | None, kw: dict) -> np.ndarray | None:
    if g is None:
        return None
    lr, (b1, b2) = _lr(kw), kw.get("betas", (0.9, 0.999))
    eps, wd = kw.get("epsilon", 1e-12), kw.get("weight_decay", 0.0)
    block, adam_eps = kw.get("max_preconditioner_dim", 1024), kw.get("adam_eps", 1e-8)
    m_hat = (1 - b1) * g / (1 - b1)
    v_hat = (1 - b2) * g * g / (1 - b2)
    adam = m_hat / (np.sqrt(v_hat) + adam_eps)
    d = adam.copy()
    if w.ndim == 2:
        for i in range(0, w.shape[0], block):
            for j in range(0, w.shape[1], block):
                gb = g[i:i + block, j:j + block]
                pl = _inv4((1 - b2) * gb @ gb.T + eps * np.eye(gb.shape[0]))
                pr = _inv4((1 - b2) * gb.T @ gb + eps * np.eye(gb.shape[1]))
                db = pl @ m_hat[i:i + block, j:j + block] @ pr
                ab = adam[i:i + block, j:j + block]
                d[i:i + block, j:j + block] = db * np.linalg.norm(ab) / np.linalg.norm(db)
    return w - lr * (d + wd * w)


def _ref(step: Callable, skip: tuple[int, ...] = ()) -> Callable[[dict], Any]:
    return lambda d: tuple(None if i in skip else step(w, g, _kw(d))
                           for i, (w, g) in enumerate(zip(d["W"], d["G"])))


# ---------------------------------------------------------------------------------------------
# Entries


def _draw(g: np.random.Generator, shapes: list[tuple[int, ...]], kw: dict) -> dict:
    return {"W": [g.standard_normal(s) for s in shapes],
            "G": [g.standard_normal(s) for s in shapes], "kw": dict(kw)}


def _poke(value: float, where: int = 0) -> Callable[[dict], dict]:
    def f(d: dict) -> dict:
        d["G"][where].flat[1] = value
        return d

    return f


def _threads(op: str) -> Callable[[Any, list], Any]:
    def steps(opt: Any, params: list) -> Any:
        errors: list[BaseException] = []
        barrier = threading.Barrier(4)

        def body() -> None:
            try:
                barrier.wait()
                for _ in range(5):
                    opt.step()
            except BaseException as e:  # noqa: BLE001  (judged by the check)
                errors.append(e)

        ts = [threading.Thread(target=body) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return tuple(p.detach() for p in params), errors

    return steps


def _check_threads(op: str) -> Callable:
    def check(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
        params, errors = r
        for e in errors:
            bad = judge_error(e, op, None)
            if bad:
                return f"in a thread: {bad[0]}: {bad[1]}"
        for i, (x, w) in enumerate(zip(params, d["W"])):
            if tuple(x.shape) != w.shape or not np.isfinite(as_np(x)).all():
                return f"parameter {i}: shape {tuple(x.shape)} or not finite after the threads"
        return None

    return check


def _std(name: str) -> list[Opt]:
    return [Opt("lr_neg", {"lr": -1.0}, mention="lr"),
            Opt("lr_nan", {"lr": float("nan")}, mention="lr"),
            Opt("lr_str", {"lr": "0.1"}, mention="lr"),
            Opt("lr_none", {"lr": None}, mention="lr"),
            Opt("lr_zero", {"lr": 0.0}, expect="ref"),
            Opt("weight_decay_neg", {"weight_decay": -1.0}, mention="weight_decay"),
            Opt("weight_decay_zero", {"weight_decay": 0.0}, expect="ref"),
            Opt("unknown_kw", {"foo": 1}, expect="signature", mention="foo")]


def _scenarios(name: str, step: Callable, shapes: list, kw: dict, tol: float,
               extra: list[Entry]) -> list[Entry]:
    op = f"torch.optim.{name}"
    ok = dict(after=_after(gl.InvalidArgument), torch_results=True)
    unsupported = dict(ref=None, check=_check(tol), after=_after(gl.NotSupported),
                       torch_results=True, mention="params")

    def mk(shp: list, edit: Callable[[dict], dict] = lambda d: d, **more: Any) -> Callable:
        return lambda g: edit({**_draw(g, shp, kw), **more})

    def no_grad(d: dict) -> dict:
        d["G"][1] = None
        return d

    def complex_(d: dict) -> dict:
        d["W"] = [w + 1j for w in d["W"]]
        d["G"] = [x + 1j for x in d["G"]]
        return d

    same = [shapes[0], shapes[0]]  # two of one shape: Muon batches them, Shampoo groups roots
    out = [
        Entry(f"{op}[nan grad]", op, mk(same, _poke(np.nan)), _call(name), _ref(step, (0,)),
              _check(tol, (0,)), **ok),
        Entry(f"{op}[inf grad]", op, mk(same, _poke(np.inf)), _call(name), _ref(step, (0,)),
              _check(tol, (0,)), **ok),
        Entry(f"{op}[-inf grads]", op, mk(same, lambda d: _poke(-np.inf, 1)(_poke(-np.inf)(d))),
              _call(name), _ref(step, (0, 1)), _check(tol, (0, 1)), **ok),
        Entry(f"{op}[empty rows]", op, mk([(0, 5), shapes[0]]), _call(name), _ref(step),
              _check(tol), **ok),
        Entry(f"{op}[empty cols]", op, mk([(5, 0), shapes[0]]), _call(name), _ref(step),
              _check(tol), **ok),
        Entry(f"{op}[no grad]", op, mk(same, no_grad), _call(name), _ref(step), _check(tol),
              **ok),
        Entry(f"{op}[complex]", op, mk(same, complex_), _call(name), **unsupported),
        Entry(f"{op}[sparse grad]", op, mk(same, sparse=True), _call(name), **unsupported),
        Entry(f"{op}[threads]", op, mk([shapes[0]] * 3), _call(name, _threads(op)),
              lambda d: None, _check_threads(op), after=_after(gl.Error), timeout=60.0),
    ]
    return out + extra


def muon_entries() -> list[Entry]:
    op = "torch.optim.Muon"
    kw = {"lr": 0.02}
    shapes = [(8, 5), (5, 8), (6, 6)]
    tol = NS_TOL["bfloat16"]
    options = (*_std("Muon"),
               Opt("lr_tensor", {"lr": np.array([0.02])}, expect="ref"),
               Opt("lr_tensor2", {"lr": np.array([0.02, 0.01])}, mention="lr"),
               Opt("momentum_neg", {"momentum": -0.1}, mention="momentum"),
               Opt("momentum_nan", {"momentum": float("nan")}, mention="momentum"),
               Opt("momentum_0.9", {"momentum": 0.9}, expect="ref"),
               Opt("nesterov_false", {"nesterov": False}, expect="ref"),
               Opt("adjust_lr_fn_bogus", {"adjust_lr_fn": "x"}, mention="adjust_lr_fn"),
               Opt("adjust_lr_fn_original", {"adjust_lr_fn": "original"}, expect="ref"),
               Opt("adjust_lr_fn_match", {"adjust_lr_fn": "match_rms_adamw"}, expect="ref"),
               Opt("ns_steps_100", {"ns_steps": 100}, mention="ns_steps"),
               Opt("ns_steps_neg", {"ns_steps": -1}, mention="ns_steps"),
               Opt("ns_steps_float", {"ns_steps": 1.5}, mention="ns_steps"),
               Opt("ns_steps_str", {"ns_steps": "5"}, mention="ns_steps"),
               Opt("ns_steps_3", {"ns_steps": 3}, expect="ref"),
               Opt("eps_neg", {"eps": -1.0}, mention="eps"),
               Opt("eps_nan", {"eps": float("nan")}, mention="eps"),
               Opt("eps_str", {"eps": "x"}, mention="eps"),
               Opt("ns_coefficients_short", {"ns_coefficients": (1.0, 2.0)},
                   mention="ns_coefficients"),
               Opt("ns_coefficients_str", {"ns_coefficients": "abc"}, mention="ns_coefficients"),
               Opt("ns_coefficients_none", {"ns_coefficients": None}, mention="ns_coefficients"),
               Opt("ns_coefficients_nan", {"ns_coefficients": (np.nan, 1.0, 1.0)},
                   mention="ns_coefficients"))
    main = Entry(op, op, lambda g: _draw(g, shapes, kw), _call("Muon"), _ref(muon_step),
                 _check(tol), options=options, after=_after(gl.InvalidArgument),
                 torch_results=True)
    bad_dim = dict(ref=None, check=_check(tol), after=_after(gl.InvalidArgument),
                   torch_results=True, mention="params")
    extra = [Entry(f"{op}[1-D param]", op, lambda g: _draw(g, [(4,)], kw), _call("Muon"),
                   **bad_dim),
             Entry(f"{op}[3-D param]", op, lambda g: _draw(g, [(2, 3, 4)], kw), _call("Muon"),
                   **bad_dim),
             Entry(f"{op}[0-D param]", op, lambda g: _draw(g, [()], kw), _call("Muon"),
                   **bad_dim)]
    return [main, *_scenarios("Muon", muon_step, shapes, kw, tol, extra)]


def shampoo_entries() -> list[Entry]:
    op = "torch.optim.Shampoo"
    kw = {"lr": 0.05, "betas": (0.9, 0.99), "epsilon": 1e-3, "weight_decay": 0.01,
          "max_preconditioner_dim": 3}
    shapes = [(7, 5), (4,), (2, 3, 2), ()]  # blocks of 3: a 3 x 2 grid; others Adam alone
    tol = 1e-8
    options = (*_std("Shampoo"),
               Opt("betas_one", {"betas": (0.9, 1.0)}, mention="betas"),
               Opt("betas_neg", {"betas": (-0.1, 0.9)}, mention="betas"),
               Opt("betas_nan", {"betas": (np.nan, 0.9)}, mention="betas"),
               Opt("betas_short", {"betas": (0.9,)}, mention="betas"),
               Opt("betas_str", {"betas": "ab"}, mention="betas"),
               Opt("betas_none", {"betas": None}, mention="betas"),
               Opt("betas_zero", {"betas": (0.0, 0.0)}, expect="ref"),
               Opt("epsilon_neg", {"epsilon": -1.0}, mention="epsilon"),
               Opt("epsilon_nan", {"epsilon": float("nan")}, mention="epsilon"),
               Opt("epsilon_str", {"epsilon": "x"}, mention="epsilon"),
               Opt("adam_eps_neg", {"adam_eps": -1.0}, mention="adam_eps"),
               Opt("adam_eps_big", {"adam_eps": 1e-2}, expect="ref"),
               Opt("max_preconditioner_dim_zero", {"max_preconditioner_dim": 0},
                   mention="max_preconditioner_dim"),
               Opt("max_preconditioner_dim_float", {"max_preconditioner_dim": 1.5},
                   mention="max_preconditioner_dim"),
               Opt("max_preconditioner_dim_bool", {"max_preconditioner_dim": True},
                   mention="max_preconditioner_dim"),
               Opt("max_preconditioner_dim_1", {"max_preconditioner_dim": 1}, expect="ref"),
               Opt("max_preconditioner_dim_big", {"max_preconditioner_dim": 1024}, expect="ref"),
               Opt("precondition_frequency_zero", {"precondition_frequency": 0},
                   mention="precondition_frequency"),
               Opt("precondition_frequency_str", {"precondition_frequency": "2"},
                   mention="precondition_frequency"))
    main = Entry(op, op, lambda g: _draw(g, shapes, kw), _call("Shampoo"), _ref(shampoo_step),
                 _check(tol), options=options, after=_after(gl.InvalidArgument),
                 torch_results=True)
    return [main, *_scenarios("Shampoo", shampoo_step, [(7, 5)], kw, tol, [])]


def entries() -> list[Entry]:
    if not HAS_TORCH:
        return []
    return [*muon_entries(), *shampoo_entries()]
