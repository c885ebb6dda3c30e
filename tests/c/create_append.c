/*
 * create_append.c - drives libpyiceberg_go through its C ABI only, with a
 * hand-built Arrow C stream (no Arrow library): create a partitioned table,
 * append to it, exercise the error paths, and read it back with pig_scan.
 *
 * Usage: create_append DIR   (DIR holds catalog.db and wh/; see run.sh)
 *
 * Rows are a pure function of their id so that this program, its read-back
 * and the PyIceberg check (check_pyiceberg.py) compute them independently:
 *   name = "n<id>", NULL when id % 7 == 0
 *   ts   = TS_BASE + id * TS_STEP microseconds (UTC), NULL when id % 11 == 0
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyiceberg_go.h"

#define TS_BASE 1700000000000000LL     /* 2023-11-14T22:13:20Z in us */
#define TS_STEP (5LL * 3600 * 1000000) /* five hours: rows span many days */
#define CREATE_ROWS 100                /* ids 0..99, two batches of 50 */
#define APPEND_ROWS 150                /* ids 100..249, two batches of 75 */
#define TOTAL_ROWS (CREATE_ROWS + APPEND_ROWS)

static int passed, failed;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (cond) {                                                       \
      passed++;                                                       \
    } else {                                                          \
      failed++;                                                       \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fputc('\n', stderr);                                            \
    }                                                                 \
  } while (0)

static int name_is_null(int64_t id) { return id % 7 == 0; }
static int ts_is_null(int64_t id) { return id % 11 == 0; }
static int64_t ts_of(int64_t id) { return TS_BASE + id * TS_STEP; }

/* ---------------------------------------------------------------------- */
/* A hand-written ArrowArrayStream: id int64, name utf8, ts timestamp[us, UTC]. */

static void leaf_schema_release(struct ArrowSchema *s) { s->release = NULL; }

static void struct_schema_release(struct ArrowSchema *s) {
  for (int64_t i = 0; i < s->n_children; i++) {
    if (s->children[i]->release != NULL) s->children[i]->release(s->children[i]);
    free(s->children[i]);
  }
  free(s->children);
  s->release = NULL;
}

static struct ArrowSchema *leaf_schema(const char *format, const char *name) {
  struct ArrowSchema *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->format = format;
  c->name = name;
  c->flags = ARROW_FLAG_NULLABLE;
  c->release = leaf_schema_release;
  return c;
}

static int fill_schema(struct ArrowSchema *out, int extra_column) {
  memset(out, 0, sizeof *out);
  int n = extra_column ? 4 : 3;
  struct ArrowSchema **children = calloc((size_t)n, sizeof *children);
  if (children == NULL) return 12; /* ENOMEM */
  children[0] = leaf_schema("l", "id");
  children[1] = leaf_schema("u", "name");
  children[2] = leaf_schema("tsu:UTC", "ts");
  if (extra_column) children[3] = leaf_schema("l", "extra");
  for (int i = 0; i < n; i++) {
    if (children[i] == NULL) return 12;
  }
  out->format = "+s";
  out->name = "";
  out->n_children = n;
  out->children = children;
  out->release = struct_schema_release;
  return 0;
}

static void leaf_array_release(struct ArrowArray *a) {
  for (int64_t i = 0; i < a->n_buffers; i++) free((void *)a->buffers[i]);
  free(a->buffers);
  a->release = NULL;
}

static void struct_array_release(struct ArrowArray *a) {
  for (int64_t i = 0; i < a->n_children; i++) {
    if (a->children[i]->release != NULL) a->children[i]->release(a->children[i]);
    free(a->children[i]);
  }
  free(a->children);
  free(a->buffers);
  a->release = NULL;
}

static struct ArrowArray *leaf_array(int64_t length, int64_t null_count, int64_t n_buffers) {
  struct ArrowArray *a = calloc(1, sizeof *a);
  if (a == NULL) return NULL;
  a->buffers = calloc((size_t)n_buffers, sizeof *a->buffers);
  if (a->buffers == NULL) {
    free(a);
    return NULL;
  }
  a->length = length;
  a->null_count = null_count;
  a->n_buffers = n_buffers;
  a->release = leaf_array_release;
  return a;
}

