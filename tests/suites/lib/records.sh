# tests/suites/lib/records.sh — reading a records log (JSON lines) from a suite, sourced by
# dist.sh and mpi.sh. tests/run.sh runs tests/suites/*.sh only, so this file is not a suite.

# "SCHEDULE-HASH ERROR" per record: two logs of the same search compare equal line by line
sched_err() { python3 -c '
import json, sys, hashlib
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(hashlib.md5(r["schedule"].encode()).hexdigest()[:12], r["error"])' "$1"; }

# one field per record, a dotted path such as machine.cpu ("" where a record lacks it)
field() { python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line); v = r
    for k in sys.argv[2].split("."): v = v.get(k, "") if isinstance(v, dict) else ""
    print(v)' "$1" "$2"; }

# the number of records, failing (exit 1, a Python error) if any line is not valid JSON
valid_log() { python3 -c '
import json, sys
print(sum(1 for line in open(sys.argv[1]) if json.loads(line) is not None))' "$1"; }
