"""Process sets (Horovod 0.2x's `process_set=`, the collective ops' group_ranks): real ranks on
127.0.0.1 against closed-form answers (scripts/process_set_checks.py) — sets {0,2} and {1,3}
running the same graph at once next to a job-wide allreduce, every collective inside a set,
a set of one, DistributedOptimizer and broadcast_variables in a set, a non-member's error, a
shape mismatch inside a set, dynamic add/remove on 3 ranks, Adasum and the Adasum
DistributedOptimizer, the mpi backend with a set from COMM_WORLD.Split — and, in this process,
the build-time checks and Adasum's formula."""
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.horovod as hvd
from tensorweave import collective
from tensorweave.collective import groups, requests
from tensorweave.horovod import adasum
from tensorweave.ops import collective_ops
from tests.collective.rank_util import (REPO, _environment, mpi_ready, results, run_mpi,
                                        run_native)

pytestmark = pytest.mark.timeout(90)


def _passed(outputs, size, checks):
    found = results(outputs)
    assert sorted(found) == list(range(size)), [out for _, out in outputs]
    assert all(code == 0 for code, _ in outputs), [out for _, out in outputs]
    for record in found.values():
        assert set(checks) <= set(record["checks"]), record
    return found


@pytest.fixture(scope="module")
def static_run():
    """One run of 4 ranks (sets {0,2}, {1,3} and {3}) that two tests read."""
    return run_native(4, "process_set_checks.py", "static", timeout=60)


