# The one builder of the synthetic rows the end-to-end scripts load into a
# store (synth.sh, robot-history.py, t0400, t0420, t0850, t0855): the only
# place in tests/e2e that spells an INSERT of the results tables, so that a
# migration that adds a NOT NULL column or renames one changes this file
# and no script. Each kind names its table, the columns a script must give
# and the ones it may leave to a default.
#
# From Python:   import fixture; r = fixture.Rows(); r.add("run", id=1, ...);
#                open(out, "w").write(r.text())
# From a shell:  lines "KIND<TAB>COL=VALUE<TAB>..." on stdin (lib.sh's fx
#                writes one, fixture_sql runs this), the SQL on stdout.
# Both wrap the rows in one transaction. A value is a number in a numeric
# column and quoted text elsewhere; a column given as None (Python) is
# NULL. An unknown kind or column, or a required one missing, stops with
# exit 2 naming it.
import re
import sys

NUMERIC = {"id", "session_id", "boot_id", "machine_id", "kernel_id", "run_id", "seq", "cfg",
           "round", "rep", "hz", "sched_mc", "nightly", "censored", "value"}

# kind: (table, required columns, defaults of the others it takes)
KINDS = {
    "machine": ("machine", ["id", "name", "fingerprint"], {}),
    "kernel": ("kernel", ["id", "release", "config_hash"], {"hz": 250, "sched_mc": 1}),
    "session": ("session", ["id", "name", "tag", "started_at"],
                {"plan_json": "{}", "target": "local", "harness_version": "test",
                 "status": "done", "nightly": None}),
    "boot": ("boot", ["id", "session_id", "machine_id", "kernel_id", "preempt"],
             {"seq": 0, "cfg": 0, "status": "ok", "cmdline": "root=/dev/vda",
              "kernel_commit": None, "kernel_describe": None}),
    "run": ("run", ["id", "session_id", "boot_id", "seq", "workload", "params", "started_at"],
            {"round": 0, "knobs": "{}", "rep": 0, "status": "ok"}),
    "metric": ("metric", ["run_id", "workload", "name", "value", "unit", "better"],
               {"censored": None}),
    "histogram": ("histogram", ["run_id", "name", "unit", "data"], {}),
}

NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$")


def die(msg):
    sys.stderr.write("fixture: %s\n" % msg)
    sys.exit(2)


def literal(col, v):
    if v is None:
        return "NULL"
    if col in NUMERIC:
        if not NUMBER.match(str(v)):
            die("%s: %r is no number" % (col, v))
        return str(v)
    return "'" + str(v).replace("'", "''") + "'"


def insert(kind, cols):
    if kind not in KINDS:
        die("no kind %r (one of %s)" % (kind, ", ".join(KINDS)))
    table, required, defaults = KINDS[kind]
    for c in cols:
        if c not in required and c not in defaults:
            die("%s: no column %r (%s)" % (kind, c, ", ".join(required + list(defaults))))
    for c in required:
        if c not in cols:
            die("%s: %s is required" % (kind, c))
    row = dict((c, v) for c, v in defaults.items() if v is not None)
    row.update(cols)
    names = [c for c in required + list(defaults) if c in row and (c in cols or c not in required)]
    return "INSERT INTO %s (%s) VALUES (%s);" % (
        table, ", ".join(names), ", ".join(literal(c, row[c]) for c in names))


class Rows:
    def __init__(self):
        self.sql = []

    def add(self, kind, **cols):
        self.sql.append(insert(kind, cols))

    def text(self):
        return "\n".join(["BEGIN;"] + self.sql + ["COMMIT;"]) + "\n"


def main():
    r = Rows()
    for n, line in enumerate(sys.stdin, 1):
        line = line.rstrip("\n")
        if not line:
            continue
        kind, *pairs = line.split("\t")
        cols = {}
        for p in pairs:
            if "=" not in p:
                die("line %d: %r is no COL=VALUE" % (n, p))
            k, v = p.split("=", 1)
            cols[k] = v
        r.add(kind, **cols)
    sys.stdout.write(r.text())


if __name__ == "__main__":
    main()
