"""Shared helpers of the decomposition rule files (not a rule file: its name starts with `_`)."""


from eqsat_test.rewrite.ruledsl import FLOATING, Scalar, Tensor, make_rule

FAM = "decomposition"
F32_64 = ("float32", "float64")
DIM = Scalar(kind="int", values=(-1, 0, 1))
EPS = Scalar(kind="float", values=(1e-5, 1e-6))


def T(*shape, dtype=FLOATING, min_size=1):
    """A tensor variable with an example shape (variables that must fit together)."""
    return Tensor(shape=shape, dtype=dtype, min_size=min_size)


def per_dtype(name, body, params, *, numerics="approximate", bidirectional=True, dtypes=F32_64,
              same_shape=True, doc=""):
    """One rule per dtype: ops like layer_norm or F.linear refuse operands of mixed dtypes,
    which their decompositions promote, so each rule fixes the dtype of all its tensors."""
    for dt in dtypes:
        ps = {k: (Tensor(shape=v.shape, rank=v.rank, dtype=dt, min_size=v.min_size)
                  if isinstance(v, Tensor) else v) for k, v in params.items()}
        make_rule(f"{name}_{dt}", body, ps, family=FAM, numerics=numerics,
                  bidirectional=bidirectional, same_shape=same_shape, doc=doc,
                  source_text=f"{name}|{dt}|{numerics}|{params!r}|{body.__code__.co_code.hex()}"
                              f"|{body.__code__.co_consts!r}|{body.__code__.co_names!r}")
