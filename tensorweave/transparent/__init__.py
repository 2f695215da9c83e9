"""Transparent mode (MaTEx): a script written for one process runs unchanged on N ranks,
data-parallel. `tensorweave run -np N --transparent python script.py`, or under MPI
`mpirun -np N python -m tensorweave.transparent script.py`. policy.py says what changes in a
rank; runner.py joins the job and runs the script. Re-exports only."""
from tensorweave.transparent.policy import TransparentPolicy  # noqa: F401
from tensorweave.transparent.runner import TransparentJob, activate, run_script  # noqa: F401
