"""The analytic dilepton solution: the true neutrinos among the roots, every root reproduces c, even root
counts, the closed-form Jacobian against finite differences and against re-solving, broadcasting, no
solution where the masses are impossible, and errors that name the input."""

import numpy as np
import pytest

from posteval.physics import dilepton as dl
from posteval.physics.constraint_sampling import toy_events


@pytest.fixture(scope="module")
def toy():
    """2,000 events with exact kinematics and their true constraint variables."""
    ev = toy_events(2000, np.random.default_rng(0))
    lep, bj, nu, met = ev["lep_p4"], ev["jet_p4"], ev["neutrino_momenta"], ev["met"]
    return lep, bj, nu, met, dl.constraint_variables(nu, lep, bj, met)


@pytest.fixture(scope="module")
def solved(toy):
    lep, bj, nu, met, c = toy
    return dl.solve_dilepton(c, lep, bj, met)


def _masses(p4):
    return np.sqrt(np.maximum(p4[..., 3] ** 2 - np.sum(p4[..., :3] ** 2, axis=-1), 0.0))


def test_constraint_variables_by_hand(toy):
    lep, bj, nu, met, c = toy
    assert c.shape == (len(nu), 6)
    e = np.linalg.norm(nu, axis=-1, keepdims=True)
    nu4 = np.concatenate([nu, e], axis=-1)
    np.testing.assert_allclose(c[:, [0, 2]], _masses(lep + nu4), rtol=1e-10)
    np.testing.assert_allclose(c[:, [1, 3]], _masses(lep + nu4 + bj), rtol=1e-10)
    np.testing.assert_allclose(c[:, 4:], met - nu[:, 0, :2] - nu[:, 1, :2], atol=1e-12)


def test_the_true_neutrinos_are_a_valid_root(toy, solved):
    lep, bj, nu, met, c = toy
    roots, valid = solved
    assert roots.shape == (len(nu), dl.MAX_ROOTS, 2, 3) and valid.shape == (len(nu), dl.MAX_ROOTS)
    assert valid.dtype == bool
    err = np.where(valid, np.abs(roots - nu[:, None]).max(axis=(2, 3)), np.inf).min(axis=1)
    assert np.mean(err < 1e-4) >= 0.995, f"true root missed in {np.mean(err >= 1e-4):.4f} of events"
    assert valid.any(axis=1).all(), "an event with its own true c has no valid root"


def test_every_valid_root_reproduces_c(toy, solved):
    lep, bj, nu, met, c = toy
    roots, valid = solved
    back = dl.constraint_variables(roots, lep[:, None], bj[:, None], met[:, None])
    dev = np.abs(back - c[:, None])[valid]
    assert len(dev) >= 2 * len(nu)
    assert dev[:, :4].max() < 1e-3
    assert dev[:, 4:].max() < 1e-9  # r closes exactly: nubar_T = MET - r - nu_T by construction
    # positive neutrino energies from the linear relations: the masses hold with massless neutrinos
    assert np.all(np.linalg.norm(roots[valid], axis=-1) > 0)
    assert np.all(roots[~valid] == 0.0)


def test_root_counts_are_even(solved):
    _, valid = solved
    counts = valid.sum(axis=1)
    assert set(np.unique(counts)) <= {1, 2, 3, 4}
    assert np.mean(counts % 2 == 0) >= 0.98
    assert np.mean(counts == 4) > 0.05  # both branches occur: four roots are not an artefact of the test


def test_distinct_roots_are_distinct(solved):
    roots, valid = solved
    for i in range(dl.MAX_ROOTS):
        for j in range(i):
            both = valid[:, i] & valid[:, j]
            gap = np.abs(roots[both, i] - roots[both, j]).max(axis=(1, 2))
            assert np.all(gap > 1e-6)


def _finite_difference_logdet(nu, lep, bj, met, h=1e-4):
    flat = nu.reshape(-1, 6)
    cols = []
    for k in range(6):
        d = np.zeros(6)
        d[k] = h
        up = dl.constraint_variables((flat + d).reshape(nu.shape), lep, bj, met)
        down = dl.constraint_variables((flat - d).reshape(nu.shape), lep, bj, met)
        cols.append((up - down) / (2 * h))
    return np.log(np.abs(np.linalg.det(np.stack(cols, axis=-1))))


