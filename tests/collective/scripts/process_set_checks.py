"""One rank of a job checking Horovod's process sets (TF 1.x graph mode) against closed-form
answers: `static` (4 ranks: sets {0,2}, {1,3} and {3}), `dynamic` (3 ranks: add and remove),
`mpi` (4 ranks under mpiexec). Prints "RESULT <json>" with the checks that passed and the
errors the bad calls raised."""
import json
import sys
import time

import numpy as np

import tensorweave as tf
import tensorweave.horovod as hvd
from tensorweave import collective
from tensorweave.ops import collective_ops


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), atol=tol,
                               rtol=tol)


def error_of(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the test reads the class and the message
        return [type(exc).__name__, str(exc)]
    return None


def adasum_reference(vectors):
    level = [np.asarray(v, np.float64) for v in vectors]
    while len(level) > 1:
        paired = []
        for a, b in zip(level[0::2], level[1::2]):
            dot = a @ b
            paired.append((1 - dot / (2 * (a @ a))) * a + (1 - dot / (2 * (b @ b))) * b)
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def set_collectives(rank, this_set, set_ranks, record):
    """Every collective inside this rank's set, both sets running the same graph (the same
    op names) at once; the job-wide allreduce in the same step."""
    position = set_ranks.index(rank)
    x = tf.constant([1.0, 2.0, 3.0]) * float(rank + 1)
    mean = hvd.allreduce(x, process_set=this_set, name="shared")
    total = hvd.allreduce(x, op=hvd.Sum, process_set=this_set)
    everyone = hvd.allreduce(x, op=hvd.Sum)
    gathered = hvd.allgather(tf.fill([rank + 1, 2], float(rank)), process_set=this_set)
    root = hvd.broadcast(tf.constant([rank, rank], tf.int64), root_rank=set_ranks[-1],
                         process_set=this_set)
    exchanged = hvd.alltoall(tf.reshape(tf.range(2 * len(set_ranks)) + 100 * rank, [-1, 1]),
                             process_set=this_set)
    scattered = hvd.reducescatter(tf.reshape(tf.range(10.0), [5, 2]) * float(rank + 1),
                                  op=hvd.Sum, process_set=this_set)
    grouped = hvd.grouped_allreduce([x, tf.constant([[rank, 1], [2, 3]], tf.int32),
                                     x * 2.0], op=hvd.Sum, process_set=this_set)
    grouped_gathers = hvd.grouped_allgather([tf.fill([1], rank), tf.fill([2], rank)],
                                            process_set=this_set)
    adasum = hvd.allreduce(tf.constant([1.0, 0.0, 2.0]) * float(rank + 1) +
                           tf.constant([0.0, 1.0, 0.0]) * float(rank % 2), op=hvd.Adasum,
                           process_set=this_set)
    raw = collective_ops.all_reduce(tf.constant([float(rank)]), "max", group_size=2,
                                    group_key=7, instance_key=11, group_ranks=set_ranks)
    # Gradients stay in the set: allgather's is this rank's rows of the set's summed gradient.
    source = tf.constant([float(rank + 1)])
    weights = tf.constant([10.0, 20.0])
    gathered_grad = tf.gradients(tf.reduce_sum(
        hvd.allgather(source, process_set=this_set) * weights), source)[0]
    summed_grad = tf.gradients(tf.reduce_sum(
        hvd.allreduce(source * source, op=hvd.Sum, process_set=this_set)), source)[0]
    size_of_set = hvd.size_op(this_set.process_set_id)
    included = hvd.process_set_included_op(this_set.process_set_id)
    with tf.Session() as sess:
        got = sess.run([mean, total, everyone, gathered, root, exchanged, scattered, grouped,
                        grouped_gathers, adasum, raw, size_of_set, included, hvd.rank_op(),
                        gathered_grad, summed_grad])
    factors = np.array(set_ranks, np.float64) + 1
    close(got[0], np.array([1.0, 2.0, 3.0]) * factors.mean())
    close(got[1], np.array([1.0, 2.0, 3.0]) * factors.sum())
    close(got[2], np.array([1.0, 2.0, 3.0]) * sum(range(1, hvd.size() + 1)))
    close(got[3][:, 0], np.concatenate([np.full(r + 1, r) for r in set_ranks]))
    close(got[4], [set_ranks[-1]] * 2)
    close(got[5].ravel(), np.concatenate([np.array([2 * position, 2 * position + 1]) + 100 * r
                                          for r in set_ranks]))
    rows = np.array_split(np.arange(10.0).reshape(5, 2) * factors.sum(), len(set_ranks))
    close(got[6], rows[position])
    close(got[7][0], np.array([1.0, 2.0, 3.0]) * factors.sum())
    assert got[7][1].dtype == np.int32
    close(got[7][1], [[sum(set_ranks), len(set_ranks)], [2 * len(set_ranks),
                                                         3 * len(set_ranks)]])
    close(got[7][2], 2 * got[7][0])
    close(got[8][0], set_ranks)
    close(got[8][1], np.repeat(set_ranks, 2))
    vectors = [np.array([1.0, 0.0, 2.0]) * (r + 1) + np.array([0.0, 1.0, 0.0]) * (r % 2)
               for r in set_ranks]
    close(got[9], adasum_reference(vectors), 1e-5)
    close(got[10], [max(set_ranks)])
    assert got[11] == len(set_ranks) and got[12] == 1 and got[13] == rank
    assert got[11].dtype == np.int32
    close(got[14], [len(set_ranks) * [10.0, 20.0][position]])
    close(got[15], [2.0 * (rank + 1) * len(set_ranks)])
    assert hvd.allgather_object({"rank": rank}, process_set=this_set) == \
        [{"rank": r} for r in set_ranks]
    assert hvd.broadcast_object(f"from {rank}", root_rank=set_ranks[-1],
                                process_set=this_set) == f"from {set_ranks[-1]}"
    record["checks"].append("set_collectives")


def optimizer_in_set(rank, this_set, set_ranks, record):
    """DistributedOptimizer(process_set=...): the step uses the set's average gradient; a
    local variable keeps its own (scaled) gradient; broadcast_variables within the set."""
    with tf.Graph().as_default():
        w = tf.Variable([0.0, 0.0], name="w")
        own = tf.Variable([0.0], name="own")
        data = tf.constant([1.0, -2.0]) * float(rank + 1)
        loss = tf.reduce_sum(w * data) + tf.reduce_sum(own) * float(rank + 1)
        optimizer = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(1.0),
                                             process_set=this_set)
        optimizer.register_local_var(own)
        train = optimizer.minimize(loss)
        start = tf.Variable([float(rank)], name="start")
        sync = hvd.broadcast_variables([start], root_rank=set_ranks[0], process_set=this_set)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([train, sync])
            w_value, own_value, start_value = sess.run([w, own, start])
    factors = np.array(set_ranks, np.float64) + 1
    close(w_value, -np.array([1.0, -2.0]) * factors.mean())
    close(own_value, [-(rank + 1) / len(set_ranks)])
    close(start_value, [set_ranks[0]])
    record["checks"].append("optimizer")


