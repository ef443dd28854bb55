"""Go's ``sort.Slice`` (pattern-defeating quicksort, Go 1.19+) replayed step by step.

Preemption orders a node's potential victims with ``sort.Slice`` and a
comparison that is not a strict weak ordering: two equal-priority pods that
both lack ``status.startTime`` each read ``time.Now()`` at comparison time, so
"a before b" and "b before a" are both true.  Which victims kube-scheduler
then picks depends on the exact sequence of comparisons and swaps Go's sort
performs, so a faithful port has to run the same algorithm (insertion sort up
to 12 elements, pdqsort with its deterministic pattern breaker beyond), not
Python's stable ``sorted``.  For a consistent comparison the result is simply
sorted; only the order of elements that compare equal can differ.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Generic, TypeVar, final

__all__ = ["go_sort_slice"]

T = TypeVar("T")

_MAX_INSERTION: Final = 12
_SHORTEST_NINTHER: Final = 50
_MAX_SWAPS: Final = 4 * 3
_MAX_PARTIAL_STEPS: Final = 5
_SHORTEST_SHIFTING: Final = 50
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2
_MASK64: Final = (1 << 64) - 1


def go_sort_slice(items: list[T], less: Callable[[T, T], bool]) -> None:
    """Sort ``items`` in place exactly as Go's ``sort.Slice(items, less)`` would."""
    length = len(items)
    _Sorter(items, less).pdqsort(0, length, length.bit_length())


@final
class _Sorter(Generic[T]):
    """The index-based algorithm over one list; ``lt(i, j)`` is Go's ``data.Less(i, j)``."""

    __slots__ = ("items", "less")

    def __init__(self, items: list[T], less: Callable[[T, T], bool]) -> None:
        self.items = items
        self.less = less

    def lt(self, i: int, j: int) -> bool:
        items = self.items
        return self.less(items[i], items[j])

    def swap(self, i: int, j: int) -> None:
        items = self.items
        items[i], items[j] = items[j], items[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.lt(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.lt(first + child, first + child + 1):
                child += 1
            if not self.lt(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, hi = a, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(0, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced = True
        was_partitioned = True
        while True:
            length = b - a
            if length <= _MAX_INSERTION:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if was_balanced and was_partitioned and hint == _INCREASING and self.partial_insertion_sort(a, b):
                return
            if a > 0 and not self.lt(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, was_partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.lt(i, a):
            i += 1
        while i <= j and not self.lt(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and self.lt(i, a):
                i += 1
            while i <= j and not self.lt(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.lt(a, i):
                i += 1
            while i <= j and self.lt(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i += 1
            j -= 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(_MAX_PARTIAL_STEPS):
            while i < b and not self.lt(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < _SHORTEST_SHIFTING:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                # Go's loop runs down to index 1, not to ``a``; kept as is.
                for j in range(i - 1, 0, -1):
                    if not self.lt(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:
                for j in range(i + 1, b):
                    if not self.lt(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length
        modulus = 1 << length.bit_length()
        middle = a + (length // 4) * 2
        for idx in range(middle - 1, middle + 2):
            state ^= (state << 13) & _MASK64
            state ^= state >> 7
            state ^= (state << 17) & _MASK64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        length = b - a
        swaps = [0]
        quarter = length // 4
        i, j, k = a + quarter, a + quarter * 2, a + quarter * 3
        if length >= 8:
            if length >= _SHORTEST_NINTHER:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == _MAX_SWAPS:
            return j, _DECREASING
        return j, _UNKNOWN

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.lt(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1