static void set_bit(uint8_t *bits, int64_t i) { bits[i / 8] |= (uint8_t)(1u << (i % 8)); }
static int get_bit(const uint8_t *bits, int64_t i) { return bits == NULL || (bits[i / 8] >> (i % 8)) & 1; }

/* fill_batch builds rows first..first+n-1 into out; extra adds column "extra". */
static int fill_batch(struct ArrowArray *out, int64_t first, int64_t n, int extra) {
  memset(out, 0, sizeof *out);
  int nchildren = extra ? 4 : 3;
  int64_t name_nulls = 0, ts_nulls = 0;
  for (int64_t i = first; i < first + n; i++) {
    name_nulls += name_is_null(i);
    ts_nulls += ts_is_null(i);
  }
  struct ArrowArray *id = leaf_array(n, 0, 2);
  struct ArrowArray *name = leaf_array(n, name_nulls, 3);
  struct ArrowArray *ts = leaf_array(n, ts_nulls, 2);
  struct ArrowArray *ex = extra ? leaf_array(n, 0, 2) : NULL;
  if (id == NULL || name == NULL || ts == NULL || (extra && ex == NULL)) return 12;

  int64_t *ids = malloc((size_t)n * sizeof *ids);
  uint8_t *name_valid = calloc((size_t)(n + 7) / 8, 1);
  int32_t *offsets = malloc((size_t)(n + 1) * sizeof *offsets);
  char *chars = malloc((size_t)n * 24 + 1);
  uint8_t *ts_valid = calloc((size_t)(n + 7) / 8, 1);
  int64_t *tss = malloc((size_t)n * sizeof *tss);
  int64_t *exs = extra ? malloc((size_t)n * sizeof *exs) : NULL;
  if (!ids || !name_valid || !offsets || !chars || !ts_valid || !tss || (extra && !exs)) return 12;
  int32_t pos = 0;
  for (int64_t j = 0; j < n; j++) {
    int64_t i = first + j;
    ids[j] = i;
    offsets[j] = pos;
    if (!name_is_null(i)) {
      set_bit(name_valid, j);
      pos += snprintf(chars + pos, 24, "n%" PRId64, i);
    }
    if (!ts_is_null(i)) set_bit(ts_valid, j);
    tss[j] = ts_is_null(i) ? 0 : ts_of(i);
    if (exs) exs[j] = i;
  }
  offsets[n] = pos;
  id->buffers[1] = ids;
  name->buffers[0] = name_valid;
  name->buffers[1] = offsets;
  name->buffers[2] = chars;
  ts->buffers[0] = ts_valid;
  ts->buffers[1] = tss;
  if (ex) ex->buffers[1] = exs;

  out->children = calloc((size_t)nchildren, sizeof *out->children);
  out->buffers = calloc(1, sizeof *out->buffers);
  if (out->children == NULL || out->buffers == NULL) return 12;
  out->children[0] = id;
  out->children[1] = name;
  out->children[2] = ts;
  if (ex) out->children[3] = ex;
  out->length = n;
  out->n_buffers = 1;
  out->n_children = nchildren;
  out->release = struct_array_release;
  return 0;
}

struct stream_state {
  int64_t first, rows_per_batch;
  int nbatches, next, extra;
  int *released; /* counts calls of the stream's release callback */
};

static int stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  struct stream_state *st = s->private_data;
  return fill_schema(out, st->extra);
}

static int stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  struct stream_state *st = s->private_data;
  if (st->next == st->nbatches) {
    memset(out, 0, sizeof *out); /* end of stream */
    return 0;
  }
  int64_t first = st->first + st->next * st->rows_per_batch;
  st->next++;
  return fill_batch(out, first, st->rows_per_batch, st->extra);
}

static const char *stream_last_error(struct ArrowArrayStream *s) {
  (void)s;
  return "create_append test stream: out of memory";
}

static void stream_release(struct ArrowArrayStream *s) {
  struct stream_state *st = s->private_data;
  (*st->released)++;
  free(st);
  s->release = NULL;
}

/* make_stream fills s with nbatches batches of rows starting at id first. */
static void make_stream(struct ArrowArrayStream *s, int64_t first, int64_t rows_per_batch, int nbatches,
                        int extra, int *released) {
  struct stream_state *st = calloc(1, sizeof *st);
  if (st == NULL) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  st->first = first;
  st->rows_per_batch = rows_per_batch;
  st->nbatches = nbatches;
  st->extra = extra;
  st->released = released;
  *released = 0;
  s->get_schema = stream_get_schema;
  s->get_next = stream_get_next;
  s->get_last_error = stream_last_error;
  s->release = stream_release;
  s->private_data = st;
}

