#!/usr/bin/env bash
# timeout: 60
# The session engine's files keep their rooms (docs/architecture.md,
# "orchestrate/"): engine.c holds the steps and the marks, session.c drives
# a live target, session_batch.c a batch target; issue 52 item 2.
#  - every global a file of it exports carries its room's prefix (engine_
#    from engine.c, session_ from session.c and session_batch.c): an
#    unprefixed `count_done` or `settle` in the library is a namesake of
#    every other file's static of that name;
#  - no circle: engine.c and engine.h include neither driver's header, and
#    session_batch.c does not include session.h;
#  - one loop (engine_execute) runs the boots of every target, live, LAVA
#    and sealed qemu, each with its driver: only engine.c walks the boots;
#  - the crash-safe order of marks and commits is written once: among
#    orchestrate/'s files only engine.c calls db_run_start, db_run_unstart
#    and db_run_finish_start, and only engine.c builds a run's request.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh

O=build/obj/harness/orchestrate
require_built "$O/engine.o" "$O/session.o" "$O/session_batch.o"

for f in engine session session_batch; do
	want=session_
	[ "$f" = engine ] && want=engine_
	bad=$(nm -g --defined-only "$O/$f.o" | awk '{print $3}' | grep -v "^$want" | tr '\n' ' ')
	if [ -z "$bad" ]; then
		ok "$f.o exports only ${want}* names"
	else
		not_ok "$f.o exports only ${want}* names" "unprefixed: $bad"
	fi
done

D=harness/orchestrate
# (the greps below pass on a file that is not there: it must be)
check "the engine's files are there" test -f $D/engine.c -a -f $D/engine.h -a -f $D/session_batch.h
hits=$(grep -n '#include "harness/orchestrate/session\(_batch\)\?\.h"' $D/engine.c $D/engine.h)
equals "engine.c and engine.h include no driver's header (no circle)" "$hits" ""
hits=$(grep -n '#include "harness/orchestrate/session\.h"' $D/session_batch.c $D/session_batch.h)
equals "session_batch.c includes no session.h (no circle)" "$hits" ""

hits=$(grep -ln 'db_run_start\|db_run_unstart\|db_run_finish_start' $D/*.c | tr '\n' ' ')
equals "the marks and a run's commit are made in engine.c only" "$hits" "$D/engine.c "
hits=$(grep -ln 'json_object_set_new(req, "argv"' $D/*.c | tr '\n' ' ')
equals "a run's request is built in engine.c only" "$hits" "$D/engine.c "
hits=$(grep -ln 'engine_boot_end(\|engine_boot_needed(' $D/*.c | tr '\n' ' ')
equals "one loop walks a session's boots, engine.c's" "$hits" "$D/engine.c "
hits=$(grep -c 'engine_execute(&c, target_batch' $D/session.c)
equals "session.c hands the loop a live or a batch driver" "$hits" 1

done_testing
