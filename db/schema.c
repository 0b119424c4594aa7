/*
 * Schema migrations, forward only, in the style of freebsd/pkg: each entry
 * raises PRAGMA user_version by one and is applied in its own BEGIN IMMEDIATE
 * transaction by db_migrate_to(). Never edit a released entry: add a new one.
 * docs/schema.md describes the tables and the `results` view.
 */
#include "db/schema.h"

#include <stddef.h>

const struct migration db_migrations[] = {
	{ 1,
	  "CREATE TABLE machine ("
	  "  id INTEGER PRIMARY KEY,"
	  "  name TEXT NOT NULL,"
	  "  cpu_model TEXT,"
	  "  ncpus INTEGER,"
	  "  llc_groups TEXT,"
	  "  fingerprint TEXT NOT NULL UNIQUE,"
	  "  first_seen TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));"
	  "CREATE TABLE kernel ("
	  "  id INTEGER PRIMARY KEY,"
	  "  release TEXT NOT NULL,"
	  "  version TEXT NOT NULL DEFAULT '',"
	  "  config_hash TEXT NOT NULL DEFAULT '',"
	  "  hz INTEGER,"
	  "  sched_mc INTEGER,"
	  "  preempt_build TEXT,"
	  "  preempt_dynamic INTEGER,"
	  "  UNIQUE (release, version, config_hash));"
	  "CREATE TABLE session ("
	  "  id INTEGER PRIMARY KEY,"
	  "  name TEXT NOT NULL,"
	  "  plan_path TEXT,"
	  "  plan_json TEXT NOT NULL,"
	  "  tag TEXT,"
	  "  target TEXT NOT NULL,"
	  "  harness_version TEXT NOT NULL,"
	  "  seed INTEGER,"
	  "  status TEXT NOT NULL DEFAULT 'running'"
	  "    CHECK (status IN ('running','done','failed','interrupted')),"
	  "  started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),"
	  "  finished_at TEXT);"
	  "CREATE TABLE boot ("
	  "  id INTEGER PRIMARY KEY,"
	  "  session_id INTEGER NOT NULL REFERENCES session(id),"
	  "  seq INTEGER NOT NULL,"
	  "  cfg INTEGER NOT NULL,"
	  "  req_kernel TEXT,"
	  "  req_preempt TEXT,"
	  "  req_cmdline TEXT NOT NULL DEFAULT '',"
	  "  status TEXT NOT NULL DEFAULT 'planned'"
	  "    CHECK (status IN ('planned','ok','mismatch','failed')),"
	  "  machine_id INTEGER REFERENCES machine(id),"
	  "  kernel_id INTEGER REFERENCES kernel(id),"
	  "  preempt TEXT,"
	  "  cmdline TEXT,"
	  "  boot_uuid TEXT,"
	  "  method TEXT,"
	  "  switch_s REAL,"
	  "  accel TEXT,"
	  "  sysinfo TEXT,"
	  "  console TEXT,"
	  "  error TEXT,"
	  "  booted_at TEXT);"
	  "CREATE TABLE run ("
	  "  id INTEGER PRIMARY KEY,"
	  "  session_id INTEGER NOT NULL REFERENCES session(id),"
	  "  boot_id INTEGER NOT NULL REFERENCES boot(id),"
	  "  seq INTEGER NOT NULL,"
	  "  round INTEGER NOT NULL,"
	  "  workload TEXT NOT NULL,"
	  "  params TEXT NOT NULL,"
	  "  knobs TEXT NOT NULL DEFAULT '{}',"
	  "  rep INTEGER NOT NULL,"
	  "  status TEXT NOT NULL DEFAULT 'planned'"
	  "    CHECK (status IN ('planned','running','ok','failed','timeout','skipped','interrupted')),"
	  "  error TEXT,"
	  "  started_at TEXT,"
	  "  finished_at TEXT,"
	  "  wall_s REAL,"
	  "  exit_code INTEGER,"
	  "  argv TEXT,"
	  "  stdout TEXT,"
	  "  stderr TEXT,"
	  "  files TEXT,"
	  "  knobs_applied TEXT,"
	  "  load TEXT,"
	  "  UNIQUE (session_id, seq));"
	  "CREATE TABLE metric ("
	  "  run_id INTEGER NOT NULL REFERENCES run(id),"
	  "  workload TEXT NOT NULL,"
	  "  name TEXT NOT NULL,"
	  "  value REAL NOT NULL,"
	  "  unit TEXT,"
	  "  better TEXT NOT NULL CHECK (better IN ('lower','higher','none')),"
	  "  note TEXT,"
	  "  PRIMARY KEY (run_id, workload, name));"
	  "CREATE TABLE histogram ("
	  "  run_id INTEGER NOT NULL REFERENCES run(id),"
	  "  name TEXT NOT NULL,"
	  "  unit TEXT,"
	  "  data TEXT NOT NULL,"
	  "  PRIMARY KEY (run_id, name));"
	  "CREATE TABLE schedstat ("
	  "  run_id INTEGER PRIMARY KEY REFERENCES run(id),"
	  "  before TEXT NOT NULL,"
	  "  after TEXT NOT NULL);"
	  "CREATE VIEW results AS"
	  "  SELECT s.id AS session, s.tag AS tag, r.id AS run_id, r.started_at AS started_at,"
	  "         s.target AS target, m.name AS machine, k.release AS kernel_release,"
	  "         k.hz AS hz, k.sched_mc AS sched_mc, b.preempt AS preempt,"
	  "         b.cmdline AS cmdline, r.knobs AS knobs, mv.workload AS workload,"
	  "         r.params AS params, r.rep AS rep, mv.name AS metric, mv.value AS value,"
	  "         mv.unit AS unit, mv.better AS better"
	  "  FROM metric mv"
	  "  JOIN run r ON r.id = mv.run_id"
	  "  JOIN boot b ON b.id = r.boot_id"
	  "  JOIN session s ON s.id = r.session_id"
	  "  LEFT JOIN machine m ON m.id = b.machine_id"
	  "  LEFT JOIN kernel k ON k.id = b.kernel_id"
	  "  WHERE r.status = 'ok' AND b.status = 'ok';" },
	{ 2,
	  /* history queries select by metric and time; extra columns for series
	   * identity (comparability) appended to the view */
	  "CREATE INDEX metric_name ON metric(workload, name);"
	  "CREATE INDEX run_session ON run(session_id, status);"
	  "CREATE INDEX session_tag ON session(tag);"
	  "DROP VIEW results;"
	  "CREATE VIEW results AS"
	  "  SELECT s.id AS session, s.tag AS tag, r.id AS run_id, r.started_at AS started_at,"
	  "         s.target AS target, m.name AS machine, k.release AS kernel_release,"
	  "         k.hz AS hz, k.sched_mc AS sched_mc, b.preempt AS preempt,"
	  "         b.cmdline AS cmdline, r.knobs AS knobs, mv.workload AS workload,"
	  "         r.params AS params, r.rep AS rep, mv.name AS metric, mv.value AS value,"
	  "         mv.unit AS unit, mv.better AS better,"
	  "         r.workload AS run_workload, k.config_hash AS config_hash,"
	  "         k.preempt_build AS preempt_build, b.id AS boot, s.name AS plan,"
	  "         m.fingerprint AS machine_id, mv.note AS note"
	  "  FROM metric mv"
	  "  JOIN run r ON r.id = mv.run_id"
	  "  JOIN boot b ON b.id = r.boot_id"
	  "  JOIN session s ON s.id = r.session_id"
	  "  LEFT JOIN machine m ON m.id = b.machine_id"
	  "  LEFT JOIN kernel k ON k.id = b.kernel_id"
	  "  WHERE r.status = 'ok' AND b.status = 'ok';" },
	{ 3,
	  /* the session's owner: the controller that drives it now (one at a
	   * time; NULL when none). Claimed and released by db_session_claim /
	   * db_session_release, docs/schema.md */
	  "ALTER TABLE session ADD COLUMN owner_pid INTEGER;"
	  "ALTER TABLE session ADD COLUMN owner_start INTEGER;"
	  "ALTER TABLE session ADD COLUMN owner_host TEXT;"
	  "ALTER TABLE session ADD COLUMN owner_boot TEXT;"
	  "ALTER TABLE session ADD COLUMN owner_since TEXT;" },
	{ 4,
	  /* censored values: a metric that is only a lower bound (a percentile
	   * in a histogram's overflow, a ramp that ran out of time) says so in
	   * a column, not only in its note; rows stored before carry the note,
	   * so the flag is set from it; the view gains the column at its end */
	  "ALTER TABLE metric ADD COLUMN censored INTEGER NOT NULL DEFAULT 0"
	  "  CHECK (censored IN (0, 1));"
	  "UPDATE metric SET censored = 1 WHERE note LIKE '%lower bound%';"
	  "DROP VIEW results;"
	  "CREATE VIEW results AS"
	  "  SELECT s.id AS session, s.tag AS tag, r.id AS run_id, r.started_at AS started_at,"
	  "         s.target AS target, m.name AS machine, k.release AS kernel_release,"
	  "         k.hz AS hz, k.sched_mc AS sched_mc, b.preempt AS preempt,"
	  "         b.cmdline AS cmdline, r.knobs AS knobs, mv.workload AS workload,"
	  "         r.params AS params, r.rep AS rep, mv.name AS metric, mv.value AS value,"
	  "         mv.unit AS unit, mv.better AS better,"
	  "         r.workload AS run_workload, k.config_hash AS config_hash,"
	  "         k.preempt_build AS preempt_build, b.id AS boot, s.name AS plan,"
	  "         m.fingerprint AS machine_id, mv.note AS note, mv.censored AS censored"
	  "  FROM metric mv"
	  "  JOIN run r ON r.id = mv.run_id"
	  "  JOIN boot b ON b.id = r.boot_id"
	  "  JOIN session s ON s.id = r.session_id"
	  "  LEFT JOIN machine m ON m.id = b.machine_id"
	  "  LEFT JOIN kernel k ON k.id = b.kernel_id"
	  "  WHERE r.status = 'ok' AND b.status = 'ok';" },
	{ 5,
	  /* ingest: the metric(workload, name) index spread each run's rows
	   * over as many index pages as it has metrics, every one rewritten
	   * into the WAL at each run's commit (bench/ingest.c: half the
	   * rate); history queries by metric go through run and the primary
	   * key instead (10 years, one metric: 0.07 -> 0.13 s). The table is
	   * clustered on its primary key (WITHOUT ROWID): one B-tree a row,
	   * not two. The view is dropped and made again around the rebuild,
	   * unchanged. */
	  "DROP VIEW results;"
	  "DROP INDEX metric_name;"
	  "CREATE TABLE metric_new ("
	  "  run_id INTEGER NOT NULL REFERENCES run(id),"
	  "  workload TEXT NOT NULL,"
	  "  name TEXT NOT NULL,"
	  "  value REAL NOT NULL,"
	  "  unit TEXT,"
	  "  better TEXT NOT NULL CHECK (better IN ('lower','higher','none')),"
	  "  note TEXT,"
	  "  censored INTEGER NOT NULL DEFAULT 0 CHECK (censored IN (0, 1)),"
	  "  PRIMARY KEY (run_id, workload, name)) WITHOUT ROWID;"
	  "INSERT INTO metric_new (run_id, workload, name, value, unit, better, note, censored)"
	  "  SELECT run_id, workload, name, value, unit, better, note, censored FROM metric;"
	  "DROP TABLE metric;"
	  "ALTER TABLE metric_new RENAME TO metric;"
	  "CREATE VIEW results AS"
	  "  SELECT s.id AS session, s.tag AS tag, r.id AS run_id, r.started_at AS started_at,"
	  "         s.target AS target, m.name AS machine, k.release AS kernel_release,"
	  "         k.hz AS hz, k.sched_mc AS sched_mc, b.preempt AS preempt,"
	  "         b.cmdline AS cmdline, r.knobs AS knobs, mv.workload AS workload,"
	  "         r.params AS params, r.rep AS rep, mv.name AS metric, mv.value AS value,"
	  "         mv.unit AS unit, mv.better AS better,"
	  "         r.workload AS run_workload, k.config_hash AS config_hash,"
	  "         k.preempt_build AS preempt_build, b.id AS boot, s.name AS plan,"
	  "         m.fingerprint AS machine_id, mv.note AS note, mv.censored AS censored"
	  "  FROM metric mv"
	  "  JOIN run r ON r.id = mv.run_id"
	  "  JOIN boot b ON b.id = r.boot_id"
	  "  JOIN session s ON s.id = r.session_id"
	  "  LEFT JOIN machine m ON m.id = b.machine_id"
	  "  LEFT JOIN kernel k ON k.id = b.kernel_id"
	  "  WHERE r.status = 'ok' AND b.status = 'ok';" },
	{ 6,
	  /* ingest, the pages a stored run dirties (bench/ingest.c, docs/schema.md
	   * "Write cost"): run_session(session_id, status) moved each run's
	   * entry across the index twice (planned -> running -> ok: 4 of the
	   * 13 pages a run wrote into the WAL) and is covered by the
	   * UNIQUE (session_id, seq) index for every query by session; the
	   * histogram table is clustered on its key (WITHOUT ROWID: one B-tree,
	   * not two); metric's CHECK on better is spelled with OR, because an IN
	   * list of three or more built a temporary B-tree for every row stored
	   * (a third of the CPU of a run). Both tables are rebuilt, their rows
	   * unchanged; the view is dropped and made again around it, unchanged. */
	  "DROP INDEX run_session;"
	  "DROP VIEW results;"
	  "CREATE TABLE metric_new ("
	  "  run_id INTEGER NOT NULL REFERENCES run(id),"
	  "  workload TEXT NOT NULL,"
	  "  name TEXT NOT NULL,"
	  "  value REAL NOT NULL,"
	  "  unit TEXT,"
	  "  better TEXT NOT NULL"
	  "    CHECK (better = 'lower' OR better = 'higher' OR better = 'none'),"
	  "  note TEXT,"
	  "  censored INTEGER NOT NULL DEFAULT 0 CHECK (censored IN (0, 1)),"
	  "  PRIMARY KEY (run_id, workload, name)) WITHOUT ROWID;"
	  "INSERT INTO metric_new (run_id, workload, name, value, unit, better, note, censored)"
	  "  SELECT run_id, workload, name, value, unit, better, note, censored FROM metric;"
	  "DROP TABLE metric;"
	  "ALTER TABLE metric_new RENAME TO metric;"
	  "CREATE TABLE histogram_new ("
	  "  run_id INTEGER NOT NULL REFERENCES run(id),"
	  "  name TEXT NOT NULL,"
	  "  unit TEXT,"
	  "  data TEXT NOT NULL,"
	  "  PRIMARY KEY (run_id, name)) WITHOUT ROWID;"
	  "INSERT INTO histogram_new (run_id, name, unit, data)"
	  "  SELECT run_id, name, unit, data FROM histogram;"
	  "DROP TABLE histogram;"
	  "ALTER TABLE histogram_new RENAME TO histogram;"
	  "CREATE VIEW results AS"
	  "  SELECT s.id AS session, s.tag AS tag, r.id AS run_id, r.started_at AS started_at,"
	  "         s.target AS target, m.name AS machine, k.release AS kernel_release,"
	  "         k.hz AS hz, k.sched_mc AS sched_mc, b.preempt AS preempt,"
	  "         b.cmdline AS cmdline, r.knobs AS knobs, mv.workload AS workload,"
	  "         r.params AS params, r.rep AS rep, mv.name AS metric, mv.value AS value,"
	  "         mv.unit AS unit, mv.better AS better,"
	  "         r.workload AS run_workload, k.config_hash AS config_hash,"
	  "         k.preempt_build AS preempt_build, b.id AS boot, s.name AS plan,"
	  "         m.fingerprint AS machine_id, mv.note AS note, mv.censored AS censored"
	  "  FROM metric mv"
	  "  JOIN run r ON r.id = mv.run_id"
	  "  JOIN boot b ON b.id = r.boot_id"
	  "  JOIN session s ON s.id = r.session_id"
	  "  LEFT JOIN machine m ON m.id = b.machine_id"
	  "  LEFT JOIN kernel k ON k.id = b.kernel_id"
	  "  WHERE r.status = 'ok' AND b.status = 'ok';" },
	{ 7,
	  /* kernels from git (issue 13): the commit a boot's kernel was built
	   * from and its short description (`git describe`, patch count), on
	   * the boot (what was requested and built) and on the kernel row (set
	   * once the running kernel's release names the commit); the view
	   * gains both at its end, nothing else changes */
	  "ALTER TABLE boot ADD COLUMN kernel_commit TEXT;"
	  "ALTER TABLE boot ADD COLUMN kernel_describe TEXT;"
	  "ALTER TABLE kernel ADD COLUMN git_commit TEXT;"
	  "ALTER TABLE kernel ADD COLUMN git_describe TEXT;"
	  "DROP VIEW results;"
	  "CREATE VIEW results AS"
	  "  SELECT s.id AS session, s.tag AS tag, r.id AS run_id, r.started_at AS started_at,"
	  "         s.target AS target, m.name AS machine, k.release AS kernel_release,"
	  "         k.hz AS hz, k.sched_mc AS sched_mc, b.preempt AS preempt,"
	  "         b.cmdline AS cmdline, r.knobs AS knobs, mv.workload AS workload,"
	  "         r.params AS params, r.rep AS rep, mv.name AS metric, mv.value AS value,"
	  "         mv.unit AS unit, mv.better AS better,"
	  "         r.workload AS run_workload, k.config_hash AS config_hash,"
	  "         k.preempt_build AS preempt_build, b.id AS boot, s.name AS plan,"
	  "         m.fingerprint AS machine_id, mv.note AS note, mv.censored AS censored,"
	  "         COALESCE(b.kernel_commit, k.git_commit) AS kernel_commit,"
	  "         COALESCE(b.kernel_describe, k.git_describe) AS kernel_describe"
	  "  FROM metric mv"
	  "  JOIN run r ON r.id = mv.run_id"
	  "  JOIN boot b ON b.id = r.boot_id"
	  "  JOIN session s ON s.id = r.session_id"
	  "  LEFT JOIN machine m ON m.id = b.machine_id"
	  "  LEFT JOIN kernel k ON k.id = b.kernel_id"
	  "  WHERE r.status = 'ok' AND b.status = 'ok';" },
	/* 8: the job of a lab scheduler that ran the boot (the lava target,
	   docs/lab.md): LAVA's job id and the job's web page */
	{ 8,
	  "ALTER TABLE boot ADD COLUMN lava_job_id INTEGER;"
	  "ALTER TABLE boot ADD COLUMN lava_job_url TEXT;" },
	/* 9: `schedlab bisect` (docs/bisect.md): one row per bisection, keyed
	   by its inputs so that the same command again finds it; one row per
	   decided or pending step. The measurements themselves are ordinary
	   sessions tagged "bisect-<id>" (their plans name the commit);
	   session_runs > 0: a session of that many runs is the unit compared
	   (its centre one value), 0: a run is. */
	{ 9,
	  "CREATE TABLE bisect ("
	  "  id INTEGER PRIMARY KEY,"
	  "  inputs TEXT NOT NULL UNIQUE,"
	  "  plan_path TEXT,"
	  "  plan_json TEXT NOT NULL,"
	  "  git_dir TEXT NOT NULL,"
	  "  good TEXT NOT NULL,"
	  "  bad TEXT NOT NULL,"
	  "  good_ref TEXT NOT NULL,"
	  "  bad_ref TEXT NOT NULL,"
	  "  workload TEXT NOT NULL,"
	  "  metric TEXT NOT NULL,"
	  "  where_sel TEXT NOT NULL DEFAULT '',"
	  "  repetitions INTEGER NOT NULL,"
	  "  max_repetitions INTEGER NOT NULL,"
	  "  max_steps INTEGER NOT NULL,"
	  "  alpha REAL NOT NULL,"
	  "  threshold_pct REAL NOT NULL,"
	  "  session_runs INTEGER NOT NULL DEFAULT 0 CHECK (session_runs >= 0),"
	  "  status TEXT NOT NULL DEFAULT 'running'"
	  "    CHECK (status = 'running' OR status = 'done' OR status = 'refused'"
	  "           OR status = 'failed' OR status = 'interrupted'),"
	  "  result TEXT,"
	  "  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),"
	  "  finished_at TEXT);"
	  "CREATE TABLE bisect_step ("
	  "  bisect_id INTEGER NOT NULL REFERENCES bisect(id),"
	  "  seq INTEGER NOT NULL,"
	  "  commit_id TEXT NOT NULL,"
	  "  role TEXT NOT NULL CHECK (role = 'good' OR role = 'bad' OR role = 'mid'),"
	  "  verdict TEXT CHECK (verdict IS NULL OR verdict = 'good' OR verdict = 'bad'"
	  "                      OR verdict = 'skip' OR verdict = 'unclear'),"
	  "  detail TEXT,"
	  "  PRIMARY KEY (bisect_id, seq)) WITHOUT ROWID;" },
	/* 10 (9 is bisect's): an evidence trigger's decision on a traced run
	   ("evidence": {"when": "worst" | "flagged"}, docs/plan-format.md):
	   the untraced run it stands for (the worst one, or the first one
	   flagged) and why it was made or not made; NULL for "always" */
	{ 10,
	  "ALTER TABLE run ADD COLUMN evidence_of INTEGER REFERENCES run(id);"
	  "ALTER TABLE run ADD COLUMN evidence_why TEXT;" },
	/* 11: the regression robot's alerts (docs/alerts.md). An alert is one
	   series x metric that moved between a good and a bad session; alerts
	   whose change came in with the same sessions (for a kernel from git:
	   the same commit range) form a group, which is bisected once. The
	   status follows db/alertstate.c; every change of it is an
	   alert_event row (who, when, the note). */
	{ 11,
	  "CREATE TABLE alert_group ("
	  "  id INTEGER PRIMARY KEY,"
	  "  plan TEXT NOT NULL,"
	  "  machine_id INTEGER REFERENCES machine(id),"
	  "  range_key TEXT NOT NULL,"
	  "  good_session INTEGER NOT NULL REFERENCES session(id),"
	  "  bad_session INTEGER NOT NULL REFERENCES session(id),"
	  "  git_dir TEXT,"
	  "  good_commit TEXT,"
	  "  bad_commit TEXT,"
	  "  ncommits INTEGER,"
	  "  bisect_id INTEGER REFERENCES bisect(id),"
	  "  bisect_plan TEXT,"
	  "  culprit TEXT,"
	  "  why TEXT,"
	  "  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),"
	  "  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),"
	  "  UNIQUE (plan, machine_id, range_key));"
	  "CREATE TABLE alert ("
	  "  id INTEGER PRIMARY KEY,"
	  "  group_id INTEGER NOT NULL REFERENCES alert_group(id),"
	  "  kind TEXT NOT NULL CHECK (kind = 'regression' OR kind = 'improvement'),"
	  "  status TEXT NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'bisecting',"
	  "    'culprit', 'unresolved', 'acknowledged', 'expected', 'invalid', 'fixed')),"
	  "  series_key TEXT NOT NULL,"
	  "  series_label TEXT NOT NULL DEFAULT '',"
	  "  series_where TEXT NOT NULL DEFAULT '',"
	  "  workload TEXT NOT NULL,"
	  "  metric TEXT NOT NULL,"
	  "  unit TEXT,"
	  "  detector TEXT NOT NULL CHECK (detector = 'check' OR detector = 'changepoint'),"
	  "  good_session INTEGER NOT NULL REFERENCES session(id),"
	  "  bad_session INTEGER NOT NULL REFERENCES session(id),"
	  "  baseline TEXT NOT NULL DEFAULT '[]',"
	  "  base_value REAL,"
	  "  value REAL,"
	  "  change_pct REAL,"
	  "  ci_lo REAL,"
	  "  ci_hi REAL,"
	  "  p REAL,"
	  "  last_seen_session INTEGER REFERENCES session(id),"
	  "  fixed_session INTEGER REFERENCES session(id),"
	  "  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),"
	  "  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));"
	  "CREATE INDEX alert_series ON alert (series_key, workload, metric);"
	  "CREATE TABLE alert_event ("
	  "  id INTEGER PRIMARY KEY,"
	  "  alert_id INTEGER NOT NULL REFERENCES alert(id),"
	  "  at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),"
	  "  from_status TEXT,"
	  "  to_status TEXT NOT NULL,"
	  "  actor TEXT NOT NULL CHECK (actor = 'nightly' OR actor = 'person'),"
	  "  session INTEGER REFERENCES session(id),"
	  "  note TEXT);" },
	/* 12: noise thresholds became symmetric on the log ratio (T% bounds
	   B/A by 1 + T/100 and 1/(1 + T/100); docs/statistics.md "Symmetric
	   thresholds"). A bisection stored before was started under the old
	   rule (+-T% of the change) and keeps it, so that walking it again
	   (--resume, the same command) makes the same calls: 'percent' for
	   the rows there are, 'ratio' for every new one. */
	{ 12,
	  "ALTER TABLE bisect ADD COLUMN threshold_rule TEXT NOT NULL DEFAULT 'percent'"
	  "  CHECK (threshold_rule IN ('percent', 'ratio'));" },
	/* 13: the drift guard of `schedlab bisect --drift-guard` (docs/bisect.md
	   "Drift"): it measures the ends again beside midpoints, so it changes
	   which sessions a walk takes; a bisection keeps the setting it was
	   started with (0 for the rows there are, which ran without it). And
	   the levels of a step's looks: 'exact' group-sequential boundaries
	   for every new bisection, 'bonferroni' (alpha / (steps x looks)) for
	   the rows there are, which keep it so that walking them again makes
	   the same calls. */
	{ 13,
	  "ALTER TABLE bisect ADD COLUMN drift_guard INTEGER NOT NULL DEFAULT 0"
	  "  CHECK (drift_guard IN (0, 1));"
	  "ALTER TABLE bisect ADD COLUMN looks_rule TEXT NOT NULL DEFAULT 'bonferroni'"
	  "  CHECK (looks_rule IN ('bonferroni', 'exact'));" },
	/* 14: the guest's clock (docs/virtual-time.md): "real", or "virtual"
	   for a qemu guest whose clock counts instructions (icount, each
	   2^clock_shift ns); NULL for the rows there are and for targets that
	   do not say, which ran on a real clock. The view gains `clock`
	   ('real' when not recorded) and `clock_shift` at its end: rows of two
	   clocks are different series (docs/analysis.md). */
	{ 14,
	  "ALTER TABLE boot ADD COLUMN clock TEXT"
	  "  CHECK (clock IS NULL OR clock IN ('real', 'virtual'));"
	  "ALTER TABLE boot ADD COLUMN clock_shift INTEGER;"
	  "DROP VIEW results;"
	  "CREATE VIEW results AS"
	  "  SELECT s.id AS session, s.tag AS tag, r.id AS run_id, r.started_at AS started_at,"
	  "         s.target AS target, m.name AS machine, k.release AS kernel_release,"
	  "         k.hz AS hz, k.sched_mc AS sched_mc, b.preempt AS preempt,"
	  "         b.cmdline AS cmdline, r.knobs AS knobs, mv.workload AS workload,"
	  "         r.params AS params, r.rep AS rep, mv.name AS metric, mv.value AS value,"
	  "         mv.unit AS unit, mv.better AS better,"
	  "         r.workload AS run_workload, k.config_hash AS config_hash,"
	  "         k.preempt_build AS preempt_build, b.id AS boot, s.name AS plan,"
	  "         m.fingerprint AS machine_id, mv.note AS note, mv.censored AS censored,"
	  "         COALESCE(b.kernel_commit, k.git_commit) AS kernel_commit,"
	  "         COALESCE(b.kernel_describe, k.git_describe) AS kernel_describe,"
	  "         COALESCE(b.clock, 'real') AS clock, b.clock_shift AS clock_shift"
	  "  FROM metric mv"
	  "  JOIN run r ON r.id = mv.run_id"
	  "  JOIN boot b ON b.id = r.boot_id"
	  "  JOIN session s ON s.id = r.session_id"
	  "  LEFT JOIN machine m ON m.id = b.machine_id"
	  "  LEFT JOIN kernel k ON k.id = b.kernel_id"
	  "  WHERE r.status = 'ok' AND b.status = 'ok';" },
	/* 15: the regression robot's own sessions (docs/alerts.md "The
	   baseline"): 1 for a session `schedlab nightly` ran or judged, whatever
	   its tag; the rolling baseline takes these, not a tag's spelling. A
	   nightly before this one tagged every session it ran nightly-* (its
	   baseline took only those): they are marked, so that a store written
	   before keeps its baseline. */
	{ 15,
	  "ALTER TABLE session ADD COLUMN nightly INTEGER NOT NULL DEFAULT 0"
	  "  CHECK (nightly IN (0, 1));"
	  "UPDATE session SET nightly = 1 WHERE tag LIKE 'nightly-%';" },
	/* 16: the emulator's version of a qemu boot (`qemu-system-x86_64
	   -version`: "10.0.13"), NULL for other targets and for the rows there
	   are. qemu 8.1 changed how icount shares time between vCPUs and a new
	   qemu changes a virtual clock's values slightly (docs/virtual-time.md):
	   like the clock, it is a series dimension, never pooled across
	   (docs/analysis.md). The view gains `qemu_version` at its end. */
	{ 16,
	  "ALTER TABLE boot ADD COLUMN qemu_version TEXT;"
	  "DROP VIEW results;"
	  "CREATE VIEW results AS"
	  "  SELECT s.id AS session, s.tag AS tag, r.id AS run_id, r.started_at AS started_at,"
	  "         s.target AS target, m.name AS machine, k.release AS kernel_release,"
	  "         k.hz AS hz, k.sched_mc AS sched_mc, b.preempt AS preempt,"
	  "         b.cmdline AS cmdline, r.knobs AS knobs, mv.workload AS workload,"
	  "         r.params AS params, r.rep AS rep, mv.name AS metric, mv.value AS value,"
	  "         mv.unit AS unit, mv.better AS better,"
	  "         r.workload AS run_workload, k.config_hash AS config_hash,"
	  "         k.preempt_build AS preempt_build, b.id AS boot, s.name AS plan,"
	  "         m.fingerprint AS machine_id, mv.note AS note, mv.censored AS censored,"
	  "         COALESCE(b.kernel_commit, k.git_commit) AS kernel_commit,"
	  "         COALESCE(b.kernel_describe, k.git_describe) AS kernel_describe,"
	  "         COALESCE(b.clock, 'real') AS clock, b.clock_shift AS clock_shift,"
	  "         b.qemu_version AS qemu_version"
	  "  FROM metric mv"
	  "  JOIN run r ON r.id = mv.run_id"
	  "  JOIN boot b ON b.id = r.boot_id"
	  "  JOIN session s ON s.id = r.session_id"
	  "  LEFT JOIN machine m ON m.id = b.machine_id"
	  "  LEFT JOIN kernel k ON k.id = b.kernel_id"
	  "  WHERE r.status = 'ok' AND b.status = 'ok';" },
	/* 17: the site's hook's calls (docs/alerts.md "The hook"): one row a
	   group and night that raised, fixed or bisected it, written with the
	   night's judgement (a nightly killed before its hook ran leaves it
	   pending: the rerun or the next night calls the hook), claimed by
	   the nightly that calls it (pid and its start time: a dead claimer's
	   claim is taken over) and marked delivered once the hook ran. */
	{ 17,
	  "CREATE TABLE alert_hook ("
	  "  id INTEGER PRIMARY KEY,"
	  "  group_id INTEGER NOT NULL REFERENCES alert_group(id),"
	  "  session_id INTEGER NOT NULL REFERENCES session(id),"
	  "  event TEXT NOT NULL CHECK (event IN ('raised', 'fixed', 'bisected')),"
	  "  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),"
	  "  claim_pid INTEGER,"
	  "  claim_start INTEGER,"
	  "  delivered_at TEXT,"
	  "  UNIQUE (group_id, session_id));"
	  "CREATE INDEX alert_hook_pending ON alert_hook(group_id) WHERE delivered_at IS NULL;" },
	/* 18: a run's skip reason and its notes in columns of their own
	   (db/runstate.h, issue 52): whether --resume redoes a skipped run was
	   read from its error's first words ("boot failed: ..."), and a good
	   run's notes were its error, "note: A; note: B". The reason is one
	   word (boot-failed is the one that --resume redoes); the notes one a
	   line, without "note: ". Rows stored before get both from their
	   error: the reason from its first words (a skipped run whose words
	   name none stays skipped for good, as it was), the notes split off
	   it (a run that did not go well keeps its error before the first
	   "; note: "). The results view is unchanged. */
	{ 18,
	  "ALTER TABLE run ADD COLUMN skip_reason TEXT CHECK (skip_reason IS NULL"
	  "  OR skip_reason = 'boot-failed' OR skip_reason = 'boot-mismatch'"
	  "  OR skip_reason = 'unsupported' OR skip_reason = 'decided'"
	  "  OR skip_reason = 'not-needed');"
	  "ALTER TABLE run ADD COLUMN notes TEXT;"
	  "UPDATE run SET skip_reason = CASE"
	  "  WHEN error LIKE 'boot failed:%' THEN 'boot-failed'"
	  "  WHEN error LIKE 'boot mismatch:%' THEN 'boot-mismatch'"
	  "  WHEN error LIKE 'unsupported by this kernel%' THEN 'unsupported'"
	  "  WHEN error LIKE 'decided (sequential repetitions)%'"
	  "    OR error LIKE 'not run (sequential repetitions)%' THEN 'decided'"
	  "  WHEN error LIKE 'evidence not needed%' THEN 'not-needed' END"
	  "  WHERE status = 'skipped';"
	  "UPDATE run SET notes = replace(substr(error, 7), '; note: ', char(10)), error = NULL"
	  "  WHERE error LIKE 'note: %';"
	  "UPDATE run SET notes = replace(substr(error, instr(error, '; note: ') + 8), '; note: ',"
	  "  char(10)), error = substr(error, 1, instr(error, '; note: ') - 1)"
	  "  WHERE instr(error, '; note: ') > 0;" },
	/* 19: the run's scheduler (matrix.scheduler, docs/sched_ext.md):
	   "eevdf" or a sched_ext scheduler's name ("scx_simple"), carried in
	   the run's knobs (the agent verified that the kernel ran it), NULL
	   for a run of a plan without the axis and for the rows there are. A
	   series dimension (docs/analysis.md). The view gains `scheduler` at
	   its end. */
	{ 19,
	  "DROP VIEW results;"
	  "CREATE VIEW results AS"
	  "  SELECT s.id AS session, s.tag AS tag, r.id AS run_id, r.started_at AS started_at,"
	  "         s.target AS target, m.name AS machine, k.release AS kernel_release,"
	  "         k.hz AS hz, k.sched_mc AS sched_mc, b.preempt AS preempt,"
	  "         b.cmdline AS cmdline, r.knobs AS knobs, mv.workload AS workload,"
	  "         r.params AS params, r.rep AS rep, mv.name AS metric, mv.value AS value,"
	  "         mv.unit AS unit, mv.better AS better,"
	  "         r.workload AS run_workload, k.config_hash AS config_hash,"
	  "         k.preempt_build AS preempt_build, b.id AS boot, s.name AS plan,"
	  "         m.fingerprint AS machine_id, mv.note AS note, mv.censored AS censored,"
	  "         COALESCE(b.kernel_commit, k.git_commit) AS kernel_commit,"
	  "         COALESCE(b.kernel_describe, k.git_describe) AS kernel_describe,"
	  "         COALESCE(b.clock, 'real') AS clock, b.clock_shift AS clock_shift,"
	  "         b.qemu_version AS qemu_version,"
	  "         CASE WHEN json_valid(r.knobs) THEN json_extract(r.knobs, '$.scheduler')"
	  "         END AS scheduler"
	  "  FROM metric mv"
	  "  JOIN run r ON r.id = mv.run_id"
	  "  JOIN boot b ON b.id = r.boot_id"
	  "  JOIN session s ON s.id = r.session_id"
	  "  LEFT JOIN machine m ON m.id = b.machine_id"
	  "  LEFT JOIN kernel k ON k.id = b.kernel_id"
	  "  WHERE r.status = 'ok' AND b.status = 'ok';" },
	/* 20: the seed a run was perturbed with (docs/virtual-time.md "Seeds":
	   repetition r of a plan runs under plan_rep_seed(plan seed, r), the
	   same on every side of an A/B), NULL for the rows there are and for
	   runs planned without one. The view gains `seed` at its end (after 19's `scheduler`): compare
	   pairs the sides' runs by it (docs/statistics.md "Paired by seed"). */
	{ 20,
	  "ALTER TABLE run ADD COLUMN seed INTEGER;"
	  "DROP VIEW results;"
	  "CREATE VIEW results AS"
	  "  SELECT s.id AS session, s.tag AS tag, r.id AS run_id, r.started_at AS started_at,"
	  "         s.target AS target, m.name AS machine, k.release AS kernel_release,"
	  "         k.hz AS hz, k.sched_mc AS sched_mc, b.preempt AS preempt,"
	  "         b.cmdline AS cmdline, r.knobs AS knobs, mv.workload AS workload,"
	  "         r.params AS params, r.rep AS rep, mv.name AS metric, mv.value AS value,"
	  "         mv.unit AS unit, mv.better AS better,"
	  "         r.workload AS run_workload, k.config_hash AS config_hash,"
	  "         k.preempt_build AS preempt_build, b.id AS boot, s.name AS plan,"
	  "         m.fingerprint AS machine_id, mv.note AS note, mv.censored AS censored,"
	  "         COALESCE(b.kernel_commit, k.git_commit) AS kernel_commit,"
	  "         COALESCE(b.kernel_describe, k.git_describe) AS kernel_describe,"
	  "         COALESCE(b.clock, 'real') AS clock, b.clock_shift AS clock_shift,"
	  "         b.qemu_version AS qemu_version,"
	  "         CASE WHEN json_valid(r.knobs) THEN json_extract(r.knobs, '$.scheduler')"
	  "         END AS scheduler, r.seed AS seed"
	  "  FROM metric mv"
	  "  JOIN run r ON r.id = mv.run_id"
	  "  JOIN boot b ON b.id = r.boot_id"
	  "  JOIN session s ON s.id = r.session_id"
	  "  LEFT JOIN machine m ON m.id = b.machine_id"
	  "  LEFT JOIN kernel k ON k.id = b.kernel_id"
	  "  WHERE r.status = 'ok' AND b.status = 'ok';" },
	{ 0, NULL },
};
