"""Design tried for issue 25: the lepton-frame flow trained on its likelihood plus a physics term.

Not a chapter model: a one-off measurement run inside chapter 3's own data pipeline (the chapter's
cells up to its model definitions, ci sizes), by ``scripts/physics_loss03.sh``.

Loss per event, said as such: the flow's negative log-likelihood of the lepton-frame targets s,
plus ``weight`` times the expected negative Gaussian log-likelihood of the measured MET given the
flow's own reparametrised samples,

    L = -log q(s | x) + weight * E_{s' ~ q(.|x)} |MET - pT(nu(s')) - pT(nubar(s'))|^2 / (2 sigma^2),

with sigma the per-component MET resolution of the generated sample and ``k`` samples per event:
a likelihood term the coordinates cannot express (MET closure), added to the density the
coordinates do express (the W mass). The samples are mapped to momenta by a torch copy of
:func:`posteval.physics.coordinates.from_lepton_frame` (clamped to the training guards' ranges).
"""

from __future__ import annotations

import numpy as np
import torch

from posteval.data.lepton_frame import lepton_momenta, missing_pt
from posteval.models.event_models import EventFlow
from posteval.physics.coordinates import _frame


def frame_tensors(arrays, frame) -> torch.Tensor:
    """Per event (n, 22): for l+ then l-, |l| and the frame e_l, e_1, e_2 (2 x 10 numbers), then MET (x, y)."""
    lep, met = lepton_momenta(arrays), missing_pt(arrays)
    length, e_l, e_1, e_2 = _frame(lep, met, (len(lep), 2, 3))
    aux = np.concatenate([length[..., None], e_l, e_1, e_2], axis=-1)  # (n, 2, 10)
    return torch.as_tensor(np.concatenate([aux.reshape(len(lep), 20), met], axis=1), dtype=torch.float32)


def momenta(u: torch.Tensor, aux: torch.Tensor) -> torch.Tensor:
    """Lepton-frame coordinates (k, n, 2, 3) -> Cartesian momenta (k, n, 2, 3) in GeV (torch)."""
    a = aux[:, :20].reshape(-1, 2, 10)
    length, e_l, e_1, e_2 = a[..., 0], a[..., 1:4], a[..., 4:7], a[..., 7:10]
    log_m2, tau, psi = u[..., 0], u[..., 1], u[..., 2]
    half = torch.atan(torch.exp(tau / 2))
    theta = 2 * half
    r = torch.exp(log_m2 - torch.log(4.0 * length) - 2 * torch.log(torch.sin(half)))
    direction = (torch.cos(theta)[..., None] * e_l
                 + torch.sin(theta)[..., None] * (torch.cos(psi)[..., None] * e_1 + torch.sin(psi)[..., None] * e_2))
    return r[..., None] * direction


class PhysicsTermFlow(EventFlow):
    """EventFlow whose training loss adds the MET term above; batches end with (aux, targets)."""

    def __init__(self, encoder, dim=6, *, mean, sd, lo, hi, sigma, weight=1.0, k=4, **flow_kwargs):
        super().__init__(encoder, dim, **flow_kwargs)
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("sd", torch.as_tensor(sd, dtype=torch.float32))
        self.register_buffer("lo", torch.as_tensor(lo, dtype=torch.float32))  # (2, 3) ranges of the coordinates
        self.register_buffer("hi", torch.as_tensor(hi, dtype=torch.float32))
        self.sigma, self.weight, self.k = float(sigma), float(weight), int(k)

    def loss(self, batch):
        *context, aux, targets = batch
        c = self.encode(context)
        dist = self.flow.flow(c)
        nll = -dist.log_prob(targets).mean()
        s = dist.rsample((self.k,))  # (k, n, 6)
        u = (s * self.sd + self.mean).reshape(self.k, -1, 2, 3)
        u = torch.maximum(torch.minimum(u, self.hi), self.lo)
        p = momenta(u, aux)
        resid = aux[:, 20:22] - p[..., 0, :2] - p[..., 1, :2]
        return nll + self.weight * (resid.pow(2).sum(-1) / (2 * self.sigma ** 2)).mean()


def build_met_term_flow(dims, encoder, head, *, mean, sd, lo, hi, sigma, weight) -> PhysicsTermFlow:
    """The chapter's flow (its encoder built as `build_event_model` builds it) with the MET term
    (module-level, so that worker processes can unpickle it)."""
    from posteval.models.event_models import build_event_model

    base = build_event_model("flow", dims, encoder, head)
    return PhysicsTermFlow(base.encoder, 6, mean=mean, sd=sd, lo=lo, hi=hi, sigma=sigma, weight=weight, **head)
