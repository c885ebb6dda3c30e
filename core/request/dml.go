package request

// OpSQLPlan reads the statement SQL without running it and says what it
// needs: its kind, the operation that runs it and where its input rows come
// from (a view or table to pass as the input stream of the sql operation, or
// a query an engine evaluates first); core/ops.planSQL.
const OpSQLPlan = "sql_plan"
