package tz

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Cases are the expected conversions of testdata/cases.json, computed by
// testdata/gen_cases.py with Python's zoneinfo.
type Cases struct {
	TZData string `json:"tzdata"`
	Walls  []struct {
		Zone    string `json:"zone"`
		Wall    int64  `json:"wall"`
		Instant int64  `json:"instant"`
		Text    string `json:"text"`
		Why     string `json:"why"`
	} `json:"walls"`
	Instants []struct {
		Zone    string `json:"zone"`
		Instant int64  `json:"instant"`
		Wall    int64  `json:"wall"`
		Why     string `json:"why"`
	} `json:"instants"`
	Days []struct {
		Zone    string `json:"zone"`
		Day     int64  `json:"day"`
		Instant int64  `json:"instant"`
		Why     string `json:"why"`
	} `json:"days"`
}

func loadCases(t *testing.T) Cases {
	t.Helper()
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var c Cases
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func mustParse(t *testing.T, id string) *Zone {
	t.Helper()
	z, err := Parse(id)
	if err != nil {
		t.Fatalf("Parse(%q): %v", id, err)
	}
	return z
}

func TestWallToInstantMatchesZoneinfo(t *testing.T) {
	c := loadCases(t)
	convs := map[string]*Converter{}
	for _, w := range c.Walls {
		z := mustParse(t, w.Zone)
		// A fresh converter, and one shared by all cases of the zone (its
		// remembered period comes from the previous case).
		got, ok := z.Converter().ToInstant(w.Wall, 1_000_000)
		if !ok || got != w.Instant {
			t.Errorf("%s %s (%s): instant %d, want %d", w.Zone, w.Text, w.Why, got, w.Instant)
		}
		if convs[w.Zone] == nil {
			convs[w.Zone] = z.Converter()
		}
		if got, _ := convs[w.Zone].ToInstant(w.Wall, 1_000_000); got != w.Instant {
			t.Errorf("%s %s (%s), shared converter: instant %d, want %d", w.Zone, w.Text, w.Why, got, w.Instant)
		}
	}
}

func TestWallToInstantInShuffledOrder(t *testing.T) {
	c := loadCases(t)
	r := rand.New(rand.NewPCG(3, 4))
	byZone := map[string]*Converter{}
	for _, i := range r.Perm(len(c.Walls)) {
		w := c.Walls[i]
		if byZone[w.Zone] == nil {
			byZone[w.Zone] = mustParse(t, w.Zone).Converter()
		}
		if got, _ := byZone[w.Zone].ToInstant(w.Wall, 1_000_000); got != w.Instant {
			t.Errorf("%s %s: instant %d, want %d", w.Zone, w.Text, got, w.Instant)
		}
	}
}

func TestInstantToWallMatchesZoneinfo(t *testing.T) {
	c := loadCases(t)
	for _, in := range c.Instants {
		z := mustParse(t, in.Zone)
		got, ok := z.ToWall(in.Instant, 1_000_000)
		if !ok || got != in.Wall {
			t.Errorf("%s instant %d (%s): wall %d, want %d", in.Zone, in.Instant, in.Why, got, in.Wall)
		}
	}
}

func TestStartOfDayMatchesZoneinfo(t *testing.T) {
	c := loadCases(t)
	for _, d := range c.Days {
		z := mustParse(t, d.Zone)
		if got := z.Converter().StartOfDay(d.Day) * 1_000_000; got != d.Instant {
			t.Errorf("%s day %d (%s): %d, want %d", d.Zone, d.Day, d.Why, got, d.Instant)
		}
	}
}

// The expected values below are derived by hand from the rules of 2024:
// New York is at -05:00 (EST) until 2024-03-10 07:00Z, when 02:00 becomes
// 03:00 (-04:00, EDT), and back at 2024-11-03 06:00Z, when 02:00 becomes
// 01:00 again.
func TestNewYorkByHand(t *testing.T) {
	z := mustParse(t, "America/New_York")
	const h = 3600
	mar10 := int64(19792) * 86400 // 2024-03-10 00:00 as days since 1970 times a day
	nov3 := int64(20030) * 86400  // 2024-11-03
	cases := []struct {
		wall, instant int64
		why           string
	}{
		{mar10 + 1*h, mar10 + 6*h, "01:00 EST"},
		{mar10 + 2*h + 1800, mar10 + 7*h + 1800, "02:30 is in the gap: 03:30 EDT"},
		{mar10 + 3*h + 1800, mar10 + 7*h + 1800, "03:30 EDT"},
		{nov3 + 1*h + 1800, nov3 + 5*h + 1800, "01:30 in the overlap: the earlier offset, EDT"},
		{nov3 + 2*h, nov3 + 7*h, "02:00 EST"},
	}
	for _, c := range cases {
		got, _ := z.ToInstant(c.wall*1000, 1000)
		if got != c.instant*1000 {
			t.Errorf("%s: %d ms, want %d", c.why, got, c.instant*1000)
		}
	}
	// Both instants of the overlap show 01:30.
	for _, in := range []int64{nov3 + 5*h + 1800, nov3 + 6*h + 1800} {
		if got, _ := z.ToWall(in, 1); got != nov3+1*h+1800 {
			t.Errorf("instant %d: wall %d", in, got)
		}
	}
	// truncatedTo keeps the offset it had: 01:30 EST truncated to the hour
	// is 01:00 EST, not the earlier 01:00 EDT.
	if got, _ := z.Converter().ToInstantPreferring((nov3+1*h)*10, 10, -5*h); got != (nov3+6*h)*10 {
		t.Errorf("preferring EST: %d", got)
	}
	if got, _ := z.Converter().ToInstantPreferring((nov3+1*h)*10, 10, -4*h); got != (nov3+5*h)*10 {
		t.Errorf("preferring EDT: %d", got)
	}
	// An offset that is not valid there falls back to the usual rules.
	if got, _ := z.Converter().ToInstantPreferring((mar10+2*h+1800)*10, 10, -5*h); got != (mar10+7*h+1800)*10 {
		t.Errorf("preferring in a gap: %d", got)
	}
}

func TestUnitsAndSubSecondParts(t *testing.T) {
	z := mustParse(t, "America/New_York")
	// 2024-11-03 01:30:00.123456789 wall time in ns: the overlap's earlier
	// offset, the fraction kept.
	wall := int64(1730597400)*1_000_000_000 + 123_456_789
	got, ok := z.ToInstant(wall, 1_000_000_000)
	if want := int64(1730611800)*1_000_000_000 + 123_456_789; !ok || got != want {
		t.Errorf("ns: %d, want %d", got, want)
	}
	// Pre-1970 with a fraction: floor to the second, not truncation.
	wallUS := int64(-5351616000)*1_000_000 - 1 // 1800-05-31 23:59:59.999999
	got, _ = z.ToInstant(wallUS, 1_000_000)
	if want := int64(-5351598238)*1_000_000 - 1; got != want {
		t.Errorf("pre-1970 fraction: %d, want %d", got, want)
	}
}

func TestOverflowIsReported(t *testing.T) {
	z := mustParse(t, "America/New_York")
	if _, ok := z.ToInstant(math.MaxInt64, 1_000_000); ok {
		t.Error("max wall time west of UTC must overflow")
	}
	if _, ok := z.ToWall(math.MinInt64, 1_000_000); ok {
		t.Error("min instant west of UTC must overflow")
	}
	if _, ok := z.ToInstant(math.MinInt64, 1_000_000); !ok {
		t.Error("min wall time west of UTC is later: it fits")
	}
	if _, ok := mustParse(t, "+05:30").ToInstant(math.MinInt64, 1_000_000_000); ok {
		t.Error("min ns wall time east of UTC must overflow")
	}
}

func TestFixedZones(t *testing.T) {
	for id, want := range map[string]bool{
		"UTC": true, "+05:30": true, "Z": true, "Etc/UTC": true, "Etc/GMT+5": true, "GMT-08:00": true,
		"America/New_York": false, "Asia/Kolkata": false,
	} {
		if got := mustParse(t, id).Fixed(); got != want {
			t.Errorf("%s: Fixed() = %v", id, got)
		}
	}
	var nilZone *Zone
	if !nilZone.Fixed() || nilZone.String() != "UTC" {
		t.Error("a nil zone is UTC")
	}
}

// The ids Spark 4.1 accepts and rejects for spark.sql.session.timeZone (set
// on a SparkSession one by one), with the offset each fixed one has.
func TestParseAcceptsWhatSparkAccepts(t *testing.T) {
	fixed := map[string]int64{
		"+05:30": 19800, "UTC+1": 3600, "GMT-08:00": -28800, "-08": -28800, "+5:30": 19800, "+05:3": 18180,
		"Z": 0, "UTC": 0, "+18:00": 64800, "+0530": 19800, "+053000": 19800, "+05:30:15": 19815, "UT+3": 10800,
		"UT": 0, "GMT": 0, "UTC+00:00": 0, "+5": 18000, "+05": 18000, "-0": 0, "GMT+0": 0, "EST": -18000,
		"MST": -25200, "HST": -36000, "UTC+5:30": 19800, "+5:3": 18180,
	}
	for id, off := range fixed {
		z := mustParse(t, id)
		if !z.Fixed() || z.Converter().Offset(0) != off {
			t.Errorf("%s: fixed %v, offset %d, want %d", id, z.Fixed(), z.Converter().Offset(0), off)
		}
	}
	regions := []string{"Europe/Paris", "PST", "CET", "EST5EDT", "US/Eastern", "Etc/GMT+5", "GMT0", "Asia/Kolkata",
		"America/Argentina/Buenos_Aires", "UCT", "Zulu", "WET", "ROK", "NZ-CHAT", "Antarctica/Troll", "ECT"}
	for _, id := range regions {
		mustParse(t, id)
	}
	// PST is Los Angeles (with DST), EST a fixed -05:00, as Java's SHORT_IDS map them.
	if z := mustParse(t, "PST"); z.Fixed() || z.Converter().Offset(1719835200) != -7*3600 {
		t.Error("PST is America/Los_Angeles")
	}
	rejected := []string{"utc", "posixrules", "Local", "europe/paris", "+19:00", "UTC+", "Mars/Phobos", "", "  UTC",
		"UTC ", "Factory", "right/UTC", "posix/Europe/Paris", "localtime", "Etc/Unknown", "+18:01", "05:30",
		"+05:60", "../zoneinfo/UTC", "/etc/localtime", "+0530:", "GMT+abc"}
	for _, id := range rejected {
		if _, err := Parse(id); err == nil {
			t.Errorf("%q: accepted", id)
		}
	}
}

func TestFromConf(t *testing.T) {
	z, err := FromConf(nil)
	if err != nil || z != UTC {
		t.Fatalf("default: %v %v", z, err)
	}
	for _, key := range []string{"spark.sql.session.timeZone", "session.timeZone", "spark.sql.session.timezone"} {
		z, err := FromConf(map[string]string{key: "Europe/Paris", "wap.id": "x"})
		if err != nil || z.String() != "Europe/Paris" {
			t.Errorf("%s: %v %v", key, z, err)
		}
	}
	_, err = FromConf(map[string]string{"spark.sql.session.timeZone": "Mars/Phobos"})
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "spark.sql.session.timeZone") ||
		!strings.Contains(err.Error(), "Mars/Phobos") {
		t.Errorf("bad zone: %v", err)
	}
	_, err = FromConf(map[string]string{"session.timeZone": "+25:00"})
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "session.timeZone") {
		t.Errorf("bad offset: %v", err)
	}
	_, err = FromConf(map[string]string{"session.timeZone": "UTC", "spark.sql.session.timeZone": "Europe/Paris"})
	if !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("two different values: %v", err)
	}
	if _, err = FromConf(map[string]string{"session.timeZone": "UTC", "spark.sql.session.timeZone": "UTC"}); err != nil {
		t.Errorf("the same value twice: %v", err)
	}
}