/* ---------------------------------------------------------------------- */

static void drop_error(struct PigError *e) {
  if (e->release != NULL) {
    e->release(e);
    CHECK(e->release == NULL, "PigError.release must clear itself");
  }
  memset(e, 0, sizeof *e);
}

static int count_occurrences(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

/* execute runs a request and returns its status; the result document is
 * kept in *result (NULL on failure) and the error in *err. */
static PigStatus execute(uintptr_t session, const char *req, struct ArrowArrayStream *in, uintptr_t op,
                         char **result, struct PigError *err) {
  memset(err, 0, sizeof *err);
  *result = NULL;
  PigStatus st = pig_execute(session, req, in, op, result, err);
  if (st == PIG_STATUS_OK) {
    CHECK(err->release == NULL && err->message == NULL, "success must leave the error untouched");
    CHECK(*result != NULL, "success must return a result document");
  } else {
    CHECK(err->status == st, "error status %d differs from returned status %d", err->status, st);
    CHECK(err->message != NULL && err->release != NULL, "a failure must come with a message");
    CHECK(*result == NULL, "a failure must not return a result document");
  }
  return st;
}

/* scan_check reads the table and verifies every row against the formulas. */
static void scan_check(uintptr_t session) {
  struct PigError err = {0};
  struct ArrowArrayStream out;
  memset(&out, 0, sizeof out);
  PigStatus st = pig_scan(session, "{\"op\":\"scan\",\"table\":\"local.db.t\"}", &out, &err);
  CHECK(st == PIG_STATUS_OK, "pig_scan: %s", err.message ? err.message : "");
  drop_error(&err);
  if (st != PIG_STATUS_OK) return;
  CHECK(out.release != NULL, "pig_scan must fill the stream");

  struct ArrowSchema sch;
  memset(&sch, 0, sizeof sch);
  CHECK(out.get_schema(&out, &sch) == 0, "get_schema: %s", out.get_last_error(&out));
  int col_id = -1, col_name = -1, col_ts = -1, name_large = 0;
  CHECK(strcmp(sch.format, "+s") == 0 && sch.n_children == 3, "schema %s with %" PRId64 " children", sch.format,
        sch.n_children);
  for (int64_t i = 0; i < sch.n_children; i++) {
    const char *nm = sch.children[i]->name, *fmt = sch.children[i]->format;
    if (strcmp(nm, "id") == 0) {
      col_id = (int)i;
      CHECK(strcmp(fmt, "l") == 0, "id is %s", fmt);
    } else if (strcmp(nm, "name") == 0) {
      col_name = (int)i;
      name_large = strcmp(fmt, "U") == 0;
      CHECK(strcmp(fmt, "u") == 0 || name_large, "name is %s", fmt);
    } else if (strcmp(nm, "ts") == 0) {
      col_ts = (int)i;
      CHECK(strcmp(fmt, "tsu:UTC") == 0, "ts is %s", fmt);
    }
  }
  sch.release(&sch);
  CHECK(col_id >= 0 && col_name >= 0 && col_ts >= 0, "columns id, name, ts must come back");
  if (col_id < 0 || col_name < 0 || col_ts < 0) {
    out.release(&out);
    return;
  }

  char *seen = calloc(TOTAL_ROWS, 1);
  int64_t rows = 0, bad = 0, dup = 0;
  for (;;) {
    struct ArrowArray b;
    memset(&b, 0, sizeof b);
    if (out.get_next(&out, &b) != 0) {
      CHECK(0, "get_next: %s", out.get_last_error(&out));
      break;
    }
    if (b.release == NULL) break;
    const struct ArrowArray *ca = b.children[col_id], *cn = b.children[col_name], *ct = b.children[col_ts];
    const int64_t *ids = ca->buffers[1];
    const int64_t *tss = ct->buffers[1];
    for (int64_t j = 0; j < b.length; j++) {
      int64_t r = b.offset + j;
      if (!get_bit(ca->buffers[0], ca->offset + r)) {
        bad++;
        continue;
      }
      int64_t id = ids[ca->offset + r];
      if (id < 0 || id >= TOTAL_ROWS) {
        bad++;
        continue;
      }
      dup += seen[id];
      seen[id] = 1;
      int64_t k = cn->offset + r;
      int name_valid = get_bit(cn->buffers[0], k);
      if (name_valid != !name_is_null(id)) {
        bad++;
      } else if (name_valid) {
        char want[24];
        int wl = snprintf(want, sizeof want, "n%" PRId64, id);
        int64_t lo, hi;
        if (name_large) {
          lo = ((const int64_t *)cn->buffers[1])[k];
          hi = ((const int64_t *)cn->buffers[1])[k + 1];
        } else {
          lo = ((const int32_t *)cn->buffers[1])[k];
          hi = ((const int32_t *)cn->buffers[1])[k + 1];
        }
        if (hi - lo != wl || memcmp((const char *)cn->buffers[2] + lo, want, (size_t)wl) != 0) bad++;
      }
      k = ct->offset + r;
      int ts_valid = get_bit(ct->buffers[0], k);
      if (ts_valid != !ts_is_null(id) || (ts_valid && tss[k] != ts_of(id))) bad++;
    }
    rows += b.length;
    b.release(&b);
    CHECK(b.release == NULL, "a batch's release must clear itself");
  }
  int64_t distinct = 0;
  for (int i = 0; i < TOTAL_ROWS; i++) distinct += seen[i];
  free(seen);
  CHECK(rows == TOTAL_ROWS, "scan returned %" PRId64 " rows, want %d", rows, TOTAL_ROWS);
  CHECK(distinct == TOTAL_ROWS && dup == 0, "%" PRId64 " distinct ids, %" PRId64 " duplicates", distinct, dup);
  CHECK(bad == 0, "%" PRId64 " rows differ from the values written", bad);
  out.release(&out);
  CHECK(out.release == NULL, "the scan stream's release must clear itself");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  CHECK(pig_abi_version() == PIG_ABI_VERSION, "abi %d", pig_abi_version());
  CHECK(pig_version() != NULL && pig_version()[0] != '\0', "pig_version is empty");
  pig_free(NULL);

  char cfg[4096];
  snprintf(cfg, sizeof cfg,
           "{\"catalogs\":{\"local\":{\"type\":\"sql\",\"uri\":\"sqlite:///%s/catalog.db\","
           "\"warehouse\":\"file://%s/wh\"}}}",
           dir, dir);
  struct PigError err = {0};
  uintptr_t session = 0;
  PigStatus st = pig_session_new(cfg, &session, &err);
  CHECK(st == PIG_STATUS_OK && session != 0, "pig_session_new: %s", err.message ? err.message : "");
  drop_error(&err);
  if (st != PIG_STATUS_OK) goto done;

  struct ArrowArrayStream in;
  int released = 0;
  char *result = NULL;

  /* create: partitioned by day(ts), with a snapshot property. */
  const char *create_req =
      "{\"op\":\"create\",\"table\":\"local.db.t\","
      "\"partition_by\":[{\"transform\":\"day\",\"column\":\"ts\"}],"
      "\"properties\":{\"commit.retry.num-retries\":\"8\"},"
      "\"options\":{\"snapshot-property.writer\":\"c-abi-test\"}}";
  make_stream(&in, 0, CREATE_ROWS / 2, 2, 0, &released);
  st = execute(session, create_req, &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_OK, "create: %s", err.message ? err.message : "");
  CHECK(released == 1 && in.release == NULL, "create: stream released %d times", released);
  if (result != NULL) {
    CHECK(strstr(result, "\"operation\":\"append\"") != NULL, "create result: %s", result);
    CHECK(strstr(result, "\"added-records\":\"100\"") != NULL, "create result: %s", result);
    CHECK(strstr(result, "\"writer\":\"c-abi-test\"") != NULL, "snapshot property missing: %s", result);
    CHECK(strstr(result, "snapshot-property.") == NULL, "snapshot-property. prefix kept: %s", result);
    CHECK(strstr(result, "\"rows\":100") != NULL, "create metrics: %s", result);
  }
  pig_free(result);
  drop_error(&err);

  /* append with an operation handle, whose progress counts the rows read. */
  uintptr_t op = 0;
  CHECK(pig_operation_new(&op) == PIG_STATUS_OK && op != 0, "pig_operation_new");
  make_stream(&in, CREATE_ROWS, APPEND_ROWS / 2, 2, 0, &released);
  st = execute(session, "{\"op\":\"append\",\"table\":\"local.db.t\"}", &in, op, &result, &err);
  CHECK(st == PIG_STATUS_OK, "append: %s", err.message ? err.message : "");
  CHECK(released == 1 && in.release == NULL, "append: stream released %d times", released);
  if (result != NULL) {
    CHECK(strstr(result, "\"added-records\":\"150\"") != NULL, "append result: %s", result);
    CHECK(strstr(result, "\"total-records\":\"250\"") != NULL, "append result: %s", result);
  }
  pig_free(result);
  drop_error(&err);
  int64_t prow = -1, pbytes = -1, pfiles = -1;
  CHECK(pig_operation_progress(op, &prow, &pbytes, &pfiles) == PIG_STATUS_OK, "pig_operation_progress");
  CHECK(prow == APPEND_ROWS && pbytes > 0 && pfiles > 0, "progress rows=%" PRId64 " bytes=%" PRId64 " files=%" PRId64,
        prow, pbytes, pfiles);
  CHECK(pig_operation_release(op) == PIG_STATUS_OK, "pig_operation_release");
  CHECK(pig_operation_release(op) == PIG_STATUS_OK, "pig_operation_release twice");
  CHECK(pig_operation_progress(op, &prow, NULL, NULL) != PIG_STATUS_OK, "progress of a released operation");

  /* An operation cancelled before it runs fails with CANCELLED and commits nothing. */
  uintptr_t cop = 0;
  CHECK(pig_operation_new(&cop) == PIG_STATUS_OK, "pig_operation_new");
  CHECK(pig_operation_cancel(cop) == PIG_STATUS_OK, "pig_operation_cancel");
  make_stream(&in, 5000, 10, 3, 0, &released);
  st = execute(session, "{\"op\":\"append\",\"table\":\"local.db.t\"}", &in, cop, &result, &err);
  CHECK(st == PIG_STATUS_CANCELLED, "cancelled append returned %d", st);
  CHECK(released == 1 && in.release == NULL, "cancelled append: stream released %d times", released);
  drop_error(&err);
  CHECK(pig_operation_release(cop) == PIG_STATUS_OK, "pig_operation_release");

  /* Two snapshots now. */
  st = execute(session, "{\"op\":\"snapshots\",\"table\":\"local.db.t\"}", NULL, 0, &result, &err);
  CHECK(st == PIG_STATUS_OK, "snapshots: %s", err.message ? err.message : "");
  if (result != NULL) CHECK(count_occurrences(result, "\"snapshot_id\"") == 2, "snapshots: %s", result);
  pig_free(result);
  drop_error(&err);

  /* create again: already exists, names the table, stream still consumed. */
  make_stream(&in, 0, 10, 1, 0, &released);
  st = execute(session, create_req, &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_TABLE_ALREADY_EXISTS, "create again returned %d", st);
  CHECK(err.message != NULL && strstr(err.message, "db.t") != NULL, "message does not name the table: %s",
        err.message ? err.message : "(null)");
  CHECK(released == 1 && in.release == NULL, "create again: stream released %d times", released);
  drop_error(&err);

  /* An extra column: a validation error. */
  make_stream(&in, 1000, 10, 1, 1, &released);
  st = execute(session, "{\"op\":\"append\",\"table\":\"local.db.t\"}", &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_VALIDATION, "extra column returned %d", st);
  CHECK(err.message != NULL && strstr(err.message, "extra") != NULL, "message does not name the column: %s",
        err.message ? err.message : "(null)");
  CHECK(released == 1, "extra column: stream released %d times", released);
  drop_error(&err);

  /* Malformed requests: invalid argument, stream consumed anyway. */
  const char *malformed[] = {
      "{\"op\":\"append\",",
      "{\"op\":\"append\",\"table\":\"local.db.t\",\"bogus\":1}",
      "{\"op\":\"frobnicate\",\"table\":\"local.db.t\"}",
      "{\"op\":\"create\",\"table\":\"local.db.t2\",\"partition_by\":[{\"transform\":\"bucket[0]\",\"column\":\"id\"}]}",
  };
  for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
    make_stream(&in, 0, 10, 1, 0, &released);
    st = execute(session, malformed[i], &in, 0, &result, &err);
    CHECK(st == PIG_STATUS_INVALID_ARGUMENT, "malformed request %zu returned %d", i, st);
    CHECK(released == 1 && in.release == NULL, "malformed request %zu: stream released %d times", i, released);
    drop_error(&err);
  }
  /* A NULL stream for a write is an argument error too. */
  st = execute(session, "{\"op\":\"append\",\"table\":\"local.db.t\"}", NULL, 0, &result, &err);
  CHECK(st == PIG_STATUS_INVALID_ARGUMENT, "append without input returned %d", st);
  drop_error(&err);
  /* Append to a missing table. */
  make_stream(&in, 0, 10, 1, 0, &released);
  st = execute(session, "{\"op\":\"append\",\"table\":\"local.db.missing\"}", &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_NO_SUCH_TABLE, "append to a missing table returned %d", st);
  CHECK(released == 1, "missing table: stream released %d times", released);
  drop_error(&err);

  /* A released session handle is an error, not a crash; releasing is idempotent. */
  uintptr_t gone = 0;
  CHECK(pig_session_new(cfg, &gone, &err) == PIG_STATUS_OK, "second session");
  drop_error(&err);
  CHECK(pig_session_release(gone) == PIG_STATUS_OK, "release");
  CHECK(pig_session_release(gone) == PIG_STATUS_OK, "release twice");
  CHECK(pig_session_release(0) == PIG_STATUS_OK, "release 0");
  make_stream(&in, 0, 10, 1, 0, &released);
  st = execute(gone, "{\"op\":\"append\",\"table\":\"local.db.t\"}", &in, 0, &result, &err);
  CHECK(st != PIG_STATUS_OK && st != PIG_STATUS_INTERNAL && st != PIG_STATUS_POISONED,
        "released session returned %d", st);
  CHECK(released == 1, "released session: stream released %d times", released);
  drop_error(&err);
  struct ArrowArrayStream sout;
  memset(&sout, 0, sizeof sout);
  st = pig_scan(gone, "{\"op\":\"scan\",\"table\":\"local.db.t\"}", &sout, &err);
  CHECK(st == PIG_STATUS_INVALID_ARGUMENT && sout.release == NULL, "scan on a released session returned %d", st);
  drop_error(&err);
  /* Scan of a missing table. */
  st = pig_scan(session, "{\"op\":\"scan\",\"table\":\"local.db.missing\"}", &sout, &err);
  CHECK(st == PIG_STATUS_NO_SUCH_TABLE && sout.release == NULL, "scan of a missing table returned %d", st);
  drop_error(&err);

  /* None of the failures above committed anything. */
  st = execute(session, "{\"op\":\"snapshots\",\"table\":\"local.db.t\"}", NULL, 0, &result, &err);
  if (result != NULL) CHECK(count_occurrences(result, "\"snapshot_id\"") == 2, "snapshots after errors: %s", result);
  pig_free(result);
  drop_error(&err);

  /* Row-level operations on a second table t3 (check_pyiceberg.py checks its rows):
   * overwritePartitions with rows 0..9 replaces the day partitions they cover,
   * then a delete removes id >= 50, then a delete that matches nothing commits nothing. */
  make_stream(&in, 0, 50, 2, 0, &released);
  st = execute(session,
               "{\"op\":\"create\",\"table\":\"local.db.t3\","
               "\"partition_by\":[{\"transform\":\"day\",\"column\":\"ts\"}]}",
               &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_OK, "create t3: %s", err.message ? err.message : "");
  pig_free(result);
  drop_error(&err);
  make_stream(&in, 0, 10, 1, 0, &released);
  st = execute(session, "{\"op\":\"overwritePartitions\",\"table\":\"local.db.t3\"}", &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_OK, "overwritePartitions: %s", err.message ? err.message : "");
  CHECK(released == 1 && in.release == NULL, "overwritePartitions: stream released %d times", released);
  if (result != NULL) {
    CHECK(strstr(result, "\"operation\":\"overwrite\"") != NULL, "overwritePartitions result: %s", result);
    CHECK(strstr(result, "\"replace-partitions\":\"true\"") != NULL, "overwritePartitions result: %s", result);
  }
  pig_free(result);
  drop_error(&err);
  st = execute(session, "{\"op\":\"delete\",\"table\":\"local.db.t3\",\"filter\":\"id >= 50\"}", NULL, 0, &result,
               &err);
  CHECK(st == PIG_STATUS_OK, "delete: %s", err.message ? err.message : "");
  if (result != NULL) {
    CHECK(strstr(result, "\"operation\":\"delete\"") != NULL || strstr(result, "\"operation\":\"overwrite\"") != NULL,
          "delete result: %s", result);
    CHECK(strstr(result, "\"snapshot_id\":null") == NULL, "delete committed nothing: %s", result);
  }
  pig_free(result);
  drop_error(&err);
  st = execute(session, "{\"op\":\"delete\",\"table\":\"local.db.t3\",\"filter\":\"id < 0\"}", NULL, 0, &result, &err);
  CHECK(st == PIG_STATUS_OK, "empty delete: %s", err.message ? err.message : "");
  if (result != NULL) CHECK(strstr(result, "\"snapshot_id\":null") != NULL, "empty delete committed: %s", result);
  pig_free(result);
  drop_error(&err);
  /* A malformed filter: invalid argument naming the position; an unknown column: validation. */
  st = execute(session, "{\"op\":\"delete\",\"table\":\"local.db.t3\",\"filter\":\"id >\"}", NULL, 0, &result, &err);
  CHECK(st == PIG_STATUS_INVALID_ARGUMENT, "malformed filter returned %d", st);
  CHECK(err.message != NULL && strstr(err.message, "position") != NULL, "message lacks the position: %s",
        err.message ? err.message : "(null)");
  drop_error(&err);
  st = execute(session, "{\"op\":\"delete\",\"table\":\"local.db.t3\",\"filter\":\"nope = 1\"}", NULL, 0, &result,
               &err);
  CHECK(st == PIG_STATUS_VALIDATION, "unknown column returned %d", st);
  CHECK(err.message != NULL && strstr(err.message, "nope") != NULL, "message does not name the column: %s",
        err.message ? err.message : "(null)");
  drop_error(&err);
  /* merge: source rows 40..59 delete the matching target rows (ids 40..49 that survived)
   * and insert the others (50..59); check_pyiceberg.py checks the rows. */
  make_stream(&in, 40, 10, 2, 0, &released);
  st = execute(session,
               "{\"op\":\"merge\",\"table\":\"local.db.t3\",\"merge\":{\"on\":\"target.id = source.id\","
               "\"clauses\":[{\"when\":\"matched\",\"action\":\"delete\"},"
               "{\"when\":\"not_matched\",\"action\":\"insert_all\"}]}}",
               &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_OK, "merge: %s", err.message ? err.message : "");
  CHECK(released == 1 && in.release == NULL, "merge: stream released %d times", released);
  if (result != NULL) {
    /* The counts depend on which rows survived; check_pyiceberg.py checks them. */
    CHECK(strstr(result, "\"merge\":{") != NULL, "merge result lacks counts: %s", result);
    CHECK(strstr(result, "\"spark.merge-into.num-target-rows-inserted\":") != NULL, "merge summary: %s", result);
  }
  pig_free(result);
  drop_error(&err);
  /* A merge clause that cannot be: invalid argument. */
  make_stream(&in, 0, 10, 1, 0, &released);
  st = execute(session,
               "{\"op\":\"merge\",\"table\":\"local.db.t3\",\"merge\":{\"on\":\"target.id = source.id\","
               "\"clauses\":[{\"when\":\"not_matched\",\"action\":\"delete\"}]}}",
               &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_INVALID_ARGUMENT, "bad merge clause returned %d", st);
  CHECK(released == 1, "bad merge: stream released %d times", released);
  drop_error(&err);
  /* Layout and branches through the request document: t4 is created sorted by id DESC
   * with range distribution, a branch b is created and appended to; check_pyiceberg.py
   * checks the sort order, each file's sort_order_id and order, and main vs branch b. */
  make_stream(&in, 0, 30, 3, 0, &released);
  st = execute(session,
               "{\"op\":\"create\",\"table\":\"local.db.t4\",\"sort_order\":[\"id DESC\"],"
               "\"options\":{\"distribution-mode\":\"range\"}}",
               &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_OK, "create sorted t4: %s", err.message ? err.message : "");
  pig_free(result);
  drop_error(&err);
  st = execute(session, "{\"op\":\"create_branch\",\"table\":\"local.db.t4\",\"ref\":\"b\"}", NULL, 0, &result, &err);
  CHECK(st == PIG_STATUS_OK, "create_branch: %s", err.message ? err.message : "");
  pig_free(result);
  drop_error(&err);
  make_stream(&in, 100, 10, 1, 0, &released);
  st = execute(session, "{\"op\":\"append\",\"table\":\"local.db.t4.branch_b\"}", &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_OK, "append to branch: %s", err.message ? err.message : "");
  pig_free(result);
  drop_error(&err);
  make_stream(&in, 0, 10, 1, 0, &released);
  st = execute(session, "{\"op\":\"append\",\"table\":\"local.db.t4.branch_nope\"}", &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_VALIDATION, "append to a missing branch returned %d", st);
  drop_error(&err);
  make_stream(&in, 0, 10, 1, 0, &released);
  st = execute(session, "{\"op\":\"create\",\"table\":\"local.db.t5\",\"sort_order\":[\"nope\"]}", &in, 0, &result,
               &err);
  CHECK(st == PIG_STATUS_VALIDATION, "sort on a missing column returned %d", st);
  CHECK(err.message != NULL && strstr(err.message, "nope") != NULL, "message does not name the column: %s",
        err.message ? err.message : "(null)");
  drop_error(&err);
  /* delete takes no input stream. */
  make_stream(&in, 0, 10, 1, 0, &released);
  st = execute(session, "{\"op\":\"delete\",\"table\":\"local.db.t3\",\"filter\":\"true\"}", &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_INVALID_ARGUMENT, "delete with a stream returned %d", st);
  CHECK(released == 1, "delete with a stream: stream released %d times", released);
  drop_error(&err);

  /* A streaming batch commits once: its replay is skipped, last_committed_batch reads it back. */
  make_stream(&in, 0, 10, 1, 0, &released);
  st = execute(session, "{\"op\":\"create\",\"table\":\"local.db.ts\"}", &in, 0, &result, &err);
  CHECK(st == PIG_STATUS_OK, "create ts: %s", err.message ? err.message : "");
  pig_free(result);
  drop_error(&err);
  const char *batch_req = "{\"op\":\"append\",\"table\":\"local.db.ts\",\"stream\":{\"query_id\":\"q\",\"batch_id\":3},"
                          "\"options\":{\"snapshot-property.source.offset\":\"40\"}}";
  for (int i = 0; i < 2; i++) {
    make_stream(&in, 10, 10, 1, 0, &released);
    st = execute(session, batch_req, &in, 0, &result, &err);
    CHECK(st == PIG_STATUS_OK, "stream batch %d: %s", i, err.message ? err.message : "");
    CHECK(released == 1, "stream batch %d: stream released %d times", i, released);
    if (result != NULL && i == 0) {
      CHECK(strstr(result, "\"spark.sql.streaming.epochId\":\"3\"") != NULL, "batch summary: %s", result);
      CHECK(strstr(result, "\"skipped\"") == NULL, "first batch skipped: %s", result);
    }
    if (result != NULL && i == 1) {
      CHECK(strstr(result, "\"skipped\":true") != NULL && strstr(result, "\"last_batch_id\":3") != NULL &&
                strstr(result, "\"snapshot_id\":null") != NULL,
            "replayed batch: %s", result);
    }
    pig_free(result);
    drop_error(&err);
  }
  st = execute(session, "{\"op\":\"last_committed_batch\",\"table\":\"local.db.ts\",\"stream\":{\"query_id\":\"q\"}}",
               NULL, 0, &result, &err);
  CHECK(st == PIG_STATUS_OK, "last_committed_batch: %s", err.message ? err.message : "");
  if (result != NULL) {
    CHECK(strstr(result, "\"batch_id\":3") != NULL && strstr(result, "\"source.offset\":\"40\"") != NULL,
          "last_committed_batch: %s", result);
  }
  pig_free(result);
  drop_error(&err);

  scan_check(session);

  CHECK(pig_session_release(session) == PIG_STATUS_OK, "release session");
  CHECK(pig_session_release(session) == PIG_STATUS_OK, "release session twice");

done:
  printf("c: %d checks passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
