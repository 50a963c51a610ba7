"""posteval.models.constraint_flow: the pairing-latent flow over the constraint variables (a few steps lower
its loss, the marginal likelihood over the usable pairings, proposals only among usable pairings and seeded)
and its sampler through the analytic solution."""

import numpy as np
import pytest
import torch

from posteval.data.constraint_targets import ConstraintTargets
from posteval.models.constraint_flow import EventConstraintFlow, constraint_flow_samples
from posteval.models.encoder import EventEncoder
from posteval.physics.constraint_sampling import toy_events

N = 24
TINY = dict(width=8, heads=2, self_layers=1, class_layers=1, ff_hidden=8, embed_hidden=8, context_dim=4,
            context_hidden=8)


def tiny_model(seed=0):
    torch.manual_seed(seed)
    return EventConstraintFlow(EventEncoder(4, 6, 5, **TINY), transforms=1, hidden=(8,), bins=4, pairing_hidden=8)


def event_tensors(ev):
    """(global_feats (n, 4), leptons (n, 2, 6), jets (n, 2, 5), jet_mask (n, 2)) of toy events, scaled."""
    lep, jets, met = (torch.as_tensor(np.asarray(ev[k]), dtype=torch.float32) / 50 for k in ("lep_p4", "jet_p4", "met"))
    n = len(lep)
    glob = torch.cat([met, torch.zeros(n, 2)], dim=1)
    leptons = torch.cat([lep, torch.tensor([1.0, -1.0]).expand(n, 2)[..., None], torch.zeros(n, 2, 1)], dim=-1)
    jets = torch.cat([jets, torch.as_tensor(ev["jet_btag"], dtype=torch.float32)[..., None]], dim=-1)
    return glob, leptons, jets, torch.as_tensor(ev["jet_mask"])


@pytest.fixture(scope="module")
def setup():
    ev = toy_events(N, np.random.default_rng(0))
    targets = ConstraintTargets.fit(toy_events(200, np.random.default_rng(1)))
    s, f, use, extra = targets.training_arrays(ev)
    ctx = event_tensors(ev)
    batch = (*ctx, torch.as_tensor(f), torch.as_tensor(use), torch.as_tensor(s), torch.as_tensor(extra))
    return ev, targets, batch


def test_a_few_steps_lower_the_loss(setup):
    _, _, batch = setup
    model = tiny_model()
    before = model.loss(batch)
    assert before.shape == () and torch.isfinite(before)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(40):
        opt.zero_grad()
        loss = model.loss(batch)
        loss.backward()
        opt.step()
    after = model.loss(batch).item()
    assert after < before.item() - 0.5, (before.item(), after)
    # both heads learn: the pairing MLP and the flow get gradients
    assert all(p.grad is not None for p in model.pairing.parameters())
    assert all(p.grad is not None for p in model.flow.parameters() if p.requires_grad)


def test_log_prob_is_the_marginal_over_usable_pairings(setup):
    _, _, batch = setup
    model = tiny_model(1)
    model.eval()
    with torch.no_grad():
        lp = model.log_prob(batch)
        assert lp.shape == (N,) and torch.isfinite(lp).all()
        ctx, f, use, s, extra = batch[:4], batch[4], batch[5], batch[6], batch[7]
        # the extra terms add inside the logsumexp: a constant shift moves log p by the same constant
        np.testing.assert_allclose(model.log_prob((*ctx, f, use, s, extra + 1.5)).numpy(), lp.numpy() + 1.5,
                                   rtol=1e-5, atol=1e-5)
        # one usable pairing per event: pi(a | x) = 1 and log p = log q(s_a | x, a) + extra_a
        alone = []
        for a in (0, 1):
            only = torch.zeros_like(use)
            only[:, a] = True
            alone.append(model.log_prob((*ctx, f, only, s, extra)))
            cond = torch.cat([model.encode(ctx), f[:, a]], dim=-1)
            direct = model.flow.log_prob(s[:, a], cond) + extra[:, a]
            np.testing.assert_allclose(alone[-1].numpy(), direct.numpy(), rtol=1e-5, atol=1e-5)
        # both usable: a mixture over the pairings, between its two components
        both = use[:, 0] & use[:, 1]
        assert both.sum() >= N // 2
        lo, hi = torch.minimum(*alone), torch.maximum(*alone)
        assert torch.all(lp[both] >= lo[both] - 1e-5) and torch.all(lp[both] <= hi[both] + 1e-5)
        assert torch.all(hi[both] - lo[both] > 1e-3)  # the components differ: the bounds can fail


