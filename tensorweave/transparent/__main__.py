"""`python -m tensorweave.transparent [--verbose] [--scale-lr] script.py [args...]`: one rank of
a transparent job (under `mpirun -np N`, or started by `tensorweave run --transparent`), with
`import tensorflow` answered by tensorweave."""
import argparse
import os
import sys

from tensorweave.platform import tensorflow_alias
from tensorweave.transparent import runner


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m tensorweave.transparent",
        description="Run a script written for one process as one rank of a data-parallel job.")
    parser.add_argument("--verbose", action="store_true",
                        help="let every rank print (by default only rank 0's output shows)")
    parser.add_argument("--scale-lr", action="store_true",
                        help="multiply every optimizer's learning rate by the number of ranks")
    parser.add_argument("script", help="the Python script, unchanged")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return parser


def main(argv=None):
    parser = _parser()
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.isfile(options.script):
        parser.error(f"no script at {options.script!r}")
    tensorflow_alias.install()
    runner.run_script(options.script, options.args, verbose=options.verbose,
                      scale_lr=options.scale_lr)


if __name__ == "__main__":
    main()
