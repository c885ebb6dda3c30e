// Package tz is the session time zone: Spark's spark.sql.session.timeZone,
// resolved once per operation and handed to the conversions that depend on
// it (core/schema for input data, core/expr for literals, casts and
// functions). It converts between wall-clock times (Iceberg timestamp,
// Spark TIMESTAMP_NTZ) and instants (Iceberg timestamptz, Spark TIMESTAMP)
// with java.time's rules, which Spark uses:
//
//   - a wall-clock time in a gap (spring forward) moves forward by the
//     length of the gap: 02:30 on the day New York skips 02:00-03:00 is
//     03:30 EDT;
//   - a wall-clock time in an overlap (fall back) takes the earlier offset:
//     01:30 on the day New York repeats 01:00-02:00 is 01:30 EDT;
//   - a date's start (a date cast to timestamptz) is midnight, or the end of
//     the gap when midnight falls in one (LocalDate.atStartOfDay).
//
// Zone ids are read as Spark reads them (DateTimeUtils.getZoneId, then
// java.time.ZoneId.of with its SHORT_IDS): region ids of the tz database
// (Europe/Paris), offsets (+05:30, -08, +0530, +05:30:15, +5:30, Z), offsets
// prefixed by UTC, GMT or UT (UTC+1, GMT-08:00), UTC, GMT, UT, and Java's
// three-letter ids (PST, EST, ...). Region rules come from the tz database
// Go loads: the system's, else the copy embedded in the library.
package tz

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Key is Spark's session configuration key; ShortKey is the spelling
// without the spark.sql. prefix, as the project's other session keys drop
// theirs (spark.wap.id is wap.id).
const (
	Key      = "spark.sql.session.timeZone"
	ShortKey = "session.timeZone"
)

// Zone is a resolved time zone. It is immutable and safe for concurrent
// use; a nil *Zone is UTC.
type Zone struct {
	id    string
	loc   *time.Location
	fixed bool  // one offset at every instant
	off   int64 // that offset in seconds east of UTC, when fixed
}

// UTC is the default session time zone.
var UTC = &Zone{id: "UTC", loc: time.UTC, fixed: true}

// String returns the zone id as configured.
func (z *Zone) String() string {
	if z == nil {
		return UTC.id
	}
	return z.id
}

// Fixed reports whether the zone has one offset at every instant (UTC, an
// offset id, a region without any transition). Conversions in a fixed zone
// are exact shifts: injective and order-preserving.
func (z *Zone) Fixed() bool { return z == nil || z.fixed }

// IsUTC reports whether the zone is UTC at every instant (conversions are
// then the identity).
func (z *Zone) IsUTC() bool { return z == nil || z.fixed && z.off == 0 }

// Location returns the zone as a *time.Location.
func (z *Zone) Location() *time.Location {
	if z == nil {
		return time.UTC
	}
	return z.loc
}

// FromConf returns the session time zone of a session configuration: the
// value of Key or ShortKey (matched case-insensitively), UTC when neither
// is set. An invalid zone is an errs.ErrInvalidArgument naming the key.
func FromConf(conf map[string]string) (*Zone, error) {
	var keys []string
	for k := range conf {
		if strings.EqualFold(k, Key) || strings.EqualFold(k, ShortKey) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return UTC, nil
	}
	slices.Sort(keys)
	for _, k := range keys[1:] {
		if conf[k] != conf[keys[0]] {
			return nil, fmt.Errorf("%w: session configuration sets the time zone twice: %s=%q and %s=%q",
				errs.ErrInvalidArgument, keys[0], conf[keys[0]], k, conf[k])
		}
	}
	z, err := Parse(conf[keys[0]])
	if err != nil {
		return nil, fmt.Errorf("%w: session configuration %s=%q: %v", errs.ErrInvalidArgument, keys[0], conf[keys[0]], err)
	}
	return z, nil
}

var (
	singleHour   = regexp.MustCompile(`([+-])(\d):`)
	singleMinute = regexp.MustCompile(`([+-])(\d\d):(\d)$`)
)

