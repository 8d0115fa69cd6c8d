"""The inputs of a generated program: shapes (empty, size-1, odd around vector widths, large), dtypes (float, half, int8..int64, bool), magnitudes (near overflow, domain edges, subnormals) and layouts (transposed, stepped, expanded, offset), rendered as get_inputs() source."""
from __future__ import annotations

import random
from dataclasses import dataclass

# Sizes: odd ones around the CPU's and GPU's vector widths (their tails), the widths themselves, small and size-1,
# empty, and large ones (at most LARGE_ELEMENTS elements in a tensor).
ODD_SIZES = (7, 15, 17, 31, 33, 65)
WIDTH_SIZES = (8, 16, 32, 64)
SMALL_SIZES = (1, 2, 3, 4, 5)
LARGE_SIZES = (1025, 4099, 16411, 65537)
MAX_ELEMENTS = 2 ** 17  # per tensor: below the runner's test-size bound (2 ** 18), so sizes are used as written

FLOAT_DTYPES = ("float32", "float16", "bfloat16", "float64")
INT_DTYPES = ("int8", "uint8", "int16", "int32", "int64")

# Magnitude profiles of floating inputs: how get_inputs() draws the values (a Python expression of S, the shape,
# DT, the dtype, and g, the generator). Each aims at a class of bug: overflow in intermediates (wide: squares and
# sums overflow), domain edges (edge1: erfinv, atanh, acos near +-1; big: acosh, log, sqrt of huge values),
# subnormals (tiny), cancellation near zero (small: expm1, log1p, atanh, sinh), exact small integers (integral: floor, round, remainder, floor_divide on exact ties).
FLOAT_VALUES = {
    "normal": "torch.randn({S}, generator={G}, dtype=torch.float64)",
    "wide": "torch.randn({S}, generator={G}, dtype=torch.float64) * {WIDE}",
    "edge1": "(1 - torch.rand({S}, generator={G}, dtype=torch.float64) * 1e-3) * (torch.randint(0, 2, {S}, generator={G}) * 2 - 1)",
    "big": "torch.rand({S}, generator={G}, dtype=torch.float64) * {BIG} + 1",
    "tiny": "torch.randn({S}, generator={G}, dtype=torch.float64) * {TINY}",
    "small": "torch.randn({S}, generator={G}, dtype=torch.float64) * 1e-4",
    "integral": "torch.randint(-9, 10, {S}, generator={G}).to(torch.float64)",
    "positive": "torch.rand({S}, generator={G}, dtype=torch.float64) * 4 + 0.25",
}
FLOAT_WEIGHTS = {"normal": 10, "wide": 2, "edge1": 2, "big": 1, "tiny": 1, "small": 2, "integral": 2, "positive": 2}
# Per dtype: near its overflow for `wide` (squares and sums overflow), a big value, a subnormal scale.
SCALES = {
    "float32": {"WIDE": "1e30", "BIG": "1e25", "TINY": "1e-39"},
    "float64": {"WIDE": "1e300", "BIG": "1e200", "TINY": "1e-310"},
    "float16": {"WIDE": "1e4", "BIG": "6e4", "TINY": "3e-6"},
    "bfloat16": {"WIDE": "1e37", "BIG": "1e30", "TINY": "1e-39"},
}
INT_RANGES = {"int8": (-128, 128), "uint8": (0, 256), "int16": (-32768, 32768),
              "int32": (-2 ** 31, 2 ** 31), "int64": (-2 ** 62, 2 ** 62)}
INT_WEIGHTS = {"full": 3, "small": 4}  # the dtype's whole range (its limits' wrap-arounds), or small values


@dataclass(frozen=True)
class InputSpec:
    """One input of a generated program, as get_inputs() makes it."""

    name: str
    shape: tuple[int, ...]
    dtype: str  # torch dtype name: float32, int8, bool, ...
    values: str  # a FLOAT_VALUES key, "full"/"small" (integers), "bool", "index" (positions in [0, high)), "range"
    # ([low, high)) or "given" (the integers `data`, as a real graph had them)
    layout: str = "contiguous"  # contiguous, transposed, stepped, expanded, offset
    seed: int = 0  # its own generator's seed: adding an input never changes another's values
    high: int = 0  # index and range inputs: one past the largest value
    low: int = 0  # range inputs: the smallest value (integers kept in a real graph's range: hunt/windows.py)
    nonneg: bool = False  # floating inputs: the magnitudes' absolute values (a real graph's value never negative)
    data: tuple[int, ...] = ()  # given inputs: the values, flattened
    sentinel: int | None = None  # range inputs: a value below low the real graph had too (an ignore_index -100), on
    # about a tenth of the elements

    def source(self) -> str:
        """The expression get_inputs() makes this input with (`g`, a torch.Generator, seeded anew; its layout)."""
        base = list(self.shape)
        if self.layout == "transposed":
            base[-1], base[-2] = base[-2], base[-1]
        elif self.layout == "stepped":
            base[-1] = 2 * base[-1]
        elif self.layout == "expanded":
            base[0] = 1
        elif self.layout == "offset":
            base[0] = base[0] + 1
        expr = _values(self, tuple(base))
        if self.layout == "transposed":
            expr = f"{expr}.transpose(-1, -2)"
        elif self.layout == "stepped":
            expr = f"{expr}[..., ::2]"
        elif self.layout == "expanded":
            expr = f"{expr}.expand({', '.join(map(str, self.shape))})"
        elif self.layout == "offset":
            expr = f"{expr}[1:]"
        return expr

    def describe(self) -> str:
        lay = "" if self.layout == "contiguous" else f" {self.layout}"
        return f"{self.name}: {self.dtype}{list(self.shape)} {self.values}{' nonneg' if self.nonneg else ''}{lay}"