def test_log_det_jacobian_equals_finite_differences(toy):
    lep, bj, nu, met, _ = (a[:100] for a in toy)
    closed = dl.log_abs_det_jacobian(nu, lep, bj)
    assert closed.shape == (100,) and np.all(np.isfinite(closed))
    numeric = _finite_difference_logdet(nu, lep, bj, met)
    assert np.abs(closed - numeric).max() < 1e-4
    assert np.std(closed) > 0.5  # the Jacobian varies between events: a constant would not pass


def test_log_det_jacobian_equals_re_solving(toy):
    """Implicit function: d(nu, nubar)/dc from re-solving at c +- h e_k has determinant 1 / |det dc/d(nu, nubar)|.
    Near a fold (two roots about to merge) the roots are steep and curved in c, and the central difference
    loses digits there: the median and nine events in ten are held to 1e-6 and 1e-4."""
    lep, bj, nu, met, c = (a[:40] for a in toy)
    h = 3e-5
    rows = np.arange(len(nu))
    cols = []
    for k in range(6):
        d = np.zeros(6)
        d[k] = h
        ends = []
        for sign in (1.0, -1.0):
            roots, valid = dl.solve_dilepton(c + sign * d, lep, bj, met)
            dist = np.where(valid, np.abs(roots - nu[:, None]).max(axis=(2, 3)), np.inf)
            assert np.all(dist.min(axis=1) < 0.5)  # the true root's branch, moved by O(h |dnu/dc|)
            ends.append(roots[rows, dist.argmin(axis=1)].reshape(-1, 6))
        cols.append((ends[0] - ends[1]) / (2 * h))
    inverse = np.log(np.abs(np.linalg.det(np.stack(cols, axis=-1))))
    gap = np.abs(inverse + dl.log_abs_det_jacobian(nu, lep, bj))
    assert np.median(gap) < 1e-6
    assert np.mean(gap < 1e-4) >= 0.9


def test_log_det_jacobian_is_minus_inf_at_a_fold():
    """Two roots merge where the transverse parts of the two sides' normals are parallel (the closed
    form's numerator vanishes): identical sides, n1 = n2, are such a point."""
    rng = np.random.default_rng(3)
    ev = toy_events(5, rng)
    lep, bj, nu = ev["lep_p4"], ev["jet_p4"], ev["neutrino_momenta"]
    same_lep, same_bj, same_nu = (np.repeat(a[:, :1], 2, axis=1) for a in (lep, bj, nu))
    assert np.all(dl.log_abs_det_jacobian(same_nu, same_lep, same_bj) == -np.inf)
    assert np.all(np.isfinite(dl.log_abs_det_jacobian(nu, lep, bj)))


def test_broadcasting_events_by_draws(toy):
    lep, bj, nu, met, c = (a[:50] for a in toy)
    k = 7
    rng = np.random.default_rng(1)
    draws = c[rng.integers(0, len(c), (len(c), k))]  # (n, k, 6): other events' c for each event
    roots, valid = dl.solve_dilepton(draws, lep[:, None], bj[:, None], met[:, None])
    assert roots.shape == (50, k, dl.MAX_ROOTS, 2, 3) and valid.shape == (50, k, dl.MAX_ROOTS)
    for j in (0, 3, k - 1):
        one, ok = dl.solve_dilepton(draws[:, j], lep, bj, met)
        np.testing.assert_array_equal(ok, valid[:, j])
        np.testing.assert_allclose(one, roots[:, j], atol=1e-9)
    # shared leptons and jets of one event against many c
    r1, v1 = dl.solve_dilepton(draws[0], lep[0], bj[0], met[0])
    np.testing.assert_array_equal(v1, valid[0])
    np.testing.assert_allclose(r1, roots[0], atol=1e-9)
    # the other functions broadcast the same way
    back = dl.constraint_variables(roots, lep[:, None, None], bj[:, None, None], met[:, None, None])
    assert back.shape == (50, k, dl.MAX_ROOTS, 6)
    assert np.abs(back - draws[:, :, None])[valid][:, :4].max() < 1e-3
    logdet = dl.log_abs_det_jacobian(roots, lep[:, None, None], bj[:, None, None])
    assert logdet.shape == (50, k, dl.MAX_ROOTS)
    assert np.all(np.isfinite(logdet[valid]))


