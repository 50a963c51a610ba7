"""posteval.physics.chunks: one chunk of generation is a pure function of its job."""

import dataclasses

import numpy as np
import pytest

from posteval.physics import chunks, ttbar
from posteval.physics import fourvectors as fv

from tests.physics.test_ttbar import _parton_config


def test_chunk_job_is_pure():
    job = chunks.ChunkJob(seed=2, index=1, n_events=200, config=_parton_config())
    first, second = chunks.run_chunk(job), chunks.run_chunk(job)
    assert first.keys() == second.keys()
    for k in first:
        np.testing.assert_array_equal(first[k], second[k])
    other = chunks.run_chunk(dataclasses.replace(job, index=2))
    assert not np.array_equal(first["nu_p4"][:5], other["nu_p4"][:5])


def test_full_simulation_mode_runs():
    out = chunks.run_chunk(chunks.ChunkJob(seed=1, index=0, n_events=60, config=ttbar.make_config("full")))
    assert out["n_truth_failed"] == 0 and 10 < len(out["met"]) < 40
    assert np.median(fv.mass(out["top_p4"])) == pytest.approx(172.5, abs=3.0)
    # Hadron decays add neutrinos the truth must not pick up: the W neutrinos still rebuild the W.
    np.testing.assert_allclose(fv.mass(out["lep_born_p4"] + out["nu_p4"]), fv.mass(out["w_p4"]), rtol=0.05)


def test_taus_decay_to_detector_leptons():
    cfg = ttbar.make_config("shower", include_taus=True)
    out = chunks.run_chunk(chunks.ChunkJob(seed=1, index=0, n_events=400, config=cfg))
    born = np.abs(out["lep_born_pdgid"])
    assert np.any(born == 15)
    assert np.all(np.isin(np.abs(out["lep_final_pdgid"]), [11, 13]))  # the visible lepton of a tau is e/mu
    assert np.all(np.abs(out["nu_pdgid"]) == np.where(born == 15, 16, born + 1))
    with pytest.raises(ValueError):
        chunks.run_chunk(chunks.ChunkJob(1, 0, 10, ttbar.make_config("parton", include_taus=True)))
