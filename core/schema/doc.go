// Package schema turns users' Arrow data into Iceberg schemas and casts Arrow
// batches to a table's write schema, following Spark's DataFrameWriterV2 rules
// for append and for creating tables.
//
// # Arrow types and the Iceberg type they become
//
// FromArrow (a table created from data) and the Conformer (data written into a
// table) agree on one mapping from Arrow to Iceberg types:
//
//	bool                                        -> boolean
//	int8, int16, int32, uint8, uint16           -> int
//	int64, uint32                               -> long
//	uint64                                      -> long; a value above 2^63-1 is an error when written
//	float16, float32                            -> float
//	float64                                     -> double
//	decimal32/64/128/256(P,S), P <= 38          -> decimal(P,S); P > 38 is an error
//	string, large_string, string_view           -> string
//	binary, large_binary, binary_view           -> binary
//	fixed_size_binary(L)                        -> fixed[L]
//	extension arrow.uuid                        -> uuid
//	date32, date64                              -> date (date64 ms are floored to days)
//	time32(s|ms), time64(us|ns)                 -> time (microseconds; ns floored)
//	timestamp(any unit), no time zone           -> timestamp
//	timestamp(any unit), any time zone          -> timestamptz (Arrow stores UTC instants)
//	dictionary<I, V>                            -> the type of V (decoded when written)
//	list, large_list, list_view,
//	large_list_view, fixed_size_list            -> list
//	map                                         -> map
//	struct                                      -> struct
//	other extension types                       -> the type of their storage
//	null                                        -> no Iceberg type: FromArrow fails
//	                                               (cast the column first); written into
//	                                               an existing optional column it is all nulls
//	run_end_encoded, union, interval, duration  -> error
//
// Timestamps of any unit are written as Iceberg timestamp/timestamptz
// (microseconds); nanosecond values are floored (rounded toward negative
// infinity) to microseconds, so a pre-1970 instant keeps the microsecond it
// falls in. This holds for v2 and v3 tables alike; only a table column of type
// timestamp_ns/timestamptz_ns (v3) keeps nanoseconds, and then coarser inputs
// are scaled up (an overflow is an error). Iceberg has no 8/16-bit or unsigned
// integers, so they widen to the smallest Iceberg integer that holds every
// value; uint64 has none and is written as long with an overflow check.
//
// # New tables
//
// FromArrow assigns fresh field ids the way Spark/Java and PyIceberg do: the
// fields of a struct take consecutive ids first, then each field's nested
// type is numbered in order (list: element; map: key, value). Every field is
// optional, nested ones included (Spark's use-nullable-query-schema=true),
// unless keepNullability is set: then a non-nullable Arrow field (also a list
// element or a map value) becomes required. Map keys are always required.
// ReuseIDs gives a replaced table's columns the ids they had.
//
// # Writing into a table
//
// A Conformer matches input columns to table columns by name (case-sensitive),
// inside structs too; list elements and map keys/values match by position.
//
//   - A missing optional column is written as nulls; a missing required one is
//     an error. An extra input column is an error.
//   - Allowed promotions: int->long, float->double, decimal(P,S)->decimal(P'>=P,S),
//     plus the representation changes of the table above (e.g. uint16 into an
//     int column, large_string into string, date64 into date).
//     fixed_size_binary(16) is accepted for a uuid column. A null-typed column
//     fits any column as all nulls. Anything else (long->int, string->int,
//     int->timestamp, ...) is an error naming the column and both types.
//   - Dates and timestamps with and without a time zone fit date, timestamp
//     and timestamptz columns alike, converted in the session time zone
//     (Options.Zone, UTC when nil) as Spark's ANSI store assignment casts
//     them: a value without a zone written into timestamptz is a wall-clock
//     time there (one in a DST gap moves forward by the gap's length, one in
//     an overlap takes the earlier offset); an instant written into
//     timestamp becomes the wall-clock time it shows there, whatever zone
//     its Arrow type names; a date is midnight (into timestamptz: the day's
//     first instant, the end of the gap when midnight falls in one); a
//     timestamp into date is its wall-clock date. Nanoseconds are floored to
//     microseconds first.
//   - check-nullability (default on): a nullable input field, list element or
//     map value written into a required one is an error. Whatever the option,
//     a null that reaches a required field at write time is an error.
//   - check-ordering (default on): inside a struct column, the fields present in
//     both schemas must keep the table's relative order. Top-level columns are
//     matched by name in any order, as Spark's by-name resolution for
//     DataFrameWriterV2 reorders them before Iceberg checks the write schema.
//
// Every error wraps errs.ErrValidation and names the column path, written
// with dots and Iceberg's element/key/value names (e.g. 'address.zip',
// 'tags.element', 'attrs.value').
package schema
