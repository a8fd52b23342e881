"""A small builder of UGen graphs for scorch's own SynthDefs, written as SCgf bytes (no sclang).

A :class:`Graph` collects UGens in the order they are made (every input is made
before it is used, as scsynth requires); a :class:`Sig` is one output of one of
them, or a constant, and does arithmetic as sclang's UGens do (``BinaryOpUGen`` and
``UnaryOpUGen`` with sclang's operator numbers). Operations on constants alone are
folded here, as sclang folds them. :mod:`scorch.primitives.synthdefs.stage` is
built with it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scorch.primitives.synthdefs.scgf import CONTROL, SCALAR, UGen, synthdef

#: sclang's ``specialIndex`` of the binary operators used here, with their value on numbers.
BINARY: dict[str, tuple[int, Callable[[float, float], float]]] = {
    "+": (0, operator.add), "-": (1, operator.sub), "*": (2, operator.mul),
    "/": (4, operator.truediv), "==": (6, lambda a, b: float(a == b)),
    "!=": (7, lambda a, b: float(a != b)), "<": (8, lambda a, b: float(a < b)),
    ">": (9, lambda a, b: float(a > b)), "min": (12, min), "max": (13, max),
    "pow": (25, math.pow), "clip2": (42, lambda a, b: max(-b, min(b, a))),
}
#: The same for unary operators.
UNARY: dict[str, tuple[int, Callable[[float], float]]] = {
    "neg": (0, operator.neg), "abs": (5, abs), "sqrt": (14, math.sqrt), "exp": (15, math.exp),
    "dbamp": (21, lambda a: 10 ** (a / 20)), "ampdb": (22, lambda a: 20 * math.log10(a)),
    "log10": (27, math.log10), "sin": (28, math.sin), "cos": (29, math.cos),
}

@dataclass(frozen=True)
class Sig:
    """One signal of a graph: a UGen's output, or a constant (``ugen`` -1)."""

    graph: Graph
    ugen: int
    index: int
    rate: int

    def _op(self, op: str, other: Sig | float, swap: bool = False) -> Sig:
        return self.graph.binary(op, other, self) if swap else self.graph.binary(op, self, other)

    def __add__(self, other: Sig | float) -> Sig:
        return self._op("+", other)

    def __radd__(self, other: float) -> Sig:
        return self._op("+", other, swap=True)

    def __sub__(self, other: Sig | float) -> Sig:
        return self._op("-", other)

    def __rsub__(self, other: float) -> Sig:
        return self._op("-", other, swap=True)

    def __mul__(self, other: Sig | float) -> Sig:
        return self._op("*", other)

    def __rmul__(self, other: float) -> Sig:
        return self._op("*", other, swap=True)

    def __truediv__(self, other: Sig | float) -> Sig:
        return self._op("/", other)

    def __rtruediv__(self, other: float) -> Sig:
        return self._op("/", other, swap=True)

    def __neg__(self) -> Sig:
        return self.graph.unary("neg", self)

    def __abs__(self) -> Sig:
        return self.graph.unary("abs", self)


class Graph:
    """The UGens, constants and controls of one SynthDef being built."""

    def __init__(self) -> None:
        self._ugens: list[UGen] = []
        self._constants: list[float] = []
        self._params: tuple[str, ...] = ()
        self._defaults: tuple[float, ...] = ()

    def const(self, value: float) -> Sig:
        """A constant (kept once however often it is used)."""
        value = float(value)
        for index, known in enumerate(self._constants):
            if known == value and math.copysign(1, known) == math.copysign(1, value):
                return Sig(self, -1, index, SCALAR)
        self._constants.append(value)
        return Sig(self, -1, len(self._constants) - 1, SCALAR)

    def controls(self, **defaults: float) -> list[Sig]:
        """The SynthDef's named controls (control rate), in this order; made first, once."""
        if self._ugens or self._params:
            raise ValueError("the controls are the graph's first UGen")
        self._params = tuple(defaults)
        self._defaults = tuple(float(v) for v in defaults.values())
        return self.ugen("Control", CONTROL, (), outputs=len(defaults))

    def ugen(self, name: str, rate: int, inputs: Sequence[Sig | float], outputs: int = 1,
             special: int = 0) -> list[Sig]:
        """Add a UGen; return its outputs."""
        refs = tuple(self._sig(i) for i in inputs)
        for ref in refs:
            if ref.graph is not self:
                raise ValueError(f"an input of {name} belongs to another graph")
        self._ugens.append(UGen(name, rate, tuple((r.ugen, r.index) for r in refs), outputs,
                                special))
        index = len(self._ugens) - 1
        return [Sig(self, index, n, rate) for n in range(outputs)]

    def one(self, name: str, rate: int, *inputs: Sig | float) -> Sig:
        """Add a UGen with one output; return it."""
        return self.ugen(name, rate, inputs)[0]

    def unary(self, op: str, a: Sig | float) -> Sig:
        """``op`` of ``a`` (folded when ``a`` is a constant)."""
        special, fold = UNARY[op]
        sig = self._sig(a)
        if sig.ugen == -1:
            return self.const(fold(self._constants[sig.index]))
        return self.ugen("UnaryOpUGen", sig.rate, (sig,), special=special)[0]

    def binary(self, op: str, a: Sig | float, b: Sig | float) -> Sig:
        """``a op b`` at the faster rate of the two (folded when both are constants)."""
        special, fold = BINARY[op]
        x, y = self._sig(a), self._sig(b)
        if x.ugen == -1 and y.ugen == -1:
            return self.const(fold(self._constants[x.index], self._constants[y.index]))
        return self.ugen("BinaryOpUGen", max(x.rate, y.rate), (x, y), special=special)[0]

    def min(self, a: Sig | float, b: Sig | float) -> Sig:
        """The smaller of the two, sample by sample."""
        return self.binary("min", a, b)

    def max(self, a: Sig | float, b: Sig | float) -> Sig:
        """The larger of the two, sample by sample."""
        return self.binary("max", a, b)

    def _sig(self, value: Sig | float) -> Sig:
        return value if isinstance(value, Sig) else self.const(value)

    def synthdef(self, name: str) -> bytes:
        """The SCgf bytes of the graph as a SynthDef called ``name``."""
        return synthdef(name, self._params, tuple(self._constants), self._ugens,
                        defaults=self._defaults)

    @property
    def size(self) -> int:
        """How many UGens the graph has."""
        return len(self._ugens)