// shortIDs is java.time.ZoneId.SHORT_IDS, which Spark passes to ZoneId.of.
var shortIDs = map[string]string{
	"ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
	"ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
	"CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
	"EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis",
	"IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
	"NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico",
	"PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
	"EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}

// notZones are names Go's loader accepts that are not zones to java.time:
// Go's own alias for the process zone, and files of the tz database
// folder that are not region ids.
var notZones = map[string]bool{"Local": true, "localtime": true, "posixrules": true, "Factory": true}

// Parse resolves a zone id as Spark does (see the package documentation).
func Parse(id string) (*Zone, error) {
	// DateTimeUtils.getZoneId accepts (+|-)h:mm and (+|-)hh:m, as Spark 2 did.
	// (Java's replaceFirst: the first match only.)
	norm := id
	if m := singleHour.FindStringSubmatchIndex(norm); m != nil {
		norm = norm[:m[0]] + norm[m[2]:m[3]] + "0" + norm[m[4]:m[5]] + ":" + norm[m[1]:]
	}
	if m := singleMinute.FindStringSubmatchIndex(norm); m != nil {
		norm = norm[:m[0]] + norm[m[2]:m[3]] + norm[m[4]:m[5]] + ":0" + norm[m[6]:m[7]]
	}
	if s, ok := shortIDs[norm]; ok {
		norm = s
	}
	switch {
	case len(norm) <= 1 || norm[0] == '+' || norm[0] == '-':
		off, err := parseOffset(norm)
		if err != nil {
			return nil, err
		}
		return fixedZone(id, off), nil
	case strings.HasPrefix(norm, "UTC") || strings.HasPrefix(norm, "GMT"):
		return withPrefix(id, norm, 3)
	case strings.HasPrefix(norm, "UT"):
		return withPrefix(id, norm, 2)
	}
	return region(id, norm)
}

// withPrefix is ZoneId.ofWithPrefix: UTC, GMT or UT alone or followed by an
// offset; anything else after the prefix is a region id.
func withPrefix(id, norm string, n int) (*Zone, error) {
	if len(norm) == n {
		return fixedZone(id, 0), nil
	}
	if norm[n] != '+' && norm[n] != '-' {
		return region(id, norm)
	}
	off, err := parseOffset(norm[n:])
	if err != nil {
		return nil, fmt.Errorf("invalid offset-based zone id %q: %v", id, err)
	}
	return fixedZone(id, off), nil
}

func fixedZone(id string, off int64) *Zone {
	if off == 0 {
		return &Zone{id: id, loc: time.UTC, fixed: true}
	}
	return &Zone{id: id, loc: time.FixedZone(id, int(off)), fixed: true, off: off}
}

// parseOffset is ZoneOffset.of: Z, +h, +hh, +hhmm, +hh:mm, +hhmmss or
// +hh:mm:ss (or -), at most 18 hours.
func parseOffset(s string) (int64, error) {
	bad := func() (int64, error) { return 0, fmt.Errorf("invalid zone offset %q", s) }
	if s == "Z" {
		return 0, nil
	}
	if len(s) == 2 {
		s = s[:1] + "0" + s[1:]
	}
	num := func(pos int, colon bool) (int64, bool) {
		if colon && s[pos-1] != ':' {
			return 0, false
		}
		a, b := s[pos], s[pos+1]
		if a < '0' || a > '9' || b < '0' || b > '9' {
			return 0, false
		}
		return int64(a-'0')*10 + int64(b-'0'), true
	}
	var h, m, sec int64
	ok1, ok2, ok3 := true, true, true
	switch len(s) {
	case 3:
		h, ok1 = num(1, false)
	case 5:
		h, ok1 = num(1, false)
		m, ok2 = num(3, false)
	case 6:
		h, ok1 = num(1, false)
		m, ok2 = num(4, true)
	case 7:
		h, ok1 = num(1, false)
		m, ok2 = num(3, false)
		sec, ok3 = num(5, false)
	case 9:
		h, ok1 = num(1, false)
		m, ok2 = num(4, true)
		sec, ok3 = num(7, true)
	default:
		return bad()
	}
	if !ok1 || !ok2 || !ok3 || s[0] != '+' && s[0] != '-' {
		return bad()
	}
	if h > 18 || m > 59 || sec > 59 || h == 18 && (m != 0 || sec != 0) {
		return 0, fmt.Errorf("zone offset %q is out of range (-18:00 to +18:00)", s)
	}
	off := h*3600 + m*60 + sec
	if s[0] == '-' {
		off = -off
	}
	return off, nil
}

// region loads a region id of the tz database. Its syntax is java.time's
// (ZoneRegion.checkName).
func region(id, name string) (*Zone, error) {
	if len(name) < 2 || notZones[name] || strings.HasPrefix(name, "posix/") || strings.HasPrefix(name, "right/") {
		return nil, unknownRegion(id)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || strings.IndexByte("/~._+-", c) >= 0)) {
			return nil, unknownRegion(id)
		}
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, unknownRegion(id)
	}
	z := &Zone{id: id, loc: loc}
	// A location whose one period spans all time has no transition.
	if s, e := time.Unix(0, 0).In(loc).ZoneBounds(); s.IsZero() && e.IsZero() {
		_, off := time.Unix(0, 0).In(loc).Zone()
		z.fixed, z.off = true, int64(off)
	}
	return z, nil
}