def grouped_optimizer(rank, record):
    """DistributedOptimizer(groups=[[w, b]]) over the job: w and b reduced as one collective,
    c alone; the step uses the average gradient of every variable."""
    with tf.Graph().as_default() as graph:
        w, b, c = tf.Variable([0.0, 0.0]), tf.Variable(0.0), tf.Variable([0.0])
        scale = float(rank + 1)
        loss = tf.reduce_sum(w * tf.constant([1.0, -2.0]) * scale) + b * scale + \
            tf.reduce_sum(c) * scale
        train = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(1.0),
                                         groups=[[w, b]]).minimize(loss)
        reductions = [op for op in graph.get_operations() if op.type == "CollectiveAllReduce"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            got = sess.run([w, b, c])
    mean = np.mean(np.arange(hvd.size()) + 1.0)
    assert len(reductions) == 2, [op.name for op in reductions]
    close(got[0], -np.array([1.0, -2.0]) * mean)
    close(got[1], -mean)
    close(got[2], [-mean])
    record["checks"].append("grouped_optimizer")


def tf_groups(rank, record):
    """TF's groups: ops with group_key and group_size only. Ranks 0 and 2 form group 5, ranks
    1 and 3 group 6, by running collectives of those keys (under the same instance key); a
    rank that comes to a complete group is refused, naming it."""
    key = 5 if rank % 2 == 0 else 6
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.constant([float(rank), 1.0])
        total = collective_ops.all_reduce(x, "sum", group_size=2, group_key=key,
                                          instance_key=1)
        gathered = collective_ops.all_gather(tf.fill([1], rank), group_size=2, group_key=key,
                                             instance_key=2)
        raw = tf.raw_ops.CollectiveAllReduce(input=x, reduction="max", group_size=2,
                                             group_key=key, instance_key=4)
        got = sess.run([total, gathered, raw])
        partners = [r for r in range(4) if r % 2 == rank % 2]
        close(got[0], [sum(partners), 2.0])
        close(got[1], partners)
        close(got[2], [max(partners), 1.0])
        collective.communicator().barrier()  # groups 5 and 6 are formed: rank 3 comes late
        if rank == 3:
            late = collective_ops.all_reduce(x, "sum", group_size=2, group_key=5,
                                             instance_key=3)
            record["late_to_group"] = error_of(lambda: sess.run(late))
    record["checks"].append("tf_groups")


def independence(rank, this_set, record):
    """Ranks 1 and 3 are late by 1.5 s; set {0, 2}'s allreduce does not wait for them."""
    if rank % 2:
        time.sleep(1.5)
    comm = collective.communicator()
    started = time.monotonic()
    value = comm.allreduce(np.array([rank], np.int64), process_set=this_set.ranks,
                           name="independent")
    record["independent_seconds"] = time.monotonic() - started
    assert value[0] == sum(this_set.ranks)
    # A large allreduce of each pair goes through the pair's own shared memory, both at once.
    for size in (1 << 18, 3 << 18):  # the segments grow between the two
        big = np.arange(size, dtype=np.float64) * (rank + 1)
        future = comm.submit("allreduce", big, f"big.{size}", op="sum",
                             process_set=this_set.ranks)
        close(future.result(), np.arange(size) * sum(r + 1 for r in this_set.ranks))
        record.setdefault("big_paths", []).append(future.data_plane)
    record["checks"].append("independence")


def mismatch_in_set(rank, this_set, record):
    """Set {0, 2} disagrees on a shape: both fail at once naming both; {1, 3} is unaffected."""
    comm = collective.communicator()
    shape = 4 if rank == 2 else 3
    started = time.monotonic()
    record["mismatch"] = error_of(lambda: comm.allreduce(np.ones(shape), name="grad/w",
                                                         process_set=this_set.ranks))
    record["mismatch_seconds"] = time.monotonic() - started
    after = comm.allreduce(np.ones(2), process_set=this_set.ranks)
    assert np.array_equal(after, [2.0, 2.0])
    # Order: in set {0, 2} rank 0 waits in 'first', rank 2 in 'second'; set {1, 3} agrees.
    names = {0: "first", 2: "second"}.get(rank, "agreed")
    started = time.monotonic()
    record["order"] = error_of(lambda: comm.allreduce(np.ones(1), name=names,
                                                      process_set=this_set.ranks))
    record["order_seconds"] = time.monotonic() - started


def leaving(rank, record):
    """Ranks 1 and 3 shut down while set {0, 2} has a collective pending: it completes (only
    the job-wide collectives need them), and the next job-wide one fails naming them."""
    comm = collective.communicator()
    comm.barrier()
    if rank % 2:
        record["rank"] = rank
        hvd.shutdown()
        return
    if rank == 2:
        time.sleep(1.0)  # rank 0's request waits while the others leave
    record["after_leave"] = comm.allreduce(np.array([rank]), process_set=[0, 2],
                                           name="after_leave").tolist()
    record["job_after_leave"] = error_of(lambda: comm.allreduce(np.ones(1), name="job"))


def trio_collectives(rank, trio, record):
    """A set of 3 of the 4 ranks (not a power of two): recursive doubling with a folded rank
    (16 KB), the TCP ring (128 KB), shared memory (1 MB), allgather; rank 2 sits it out."""
    if not trio.included():
        return
    comm = collective.communicator()
    for count in (2048, 16384, 131072):
        value = comm.allreduce(np.full(count, rank + 1.0), process_set=trio.ranks)
        close(value, np.full(count, 1.0 + 2.0 + 4.0))
    gathered = comm.allgather(np.full(rank + 1, rank), process_set=trio.ranks)
    close(gathered, np.concatenate([np.full(r + 1, r) for r in (0, 1, 3)]))
    record["checks"].append("trio")


def overlapping(rank, record):
    """A chain of overlapping sets {0,1}, {1,2}, {2,3}, each rank submitting its two in the
    opposite order of its neighbours (pairwise blocking exchanges in these orders would
    deadlock): the coordinator's one order runs them all."""
    comm = collective.communicator()
    chain = [[0, 1], [1, 2], [2, 3]]
    mine = [ranks for ranks in chain if rank in ranks]
    if rank % 2:
        mine.reverse()
    futures = [(ranks, comm.submit("allreduce", np.full(50000, float(rank + 1)), "link",
                                   op="sum", process_set=ranks)) for ranks in mine]
    for ranks, future in futures:
        close(future.result(timeout=20), np.full(50000, float(sum(r + 1 for r in ranks))))
    record["checks"].append("overlapping")


def static(record):
    even, odd, alone = hvd.ProcessSet([0, 2]), hvd.ProcessSet([3, 1]), hvd.ProcessSet([3])
    trio = hvd.ProcessSet([0, 1, 3])
    hvd.init(process_sets=[even, odd, alone, trio])
    rank = hvd.rank()
    this_set = even if rank % 2 == 0 else odd
    set_ranks = this_set.ranks
    record.update(ids=[even.process_set_id, odd.process_set_id, alone.process_set_id],
                  set=[this_set.rank(), this_set.size(), this_set.included()],
                  other_included=(odd if this_set is even else even).included(),
                  global_set=[hvd.global_process_set.size(), hvd.global_process_set.rank()])
    set_collectives(rank, this_set, set_ranks, record)
    optimizer_in_set(rank, this_set, set_ranks, record)
    grouped_optimizer(rank, record)
    trio_collectives(rank, trio, record)
    overlapping(rank, record)
    tf_groups(rank, record)
    if rank == 3:  # a set of one: every collective returns this rank's own value
        with tf.Graph().as_default(), tf.Session() as sess:
            alone_value = sess.run(hvd.allreduce(tf.constant([5.0, 7.0]), process_set=alone))
        close(alone_value, [5.0, 7.0])
        record["checks"].append("alone")
    other = odd if this_set is even else even
    record["non_member"] = error_of(lambda: hvd.allreduce(tf.constant([1.0]),
                                                          process_set=other))
    record["non_member_comm"] = error_of(
        lambda: collective.communicator().allreduce(np.ones(1), process_set=other.ranks))
    record["bad_root"] = error_of(lambda: hvd.broadcast(tf.constant([1.0]),
                                                        root_rank=1 - rank % 2,
                                                        process_set=this_set))
    record["not_dynamic"] = error_of(lambda: hvd.add_process_set([0, 1]))
    independence(rank, this_set, record)
    mismatch_in_set(rank, this_set, record)
    leaving(rank, record)


def adasum_optimizer(rank, record):
    """DistributedOptimizer(op=hvd.Adasum), 2 backward passes per step: after the first step
    each rank holds its own update, after the second every rank holds the Adasum of the
    ranks' two-step deltas."""
    data = [np.array([1.0, -2.0]) * (r + 1) + np.array([0.0, 3.0]) * (r == 1) for r in range(3)]
    with tf.Graph().as_default():
        w = tf.Variable([0.0, 0.0], dtype=tf.float64, name="w")
        loss = tf.reduce_sum(w * tf.constant(data[rank]))
        optimizer = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(1.0),
                                             op=hvd.Adasum, backward_passes_per_step=2)
        train = optimizer.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            first = sess.run(w)
            sess.run(train)
            second = sess.run(w)
    close(first, -data[rank])
    close(second, adasum_reference([-2 * d for d in data]), 1e-9)
    record["checks"].append("adasum_optimizer")


