/*
 * pyiceberg_go.h - the C ABI of libpyiceberg_go, an Apache Iceberg writer.
 *
 * This header is the contract; it is written by hand and versioned. Every
 * exported symbol starts with "pig_"; nothing else is exported.
 *
 * Conventions
 * - Every function returns a PigStatus (0 is success). Status values are only
 *   ever appended to.
 * - Output structs and pointers are zeroed by the caller before the call.
 * - On failure, functions taking a `struct PigError *` fill it; the caller
 *   calls err->release(err) when done (release is NULL when nothing was set).
 * - Strings the library returns (result documents) are freed with pig_free.
 * - Input data arrives as `struct ArrowArrayStream *` (Arrow C Stream
 *   Interface). The library takes ownership: the stream is moved on import
 *   and left released, whatever the outcome.
 * - Long-lived objects (sessions, operations) are opaque handles; releasing a
 *   handle twice, or releasing 0, is harmless.
 * - Every call is synchronous: when it returns, all the work it started has
 *   finished, and a commit either happened or did not.
 * - After an unexpected internal panic the library refuses further calls with
 *   PIG_STATUS_POISONED.
 * - The library must not be used in a process forked after it was loaded.
 *
 * Documents (JSON, UTF-8) are described in docs/abi.md.
 */
#ifndef PYICEBERG_GO_H
#define PYICEBERG_GO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PIG_ABI_VERSION 1

typedef int32_t PigStatus;

#define PIG_STATUS_OK 0
#define PIG_STATUS_UNKNOWN 1
#define PIG_STATUS_INVALID_ARGUMENT 2
#define PIG_STATUS_NO_SUCH_TABLE 3
#define PIG_STATUS_TABLE_ALREADY_EXISTS 4
#define PIG_STATUS_NO_SUCH_NAMESPACE 5
#define PIG_STATUS_VALIDATION 6
#define PIG_STATUS_COMMIT_CONFLICT 7
#define PIG_STATUS_CANCELLED 8
#define PIG_STATUS_IO 9
#define PIG_STATUS_NOT_SUPPORTED 10
#define PIG_STATUS_COMMIT_STATE_UNKNOWN 11
#define PIG_STATUS_INTERNAL 12
#define PIG_STATUS_POISONED 13

/* Arrow C Data / C Stream Interface, as specified by Apache Arrow. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
  void (*release)(struct ArrowSchema *);
  void *private_data;
};
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;
  void (*release)(struct ArrowArray *);
  void *private_data;
};
#endif
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
  int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
  const char *(*get_last_error)(struct ArrowArrayStream *);
  void (*release)(struct ArrowArrayStream *);
  void *private_data;
};
#endif

/* An error. The caller zeroes it; the library fills it on failure. */
struct PigError {
  PigStatus status;
  char *message; /* UTF-8, owned by the library until release */
  void (*release)(struct PigError *);
  void *private_data;
};

/* The ABI version the library implements (PIG_ABI_VERSION it was built with). */
int32_t pig_abi_version(void);

/* The library version as a static NUL-terminated string; never freed. */
const char *pig_version(void);

/* Frees a string or buffer the library returned. NULL is allowed. */
void pig_free(void *ptr);

/*
 * Sets process-wide runtime settings from a JSON object:
 *   {"max_procs": 2, "memory_limit_bytes": 4294967296, "env": {"K": "V"}}
 * (all keys optional). Environment variables set here are seen by the Go
 * runtime, which does not see variables set after the process started.
 */
PigStatus pig_runtime_configure(const char *config_json, struct PigError *err);

/*
 * Opens a session: catalogs and session configuration, from a JSON document
 * (docs/abi.md#session). The handle is released with pig_session_release.
 */
PigStatus pig_session_new(const char *config_json, uintptr_t *out_session, struct PigError *err);
PigStatus pig_session_release(uintptr_t session);

/*
 * An operation handle: pass it to pig_execute to be able to cancel it or read
 * its progress from another thread. Released with pig_operation_release.
 */
PigStatus pig_operation_new(uintptr_t *out_operation);
/* Asks the running operation to stop; it then fails with PIG_STATUS_CANCELLED
 * and commits nothing (unless the commit had already happened). A stream
 * pig_read returned fails its next get_next. */
PigStatus pig_operation_cancel(uintptr_t operation);
/* Progress so far: rows and bytes read from the input, files written. */
PigStatus pig_operation_progress(uintptr_t operation, int64_t *out_rows, int64_t *out_bytes,
                                 int64_t *out_files);
PigStatus pig_operation_release(uintptr_t operation);

/*
 * Runs one operation described by a request document (docs/abi.md#request).
 * `input` is the data for writes (may be NULL for operations that take none);
 * it is consumed. `operation` may be 0. On success *out_result holds a JSON
 * result document to free with pig_free. A distributed write is three of
 * these operations: "write_files" on each task (its share of the input in,
 * descriptions of its data files out), then "commit_files" (one snapshot of
 * every task's files) or "abort_files" on the coordinator
 * (docs/abi.md#distributed-writes).
 */
PigStatus pig_execute(uintptr_t session, const char *request_json, struct ArrowArrayStream *input,
                      uintptr_t operation, char **out_result, struct PigError *err);

/*
 * Reads a table (docs/abi.md#scan) into `out`, a caller-allocated, zeroed
 * stream that the caller releases. The stream reads as it is consumed, a
 * few files' batches at a time, not the whole table at once. Its buffers
 * are allocated with the C allocator and stay valid after the session is
 * released. A document with "op": "inspect" reads a metadata table instead
 * (docs/abi.md#scan). pig_scan is pig_read without an operation.
 */
PigStatus pig_scan(uintptr_t session, const char *request_json, struct ArrowArrayStream *out,
                   struct PigError *err);
/*
 * pig_read is pig_scan with an operation handle (may be 0): the read counts
 * its progress into it (rows and bytes handed out, data files planned), and
 * after pig_operation_cancel the stream's next get_next fails (get_last_error
 * says the read was cancelled). Releasing the operation handle does not end
 * the stream. Appended
 * in ABI version 1; callers may look it up with dlsym.
 */
PigStatus pig_read(uintptr_t session, const char *request_json, uintptr_t operation,
                   struct ArrowArrayStream *out, struct PigError *err);

#ifdef __cplusplus
}
#endif

#endif /* PYICEBERG_GO_H */
