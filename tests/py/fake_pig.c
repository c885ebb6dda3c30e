/*
 * A stand-in for libpyiceberg_go implementing include/pyiceberg_go.h with
 * scripted behaviour, so the Python layer's threading, cancellation, progress,
 * stream handling and error mapping are tested apart from the Go core.
 *
 * Request "op" values:
 *   "append"     pulls the whole input stream on a thread of its own (as Go
 *                does) and reports the rows it saw;
 *   "fail"       fails with the status in "table" (a decimal) and a message;
 *   "sleep"      runs ~10 s in 20 ms steps, advancing progress, until cancelled.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pyiceberg_go.h" /* -I include */

#define MAX_OPS 1024

struct op {
  atomic_int used;
  atomic_int cancelled;
  atomic_llong rows, bytes, files;
};
static struct op ops[MAX_OPS];

int32_t pig_abi_version(void) { return PIG_ABI_VERSION; }
const char *pig_version(void) { return "fake-0"; }
void pig_free(void *p) { free(p); }

static void release_error(struct PigError *e) {
  free(e->message);
  e->message = NULL;
  e->release = NULL;
}

static PigStatus fail(struct PigError *err, PigStatus st, const char *msg) {
  if (err) {
    err->status = st;
    err->message = strdup(msg);
    err->release = release_error;
  }
  return st;
}

PigStatus pig_runtime_configure(const char *config_json, struct PigError *err) {
  if (!config_json || config_json[0] != '{') return fail(err, PIG_STATUS_INVALID_ARGUMENT, "bad runtime config");
  return PIG_STATUS_OK;
}

PigStatus pig_session_new(const char *config_json, uintptr_t *out, struct PigError *err) {
  if (strstr(config_json, "\"fail-session\"")) return fail(err, PIG_STATUS_INVALID_ARGUMENT, "session refused");
  *out = 77;
  return PIG_STATUS_OK;
}
PigStatus pig_session_release(uintptr_t s) { (void)s; return PIG_STATUS_OK; }

PigStatus pig_operation_new(uintptr_t *out) {
  for (int i = 1; i < MAX_OPS; i++) {
    int expected = 0;
    if (atomic_compare_exchange_strong(&ops[i].used, &expected, 1)) {
      ops[i].cancelled = 0;
      ops[i].rows = ops[i].bytes = ops[i].files = 0;
      *out = (uintptr_t)i;
      return PIG_STATUS_OK;
    }
  }
  return PIG_STATUS_INTERNAL;
}
static struct op *get_op(uintptr_t h) { return (h > 0 && h < MAX_OPS && ops[h].used) ? &ops[h] : NULL; }
PigStatus pig_operation_cancel(uintptr_t h) {
  struct op *o = get_op(h);
  if (o) o->cancelled = 1;
  return PIG_STATUS_OK;
}
PigStatus pig_operation_progress(uintptr_t h, int64_t *r, int64_t *b, int64_t *f) {
  struct op *o = get_op(h);
  if (!o) return PIG_STATUS_INVALID_ARGUMENT;
  *r = o->rows;
  *b = o->bytes;
  *f = o->files;
  return PIG_STATUS_OK;
}
PigStatus pig_operation_release(uintptr_t h) {
  if (h > 0 && h < MAX_OPS) ops[h].used = 0;
  return PIG_STATUS_OK;
}

/* Number of live (never released) operations, for leak checks. */
int32_t fake_live_operations(void) {
  int n = 0;
  for (int i = 1; i < MAX_OPS; i++) n += ops[i].used;
  return n;
}

struct pull {
  struct ArrowArrayStream s;
  struct op *o;
  long long rows;
  int batches;
  int rc;
  char error[256];
};