def dynamic(record):
    hvd.init()
    rank = hvd.rank()
    pair = hvd.add_process_set([0, 2])
    record["pair"] = [pair.process_set_id, pair.rank(), pair.included()]
    if pair.included():  # rank 1 has nothing to run in the pair
        with tf.Graph().as_default(), tf.Session() as sess:
            value = hvd.allreduce(tf.constant([float(rank + 1)]), op=hvd.Sum, process_set=pair)
            record["pair_sum"] = sess.run(value).tolist()
    record["removed"] = hvd.remove_process_set(pair)
    record["after_remove"] = [pair.process_set_id, pair.ranks]
    record["global_removed"] = hvd.remove_process_set(hvd.global_process_set)
    again = hvd.add_process_set(hvd.ProcessSet([1, 2]))
    record["again"] = [again.process_set_id, again.size()]
    record["different_adds"] = error_of(lambda: hvd.add_process_set([0, 1 + rank % 2]))
    # Adasum over 3 ranks (not a power of two): the tree carries rank 2 up unchanged.
    vectors = [np.array([1.0, -1.0, 0.5]) * (r + 1) + np.array([0.0, 2.0, 0.0]) * (r == 1)
               for r in range(3)]
    with tf.Graph().as_default(), tf.Session() as sess:
        combined = sess.run(hvd.allreduce(tf.constant(vectors[rank], tf.float32),
                                          op=hvd.Adasum))
    assert combined.dtype == np.float32
    close(combined, adasum_reference(vectors), 1e-5)
    adasum_optimizer(rank, record)
    record["checks"].append("dynamic")


