"""Combinatorial auction, "arbitrary relationships" of Leyton-Brown, Pearson & Shoham (2000).

Generated as in Gasse et al. (2019)::

    max  sum_b p_b x_b   s.t.  sum_{b holds item i} x_b <= 1 for every item i,   x binary,

plus one such row per bidder with three or more bids (a "dummy item" every one of its bids holds),
so that each bidder wins at most one of its bids (XOR bids). With two bids a row is not needed:
a substitute bid always shares an item with the bidder's first bid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from instances.generators.binary import binary_problem, names
from instances.generators.validation import check_count, check_range
from lns.core.errors import InvalidArgumentError
from lns.core.problem.mip import Problem

_MAX_REJECTED_PER_BID = 100
_PROPOSALS = 4


@dataclass(frozen=True)
class CAParams:
    """Parameters of the combinatorial auction generator (names, defaults: Ecole / Gasse et al.).

    Attributes
    ----------
    n_items : int
        Goods on sale, at least 2.
    n_bids : int
        Bids (= variables).
    min_value, max_value : float
        Common resale values of the items are uniform in ``[min_value, max_value]``.
    value_deviation : float
        A bidder's private value of item ``i`` is
        ``value_i + max_value * value_deviation * (2 u_i - 1)``, ``u_i`` its (uniform) interest in
        ``i``.
    add_item_prob : float in [0, 1)
        After each item, another joins the bundle with this probability.
    max_n_sub_bids : int
        Substitute bids a bidder may add to its first one.
    additivity : float
        Complementarity: a bundle of ``k`` items is priced at its private values plus
        ``k ** (1 + additivity)``.
    budget_factor : float
        A substitute may cost at most this times the first bid.
    resale_factor : float
        A substitute's resale value must be at least this times the first bundle's.
    integers : bool
        Round prices down to integers.
    """

    n_items: int = 100
    n_bids: int = 500
    min_value: float = 1.0
    max_value: float = 100.0
    value_deviation: float = 0.5
    add_item_prob: float = 0.9
    max_n_sub_bids: int = 5
    additivity: float = 0.2
    budget_factor: float = 1.5
    resale_factor: float = 0.5
    integers: bool = False

    def __post_init__(self):
        inf = float("inf")
        check_count("ca", "n_items", self.n_items, 2)
        check_count("ca", "n_bids", self.n_bids)
        check_range("ca", "min_value", self.min_value, 0.0, inf, high_open=True)
        check_range("ca", "max_value", self.max_value, self.min_value, inf, high_open=True)
        check_range("ca", "value_deviation", self.value_deviation, 0.0, inf, high_open=True)
        check_range("ca", "add_item_prob", self.add_item_prob, 0.0, 1.0, high_open=True)
        check_count("ca", "max_n_sub_bids", self.max_n_sub_bids, 0)
        check_range("ca", "additivity", self.additivity, -1.0, inf, high_open=True)
        check_range("ca", "budget_factor", self.budget_factor, 0.0, inf, high_open=True)
        check_range("ca", "resale_factor", self.resale_factor, 0.0, inf, high_open=True)
        if not isinstance(self.integers, bool):
            raise InvalidArgumentError(f"ca: integers must be true or false, got {self.integers!r}")


PRESETS = {
    # CL-LNS: 2000 items x 4000 bids (small); large doubles both (our notes say "double",
    # unverified). The scheme's other parameters are Gasse et al.'s / Ecole's defaults.
    "small": CAParams(n_items=2000, n_bids=4000),
    "large": CAParams(n_items=4000, n_bids=8000),
}


@dataclass(frozen=True)
class Auction:
    """The bids of one auction.

    Attributes
    ----------
    n_items : int
    bundles : list of numpy.ndarray
        Sorted items of each bid.
    prices : numpy.ndarray, shape (n_bids,)
    xor_groups : list of range
        Bids of each bidder with three or more bids (consecutive).
    """

    n_items: int
    bundles: list
    prices: np.ndarray
    xor_groups: list


def generate(params: CAParams, rng: np.random.Generator, name: str = "ca") -> Problem:
    """One auction instance (see :func:`draw_auction`).

    A binary variable per bid, a packing row per item and per XOR group.

    Parameters
    ----------
    params : CAParams
    rng : numpy.random.Generator
        The only source of randomness.
    name : str
        Name of the problem.
    """
    return _auction_problem(name, draw_auction(params, rng))


def draw_auction(params: CAParams, rng: np.random.Generator) -> Auction:
    """The bids of one auction: bidders are drawn one by one until there are ``n_bids`` bids.

    Item compatibilities ``c_ij`` are uniform, symmetric and normalised so that each row sums to
    one (Leyton-Brown et al.; numpy broadcasting in Gasse et al.'s code normalises the columns
    instead). A bidder draws its interests and private values, a first bundle (first item with
    probability proportional to interest, each next one proportional to interest times the
    summed compatibility with the bundle), then, for each item of it, a substitute bundle of the
    same size grown from that item. Substitutes are offered by decreasing price if they cost no
    more than ``budget_factor`` times the first bid, keep ``resale_factor`` of its resale value
    and differ from the bidder's other bundles. Bidders whose first bundle has a negative price
    are skipped.
    """
    n_items = params.n_items
    values = params.min_value + (params.max_value - params.min_value) * rng.random(n_items)
    compat = np.triu(rng.random((n_items, n_items)), k=1)
    compat += compat.T
    compat /= compat.sum(axis=1, keepdims=True)
    bound = compat.max()

    bundles: list[np.ndarray] = []
    prices: list[float] = []
    xor_groups: list[range] = []
    rejected = 0
    while len(bundles) < params.n_bids:
        interests = rng.random(n_items)
        private = values + params.max_value * params.value_deviation * (2.0 * interests - 1.0)
        # the first item by interest, then another while a coin with add_item_prob says so
        size = min(int(rng.geometric(1.0 - params.add_item_prob)), n_items)
        first = min(
            int(
                np.searchsorted(np.cumsum(interests), rng.random() * interests.sum(), side="right")
            ),
            n_items - 1,
        )
        bundle = _grow(np.array([first]), size, interests, compat, bound, rng)[0]
        price = _price(bundle, private, params)
        if price < 0:
            rejected += 1
            if rejected > _MAX_REJECTED_PER_BID * params.n_bids:
                raise InvalidArgumentError(
                    "ca: almost every bundle gets a negative price; lower value_deviation "
                    "or raise min_value"
                )
            continue
        bidder = {tuple(bundle.tolist()): price}
        budget = params.budget_factor * price
        min_resale = params.resale_factor * values[bundle].sum()
        substitutes = _grow(bundle, bundle.size, interests, compat, bound, rng)
        sub_prices = [_price(sub, private, params) for sub in substitutes]
        for k in np.argsort([-p for p in sub_prices], kind="stable"):
            sub, sub_price = substitutes[k], sub_prices[k]
            if len(bidder) > params.max_n_sub_bids or len(bundles) + len(bidder) >= params.n_bids:
                break
            key = tuple(sub.tolist())
            if 0 <= sub_price <= budget and values[sub].sum() >= min_resale and key not in bidder:
                bidder[key] = sub_price
        if len(bidder) > 2:
            xor_groups.append(range(len(bundles), len(bundles) + len(bidder)))
        bundles.extend(np.array(key) for key in bidder)
        prices.extend(bidder.values())

    return Auction(n_items, bundles, np.array(prices), xor_groups)


def _grow(
    firsts: np.ndarray,
    size: int,
    interests: np.ndarray,
    compat: np.ndarray,
    bound: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Grow a bundle of ``size`` items from each item of ``firsts`` at once: (k, size), sorted rows.

    The next item of a bundle ``B`` is drawn with probability proportional to
    ``interest_j * sum_{i in B} c_ij`` over the items not in ``B``, by rejection: propose ``j``
    with probability proportional to its interest and accept it with probability
    ``sum_{i in B} c_ij / (|B| bound)`` (``bound``: the largest ``c_ij``) if it is not in ``B``
    already. About one proposal in two is accepted, and each costs O(|B|) instead of the
    O(n_items) of drawing from the exact weights. Bundles holding a large share of the items
    (where proposals keep hitting members) draw from the exact weights instead.
    """
    k = firsts.size
    members = np.empty((k, size), dtype=np.int64)
    members[:, 0] = firsts
    if 4 * size > interests.size:
        return _grow_exactly(members, interests, compat, rng)
    cumulative = np.cumsum(interests)
    for step in range(1, size):
        pending = np.arange(k)
        while pending.size:
            # _PROPOSALS proposals per bundle at once; the first accepted one is the
            # rejection sampler's draw
            shape = (pending.size, _PROPOSALS)
            proposal = np.minimum(
                np.searchsorted(cumulative, rng.random(shape) * cumulative[-1], side="right"),
                interests.size - 1,
            )
            current = members[pending, :step, None]
            affinity = compat[current, proposal[:, None, :]].sum(axis=1)
            fresh = ~(current == proposal[:, None, :]).any(axis=1)
            accepted = fresh & (rng.random(shape) * step * bound < affinity)
            first = accepted.argmax(axis=1)
            done = accepted[np.arange(pending.size), first]
            members[pending[done], step] = proposal[done, first[done]]
            pending = pending[~done]
    return np.sort(members, axis=1)