def test_impossible_masses_give_no_root(toy):
    lep, bj, nu, met, c = (a[:200] for a in toy)
    lb_mass = _masses(lep + bj)  # (n, 2): m(l+ nu b) >= m(l+ b) for a massless neutrino
    for column, side in ((1, 0), (3, 1)):
        bad = c.copy()
        bad[:, column] = 0.5 * lb_mass[:, side]
        roots, valid = dl.solve_dilepton(bad, lep, bj, met)
        assert not valid.any()
        assert np.all(roots == 0.0)
    tiny = c.copy()
    tiny[:, :4] = 1.0  # every mass at 1 GeV
    roots, valid = dl.solve_dilepton(tiny, lep, bj, met)
    assert not valid.any() and np.all(roots == 0.0)
    # the unchanged c of the same events do have roots: the checks above can fail
    assert dl.solve_dilepton(c, lep, bj, met)[1].any(axis=1).all()


def test_a_smaller_atol_keeps_fewer_or_as_many_roots(toy, solved):
    lep, bj, nu, met, c = toy
    _, loose = solved
    _, strict = dl.solve_dilepton(c, lep, bj, met, atol=1e-9)
    assert np.all(strict.sum(axis=1) <= loose.sum(axis=1))  # per event (a slot may move at a duplicate)
    assert strict.sum() < loose.sum()


@pytest.mark.parametrize("call, message", [
    (lambda c, lep, bj, met: dl.solve_dilepton(c[..., :5], lep, bj, met), "constraints"),
    (lambda c, lep, bj, met: dl.solve_dilepton(np.where(c == c[0, 0], np.nan, c), lep, bj, met), "constraints"),
    (lambda c, lep, bj, met: dl.solve_dilepton(c, lep[..., :3], bj, met), "leptons_p4"),
    (lambda c, lep, bj, met: dl.solve_dilepton(c, lep, bj[:, :1], met), "bjets_p4"),
    (lambda c, lep, bj, met: dl.solve_dilepton(c, lep, bj * np.inf, met), "bjets_p4"),
    (lambda c, lep, bj, met: dl.solve_dilepton(c, lep, bj, met[:, :1]), "met"),
    (lambda c, lep, bj, met: dl.solve_dilepton(c, lep, bj, np.full_like(met, np.nan)), "met"),
    (lambda c, lep, bj, met: dl.solve_dilepton(c, lep, bj, met, atol=0.0), "atol"),
    (lambda c, lep, bj, met: dl.solve_dilepton(c, lep, bj, met, atol=-1e-3), "atol"),
    (lambda c, lep, bj, met: dl.solve_dilepton(c, lep, bj, met, atol=float("nan")), "atol"),
    (lambda c, lep, bj, met: dl.constraint_variables(np.zeros((3, 2, 4)), lep, bj, met), "neutrinos"),
    (lambda c, lep, bj, met: dl.constraint_variables(np.full((3, 2, 3), np.nan), lep[:3], bj[:3], met[:3]),
     "neutrinos"),
    (lambda c, lep, bj, met: dl.constraint_variables(np.zeros((3, 2, 3)), lep[:3], bj[:3], met[:3, :1]), "met"),
    (lambda c, lep, bj, met: dl.log_abs_det_jacobian(np.zeros((3, 3, 3)), lep[:3], bj[:3]), "neutrinos"),
    (lambda c, lep, bj, met: dl.log_abs_det_jacobian(np.ones((3, 2, 3)), lep[:3, :, :2], bj[:3]), "leptons_p4"),
])
def test_bad_input_names_the_argument(toy, call, message):
    lep, bj, nu, met, c = (a[:3] for a in toy)
    with pytest.raises(ValueError, match=message):
        call(c, lep, bj, met)