def mpi_run(record):
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    split = hvd.ProcessSet(world.Split(color=world.Get_rank() % 2, key=world.Get_rank()))
    listed = hvd.ProcessSet([0, 1, 2])
    hvd.init(process_sets=[split, listed])
    rank = hvd.rank()
    record["split"] = [split.process_set_id, split.ranks]
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0]) * float(rank + 1)
        reduced = hvd.allreduce(x, op=hvd.Sum, process_set=split)
        gathered = hvd.allgather(tf.fill([rank + 1], rank), process_set=split)
        fetches = [reduced, gathered]
        if listed.included():
            fetches.append(hvd.allreduce(x, op=hvd.Sum, process_set=listed))
        with tf.Session() as sess:
            got = sess.run(fetches)
    members = [r for r in range(hvd.size()) if r % 2 == rank % 2]
    close(got[0], np.array([1.0, 2.0]) * sum(r + 1 for r in members))
    close(got[1], np.concatenate([np.full(r + 1, r) for r in members]))
    if listed.included():
        close(got[2], np.array([1.0, 2.0]) * 6.0)
    record["backend"] = collective.communicator().backend
    record["checks"].append("mpi")


def mpi_subset(record):
    """hvd.init(comm=[0, 2]) under mpiexec -n 3: a job of world ranks 0 and 2 only."""
    from mpi4py import MPI
    world_rank = MPI.COMM_WORLD.Get_rank()
    if world_rank == 1:
        record["outsider"] = error_of(lambda: hvd.init(comm=[0, 2]))
        record["rank"] = -1 - world_rank  # not in the job
        return
    hvd.init(comm=[0, 2])
    with tf.Graph().as_default(), tf.Session() as sess:
        total = sess.run(hvd.allreduce(tf.constant([float(world_rank)]), op=hvd.Sum))
    record.update(world_rank=world_rank, size=hvd.size(), total=total.tolist())
    record["checks"].append("mpi_subset")


def main():
    mode = sys.argv[1]
    record = {"checks": []}
    try:
        {"static": static, "dynamic": dynamic, "mpi": mpi_run,
         "mpi_subset": mpi_subset}[mode](record)
    finally:
        record.setdefault("rank", hvd.rank() if hvd.is_initialized() else -1)
        print("RESULT " + json.dumps(record), flush=True)
        hvd.shutdown()


if __name__ == "__main__":
    main()