def test_propose_only_usable_pairings_and_is_seeded(setup):
    _, _, batch = setup
    model = tiny_model(2)
    ctx, f = batch[:4], batch[4]
    usable = torch.zeros(N, 6, dtype=torch.bool)
    usable[:8, 1] = True  # only pairing 1
    usable[8:16, 0] = True  # only pairing 0
    usable[16:, :2] = True  # both
    context = (*ctx, f, usable)
    a, s = model.propose(context, 40, generator=torch.Generator().manual_seed(0))
    assert tuple(a.shape) == (N, 40) and tuple(s.shape) == (N, 40, 6)
    assert torch.all(usable[torch.arange(N)[:, None], a])
    assert torch.all(a[:8] == 1) and torch.all(a[8:16] == 0)
    assert set(a[16:].unique().tolist()) == {0, 1}
    assert torch.isfinite(s).all()
    a2, s2 = model.propose(context, 40, generator=torch.Generator().manual_seed(0))
    assert torch.equal(a, a2) and torch.equal(s, s2)
    a3, s3 = model.propose(context, 40, generator=torch.Generator().manual_seed(1))
    assert not torch.equal(s, s3)


def test_bad_batches_are_refused(setup):
    _, _, batch = setup
    model = tiny_model()
    with pytest.raises(ValueError, match="batch must be a tuple of 8"):
        model.loss(batch[:7])
    with pytest.raises(ValueError, match="batch must be a tuple of 8"):
        model.log_prob(list(batch) + [batch[-1]])
    with pytest.raises(ValueError, match="context must be a tuple of 6"):
        model.propose(batch, 3)
    with pytest.raises(ValueError, match="features must be"):
        model.loss((*batch[:4], batch[4][..., :3], *batch[5:]))
    none = batch[5].clone()
    none[0] = False
    with pytest.raises(ValueError, match="usable: an event has no usable pairing"):
        model.loss((*batch[:5], none, *batch[6:]))


def test_constraint_flow_samples_on_toy_events(setup):
    ev, targets, batch = setup
    model = tiny_model(3)
    f, cand = targets.features(ev)
    context = (*batch[:4], torch.as_tensor(f), torch.as_tensor(cand))
    m = 6

    def fallback(count, rng):
        return np.full((count, m, 2, 3), -1.0)

    out = constraint_flow_samples(model, context, ev, targets.to_constraints, m, seed=0, fallback=fallback,
                                  rounds=3, batch_size=10)
    assert out.samples.shape == (N, m, 2, 3) and out.fallback.shape == (N,) and out.fallback.dtype == bool
    assert 0 < out.acceptance <= 1 and not out.fallback.all()
    assert np.all(out.samples[out.fallback] == -1.0) and np.all(np.isfinite(out.samples))
    again = constraint_flow_samples(model, context, ev, targets.to_constraints, m, seed=0, fallback=fallback,
                                    rounds=3, batch_size=10)
    np.testing.assert_array_equal(out.samples, again.samples)
    other = constraint_flow_samples(model, context, ev, targets.to_constraints, m, seed=1, fallback=fallback, rounds=3)
    assert not np.array_equal(out.samples, other.samples)


# --- the root scorer -------------------------------------------------------------------------------------------

def root_batch(setup):
    ev, targets, batch = setup
    rf, rvalid, rtrue = targets.root_arrays(ev)
    return (*batch, torch.as_tensor(rf), torch.as_tensor(rvalid), torch.as_tensor(rtrue))


def scorer_model(seed=0):
    torch.manual_seed(seed)
    return EventConstraintFlow(EventEncoder(4, 6, 5, **TINY), transforms=1, hidden=(8,), bins=4, pairing_hidden=8,
                               root_features=8)


def test_the_true_root_is_a_real_root_of_its_own_c(setup):
    ev, targets, _ = setup
    rf, rvalid, rtrue = targets.root_arrays(ev)
    _, _, use, _ = targets.training_arrays(ev)
    assert rf.shape == (N, 6, 4, 8) and rvalid.shape == (N, 6, 4) and rtrue.shape == (N, 6)
    assert np.take_along_axis(rvalid, rtrue[..., None], -1)[..., 0][use].all()
    assert np.all(rf[~rvalid] == 0)