def test_two_sets_of_4_ranks_run_every_collective_at_once_against_closed_forms(static_run):
    found = _passed(static_run, 4, ["set_collectives", "optimizer", "grouped_optimizer",
                                    "tf_groups", "overlapping", "independence"])
    kind, message = found[3]["late_to_group"]
    assert kind == "InvalidArgumentError" and "group 5 is complete with ranks [0, 2]" in message
    assert "alone" in found[3]["checks"]  # the set of one; sets of 2 and 3 below
    for rank, record in found.items():
        assert record["ids"] == [1, 2, 3]
        assert ("trio" in record["checks"]) == (rank != 2)
        assert record["set"] == [rank // 2, 2, True] and record["other_included"] is False
        assert record["global_set"] == [4, rank]
        # Ranks 1 and 3 start 1.5 s late; set {0, 2} does not wait for them.
        if rank % 2 == 0:
            assert record["independent_seconds"] < 1.0, record
        assert record["big_paths"] == ["shm", "shm"]
        kind, message = record["non_member"]
        assert kind == "ValueError" and f"rank {rank} is not in process set" in message
        kind, message = record["non_member_comm"]
        assert kind == "InvalidArgumentError" and f"rank {rank} is not in" in message
        kind, message = record["bad_root"]
        assert kind == "ValueError" and "is not in process set" in message
        kind, message = record["not_dynamic"]
        assert kind == "ValueError" and "HOROVOD_DYNAMIC_PROCESS_SETS=1" in message


def test_mismatches_inside_a_set_fail_its_members_and_only_them(static_run):
    found = results(static_run)
    for rank in (0, 2):
        kind, message = found[rank]["mismatch"]
        assert kind == "InvalidArgumentError" and found[rank]["mismatch_seconds"] < 5.0
        assert "'grad/w[ranks 0,2]'" in message and "(4,)" in message and "(3,)" in message
        assert "rank 2" in message and "rank 0" in message
    for rank in (1, 3):
        assert found[rank]["mismatch"] is None and found[rank]["order"] is None
    for rank in (0, 2):  # waiting in different collectives of one set: an error, not a hang
        kind, message = found[rank]["order"]
        assert kind == "InvalidArgumentError" and found[rank]["order_seconds"] < 5.0, message
        assert "'first[ranks 0,2]'" in message and "'second[ranks 0,2]'" in message


def test_ranks_leaving_the_job_do_not_fail_the_collectives_of_sets_without_them(static_run):
    found = results(static_run)
    for rank in (0, 2):
        assert found[rank]["after_leave"] == [2]
        kind, message = found[rank]["job_after_leave"]
        assert kind == "UnavailableError" and "shut down" in message, message


def test_dynamic_sets_adasum_and_the_adasum_optimizer_on_3_ranks():
    found = _passed(run_native(3, "process_set_checks.py", "dynamic", timeout=60,
                               env={"HOROVOD_DYNAMIC_PROCESS_SETS": "1"}), 3,
                    ["dynamic", "adasum_optimizer"])
    for rank, record in found.items():
        assert record["pair"] == [1, {0: 0, 1: -1, 2: 1}[rank], rank != 1]
        assert record.get("pair_sum") == (None if rank == 1 else [4.0])
        assert record["removed"] is True and record["after_remove"] == [None, None]
        assert record["global_removed"] is False
        assert record["again"] == [2, 2]
        kind, message = record["different_adds"]
        assert kind == "InvalidArgumentError" and "[0, 1]" in message and "[0, 2]" in message


@pytest.mark.skipif(not mpi_ready(), reason="mpi4py and mpiexec are not installed")
def test_sets_over_mpi_from_a_split_communicator_and_from_ranks():
    found = _passed(run_mpi(4, "process_set_checks.py", "mpi", timeout=60), 4, ["mpi"])
    for rank, record in found.items():
        assert record["backend"] == "mpi"
        assert record["split"][1] == [r for r in range(4) if r % 2 == rank % 2]


@pytest.mark.skipif(not mpi_ready(), reason="mpi4py and mpiexec are not installed")
def test_init_with_a_list_of_world_ranks_makes_a_job_of_those_only():
    found = results(run_mpi(3, "process_set_checks.py", "mpi_subset", timeout=60))
    assert sorted(found) == [-2, 0, 1], found
    for rank, world_rank in ((0, 0), (1, 2)):
        assert found[rank]["world_rank"] == world_rank and found[rank]["size"] == 2
        assert found[rank]["total"] == [2.0]
    kind, message = found[-2]["outsider"]
    assert kind == "ValueError" and "rank 1 of MPI_COMM_WORLD, not one of them" in message


# A script written for TensorFlow 1.x and Horovod 0.2x, unchanged, under `tensorweave run`.
HOROVOD_SCRIPT = """
import tensorflow as tf
import horovod.tensorflow as hvd
from horovod.tensorflow import ProcessSet
solo = ProcessSet([1])
hvd.init(process_sets=[solo])
total = None
if solo.included():
    with tf.Session() as sess:
        total = sess.run(hvd.allreduce(tf.constant([1.0]) * (hvd.rank() + 1), op=hvd.Sum,
                                       process_set=solo))
print("solo", solo.process_set_id, solo.size(), solo.included(), total, tf.__name__)
"""


def test_an_unchanged_horovod_process_set_script_runs_under_tensorweave_run():
    result = subprocess.run([sys.executable, "-m", "tensorweave.cli.main", "run", "-np", "2",
                             "--as-tensorflow", sys.executable, "-c", HOROVOD_SCRIPT],
                            capture_output=True, text=True, timeout=60, env=_environment(),
                            cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[1] solo 1 1 True [2.] tensorweave" in result.stdout, result.stdout
    assert "[0] solo 1 1 False None tensorweave" in result.stdout, result.stdout


# --- in this process ------------------------------------------------------------------------
@pytest.fixture()
def one_rank_job():
    collective.shutdown()
    collective.init(backend="native", rank=0, size=1, coordinator=None)
    yield
    collective.shutdown()


def _adasum_pair(a, b):
    dot = a @ b
    ca = 1 - dot / (2 * (a @ a)) if a @ a > 0 else 1.0
    cb = 1 - dot / (2 * (b @ b)) if b @ b > 0 else 1.0
    return ca * a + cb * b


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5])
def test_adasum_tree_matches_its_formula(count):
    rng = np.random.default_rng(count)
    vectors = [rng.normal(size=6) for _ in range(count)]
    if count > 2:
        vectors[1] = np.zeros(6)  # a zero vector adds nothing
    expected = list(vectors)
    while len(expected) > 1:
        paired = [_adasum_pair(a, b) for a, b in zip(expected[0::2], expected[1::2])]
        expected = paired + ([expected[-1]] if len(expected) % 2 else [])
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(adasum.tree([tf.constant(v) for v in vectors]))
    np.testing.assert_allclose(got, expected[0], rtol=1e-12)
    with tf.Graph().as_default(), tf.Session() as sess:  # the closed forms
        same, orthogonal = sess.run([adasum.combine(tf.constant([1.0, 2.0]),
                                                    tf.constant([1.0, 2.0])),
                                     adasum.combine(tf.constant([1.0, 0.0]),
                                                    tf.constant([0.0, 3.0]))])
    np.testing.assert_allclose(same, [1.0, 2.0])
    np.testing.assert_allclose(orthogonal, [1.0, 3.0])


