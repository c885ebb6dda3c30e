package main

// The session time zone (spark.sql.session.timeZone) loads region rules
// with time.LoadLocation, which reads the system's tz database
// (/usr/share/zoneinfo) first; this copy of the database, built into the
// library (about 400 kB), answers on machines without one (slim
// containers, some Windows set-ups).
import _ "time/tzdata"