func unknownRegion(id string) error {
	return fmt.Errorf("unknown time zone %q: use a region id such as Europe/Paris or America/New_York, or an offset such as +05:30 or UTC-8", id)
}

// ErrRange is returned when a converted value leaves the int64 range of
// its unit.
var ErrRange = errors.New("value out of range")

// Converter converts values in one zone, remembering the last zone period
// it looked up (consecutive values are usually in the same one). It is not
// safe for concurrent use; make one per goroutine with Zone.Converter.
type Converter struct {
	z          *Zone
	known      bool
	start, end int64 // the remembered period [start, end), in seconds
	off        int64 // its offset
}

// Converter returns a new converter for z.
func (z *Zone) Converter() *Converter {
	if z == nil {
		z = UTC
	}
	return &Converter{z: z}
}

const (
	minSec = math.MinInt64
	maxSec = math.MaxInt64
	// reach bounds how far apart an instant and its wall-clock time can
	// be: java.time offsets are within 18 hours; two days leave room.
	reach = 2 * 86400
)

// period returns the offset at instant sec and the period [start, end)
// that offset holds in (start = minSec, end = maxSec when unbounded).
func (c *Converter) period(sec int64) (off, start, end int64) {
	if c.z.fixed {
		return c.z.off, minSec, maxSec
	}
	if c.known && sec >= c.start && sec < c.end {
		return c.off, c.start, c.end
	}
	t := time.Unix(sec, 0).In(c.z.loc)
	_, o := t.Zone()
	s, e := t.ZoneBounds()
	start, end = minSec, maxSec
	if !s.IsZero() {
		start = s.Unix()
	}
	if !e.IsZero() {
		end = e.Unix()
	}
	c.known, c.off, c.start, c.end = true, int64(o), start, end
	return int64(o), start, end
}

// Offset returns the zone's offset in seconds east of UTC at instant sec.
func (c *Converter) Offset(sec int64) int64 {
	off, _, _ := c.period(sec)
	return off
}

// resolution is what a wall-clock second maps to: the instants that show
// it, earliest first, with their offsets; none in a gap, which then lies
// between the periods of offsets before and after, the later starting at
// instant trans.
type resolution struct {
	instants, offsets []int64
	before, trans     int64
}

// resolve finds every instant whose wall-clock second in the zone is wall.
func (c *Converter) resolve(wall int64) resolution {
	var r resolution
	lo := wall - reach
	off, start, end := c.period(lo)
	for {
		if t := wall - off; t >= start && t < end {
			r.instants = append(r.instants, t)
			r.offsets = append(r.offsets, off)
		}
		if end == maxSec || end > wall+reach {
			break
		}
		nOff, nStart, nEnd := c.period(end)
		if len(r.instants) == 0 && end+off <= wall && wall < end+nOff {
			r.before, r.trans = off, end
		}
		off, start, end = nOff, nStart, nEnd
	}
	return r
}