def test_a_tf_group_forms_from_the_first_ranks_to_use_its_key():
    table = groups.GroupTable(4)
    assert table.join([5, 2], 3) == (None, None) and table.waiting(5) == [3]
    assert table.join([5, 3], 1) == (None, "group 5 is forming with size 2, not 3")
    assert table.join([5, 2], 1) == ((1, 3), None)
    assert table.join([5, 2], 3) == ((1, 3), None) and table.waiting(5) == []
    members, problem = table.join([5, 2], 0)
    assert members is None and "complete with ranks [1, 3]; rank 0" in problem
    assert table.join([5, 4], 1)[1] == "group 5 was formed with size 2, not 4"
    assert "outside [1, 4]" in table.join([6, 5], 0)[1]
    assert "is not [group_key, group_size]" in table.join("6", 0)[1]


def test_a_request_s_process_set_is_held_to_the_job():
    everyone = (0, 1, 2, 3)
    assert requests.members_of({}, everyone) == everyone
    assert requests.members_of({"ranks": [0, 2]}, everyone) == (0, 2)
    for bad in ([], [2, 0], [0, 0], [0, 4], [-1, 0], "0,2", [0.0, 2]):
        assert requests.members_of({"ranks": bad}, everyone) is None, bad
    assert requests.PROBLEMS["broadcast"]({"root": 1, "ranks": [0, 2]}, (0, 2)) == \
        "root rank 1 is not in the process set of ranks [0, 2]"
    assert "2 non-negative counts" in requests.PROBLEMS["alltoall"](
        {"shape": [4], "splits": [1, 1, 2], "ranks": [0, 2]}, (0, 2))


def test_group_ranks_are_checked_where_the_op_is_built():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        with pytest.raises(ValueError, match="group_size 3 but group_ranks names 2"):
            collective_ops.all_reduce(x, group_size=3, group_ranks=[0, 2])
        with pytest.raises(ValueError, match="distinct ranks >= 0"):
            collective_ops.all_gather(x, group_ranks=[1, 1])
        op = collective_ops.broadcast(x, root_rank=2, group_ranks=[2, 0]).op
        assert op.get_attr("group_ranks") == [0, 2]
        grad = tf.gradients(collective_ops.all_reduce(x, group_ranks=[0, 2]), x)[0]
        assert grad.op.get_attr("group_ranks") == [0, 2]


def test_a_one_rank_job_runs_its_sets_and_answers_its_build(one_rank_job):
    hvd.init(process_sets=[[0]])
    (only,) = [s for s in hvd.process_sets() if s.process_set_id == 1]
    assert only.ranks == [0] and only.size() == 1 and only.rank() == 0 and only.included()
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        got = sess.run([hvd.allreduce(x, process_set=only), hvd.reducescatter(x, op=hvd.Sum),
                        hvd.size_op(), hvd.size_op(1), hvd.rank_op(), hvd.local_size_op(),
                        hvd.local_rank_op(), hvd.process_set_included_op(1)])
        with pytest.raises(tf.errors.InvalidArgumentError, match="group_size 2 but the job "
                                                                 "has 1 ranks"):
            sess.run(collective_ops.all_reduce(x, group_size=2))
    np.testing.assert_allclose(got[0], [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(got[1], [[1.0, 2.0], [3.0, 4.0]])
    assert [int(v) for v in got[2:]] == [1, 1, 0, 1, 0, 1]
    with pytest.raises(ValueError, match="distinct"):
        hvd.ProcessSet([0, 0])
    with pytest.raises(ValueError, match="integers"):
        hvd.ProcessSet(["0"])
    with pytest.raises(ValueError, match="not registered"):
        hvd.allreduce(tf.constant([1.0]), process_set=hvd.ProcessSet([0]))
    with pytest.raises(NotImplementedError, match="process sets"):
        hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(1.0), op=hvd.Adasum,
                                 process_set=only)
    assert not any([hvd.nccl_built(), hvd.gloo_built(), hvd.ccl_built(), hvd.cuda_built(),
                    hvd.rocm_built(), hvd.ddl_built()])
    assert hvd.mpi_built() == collective.mpi_available()
    with pytest.raises(tf.errors.FailedPreconditionError, match="mpirun"):
        hvd.init(comm=[0])  # ranks of MPI_COMM_WORLD, outside mpirun
    assert hvd.is_homogeneous() is True
    assert hvd.broadcast_object_fn(root_rank=0)({"a": 1}) == {"a": 1}
    assert hvd.allgather_object([1, 2]) == [[1, 2]]