def test_the_root_scorer_replaces_the_uniform_choice_and_learns_the_true_root(setup):
    batch = root_batch(setup)
    model = scorer_model()
    with pytest.raises(ValueError, match="tuple of 11"):
        model.loss(batch[:8])
    rf, rvalid, rtrue = batch[8], batch[9], batch[10]
    usable = batch[5]

    def true_root_logp():
        cond, _ = model._conditions(batch[:4], batch[4], usable)
        lr = model.root_log_softmax(cond, rf, rvalid)
        return torch.gather(lr, -1, rtrue[..., None].long()).squeeze(-1)[usable].mean().item()

    with torch.no_grad():
        uniform = (-torch.log(rvalid.sum(-1).clamp(min=1).float()))[usable].mean().item()
        start = true_root_logp()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(60):
        opt.zero_grad()
        model.loss(batch).backward()
        opt.step()
    with torch.no_grad():
        end = true_root_logp()
    assert all(p.grad is not None for p in model.root.parameters())
    assert end > start and end > uniform, (uniform, start, end)


def test_sampling_with_a_scorer_needs_its_root_standardisation(setup):
    ev, targets, _ = setup
    model = scorer_model()
    f, cand = targets.features(ev)
    ctx = (*event_tensors(ev), torch.as_tensor(f), torch.as_tensor(cand))
    fb = lambda k, g: np.zeros((k, 4, 2, 3))  # noqa: E731
    with pytest.raises(ValueError, match="root_standard"):
        constraint_flow_samples(model, ctx, ev, targets.to_constraints, 4, seed=0, fallback=fb)
    a = constraint_flow_samples(model, ctx, ev, targets.to_constraints, 4, seed=0, fallback=fb, root_standard=targets.roots)
    b = constraint_flow_samples(model, ctx, ev, targets.to_constraints, 4, seed=0, fallback=fb, root_standard=targets.roots)
    assert a.samples.shape == (N, 4, 2, 3) and np.array_equal(a.samples, b.samples)


def test_temperature_widens_the_constraint_draws_and_is_checked(setup):
    """temperature 1 is the model itself (bit-identical proposals); above 1 the draws of s spread wider, the
    pairing draws unchanged; a non-positive or non-finite temperature is refused before any sampling."""
    ev, targets, batch = setup
    model = tiny_model(4)
    f, cand = targets.features(ev)
    context = (*batch[:4], torch.as_tensor(f), torch.as_tensor(cand))
    a1, s1 = model.propose(context, 400, generator=torch.Generator().manual_seed(0))
    a0, s0 = model.propose(context, 400, generator=torch.Generator().manual_seed(0), temperature=1.0)
    assert torch.equal(a1, a0) and torch.equal(s1, s0)
    a2, s2 = model.propose(context, 400, generator=torch.Generator().manual_seed(0), temperature=1.5)
    assert torch.equal(a1, a2)
    assert s2.std(dim=1).mean() > 1.2 * s1.std(dim=1).mean()
    for bad in (0.0, -1.0, float("nan"), float("inf"), True, "1"):
        with pytest.raises(ValueError, match="temperature must be a finite positive number"):
            constraint_flow_samples(model, context, ev, targets.to_constraints, 4, seed=0,
                                    fallback=lambda c, r: np.zeros((c, 4, 2, 3)), temperature=bad)


def test_sampling_restores_the_models_training_mode(setup):
    ev, targets, batch = setup
    model = tiny_model(5)
    f, cand = targets.features(ev)
    context = (*batch[:4], torch.as_tensor(f), torch.as_tensor(cand))
    model.train()
    constraint_flow_samples(model, context, ev, targets.to_constraints, 4, seed=0, rounds=2,
                            fallback=lambda c, r: np.zeros((c, 4, 2, 3)))
    assert model.training
    model.eval()
    constraint_flow_samples(model, context, ev, targets.to_constraints, 4, seed=0, rounds=2,
                            fallback=lambda c, r: np.zeros((c, 4, 2, 3)))
    assert not model.training
