"""Event-file schema: the reader on a file in the published nu2flows layout, and bad files."""

import h5py
import numpy as np
import pytest

from posteval.physics import ttbar
from posteval.physics.event_file import content_hash, read_contents, schema_arrays, stored_hash_matches, write_atomic

J = 4


def _struct(fields, shape):
    return np.zeros(shape, dtype=[(f, "<f4") for f in fields])


def _published_layout(path, n=3, drop=None, lepton_shape=None):
    """A small file in the layout of the published nu2flows data (zenodo 8113516)."""
    rng = np.random.default_rng(0)
    met = _struct(("MET", "phi"), (n,))
    met["MET"], met["phi"] = [30.0, 40.0, 50.0][:n], [0.0, np.pi / 2, -np.pi / 2][:n]
    lep = _struct(("pt", "eta", "phi", "energy", "charge", "type"), lepton_shape or (n, 2))
    lep["pt"], lep["eta"], lep["phi"] = 40.0, 0.5, 1.0
    lep["energy"] = 40.0 * np.cosh(0.5)
    lep["charge"][..., 0], lep["charge"][..., 1] = -1, 1  # nu2flows files: l- may come first
    lep["pt"][..., 1] = 60.0
    lep["type"][..., 0] = 1
    jets = _struct(("pt", "eta", "phi", "energy", "is_tagged"), (n, J))
    jets["pt"][:, :2], jets["eta"][:, :2], jets["energy"][:, :2], jets["is_tagged"][:, 0] = 50.0, 0.0, 50.0, 1
    nus = _struct(("PDGID", "pt", "eta", "phi", "mass"), (n, 2))
    nus["PDGID"][:, 0], nus["PDGID"][:, 1] = 12, -12
    nus["pt"], nus["eta"], nus["phi"] = rng.uniform(20, 80, (n, 2)), rng.normal(size=(n, 2)), 0.3
    with h5py.File(path, "w") as f:
        g = f.create_group("delphes")
        for name, arr in (("MET", met), ("leptons", lep), ("jets", jets), ("neutrinos", nus)):
            if name != drop:
                g.create_dataset(name, data=arr)
        g.create_dataset("njets", data=np.full(n, 2))
        g.create_dataset("nbjets", data=np.full(n, 1))
        g.create_dataset("jets_indices", data=np.tile([0, 1, -1, -1], (n, 1)))
    return nus


def test_reads_published_layout(tmp_path):
    path = tmp_path / "test.h5"
    nus = _published_layout(path)
    ev = ttbar.read_events(path)
    assert ev["lep_pt"].shape == (3, 2) and ev["jet_pt"].shape == (3, J)
    # l+ first whatever the stored order: the 60 GeV lepton was stored second with charge +1.
    np.testing.assert_array_equal(ev["lep_charge"][:, 0], 1)
    np.testing.assert_allclose(ev["lep_pt"][:, 0], 60.0)
    np.testing.assert_array_equal(ev["lep_flavour"][:, 1], 1)
    np.testing.assert_array_equal(ev["jet_mask"], np.tile([True, True, False, False], (3, 1)))
    np.testing.assert_allclose(ev["met"], [[30, 0], [0, 40], [0, -50]], atol=1e-5)
    expected = np.stack([nus["pt"] * np.cos(0.3), nus["pt"] * np.sin(0.3), nus["pt"] * np.sinh(nus["eta"])], -1)
    np.testing.assert_allclose(ev["neutrino_momenta"], expected, rtol=1e-5)
    np.testing.assert_array_equal(ev["jet_truth_index"][0], [0, 1, -1, -1])
    assert ev["n_generated"] == -1 and "top_p4" not in ev


@pytest.mark.parametrize("drop", ["MET", "leptons", "jets", "neutrinos"])
def test_missing_dataset_raises(tmp_path, drop):
    path = tmp_path / "bad.h5"
    _published_layout(path, drop=drop)
    with pytest.raises(ValueError, match=drop):
        ttbar.read_events(path)


def test_wrong_shape_and_fields_raise(tmp_path):
    path = tmp_path / "shape.h5"
    _published_layout(path, lepton_shape=(3, 3))
    with pytest.raises(ValueError, match="leptons"):
        ttbar.read_events(path)
    with h5py.File(tmp_path / "fields.h5", "w") as f:
        g = f.create_group("delphes")
        g.create_dataset("MET", data=np.zeros(3, dtype=[("MET", "<f4")]))
    with pytest.raises(ValueError, match="phi"):
        ttbar.read_events(tmp_path / "fields.h5")


