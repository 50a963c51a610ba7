"""`flow_constraint`: a conditional flow over the constraint variables of a dileptonic ttbar event,
with the lepton-b pairing as a latent, on the chapter's event encoder.

The model is a density over (pairing a, standardised constraint variables s) given the event x,

    pi(a | x) q(s | x, a),

pi a softmax over the event's candidate pairings of an MLP of (context, f_a), q a conditional
spline flow (:class:`~posteval.models.flow.ConditionalFlow`) on (context, f_a), f_a the pairing's
features. It is trained by the marginal likelihood of the true neutrinos, with no matching labels:

    loss = -mean_i logsumexp_a [log pi(a | x_i) + log q(s_ia | x_i, a) + extra_ia],

s_ia the constraint variables of event i's true neutrinos under pairing a and extra_ia the terms
that make it a density over the neutrino momenta (the Jacobian of c, the standardisation and the
uniform root choice: :class:`posteval.data.constraint_targets.ConstraintTargets`). A draw is a
proposal (a, s); the sampler (:func:`constraint_flow_samples`) maps it to (nu, nubar) with the
analytic dilepton solution and redraws infeasible ones.

A batch is ``(global_feats, leptons, jets, jet_mask, features, usable, s, extra)``: the four event
tensors, the pairing features (n, P, F), which pairings are usable (n, P), and the targets. With a
root scorer (``root_features > 0``) three more follow, ``(root_feats (n, P, 4, R), root_valid (n, P, 4),
true_root (n, P))``, and the uniform root choice in ``extra`` (-log n_roots) is replaced by the
scorer's softmax over the real roots, rho(k | x, a, roots) (trained on the true root, which is always
among them).

Reference: ``shared/notes/constraint_coordinates.md`` ("What a learned version adds"); the latent
assignment trained by marginal likelihood as in a mixture model (C. M. Bishop (2006), *Pattern
Recognition and Machine Learning*, Springer, Section 9.2).

Example
-------
>>> import torch
>>> from posteval.models.encoder import EventEncoder
>>> _ = torch.manual_seed(0)
>>> enc = EventEncoder(4, 6, 5, width=8, heads=2, self_layers=1, class_layers=1, ff_hidden=8,
...                    embed_hidden=8, context_dim=4, context_hidden=8)
>>> model = EventConstraintFlow(enc, transforms=1, hidden=(8,), bins=4)
>>> n, P = 3, 6
>>> ctx = (torch.randn(n, 4), torch.randn(n, 2, 6), torch.randn(n, 4, 5), torch.ones(n, 4, dtype=torch.bool))
>>> usable = torch.tensor([[1, 1, 0, 0, 0, 0]] * n, dtype=torch.bool)
>>> feats, s, extra = torch.randn(n, P, 4), torch.randn(n, P, 6), torch.zeros(n, P)
>>> model.loss((*ctx, feats, usable, s, extra)).shape
torch.Size([])
>>> a, c = model.propose((*ctx, feats, usable), 5, generator=torch.Generator().manual_seed(0))
>>> tuple(a.shape), tuple(c.shape), bool((a < 2).all())   # only usable pairings are proposed
((3, 5), (3, 5, 6), True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn

from ..physics.constraint_sampling import (ConstraintSamples, candidate_pairings, root_features,
                                           sample_through_constraints)
from ._checks import check_temperature
from .encoder import EventEncoder, normed_mlp
from .event_models import EventModel
from .flow import ConditionalFlow

__all__ = ["EventConstraintFlow", "build_constraint_flow", "constraint_flow_samples"]

N_PAIR_FEATURES = 4


def _split(batch, n_items: int, what: str):
    if not isinstance(batch, (tuple, list)) or len(batch) != n_items:
        raise ValueError(f"{what} must be a tuple of {n_items} tensors (see the module), got "
                         f"{type(batch).__name__}{' of length ' + str(len(batch)) if isinstance(batch, (tuple, list)) else ''}")
    return tuple(batch[:4]), batch[4], batch[5].bool()


class EventConstraintFlow(EventModel):
    """pi(a | x) q(s | x, a): pairing head and conditional flow over the six constraint variables."""

    def __init__(self, encoder: EventEncoder, dim: int = 6, *, pair_features: int = N_PAIR_FEATURES,
                 pairing_hidden: int = 32, root_features: int = 0, **flow_kwargs):
        super().__init__(encoder, dim)
        width = encoder.context_dim + pair_features
        self.pair_features = pair_features
        self.root_features = int(root_features)
        self.flow = ConditionalFlow(dim, width, **flow_kwargs)
        self.pairing = normed_mlp(width, pairing_hidden, 1)
        self.root = normed_mlp(width + self.root_features, pairing_hidden, 1) if self.root_features else None

    def root_log_softmax(self, cond: torch.Tensor, root_feats: torch.Tensor, root_valid: torch.Tensor) -> torch.Tensor:
        """log rho(k | x, a, roots) over the root slots (..., 4) of conditions ``cond`` (..., width)."""
        x = torch.cat([cond[..., None, :].expand(*root_feats.shape[:-1], -1), root_feats], dim=-1)
        logits = self.root(x).squeeze(-1).masked_fill(~root_valid, float("-inf"))
        safe = torch.where(root_valid.any(-1, keepdim=True), logits, torch.zeros_like(logits))
        return torch.log_softmax(safe, dim=-1)

    def _conditions(self, context, features, usable):
        h = self.encode(context)
        if features.shape[:2] != usable.shape or features.shape[-1] != self.pair_features:
            raise ValueError(f"features must be (n, P, {self.pair_features}) and usable (n, P), got "
                             f"{tuple(features.shape)}, {tuple(usable.shape)}")
        if not bool(usable.any(dim=1).all()):
            raise ValueError("usable: an event has no usable pairing")
        cond = torch.cat([h[:, None].expand(-1, features.shape[1], -1), features], dim=-1)
        logits = self.pairing(cond).squeeze(-1).masked_fill(~usable, float("-inf"))
        return cond, torch.log_softmax(logits, dim=1)

    def log_prob(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """log p(nu, nubar | x) (n,) of the true neutrinos, up to the feasible fraction (see the module)."""
        context, features, usable = _split(batch, 11 if self.root_features else 8, "batch")
        s, extra = batch[6], batch[7]
        cond, log_pi = self._conditions(context, features, usable)
        lq = torch.full(usable.shape, float("-inf"), dtype=s.dtype, device=s.device)
        lq[usable] = self.flow.log_prob(s[usable], cond[usable])
        if self.root_features:  # the learned root choice in place of the uniform one inside extra
            root_feats, root_valid, true_root = batch[8], batch[9].bool(), batch[10].long()
            lr = self.root_log_softmax(cond, root_feats, root_valid)
            chosen = torch.gather(lr, -1, true_root[..., None]).squeeze(-1)
            extra = extra + chosen.masked_fill(~usable, 0.0) + torch.log(root_valid.sum(-1).clamp(min=1).to(s.dtype))
        return torch.logsumexp(log_pi + lq + extra.masked_fill(~usable, 0.0), dim=1)

    def loss(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """Mean negative marginal log-likelihood over the pairings."""
        return -self.log_prob(batch).mean()

    @torch.no_grad()
    def propose(self, context: Sequence[torch.Tensor], k: int, generator: torch.Generator | None = None, *,
                temperature: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
        """``k`` proposals per event: pairing a ~ pi(a | x) (n, k) and s ~ q(s | x, a) (n, k, 6), the flow
        sampled at ``temperature`` (:meth:`~posteval.models.flow.ConditionalFlow.sample`; 1: the model).
        ``context`` is ``(global_feats, leptons, jets, jet_mask, features, usable)``."""
        ctx, features, usable = _split(context, 6, "context")
        cond, log_pi = self._conditions(ctx, features, usable)
        n = cond.shape[0]
        a = torch.multinomial(log_pi.exp(), k, replacement=True, generator=generator)
        chosen = torch.gather(cond, 1, a[..., None].expand(-1, -1, cond.shape[-1]))
        s = self.flow.sample(chosen.reshape(n * k, -1), 1, generator=generator,
                             temperature=temperature).reshape(n, k, self.dim)
        return a, s


def constraint_flow_samples(model: EventConstraintFlow, context: Sequence[torch.Tensor], events, to_constraints: Callable,
                            m: int, seed: int = 0, *, fallback: Callable, rounds: int = 8,
                            batch_size: int = 1024, root_standard: Callable | None = None,
                            temperature: float = 1.0) -> ConstraintSamples:
    """m samples (nu, nubar) per event of a trained `EventConstraintFlow`: proposals (a, s) from the
    model, c = ``to_constraints(s)`` in GeV, the analytic solution, one real root (the scorer's choice,
    or uniform for a model without one), infeasible draws redrawn (:func:`posteval.physics.constraint_sampling.sample_through_constraints`).

    ``context`` holds the six tensors ``(global_feats, leptons, jets, jet_mask, features, usable)`` of
    the same events, in the same order, as ``events``; ``usable`` there means "a candidate pairing".
    A model with a root scorer picks each proposal's root from its softmax (``root_standard`` maps
    :func:`~posteval.physics.constraint_sampling.root_features` to the model's standardised ones).
    ``temperature`` scales the flow's base draws of s (1: the model; above 1 wider constraint
    variables, the pairing and root choices unchanged): the one width a recalibration may fit.

    Why this size: the model, its tensors and the same events as arrays, the map to c, m and the seed
    define the draws; fallback, rounds and batch_size are the shared loop's stated knobs, root_standard
    the scorer's standardisation and temperature the recalibration's width, each set by the chapter by
    name (bundled, a reader could not see which one a run changed).
    """
    temperature = check_temperature(temperature)
    training = model.training
    model.eval()
    generator = torch.Generator().manual_seed(int(seed))

    def propose(rows, k, rng):
        idx = torch.as_tensor(rows)
        pairs, cs = [], []
        for start in range(0, len(idx), batch_size):
            part = idx[start:start + batch_size]
            a, s = model.propose(tuple(t[part] for t in context), k, generator=generator, temperature=temperature)
            pairs.append(a.numpy())
            cs.append(to_constraints(s.double().numpy()))
        return np.concatenate(pairs), np.concatenate(cs)

    choose_root = None
    if model.root_features:
        if root_standard is None:
            raise ValueError("a model with a root scorer needs root_standard (ConstraintTargets.roots)")
        jets, _ = candidate_pairings(events)
        lep = np.asarray(events["lep_p4"], dtype=np.float64)

        @torch.no_grad()
        def choose_root(rows, pair, roots, valid, rng):
            feats = root_standard(root_features(roots, lep[rows, None], jets[rows[:, None], pair]))
            out = []
            for start in range(0, len(rows), batch_size):
                part = torch.as_tensor(rows[start:start + batch_size])
                ctx, f, cand = (*(t[part] for t in context[:4]),), context[4][part], context[5][part].bool()
                cond, _ = model._conditions(ctx, f, cand)
                chosen = torch.gather(cond, 1, torch.as_tensor(pair[start:start + batch_size])[..., None]
                                      .expand(-1, -1, cond.shape[-1]))
                out.append(model.root_log_softmax(chosen, torch.as_tensor(feats[start:start + batch_size]),
                                                  torch.as_tensor(valid[start:start + batch_size])).double().numpy())
            logp = np.concatenate(out)
            gumbel = -np.log(-np.log(rng.random(logp.shape)))
            return np.argmax(np.where(valid, logp + gumbel, -np.inf), axis=-1)

    try:
        return sample_through_constraints(events, propose, m, seed, fallback=fallback, rounds=rounds,
                                          choose_root=choose_root)
    finally:
        model.train(training)


def build_constraint_flow(dims: Sequence[int], encoder: dict | None = None, head: dict | None = None,
                          root_features: int = 0) -> EventConstraintFlow:
    """A fresh `EventConstraintFlow` with its own `EventEncoder` of input sizes ``dims`` =
    (global_dim, lepton_dim, jet_dim); ``head`` holds the flow's keyword arguments (``transforms``,
    ``hidden``, ``bins``, ``bound``) and ``pairing_hidden``."""
    if len(dims) != 3:
        raise ValueError(f"dims must be (global_dim, lepton_dim, jet_dim), got {dims!r}")
    return EventConstraintFlow(EventEncoder(*dims, **dict(encoder or {})), root_features=root_features,
                               **dict(head or {}))