def _grow_exactly(
    members: np.ndarray, interests: np.ndarray, compat: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """:func:`_grow` drawing each item from the full weight vectors, O(n_items) per draw.

    ``members[:, 0]`` is set on entry.
    """
    k, size = members.shape
    rows = np.arange(k)
    weights = interests * compat[members[:, 0]]
    weights[rows, members[:, 0]] = 0.0
    for step in range(1, size):
        cumulative = np.cumsum(weights, axis=1)
        threshold = rng.random(k) * cumulative[:, -1]
        members[:, step] = np.minimum(
            (cumulative <= threshold[:, None]).sum(axis=1), interests.size - 1
        )
        weights += interests * compat[members[:, step]]
        weights[rows[:, None], members[:, : step + 1]] = 0.0
    return np.sort(members, axis=1)


def _price(bundle: np.ndarray, private: np.ndarray, params: CAParams) -> float:
    price = private[bundle].sum() + bundle.size ** (1.0 + params.additivity)
    return float(np.floor(price)) if params.integers else float(price)


def _auction_problem(name: str, auction: Auction) -> Problem:
    """Rows: every item some bid holds (``item<i>``), then each XOR group (``bidder<k>``)."""
    n_items, bundles, prices, xor_groups = (
        auction.n_items,
        auction.bundles,
        auction.prices,
        auction.xor_groups,
    )
    n = len(bundles)
    bid_of_entry = np.repeat(np.arange(n), [b.size for b in bundles])
    item_of_entry = np.concatenate(bundles)
    used = np.flatnonzero(np.bincount(item_of_entry, minlength=n_items))
    item_row = np.full(n_items, -1)
    item_row[used] = np.arange(used.size)
    group_bids = (
        np.concatenate([np.array(g) for g in xor_groups]) if xor_groups else np.zeros(0, dtype=int)
    )
    group_rows = used.size + np.repeat(np.arange(len(xor_groups)), [len(g) for g in xor_groups])
    rows = np.concatenate([item_row[item_of_entry], group_rows])
    cols = np.concatenate([bid_of_entry, group_bids])
    m = used.size + len(xor_groups)
    matrix = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(m, n))
    matrix.sort_indices()
    row_names = tuple(f"item{i}" for i in used) + names("bidder", len(xor_groups))
    return binary_problem(
        name, prices, "maximize", matrix, np.full(m, -np.inf), np.ones(m), row_names
    )
