"""`tensorweave scale-model`: its predictions against the closed forms it states, and its
command line (flags, a measurements JSON, clear errors)."""
import json

import pytest

from tensorweave.cli import scale_model
from tensorweave.cli.main import main as cli_main

MB = 1 << 20


def measurements(**overrides):
    values = dict(compute_s=0.1, tensor_bytes=[40 * MB, 20 * MB, 20 * MB, 20 * MB],
                  bandwidth=1e9, latency_s=1e-4)
    values.update(overrides)
    return scale_model.Measurements(**values)


def test_ps_tensors_go_largest_first_to_the_least_loaded_ps():
    assert sorted(scale_model.ps_shards([40, 20, 20, 20], 2)) == [40, 60]
    assert sorted(scale_model.ps_shards([5, 4, 3, 3, 3], 2)) == [8, 10]
    assert scale_model.ps_shards([1, 2, 3], 4).count(0.0) == 1


def test_ring_allreduce_step_is_compute_plus_two_n_minus_one_over_n_bytes():
    meas = measurements()
    total = 100 * MB
    for workers in (1, 2, 8, 512):
        moved = 2 * (workers - 1) / workers * total
        step = 0.1 + moved / 1e9 + 2 * (workers - 1) * 1e-4 * 2  # 100 MB: two 64 MB buffers
        if workers == 1:
            step = 0.1
        got = scale_model.predict(meas, "allreduce", workers)
        assert got.steps_per_s == pytest.approx(1 / step)
        assert got.efficiency == pytest.approx(0.1 / step)
    # Overlap hides communication up to that share of compute, never more.
    hidden = scale_model.predict(measurements(overlap=0.5), "allreduce", 2)
    assert hidden.steps_per_s == pytest.approx(1 / (0.1 + 100 * MB / 1e9 + 4e-4 - 0.05))
    assert scale_model.predict(measurements(overlap=1.0, compute_s=10.0), "allreduce",
                               4).efficiency == pytest.approx(1.0)


def test_sync_ps_phases_are_bounded_by_the_busiest_ps_link():
    meas = measurements(apply_s=0.02)
    total, busiest = 100 * MB, 60 * MB  # 2 ps: 40+20 and 20+20
    for workers in (1, 4, 64):
        phase = max(total, workers * busiest) / 1e9 + 1e-4
        step = 0.1 + 2 * phase + 0.02 * busiest / total + 1e-4
        got = scale_model.predict(meas, "ps-sync", workers, num_ps=2)
        assert got.steps_per_s == pytest.approx(1 / step)
        assert got.worker_steps_per_s == pytest.approx(workers / step)
    assert scale_model.predict(meas, "ps-sync", 64, 2).bottleneck == "ps link"


def test_async_ps_rate_grows_with_workers_until_the_ps_saturates():
    meas = measurements()
    one = 0.1 + 2 * (100 * MB / 1e9 + 1e-4)
    assert scale_model.predict(meas, "ps-async", 1, 4).worker_steps_per_s == \
        pytest.approx(1 / one)
    ps_cap = 1e9 / (40 * MB)  # 4 ps: the 40 MB tensor alone on one
    many = scale_model.predict(meas, "ps-async", 512, 4)
    assert many.worker_steps_per_s == pytest.approx(ps_cap)
    assert many.bottleneck == "ps link"
    assert many.efficiency == pytest.approx(ps_cap * 0.1 / 512)


def test_one_host_shares_its_cores_and_memory():
    meas = measurements(hosts=1, cores=2.0)
    # Four ranks on two cores compute at half speed; the ring is the same.
    ring = scale_model.predict(meas, "allreduce", 4)
    comm = 1.5 * 100 * MB / 1e9 + 6 * 1e-4 * 2
    assert ring.steps_per_s == pytest.approx(1 / (0.2 + comm))
    assert ring.bottleneck == "host cores"
    # Async: capped by cores / (compute + copies).
    capped = scale_model.predict(meas, "ps-async", 8, 1)
    assert capped.worker_steps_per_s == pytest.approx(2 / (0.1 + 2 * 100 * MB / 1e9))
    # Sync: every worker's bytes through the one host per phase.
    sync = scale_model.predict(meas, "ps-sync", 3, 4)
    phase = 3 * 100 * MB / 1e9 + 1e-4
    assert sync.steps_per_s == pytest.approx(1 / (0.15 + 2 * phase + 1e-4))


def test_bad_measurements_are_named():
    with pytest.raises(ValueError, match="compute_s must be > 0"):
        measurements(compute_s=0)
    with pytest.raises(ValueError, match="tensor_bytes"):
        measurements(tensor_bytes=[])
    with pytest.raises(ValueError, match="cores"):
        measurements(hosts=1)
    with pytest.raises(ValueError, match="unknown mode"):
        scale_model.predict(measurements(), "ring", 2)
    with pytest.raises(ValueError, match="--ps >= 1"):
        scale_model.predict(measurements(), "ps-sync", 2, num_ps=0)


def test_the_command_reads_flags_or_a_measurements_file(tmp_path, capsys):
    argv = ["scale-model", "--compute-ms", "100", "--tensor-mb", "40,20,20,20",
            "--bandwidth-gbit", "8", "--latency-us", "100", "--workers", "1,512", "--json"]
    assert cli_main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["mode"], r["workers"]) for r in rows] == [
        ("ps-sync", 1), ("ps-sync", 512), ("ps-async", 1), ("ps-async", 512),
        ("allreduce", 1), ("allreduce", 512)]
    assert rows[4]["efficiency"] == pytest.approx(1.0)
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"measurements": {"compute_s": 0.1, "tensor_bytes": [
        40 * MB, 20 * MB, 20 * MB, 20 * MB], "bandwidth": 1e9, "latency_s": 1e-4}}))
    assert cli_main(["scale-model", "--measurements", str(path), "--workers", "1,512",
                     "--json"]) == 0
    from_file = json.loads(capsys.readouterr().out)
    assert [r["efficiency"] for r in from_file] == pytest.approx(
        [r["efficiency"] for r in rows])
    assert cli_main(["scale-model", "--measurements", str(path), "--workers", "8"]) == 0
    table = capsys.readouterr().out
    assert "allreduce" in table and "efficiency" in table


@pytest.mark.parametrize("argv, message", [
    (["--compute-ms", "100"], "--tensor-mb"),
    (["--compute-ms", "100", "--tensor-mb", "a,b", "--bandwidth-gbit", "1",
      "--latency-us", "1"], "--tensor-mb"),
    (["--measurements", "/nonexistent/m.json"], "No such file"),
])
def test_bad_command_lines_are_named(argv, message, capsys):
    assert cli_main(["scale-model", *argv]) == 2
    assert message in capsys.readouterr().err


def test_unknown_measurement_names_are_refused(tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"compute_ms": 100}))
    assert cli_main(["scale-model", "--measurements", str(path)]) == 2
    assert "unknown measurement(s) ['compute_ms']" in capsys.readouterr().err
