#!/usr/bin/python3
"""junit-summary.py REPORT_DIR: one line per failed spec of e2e.test's JUnit
reports (junit_*.xml), with the first line of its failure, for the log of a
run of tests/upstream/run-e2e.sh."""
import glob
import re
import sys
import xml.etree.ElementTree as ET


LOCATION = re.compile(r"^\S+\.go:\d+$")
TIMESTAMP = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d\.\d+: ")


def first_line(text):
    """The failure's first line that is not a source location (ginkgo puts
    the spec's location first), without its timestamp."""
    for line in (text or "").splitlines():
        line = line.strip()
        if line and not LOCATION.match(line):
            return TIMESTAMP.sub("", line)
    return "(no message)"


def main(report_dir):
    failed = 0
    for path in sorted(glob.glob(f"{report_dir}/junit_*.xml")):
        for case in ET.parse(path).getroot().iter("testcase"):
            for tag in ("failure", "error"):
                node = case.find(tag)
                if node is not None:
                    failed += 1
                    msg = first_line(node.get("message") or node.text)
                    print(f"FAILED SPEC: {case.get('name')}\n    {msg}")
                    break
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
