"""posteval.models.encoder: the event encoder's padding, permutation invariance and checks."""

import pytest
import torch

from posteval.models.encoder import EventEncoder

from tests.models.test_event_models import DIMS, TINY_ENCODER, random_batch


@pytest.mark.parametrize("training", [True, False])
def test_encoder_padding_does_not_change_output(training):
    torch.manual_seed(1)
    enc = EventEncoder(*DIMS, **TINY_ENCODER).train(training)
    g, lep, jets, mask, _ = random_batch()
    ref = enc(g, lep, jets, mask)
    # garbage in the padded slots, and three extra padded slots
    junk = torch.where(mask[..., None], jets, 50 * torch.randn_like(jets))
    jets2 = torch.cat([junk, torch.randn(len(g), 3, DIMS[2])], dim=1)
    mask2 = torch.cat([mask, torch.zeros(len(g), 3, dtype=torch.bool)], dim=1)
    torch.testing.assert_close(enc(g, lep, jets2, mask2), ref, rtol=1e-5, atol=1e-5)
    # a real jet does change the output
    jets3 = jets.clone()
    jets3[:, 0] += 1.0
    assert (enc(g, lep, jets3, mask) - ref).abs().max() > 1e-3


def test_encoder_is_jet_permutation_invariant():
    torch.manual_seed(2)
    enc = EventEncoder(*DIMS, **TINY_ENCODER).eval()
    g, lep, jets, mask, _ = random_batch()
    perm = torch.randperm(jets.shape[1])
    torch.testing.assert_close(enc(g, lep, jets[:, perm], mask[:, perm]), enc(g, lep, jets, mask),
                               rtol=1e-5, atol=1e-5)


def test_encoder_bad_input_names_argument():
    enc = EventEncoder(*DIMS, **TINY_ENCODER)
    g, lep, jets, mask, _ = random_batch()
    with pytest.raises(ValueError, match="jet_mask"):
        enc(g, lep, jets, mask.float())
    with pytest.raises(ValueError, match="leptons"):
        enc(g, lep[..., :3], jets, mask)
    with pytest.raises(ValueError, match="heads"):
        EventEncoder(*DIMS, width=16, heads=3)
