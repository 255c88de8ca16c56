"""The names of a problem's variables or rows, held as one buffer instead of a string each.

A million variables and four million rows held as Python strings take about 60 bytes a name,
more than the constraint matrix itself, and cannot be shared between processes. :class:`Names`
keeps them as one array of UTF-8 bytes and the offsets where each name starts: about the names'
own length plus 8 bytes each, two numpy arrays that pickle at once and can live in shared memory
(:mod:`lns.core.parallel.shared_problem`). It is a read-only sequence of ``str`` that equals any
sequence of the same strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np

from lns.core.errors import InvalidProblemDataError

#: Separates the names in the buffer while it is built (a name cannot hold it).
_SEPARATOR = "\0"


class Names(Sequence[str]):
    """A read-only sequence of names.

    Parameters
    ----------
    buffer : numpy.ndarray of uint8
        The names' UTF-8 bytes, one after the other.
    offsets : numpy.ndarray of int64, shape (len + 1,)
        Name ``k`` is ``buffer[offsets[k]:offsets[k + 1]]``.
    """

    __slots__ = ("buffer", "offsets")

    def __init__(self, buffer: np.ndarray, offsets: np.ndarray):
        self.buffer, self.offsets = buffer, offsets

    @classmethod
    def of(cls, names: Iterable[str]) -> Names:
        """The :class:`Names` of ``names`` (returned as it is if it is one already).

        Raises
        ------
        InvalidProblemDataError
            A name holds the NUL character.
        """
        if isinstance(names, Names):
            return names
        names = names if isinstance(names, list | tuple) else list(names)
        text = _SEPARATOR.join(names)
        if text.count(_SEPARATOR) != max(0, len(names) - 1):
            raise InvalidProblemDataError("a variable or row name holds the NUL character")
        encoded = np.frombuffer((text + _SEPARATOR).encode(), dtype=np.uint8)
        ends = np.flatnonzero(encoded == 0) if names else np.zeros(0, dtype=np.int64)
        offsets = np.zeros(len(names) + 1, dtype=np.int64)
        offsets[1:] = ends - np.arange(len(names))  # the separators are left out of the buffer
        keep = np.ones(len(encoded), dtype=bool)
        keep[ends] = False
        return cls(encoded[keep] if names else np.zeros(0, dtype=np.uint8), offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Names: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.take(np.arange(len(self))[index])
        k = int(index)
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(f"name {index} of {len(self)}")
        return self.buffer[self.offsets[k] : self.offsets[k + 1]].tobytes().decode()

    def take(self, indices: np.ndarray) -> Names:
        """The names at ``indices``, in that order."""
        indices = np.asarray(indices, dtype=np.int64)
        return Names.slices(self.buffer, self.offsets[indices], self.offsets[indices + 1])

    @classmethod
    def slices(cls, buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Names:
        """The names ``buffer[starts[k]:ends[k]]`` of a byte array (UTF-8 text, not checked)."""
        lengths = ends - starts
        offsets = np.zeros(len(starts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        # Byte k of the result comes from its name's start plus its place within the name.
        within = np.arange(offsets[-1]) - np.repeat(offsets[:-1], lengths)
        return cls(buffer[np.repeat(starts, lengths) + within], offsets)

    def __contains__(self, name: object) -> bool:
        """Whether a name equals ``name``, compared on the bytes (no name becomes a string)."""
        if not isinstance(name, str):
            return False
        wanted = np.frombuffer(name.encode(), dtype=np.uint8)
        starts = self.offsets[:-1][np.diff(self.offsets) == len(wanted)]
        if len(wanted) == 0:
            return bool(len(starts))
        candidates = self.buffer[starts[:, None] + np.arange(len(wanted))]
        return bool(np.any(np.all(candidates == wanted, axis=1)))

    def __iter__(self) -> Iterator[str]:
        text = self.buffer.tobytes().decode()
        if len(text) == len(self.buffer):  # ASCII: character offsets are byte offsets
            bounds = self.offsets.tolist()
            return (text[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True))
        return (self[k] for k in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Names):
            return np.array_equal(self.offsets, other.offsets) and np.array_equal(
                self.buffer, other.buffer
            )
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to tuples, which hash differently

    def __repr__(self) -> str:
        shown = ", ".join(repr(name) for name in self[:3])
        more = ", ..." if len(self) > 3 else ""
        return f"Names([{shown}{more}], {len(self)} names)"

    @property
    def nbytes(self) -> int:
        """Bytes held by the two arrays."""
        return self.buffer.nbytes + self.offsets.nbytes
