/*
 * Row output in three formats (compute first, then format): an aligned text
 * table, CSV (RFC 4180 quoting) and JSON (through jansson, versioned:
 * {"schedlab_format": 1, "columns": [...], "rows": [[...], ...]}).
 */
#ifndef SL_FORMAT_H
#define SL_FORMAT_H

#include <stdio.h>

#include "harness/util/numfmt.h" /* fmt_num, for the cells */

enum out_format { FMT_TABLE, FMT_CSV, FMT_JSON };

struct rowset {
	size_t ncols, nrows, alloc;
	char **cols;
	char ***rows;     /* NULL cell = SQL NULL */
	int *numeric;     /* per column: 1 when every non-NULL cell is a number */
};

void rowset_init(struct rowset *rs, size_t ncols, const char *const *names);
void rowset_add(struct rowset *rs, const char *const *cells);
void rowset_release(struct rowset *rs);
void rowset_print(const struct rowset *rs, enum out_format f, FILE *out);
/* a db_row_fn (db_query, db_results_export, db_sessions_summary) that fills
 * a rowset whose ncols is 0 at first; values NULL is the header alone */
int rowset_collect(void *rowset, int ncols, const char *const *names,
		   const char *const *values);

#endif