def test_not_an_event_file_raises(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not hdf5")
    with pytest.raises(ValueError, match="HDF5"):
        ttbar.read_events(text)
    with pytest.raises(ValueError):
        ttbar.read_events(tmp_path / "missing.h5")
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f.create_dataset("x", data=np.arange(3))
    with pytest.raises(ValueError, match="delphes"):
        ttbar.read_events(tmp_path / "other.h5")


def _our_events(n=2, j=3):
    lep = np.array([[[30.0, 0, 10, 31.7], [-20, 5, 0, 20.7]]] * n)
    jets = np.zeros((n, j, 4))
    jets[:, 0] = [40, 0, 0, 41]
    mask = np.zeros((n, j), dtype=bool)
    mask[:, 0] = True
    p4 = np.tile(np.array([10.0, 0, 0, 11]), (n, 2, 1))
    return {"lep_p4": lep, "lep_flavour": np.zeros((n, 2), int), "jet_p4": jets, "jet_mask": mask,
            "jet_btag": mask.copy(), "jet_flavour": np.where(mask, 5, 0), "jet_truth_index": np.where(mask, 0, -1),
            "n_jets": mask.sum(1), "n_bjets": mask.sum(1), "met": np.array([[5.0, 1.0]] * n),
            "top_p4": p4, "w_p4": p4, "b_p4": p4, "lep_born_p4": lep, "lep_final_p4": lep,
            "nu_p4": np.array([[[3.0, 4, 12, 13], [1, 0, 0, 1]]] * n), "lep_born_pdgid": np.tile([-11, 11], (n, 1)),
            "lep_final_pdgid": np.tile([-11, 11], (n, 1)), "nu_pdgid": np.tile([12, -12], (n, 1))}


def test_our_layout_roundtrip_and_hash(tmp_path):
    events = _our_events()
    arrays = schema_arrays(events)
    path = write_atomic(tmp_path / "ours.h5", arrays, {"format": "pointwise-ttbar", "n_generated": 7})
    assert stored_hash_matches(path)
    ev = ttbar.read_events(path)
    np.testing.assert_allclose(ev["lep_p4"], events["lep_p4"], rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(ev["neutrino_momenta"], events["nu_p4"][..., :3])
    np.testing.assert_array_equal(ev["nu_pdgid"], events["nu_pdgid"])
    np.testing.assert_allclose(ev["jet_p4"][:, 0], events["jet_p4"][:, 0], rtol=1e-5)
    assert ev["n_generated"] == 7
    assert content_hash(arrays) != content_hash({**arrays, "delphes/njets": arrays["delphes/njets"] + 1})


def test_non_finite_values_raise(tmp_path):
    path = tmp_path / "nan.h5"
    _published_layout(path)
    with h5py.File(path, "r+") as f:
        jets = f["delphes/jets"][()]
        jets["eta"][1, 0] = np.nan
        f["delphes/jets"][...] = jets
    with pytest.raises(ValueError, match=r"delphes/jets\.eta.*NaN"):
        ttbar.read_events(path)
    arrays = schema_arrays(_our_events())
    arrays["truth/top_p4"][0, 0, 3] = np.inf
    write_atomic(tmp_path / "inf.h5", arrays, {})
    with pytest.raises(ValueError, match="truth/top_p4"):
        ttbar.read_events(tmp_path / "inf.h5")


def test_shapes_of_optional_and_truth_datasets_are_checked(tmp_path):
    path = tmp_path / "njets.h5"
    _published_layout(path)
    with h5py.File(path, "r+") as f:
        del f["delphes/njets"]
        f["delphes"].create_dataset("njets", data=np.full(4, 2))
    with pytest.raises(ValueError, match="njets"):
        ttbar.read_events(path)
    arrays = schema_arrays(_our_events())
    write_atomic(tmp_path / "truth.h5", {**arrays, "truth/w_p4": arrays["truth/w_p4"][:, :1]}, {})
    with pytest.raises(ValueError, match="truth/w_p4"):
        ttbar.read_events(tmp_path / "truth.h5")
    write_atomic(tmp_path / "missing.h5", {k: v for k, v in arrays.items() if k != "truth/nu_pdgid"}, {})
    with pytest.raises(ValueError, match="truth/nu_pdgid"):
        ttbar.read_events(tmp_path / "missing.h5")


def test_corrupted_file_fails_its_content_hash(tmp_path):
    path = write_atomic(tmp_path / "ours.h5", schema_arrays(_our_events()), {"format": "pointwise-ttbar"})
    ttbar.read_events(path)
    with h5py.File(path, "r+") as f:
        f["truth/b_p4"][0, 0, 0] = 11.0  # a plausible value: only a checksum can tell
    with pytest.raises(ValueError, match="do not match the checksum in its header"):
        ttbar.read_events(path)


# --- no silent answers: root attributes, damaged files ---------------------------------------------

@pytest.fixture(scope="module")
def cached_file(tmp_path_factory):
    """A small cached file of ours (parton level, 200 generated events) and its events."""
    config = ttbar.make_config("parton", chunk_events=100, batch_events=100)
    path = ttbar.load_or_generate(200, seed=7, mode="parton", cache_dir=tmp_path_factory.mktemp("cache"),
                                  config=config, progress=False)
    return path, ttbar.read_events(path)


def _plain_copy(source, target, **attrs):
    """The datasets and root attributes of ``source`` (``attrs`` changed) in a file without our header."""
    with h5py.File(source, "r") as f, h5py.File(target, "w") as out:
        f.visititems(lambda n, o: out.create_dataset(n, data=o[()]) if isinstance(o, h5py.Dataset) else None)
        for k, v in {**f.attrs, **attrs}.items():
            out.attrs[k] = v
    return target


@pytest.mark.parametrize("key, value", [
    ("n_generated", 199), ("seed", 8), ("pythia_version", "8.316"), ("config", "{}"), ("format_version", 3),
    ("n_truth_failed", 3),
])
def test_a_changed_root_attribute_is_refused(cached_file, tmp_path, key, value):
    """Root attributes are in the content hash, and every byte after the header is in its checksum."""
    arrays, attrs = read_contents(cached_file[0])
    assert content_hash(arrays, attrs) == attrs["content_hash"]
    assert content_hash(arrays, {**attrs, key: value}) != attrs["content_hash"]
    edited = tmp_path / "edited.h5"
    edited.write_bytes(cached_file[0].read_bytes())
    with h5py.File(edited, "r+") as f:  # h5py keeps the header: its checksum no longer matches
        f.attrs[key] = value
    no_header = _plain_copy(cached_file[0], tmp_path / "no_header.h5", **{key: value})
    for path, message in ((edited, "do not match the checksum in its header"),
                          (no_header, "checksum header is damaged" if key != "format_version" else "format version 3")):
        assert not stored_hash_matches(path)
        with pytest.raises(ValueError, match=message):
            ttbar.read_events(path)


def test_another_format_version_is_refused_by_name(cached_file, tmp_path):
    path = _plain_copy(cached_file[0], tmp_path / "v1.h5", format_version=1)  # version 1 had no header
    with pytest.raises(ValueError, match="format version 1, this posteval reads version 2"):
        ttbar.read_events(path)


def test_every_byte_flip_is_a_value_error_or_a_correct_reread(cached_file, tmp_path):
    """30 flipped bytes spread over a cached file: our header, HDF5's superblock and headers, attributes, data."""
    original, events = cached_file
    data = original.read_bytes()
    outcomes = {"ValueError": 0, "same events": 0}
    for i in range(30):
        offset = i * (len(data) - 1) // 29
        flipped = bytearray(data)
        flipped[offset] ^= 0xFF
        path = tmp_path / f"flip{i}.h5"
        path.write_bytes(bytes(flipped))
        try:
            again = ttbar.read_events(path)
        except ValueError as err:
            assert str(path) in str(err) and "\n" not in str(err), err
            assert not stored_hash_matches(path)  # so load_or_generate makes it again
            outcomes["ValueError"] += 1
            continue
        assert again.keys() == events.keys(), offset
        for key in events:
            np.testing.assert_array_equal(again[key], events[key], err_msg=f"flip at {offset}: {key}")
        outcomes["same events"] += 1
    assert outcomes["ValueError"] >= 5, outcomes  # the flips reached the structures that matter


def test_a_damaged_file_of_ours_never_reaches_hdf5(cached_file, tmp_path, monkeypatch):
    """HDF5 can loop forever on one flipped bit of an attribute: the header's checksum stops it first."""
    data = cached_file[0].read_bytes()
    monkeypatch.setattr(h5py, "File", lambda *a, **k: pytest.fail("HDF5 opened a damaged file"))
    for offset in np.linspace(512, len(data) - 1, 12).astype(int):
        flipped = bytearray(data)
        flipped[offset] ^= 0x01
        path = tmp_path / f"flip{offset}.h5"
        path.write_bytes(bytes(flipped))
        with pytest.raises(ValueError, match="do not match the checksum in its header"):
            ttbar.read_events(path)
        assert not stored_hash_matches(path)