def _values(spec: InputSpec, shape: tuple[int, ...]) -> str:
    s = f"({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''})"
    g = f"g.manual_seed({spec.seed})"  # get_inputs() holds one generator, g, seeded anew for each input
    if spec.values == "index":
        return f"torch.randint(0, {spec.high}, {s}, generator={g})"
    if spec.values == "given":
        return f"torch.tensor({list(spec.data)}, dtype=torch.{spec.dtype}).reshape({s})"
    if spec.values == "range":
        expr = f"torch.randint({spec.low}, {spec.high}, {s}, generator={g}, dtype=torch.{spec.dtype})"
        return expr if spec.sentinel is None else f"{expr}.masked_fill(torch.rand({s}, generator=g) < 0.1, {spec.sentinel})"
    if spec.values == "bool":
        return f"(torch.rand({s}, generator={g}) > 0.5)"
    if spec.dtype in INT_RANGES:
        lo, hi = INT_RANGES[spec.dtype] if spec.values == "full" else ((0, 17) if spec.dtype == "uint8" else (-8, 9))
        return f"torch.randint({lo}, {hi}, {s}, generator={g}, dtype=torch.{spec.dtype})"
    if spec.values not in FLOAT_VALUES:
        raise ValueError(f"{spec.name}: values {spec.values!r} are not a floating profile ({', '.join(FLOAT_VALUES)})")
    first, _, rest = FLOAT_VALUES[spec.values].partition("{G}")  # the first draw seeds g, later ones go on from it
    expr = (first + g + rest.replace("{G}", "g")).format(S=s, **SCALES[spec.dtype])
    return f"({expr}).{'abs().' if spec.nonneg else ''}to(torch.{spec.dtype})"


def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# ---------------------------------------------------------------------------------------------
# drawing shapes, dtypes and values
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Profile:
    """What a whole program leans to: its main dtype, its sizes, its ranks, its magnitudes."""

    dtype: str
    sizes: str  # odd, width, small, empty, large
    rank: int  # the first input's rank
    values: str  # the floating inputs' usual magnitude profile
    spatial: bool  # inputs shaped (N, C, L...) for pools, interpolation and convolutions


def draw_profile(rng: random.Random) -> Profile:
    r = rng.random()
    dtype = ("float32" if r < 0.55 else rng.choice(("float16", "bfloat16")) if r < 0.72 else
             "float64" if r < 0.76 else rng.choice(INT_DTYPES) if r < 0.97 else "bool")
    sizes = rng.choices(("odd", "width", "small", "empty", "large"), (6, 2, 2, 1, 1))[0]
    spatial = rng.random() < 0.2 and dtype in FLOAT_DTYPES
    rank = rng.choice((3, 4)) if spatial else rng.choices((1, 2, 3, 4), (2, 5, 3, 1))[0]
    values = rng.choices(list(FLOAT_WEIGHTS), list(FLOAT_WEIGHTS.values()))[0]
    return Profile(dtype=dtype, sizes=sizes, rank=rank, values=values, spatial=spatial)


def draw_size(rng: random.Random, style: str) -> int:
    if style == "empty" and rng.random() < 0.5:
        return 0
    pool = {"odd": ODD_SIZES, "width": WIDTH_SIZES, "small": SMALL_SIZES, "empty": ODD_SIZES + SMALL_SIZES,
            "large": ODD_SIZES + SMALL_SIZES}[style]
    if rng.random() < 0.25:  # a size-1 dim anywhere
        return 1
    return rng.choice(pool)


def draw_shape(rng: random.Random, profile: Profile, rank: int) -> tuple[int, ...]:
    shape = [draw_size(rng, profile.sizes) for _ in range(rank)]
    if profile.sizes == "large":
        shape[rng.randrange(rank)] = rng.choice(LARGE_SIZES)
    if profile.spatial:  # (N, C, spatial...): small batch and channels, spatial extents of 5 or more
        shape = [rng.choice((1, 2, 3)), rng.choice((1, 2, 3, 4))] + [max(5, d) for d in shape[2:]]
    while numel(tuple(shape)) > MAX_ELEMENTS:
        i = max(range(rank), key=lambda k: shape[k])
        shape[i] = max(1, shape[i] // 2)
    return tuple(shape)


def draw_dtype(rng: random.Random, profile: Profile) -> str:
    """The profile's dtype mostly; sometimes another, so that programs mix dtypes."""
    if rng.random() < 0.7:
        return profile.dtype
    return rng.choice(FLOAT_DTYPES + INT_DTYPES + ("bool",))


def draw_values(rng: random.Random, profile: Profile, dtype: str) -> str:
    if dtype == "bool":
        return "bool"
    if dtype in INT_RANGES:
        return rng.choices(list(INT_WEIGHTS), list(INT_WEIGHTS.values()))[0]
    if rng.random() < 0.6:
        return profile.values
    return rng.choices(list(FLOAT_WEIGHTS), list(FLOAT_WEIGHTS.values()))[0]


def draw_layout(rng: random.Random, shape: tuple[int, ...]) -> str:
    r = rng.random()
    if r < 0.7 or not shape:
        return "contiguous"
    options = ["stepped", "offset"]
    if len(shape) >= 2:
        options.append("transposed")
        if shape[0] > 1:
            options.append("expanded")
    return rng.choice(options)