// instantSec converts a wall-clock second to an instant as
// LocalDateTime.atZone does: the earlier offset in an overlap, forward by
// the gap's length in a gap. prefer, when non-nil, is an offset to keep
// when it is one of the valid ones (ZonedDateTime.truncatedTo keeps the
// original offset so).
func (c *Converter) instantSec(wall int64, prefer *int64) int64 {
	if c.z.fixed {
		return wall - c.z.off
	}
	if prefer == nil {
		// The remembered period holds t, and no earlier period can show
		// wall when t is more than reach seconds into it.
		if off, start, end := c.period(wall - c.off); c.known {
			if t := wall - off; t < end && t >= start && (start == minSec || t-start >= reach) {
				return t
			}
		}
	}
	r := c.resolve(wall)
	if len(r.instants) == 0 {
		return wall - r.before
	}
	if prefer != nil {
		for i, o := range r.offsets {
			if o == *prefer {
				return r.instants[i]
			}
		}
	}
	return r.instants[0]
}

// split returns v (in units of 1/perSec second) as whole seconds (floored)
// and the remainder.
func split(v, perSec int64) (int64, int64) {
	s := v / perSec
	if v%perSec < 0 {
		s--
	}
	return s, v - s*perSec
}

// shift returns v - d*perSec, or false when that leaves int64.
func shift(v, d, perSec int64) (int64, bool) {
	if d > math.MaxInt64/perSec || d < math.MinInt64/perSec {
		return 0, false
	}
	x := d * perSec
	r := v - x
	if (x > 0 && r > v) || (x < 0 && r < v) {
		return 0, false
	}
	return r, true
}

// ToInstant converts a wall-clock time v (in units of 1/perSec second
// since 1970-01-01 00:00, Iceberg timestamp) to the instant it denotes in
// the zone (timestamptz): Spark's cast from TIMESTAMP_NTZ to TIMESTAMP.
// false when the result leaves int64.
func (c *Converter) ToInstant(v, perSec int64) (int64, bool) {
	s, _ := split(v, perSec)
	return shift(v, s-c.instantSec(s, nil), perSec)
}

// ToInstantPreferring is ToInstant keeping offset prefer (seconds) when it
// is valid for v: an overlap then resolves to that offset, not the earlier.
func (c *Converter) ToInstantPreferring(v, perSec, prefer int64) (int64, bool) {
	s, _ := split(v, perSec)
	return shift(v, s-c.instantSec(s, &prefer), perSec)
}

// ToWall converts an instant v (in units of 1/perSec second since the
// epoch, timestamptz) to its wall-clock time in the zone (timestamp):
// Spark's cast from TIMESTAMP to TIMESTAMP_NTZ. false when the result
// leaves int64.
func (c *Converter) ToWall(v, perSec int64) (int64, bool) {
	s, _ := split(v, perSec)
	return shift(v, -c.Offset(s), perSec)
}

// StartOfDay returns the first instant (seconds) of day (days since
// 1970-01-01) in the zone: midnight, or the end of the gap when midnight
// falls in one, as LocalDate.atStartOfDay(zone) gives.
func (c *Converter) StartOfDay(day int64) int64 {
	wall := day * 86400
	if c.z.fixed {
		return wall - c.z.off
	}
	r := c.resolve(wall)
	if len(r.instants) == 0 {
		return r.trans
	}
	return r.instants[0]
}

// ToInstant converts one wall-clock value; see Converter.ToInstant.
func (z *Zone) ToInstant(v, perSec int64) (int64, bool) { return z.Converter().ToInstant(v, perSec) }

// ToWall converts one instant; see Converter.ToWall.
func (z *Zone) ToWall(v, perSec int64) (int64, bool) { return z.Converter().ToWall(v, perSec) }
