"""`tf.summary.FileWriterCache`: one FileWriter per log directory, shared by whoever writes
there (SummarySaverHook, StepCounterHook, user code), so that one run has one event file."""
import atexit
import os
import threading

from tensorweave.framework import event_file
from tensorweave.framework import graph as graph_lib
from tensorweave.summary.writer import FileWriter


class FileWriterCache:
    _writers = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir):
        """The FileWriter of `logdir`, created (with the default graph) on first use."""
        key = os.path.abspath(str(logdir))
        with FileWriterCache._lock:
            writer = FileWriterCache._writers.get(key)
            if writer is None:
                writer = FileWriter(logdir, graph=graph_lib.get_default_graph())
                FileWriterCache._writers[key] = writer
            return writer

    @staticmethod
    def clear():
        """Closes every cached writer (their files are complete) and forgets them."""
        with FileWriterCache._lock:
            writers = list(FileWriterCache._writers.values())
            FileWriterCache._writers.clear()
        for writer in writers:
            writer.close()


event_file.register_writer_cache(FileWriterCache.get)
# A process that ends without clear() (a training script, a worker) still leaves complete event
# files: at exit, every cached writer writes what is queued and closes.
atexit.register(FileWriterCache.clear)
