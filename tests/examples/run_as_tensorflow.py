"""Runs a TF 1.x program with `tensorflow` (and every `tensorflow.x` module tensorweave has)
resolving to tensorweave: `python run_as_tensorflow.py script.py args...`. Test-only; the
package's own `--as-tensorflow` launcher mode is separate."""
import importlib
import os
import runpy
import sys

import tensorweave

importlib.import_module("tensorweave.examples.tutorials.mnist.mnist")
for name, module in list(sys.modules.items()):
    if name == "tensorweave" or name.startswith("tensorweave."):
        sys.modules["tensorflow" + name[len("tensorweave"):]] = module
assert sys.modules["tensorflow"] is tensorweave

script = sys.argv[1]
sys.argv = sys.argv[1:]
# As `python script.py` does: the script's own directory first on the path, so a program split
# into modules (agent.py importing model.py) finds its siblings.
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