static void *pull_stream(void *arg) {
  struct pull *p = arg;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  p->rc = p->s.get_schema(&p->s, &schema);
  if (p->rc == 0) {
    if (schema.release) schema.release(&schema);
    for (;;) {
      struct ArrowArray a;
      memset(&a, 0, sizeof a);
      p->rc = p->s.get_next(&p->s, &a);
      if (p->rc != 0 || a.release == NULL) break;
      p->rows += a.length;
      p->batches++;
      if (p->o) p->o->rows = p->rows;
      a.release(&a);
    }
  }
  if (p->rc != 0) {
    const char *e = p->s.get_last_error(&p->s);
    snprintf(p->error, sizeof p->error, "input stream failed (%d): %s", p->rc, e ? e : "");
  }
  p->s.release(&p->s);
  return NULL;
}

static char *op_of(const char *req, char *buf, size_t n, const char *key) {
  char pat[32];
  snprintf(pat, sizeof pat, "\"%s\": \"", key);
  const char *p = strstr(req, pat);
  buf[0] = 0;
  if (!p) return buf;
  p += strlen(pat);
  size_t i = 0;
  while (p[i] && p[i] != '"' && i + 1 < n) { buf[i] = p[i]; i++; }
  buf[i] = 0;
  return buf;
}

PigStatus pig_execute(uintptr_t session, const char *request_json, struct ArrowArrayStream *input,
                      uintptr_t operation, char **out_result, struct PigError *err) {
  char op[64], table[64];
  struct op *o = get_op(operation);
  struct pull p;
  memset(&p, 0, sizeof p);
  if (input) { /* move the stream, as the real library does */
    p.s = *input;
    input->release = NULL;
  }
  if (session != 77) {
    if (p.s.release) p.s.release(&p.s);
    return fail(err, PIG_STATUS_INVALID_ARGUMENT, "bad session handle");
  }
  op_of(request_json, op, sizeof op, "op");
  op_of(request_json, table, sizeof table, "table");
  if (strcmp(op, "append") == 0) {
    if (!p.s.release) return fail(err, PIG_STATUS_INVALID_ARGUMENT, "append needs input");
    p.o = o;
    pthread_t t;
    pthread_create(&t, NULL, pull_stream, &p);
    pthread_join(t, NULL);
    if (p.rc != 0) return fail(err, PIG_STATUS_IO, p.error);
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"table\": \"%s\", \"operation\": \"append\", \"snapshot_id\": 9007199254740993, "
             "\"summary\": {\"added-records\": \"%lld\"}, "
             "\"metrics\": {\"rows\": %lld, \"files\": %d, \"bytes\": 10, \"seconds\": 0.5}}",
             table, p.rows, p.rows, p.batches);
    *out_result = strdup(buf);
    return PIG_STATUS_OK;
  }
  if (p.s.release) p.s.release(&p.s);
  if (strcmp(op, "fail") == 0) {
    char msg[128];
    snprintf(msg, sizeof msg, "scripted failure %s in caf\xc3\xa9", table);
    return fail(err, (PigStatus)atoi(table), msg);
  }
  if (strcmp(op, "sleep") == 0) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 500; i++) {
      if (o && o->cancelled) return fail(err, PIG_STATUS_CANCELLED, "operation cancelled");
      if (o) { o->rows += 1000; o->bytes += 1 << 20; o->files = i / 10; }
      nanosleep(&ts, NULL);
    }
    *out_result = strdup("{\"table\": \"t\", \"operation\": \"append\", \"snapshot_id\": 1}");
    return PIG_STATUS_OK;
  }
  return fail(err, PIG_STATUS_INVALID_ARGUMENT, "unknown op");
}

PigStatus pig_scan(uintptr_t session, const char *request_json, struct ArrowArrayStream *out,
                   struct PigError *err) {
  (void)session; (void)request_json; (void)out;
  return fail(err, PIG_STATUS_NOT_SUPPORTED, "fake library cannot scan");
}

PigStatus pig_read(uintptr_t session, const char *request_json, uintptr_t operation,
                   struct ArrowArrayStream *out, struct PigError *err) {
  (void)operation;
  return pig_scan(session, request_json, out, err);
}
