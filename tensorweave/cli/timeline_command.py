"""`tensorweave timeline`: one Chrome/Perfetto trace of a traced distributed step.

    # in the training script, once:
    run_metadata = tf.RunMetadata()
    sess.run(train_op, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=run_metadata)
    tensorweave.timeline.save_step_stats(run_metadata.step_stats, "step.json")

    tensorweave timeline step.json -o trace.json     (open in ui.perfetto.dev or chrome://tracing)

One process per task, each Send/Recv transfer an arrow from sender to receiver
(summary/merged_timeline.py); --per-device draws the single-process Timeline's layout instead
(one process per device).
"""
import json
import sys

from tensorweave.summary import merged_timeline
from tensorweave.summary.timeline import Timeline


def add_parser(commands):
    parser = commands.add_parser("timeline", help="write a Chrome trace of a traced step "
                                 "(one process per task, transfers as arrows)")
    parser.add_argument("step_stats", help="JSON written by tensorweave.timeline."
                        "save_step_stats(run_metadata.step_stats, path)")
    parser.add_argument("-o", "--output", default=None,
                        help="the trace file to write (default: stdout)")
    parser.add_argument("--per-device", action="store_true",
                        help="one process per device (tf.timeline.Timeline's layout)")
    return parser


def run(args):
    try:
        step_stats = merged_timeline.load_step_stats(args.step_stats)
    except (OSError, ValueError) as exc:
        print(f"tensorweave timeline: {exc}", file=sys.stderr)
        return 2
    if args.per_device:
        text = Timeline(step_stats["dev_stats"]).generate_chrome_trace_format()
    else:
        text = merged_timeline.MergedTimeline(step_stats).generate_chrome_trace_format()
    if args.output is None:
        sys.stdout.write(text + "\n")
        return 0
    with open(args.output, "w") as handle:
        handle.write(text)
    events = json.loads(text)["traceEvents"]
    flows = sum(1 for event in events if event.get("ph") == "s")
    processes = sum(1 for event in events if event.get("name") == "process_name")
    print(f"wrote {args.output}: {processes} processes, {flows} transfers", file=sys.stderr)
    return 0
