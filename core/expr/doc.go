// Package expr is the SQL expression language shared by overwrite(filter),
// DELETE, UPDATE and MERGE: a subset of Spark SQL expressions that
// is parsed, bound to an Iceberg schema, converted to iceberg-go predicates
// for file pruning, judged against data-file metadata, and evaluated
// vectorised over Arrow record batches. It is pure Go.
//
//	e, err := expr.Compile("level = 'INFO' AND ts >= '2024-01-01'", schema)
//	scan := tbl.Scan(table.WithRowFilter(e.Iceberg()))
//	mask, err := e.Eval(ctx, batch, mem) // boolean array, NULL = UNKNOWN
//
// # Grammar
//
// Keywords and function names are case-insensitive.
//
//	expr       := expr OR expr | expr AND expr | NOT expr | predicate
//	predicate  := value [NOT] IN (expr, ...)
//	            | value [NOT] BETWEEN value AND value
//	            | value [NOT] LIKE 'pattern'
//	            | value IS [NOT] NULL | value IS [NOT] TRUE | value IS [NOT] FALSE
//	            | value
//	value      := value cmp value | value (+ | -) value | value (* | / | %) value
//	            | - value | + value | primary
//	cmp        := = | == | != | <> | < | <= | > | >= | <=>
//	primary    := literal | column | function(args) | CAST(expr AS type)
//	            | CASE [expr] WHEN expr THEN expr ... [ELSE expr] END | (expr)
//
// Precedence, lowest first: OR, AND, NOT, IN/BETWEEN/LIKE/IS, comparisons,
// + and -, * / and %, unary minus. Binary operators are left-associative.
//
// Columns: a, nested struct fields a.b.c, and backtick-quoted names
// (`my col`, `a`.`b`, `x.y` for one name containing a dot; a doubled
// backtick stands for a backtick). Names resolve case-insensitively, as in
// Spark; two fields differing only in case make a reference ambiguous (an
// error). Only primitive columns can be used; struct, list and map columns
// cannot (their primitive struct fields can).
//
// Literals:
//
//	42                  int if it fits 32 bits, else bigint; 42L bigint; 42S, 42Y int
//	1.5   0.05  1.       decimal with the digits written: decimal(2,1), decimal(2,2), decimal(1,0); 1.5BD too
//	1.5D  1e3  1.5E-2   double
//	1.5F                float
//	'text'  "text"      string; '' or \' for a quote, \\ \n \t \r \0 escapes;
//	                    \% and \_ keep their backslash (LIKE escapes)
//	DATE '2024-01-31'
//	TIMESTAMP '2024-01-31 10:00:00[.ffffff][zone]'   timestamp with zone; the zone is Z, UTC, an
//	                    offset (+01:00, -08, GMT+1) or a region (Europe/Paris); without one the text
//	                    is a wall-clock time in the session time zone
//	TIMESTAMP_NTZ '2024-01-31 10:00:00[.ffffff]'     timestamp without zone
//	X'0AFF'             binary
//	NULL  TRUE  FALSE
//
// Types for CAST: boolean, int/integer, bigint/long, float/real, double,
// decimal(p,s) (default decimal(10,0)), string, date, timestamp
// (= timestamp_ltz, Iceberg timestamptz), timestamp_ntz (Iceberg
// timestamp), binary.
//
// Functions:
//
//	coalesce(a, ...)             first non-NULL argument (later ones are only evaluated when needed)
//	if(cond, a, b)               a when cond is TRUE, else b
//	nullif(a, b)                 NULL when a = b, else a
//	lower(s) upper(s)            case mapping
//	trim(s) ltrim(s) rtrim(s)    remove spaces
//	length(s)                    characters of a string, bytes of a binary (char_length too)
//	substring(s, pos[, len])     1-based; negative pos counts from the end; substr too
//	concat(a, ...)               string concatenation; non-string arguments are cast to string; NULL if any is NULL
//	negative(x)                  -x
//	abs(x)                       absolute value (overflow of the minimum integer is an error)
//	year(x) month(x) day(x)      of a date or timestamp (dayofmonth too)
//	hour(x) minute(x) second(x)  of a timestamp
//	date_trunc('unit', ts)       unit: YEAR/YYYY/YY, QUARTER, MONTH/MM/MON, WEEK, DAY/DD, HOUR, MINUTE, SECOND
//	current_date[()]  current_timestamp[()]   fixed when the expression is bound
//
// An unknown function is a bind error naming it. The LIKE pattern must be a
// string literal: % matches any sequence of characters, _ exactly one
// character, \ escapes %, _ and \.
//
// # Semantics
//
// Logic is SQL's three-valued logic: AND/OR are Kleene (FALSE AND NULL is
// FALSE, TRUE OR NULL is TRUE), NOT NULL is NULL, a comparison with NULL is
// NULL, <=> is null-safe equality (never NULL). x IN (list) is TRUE on a
// match, NULL when x is NULL or when there is no match and the list holds a
// NULL, FALSE otherwise. x BETWEEN a AND b is x >= a AND x <= b. IS [NOT]
// TRUE/FALSE never give NULL.
//
// Evaluation follows Spark's order, which matters for errors: AND and OR
// skip their right operand when the left decides, CASE/IF/COALESCE evaluate
// a branch only for the rows that reach it, the right operand of an
// arithmetic or comparison operator only where the left is not NULL, an
// operand next to a NULL literal not at all (Spark's optimizer folds x + NULL
// and x = NULL to NULL), IN stops at the first match, and the later
// arguments of substring/date_trunc only where the earlier are not NULL. So CASE WHEN b = 0 THEN NULL ELSE a / b END
// never divides by zero.
//
// Errors at evaluation time (ANSI mode): integer overflow in + - * unary -
// and abs; decimal results that do not fit their type; division or modulo
// by zero (for every numeric type, also double); invalid CASTs (a string
// that is not a number/date/..., a value out of the target range, NaN or
// infinity to an integer or decimal). Float and double arithmetic follows
// IEEE otherwise (overflow gives infinity).
//
// Floating point comparisons follow Spark: NaN equals NaN and is larger
// than every other value; -0.0 equals 0.0. Strings and binaries compare
// bytewise (UTF-8 order).
//
// Time zones: a timestamp (with zone) value is an instant; timestamp_ntz is
// a wall-clock time. The session time zone (InZone; UTC by default, Spark's
// spark.sql.session.timeZone) decides, as in Spark, how they convert into
// each other and from a date or text, how a timestamp renders as text, the
// year ... second of a timestamp, date_trunc (which, as Spark's, takes and
// returns a timestamp, truncating the wall-clock time) and current_date.
// The rules are java.time's (package tz): a wall-clock time in a DST gap
// moves forward by the gap's length, one in an overlap takes the earlier
// offset, and a date starts at midnight or, when midnight is in a gap, when
// the gap ends. A cast to timestamp_ntz ignores a zone in the text; a
// cast to date takes the text's date. In a zone with DST, conversions
// between the two timestamp types are not order-preserving, so comparisons
// of a converted column with a literal are not used for pruning.
//
// # Typing
//
// Numeric operands widen to a common type: int < bigint < decimal < float <
// double. An int becomes decimal(10,0) and a bigint decimal(20,0) next to a
// decimal; decimal with float or double gives double. Results of arithmetic
// (Spark's rules, p1,s1 and p2,s2 the operand decimal types):
//
//	int op int           int (+ - * %); / always gives double for integer and float operands
//	bigint op int|bigint bigint
//	+ -                  decimal(max(p1-s1, p2-s2) + max(s1,s2) + 1, max(s1,s2))
//	*                    decimal(p1+p2+1, s1+s2)
//	/                    decimal(p1-s1+s2+max(6, s1+p2+1), max(6, s1+p2+1))
//	%                    decimal(min(p1-s1, p2-s2) + max(s1,s2), max(s1,s2))
//
// A decimal precision above 38 is reduced to 38 keeping the integer digits
// and at least min(scale, 6) fraction digits; results round half up.
//
// Comparisons, IN and CASE/COALESCE/IF branches convert their operands to a
// common type: numbers widen as above; a date next to a timestamp becomes a
// timestamp; timestamp_ntz next to timestamp becomes timestamp; binary and
// fixed are both binary; NULL takes the other type. A string compared with
// a date, timestamp, time or uuid is converted to that type (a literal at
// bind time, so d >= '2024-01-01' compares dates and a malformed literal is
// a bind error). Comparing other mixtures — a string column with a number,
// a boolean with a date — is a bind error naming the column and both types.
//
// Store assignment (Expr.AssignTo, for UPDATE SET and MERGE) follows Spark's
// ANSI policy: any numeric to any numeric (overflow is an evaluation
// error), NULL to any type, any of date, timestamp and timestamp_ntz to
// another (in the session time zone), binary/fixed to binary; anything else is a bind error
// naming the target column.
//
// # Errors
//
// Every error is an *Error with the 1-based character position of the
// offending token. It wraps errs.ErrInvalidArgument for syntax errors and
// errs.ErrValidation for binding, typing and evaluation errors, e.g.
//
//	invalid expression "a = = 1": unexpected "=" at position 5
//	invalid expression "lvl = 'x'": unknown column "lvl" at position 1 (columns: id, level, ts)
//
// # Pruning
//
// Expr.Iceberg gives an iceberg-go filter implied by the expression (NOT is
// pushed down first; what cannot be expressed becomes AlwaysTrue; LIKE
// 'prefix%' becomes StartsWith; comparisons on float columns that NaN
// satisfies under Spark's ordering add OR IsNaN). Expr.MightMatch and
// Expr.MatchesAll judge a data file from its identity partition values and
// column metrics (bounds, null and NaN counts; string bounds may be
// truncated), soundly: missing metrics mean unknown.
//
// # Two inputs (MERGE)
//
// BindScopes binds against several inputs, each a Scope with a schema and
// qualifier names; MERGE INTO target t USING source s binds against
// [{target, t}, {source, s}], and EvalScopes evaluates over one batch per
// scope whose rows i form joined row i.
//
//	on, err := expr.CompileScopes("t.id = s.id AND s.op <> 'D'", scopes)
//	keys, residual := on.EquiJoin()          // hash keys t.id / s.id, residual s.op <> 'D'
//	prune := expr.KeyRange(keys[0].Target, sourceKeys)
//
// Name resolution:
//
//   - q.col (and q.a.b for a struct field) resolves in the scope named q;
//     qualifiers match case-insensitively and a name with dots (db.tbl)
//     matches that many leading parts. Two scopes may not share a name.
//   - An unqualified col resolves in the only scope that has it; a column of
//     two scopes is an ambiguity error naming both (t.id or s.id).
//   - When q is both a scope name and a top-level struct column of some
//     scope, the scope wins, as in Spark; the struct column is used only
//     when the named scope has no such column.
//   - The canonical text (String) qualifies every column with its scope's
//     first name, so it binds again to the same expression; messages name
//     scopes the same way. A scope without names is reached unqualified
//     only.
//
// Scope 0 is the target: FieldIDs, Iceberg, MightMatch and MatchesAll
// consider its columns only, treating the columns of other scopes as
// unknown values (FieldIDsOf gives another scope's ids). So t.part = 'a'
// AND s.x > 1 prunes target files by t.part. Scopes reports the scopes an
// expression reads; Eval is EvalScopes with the target batch alone.
//
// EquiJoin splits an ON condition into Keys (top-level AND conjuncts l = r
// or l <=> r with one side over scope 0 only and the other over scope 1
// only, converted to their common type and rebound as one-scope
// expressions) and a residual of the other conjuncts. Key values are
// equal as SQL's = says: for float and double NaN equals NaN and -0.0
// equals 0.0, so normalise them before hashing. KeyRange turns the source's
// key values into a target predicate (IN up to 1000 distinct values, else a
// min/max range).
//
// Results are evaluated into typed Go slices and built into Arrow arrays of
// the types iceberg-go's scan uses (string, binary, decimal128, date32,
// time64[us], timestamp[us] with or without UTC, uuid extension); inputs
// may also be large_string/large_binary/string_view.
package expr
