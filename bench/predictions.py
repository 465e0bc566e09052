"""Benchmark: a judge's prediction file of one huge entry, read by the general JSON walk
(content/importing/json_stream.py, what the predictions import used) and by the prediction
reader (judging/prediction_records.py): the seconds until the refusal and the peak memory
over the idle process.

usage: python -m bench.predictions [--megabytes 23] [--limit-mib 2]
Each reader runs in its own process (peak RSS from getrusage, minus the RSS before reading),
on a file of `--megabytes` holding a single pair's entry of dense samples
(`{"judgement": "A"},` repeated: what costs a parse the most per byte). Needs no database.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import ROOT

SAMPLE = '{"judgement": "A"},'

CHILD = """
import json, os, resource, sys, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
from django.conf import settings
from content.importing.errors import ImportFailed
from content.importing.json_stream import json_object_records
from judging.prediction_records import prediction_object_records

reader, path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
settings.ARBITER_VERDICT_MAX_RECORD_BYTES = limit
def rss_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
idle = rss_kib()
started = time.perf_counter()
try:
    if reader == "general":
        records = json_object_records(__import__("pathlib").Path(path), True, "predictions")
    else:
        records = prediction_object_records(__import__("pathlib").Path(path), "predictions")
    for _ in records:
        pass
    outcome = "read"
except ImportFailed as error:
    outcome = str(error)
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "idle_mb": idle / 1024, "over_idle_mb": (peak - idle) / 1024,
                  "outcome": outcome}))
"""


def one_entry_file(path: Path, megabytes: float) -> Path:
    count = int(megabytes * 1024**2) // len(SAMPLE)
    path.write_text('{"p1": {"forward": [' + SAMPLE * count + '{"judgement": "B"}]}}')
    return path


def measure(reader: str, path: Path, limit: int) -> dict:
    answer = subprocess.run(
        [sys.executable, "-c", CHILD, reader, str(path), str(limit)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(answer.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=23, help="the file's size (23)")
    parser.add_argument(
        "--limit-mib",
        type=float,
        default=2,
        help="ARBITER_VERDICT_MAX_RECORD_BYTES in MiB (2, the default)",
    )
    options = parser.parse_args()
    limit = int(options.limit_mib * 1024**2)
    with tempfile.TemporaryDirectory(prefix="arbiter-bench-") as folder:
        path = one_entry_file(Path(folder) / "predictions.json", options.megabytes)
        size_mb = path.stat().st_size / 1024**2
        print(f"one entry, {size_mb:.1f} MiB; prediction record limit {limit} bytes")
        for reader in ("general", "prediction"):
            figures = measure(reader, path, limit)
            print(
                f"  {reader:<10} {figures['seconds']:6.2f} s, "
                f"{figures['idle_mb']:.0f} MiB idle + {figures['over_idle_mb']:.0f} MiB: "
                f"{figures['outcome'][:110]}"
            )


if __name__ == "__main__":
    main()
