"""The hostile-input suite over gpula's public API (issue 17), driven by
tests/python/test_hostile_api.py.

- ``core``: the case model (Entry, Case), the contract a case is judged by, comparison helpers.
- ``mutations``: what is done to each array argument (NaN, empty, 0-d, odd strides, wrong types,
  ml_dtypes bfloat16, ...), and the torch forms of the same values applied to every array at
  once (``all:torch_neg`` / ``torch_conj`` / ``torch_conj_neg``: lazy views; ``torch_t``,
  ``torch_strided`` (with a storage offset), ``torch_expand``; ``torch_param`` / ``torch_grad``).
- ``catalog_matmul`` / ``catalog_linalg`` / ``catalog_sparse`` / ``catalog_krylov`` /
  ``catalog_misc``: every public callable with valid arguments on small fresh random inputs and
  its NumPy/SciPy reference; ``catalog_optim``: gl.linalg's optimizer functions (orthogonalize,
  polar, inv_root, sqrtm_psd, their list forms, cholesky(jitter="auto"));
  ``catalog_threads``: 8 threads on one object and on separate ones;
  ``catalog_torch``: gpula.torch's linalg, functional and nn on torch tensors (where torch is);
  ``catalog_views``: complex variants for the conjugate views, and the objects that keep their
  operands (Matmul, the matmul fast path, GroupedMatmul, csr_matrix's SpMV executor,
  DirectSolver) given lazy views, then executed after the allocator reused freed memory.
- ``catalog``: all entries, expanded into cases with stable ids.
- ``judge``: runs one case and gives its verdict; ``runner``: runs cases in worker subprocesses
  (a crash or a hang names its case and does not end the run).
- ``coverage``: which public callables have entries (a new one without cases fails a test).
"""
