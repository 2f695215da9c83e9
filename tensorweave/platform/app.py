"""`tf.app.run`: parse flags, call main(argv), exit with its return value."""
import sys

from tensorweave.platform import flags


def run(main=None, argv=None):
    argv = list(sys.argv if argv is None else argv)
    remaining = flags.FLAGS(argv)
    if main is None:
        main = sys.modules["__main__"].main
    sys.exit(main(remaining))
