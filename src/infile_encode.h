/* infile_encode.c: rows -> LOAD DATA LOCAL INFILE text (bulk load, mysqlc.bulk).
 *
 * Functions exported on mysqlc._core:
 *   infile_encode_rows(rows, ncols, names=None, first_row=0) -> bytes
 *   infile_encode_arrow(schema_capsule, array_capsule) -> bytes
 *   infile_arrow_check(schema_capsule) -> None   (raises TypeError for unsupported formats)
 *
 * The output format is LOAD DATA's default: FIELDS TERMINATED BY '\t' ESCAPED BY '\\'
 * LINES TERMINATED BY '\n', NULL as \N.
 */
#ifndef MYSQLC_INFILE_ENCODE_H
#define MYSQLC_INFILE_ENCODE_H

#include <Python.h>

extern PyMethodDef mc_infile_methods[];

#endif
