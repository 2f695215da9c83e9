"""Inference through the two exits of issue 18, against tensorweave in-process, same run:

1. ONNX: the exported LeNet (batch 64) and MLP (batch 1) in ONNX Runtime against the same
   SavedModel's signature run by tensorweave (`Session.run`), alternating rounds.
2. Serving: `tensorweave serve` (a subprocess on 127.0.0.1) answering :predict over one
   keep-alive HTTP connection, against the same predictions made by in-process `Session.run`
   calls; the ratio is what HTTP + JSON cost.

    python benchmarks/bench_export_serve.py [--rounds 5] [--seconds 1.0]

No target was set for either; the numbers say where the time goes.
"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)


def _rate(call, seconds):
    """Calls per second of `call` over about `seconds`, after one warm-up call."""
    call()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        call()
        count += 1
    return count / (time.perf_counter() - start)


def _rounds(contenders, rounds, seconds):
    """{name: [calls/s per round]}, the contenders alternating within each round."""
    rates = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, call in contenders.items():
            rates[name].append(_rate(call, seconds))
    return rates


def _report(title, rates, reference, unit):
    print(f"\n{title}")
    base = statistics.median(rates[reference])
    for name, values in rates.items():
        median = statistics.median(values)
        print(f"  {name:<34} {median:9.1f} {unit} (range {min(values):.1f}-{max(values):.1f},"
              f" {1000 / median:7.2f} ms/call)  {median / base:5.2f}x")


def _start_server(model_dir):
    process = subprocess.Popen(
        [sys.executable, "-m", "tensorweave.cli.main", "serve", "--model-dir", model_dir,
         "--port", "0", "--model-name", "bench"],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=REPO))
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not match:
        process.kill()
        raise SystemExit(f"tensorweave serve did not start: {line!r}")
    return process, int(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0, help="per contender and round")
    args = parser.parse_args()
    import onnxruntime

    from tensorweave.cli.signature_model import SignatureModel
    from tests.export import models

    print(f"onnxruntime {onnxruntime.__version__}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}")
    work = tempfile.mkdtemp(prefix="bench_export_serve_")
    for name, build in (("lenet", models.lenet), ("mlp", models.mlp)):
        models.train_and_save(build, os.path.join(work, name))
    for name, batch in (("lenet", 64), ("mlp", 1)):
        model = SignatureModel.from_saved_model(os.path.join(work, name))
        runtime = onnxruntime.InferenceSession(model.to_onnx().SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        images, _ = models.digits(batch, seed=1)
        rates = _rounds({"tensorweave Session.run": lambda: model.run({"images": images}),
                         "onnxruntime, exported model": lambda: runtime.run(
                             None, {"images": images})}, args.rounds, args.seconds)
        _report(f"{name}, batch {batch}: inference calls/s (median of {args.rounds} rounds)",
                rates, "tensorweave Session.run", "calls/s")
        model.close()

    for name, batch in (("mlp", 1), ("lenet", 8)):
        model = SignatureModel.from_saved_model(os.path.join(work, name))
        images, _ = models.digits(batch, seed=2)
        body = json.dumps({"instances": images.tolist()})
        process, port = _start_server(os.path.join(work, name))
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

        def predict():
            connection.request("POST", "/v1/models/bench:predict", body,
                               {"Content-Type": "application/json"})
            response = connection.getresponse()
            answer = json.loads(response.read())
            assert response.status == 200, answer

        try:
            rates = _rounds({"tensorweave Session.run": lambda: model.run({"images": images}),
                             "tensorweave serve, HTTP :predict": predict},
                            args.rounds, args.seconds)
        finally:
            connection.close()
            process.terminate()
            process.wait(timeout=30)
            model.close()
        _report(f"{name}, batch {batch}: predictions/s ({len(body)} byte requests)", rates,
                "tensorweave Session.run", "calls/s")


if __name__ == "__main__":
    main()
