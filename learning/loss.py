"""Training losses: the contrastive InfoNCE loss of CL-LNS and the imitation-learning ablation.

With scores ``pi = sigmoid(logits)`` of one graph's variables and 0/1 neighborhood
vectors ``a``, CL-LNS (Huang et al., ICML 2023, eq. 2) minimises

.. math::

    L = -\\frac{1}{|S_p|} \\sum_{a \\in S_p} \\log
        \\frac{\\exp(a^\\top \\pi / \\tau)}
              {\\exp(a^\\top \\pi / \\tau) + \\sum_{a' \\in S_n} \\exp(a'^\\top \\pi / \\tau)}

with temperature ``tau = 0.07``. With ``s = a^T pi / tau`` each term is computed as
``logsumexp([0, s_{a'} - s_a, ...])``, which stays finite and precise for the large dot
products of big neighborhoods.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from lns.core.errors import UnknownNameError


def info_nce(
    logits: torch.Tensor,
    positives: torch.Tensor,
    negatives: torch.Tensor,
    temperature: float = 0.07,
) -> torch.Tensor:
    """InfoNCE of one graph.

    Parameters
    ----------
    logits : torch.Tensor, shape (n,)
    positives : torch.Tensor, shape (P, n)
        0/1 vectors of the positive neighborhoods (P >= 1).
    negatives : torch.Tensor, shape (N, n)
        0/1 vectors of the negative neighborhoods (N >= 0; with none the loss is 0).
    temperature : float
    """
    scores = torch.sigmoid(logits)
    positive = positives.to(scores.dtype) @ scores / temperature
    negative = negatives.to(scores.dtype) @ scores / temperature
    # -log(e^p / (e^p + sum e^n)) = log(1 + sum e^(n - p)): differences first, so that large
    # scores lose no precision.
    differences = torch.cat(
        [torch.zeros_like(positive)[:, None], negative[None, :] - positive[:, None]], dim=1
    )
    return torch.logsumexp(differences, dim=1).mean()


def imitation_bce(
    logits: torch.Tensor,
    positives: torch.Tensor,
    negatives: torch.Tensor | None = None,
    temperature: float | None = None,
) -> torch.Tensor:
    """Binary cross-entropy against the expert's positive neighborhood.

    The expert's is the first positive, i.e. Local Branching's best. This is the
    imitation-learning baseline of Sonnerat et al. (2021), the ablation of CL-LNS.
    ``negatives`` and ``temperature`` are accepted (and ignored) so both losses share one call.
    """
    return F.binary_cross_entropy_with_logits(logits, positives[0].to(logits.dtype))


def loss_function(name: str):
    """The loss called ``name`` (``"infonce"`` or ``"bce"``)."""
    functions = {"infonce": info_nce, "bce": imitation_bce}
    if name not in functions:
        raise UnknownNameError("loss", name, functions)
    return functions[name]
