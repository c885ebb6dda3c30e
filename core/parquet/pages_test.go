package parquet

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// pageInfo describes one page of a column chunk, read from its header.
type pageInfo struct {
	dictionary bool
	encoding   pq.Encoding
	values     int
	bytes      int  // uncompressed
	stats      bool // the header has a min or a max
}

// chunkPages reads the page headers of column path in every row group.
func chunkPages(t *testing.T, data []byte, path string) [][]pageInfo {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	col := -1
	for i := 0; i < rdr.MetaData().Schema.NumColumns(); i++ {
		if rdr.MetaData().Schema.Column(i).Path() == path {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no column %s", path)
	}
	var out [][]pageInfo
	for rg := 0; rg < rdr.NumRowGroups(); rg++ {
		pr, err := rdr.RowGroup(rg).GetColumnPageReader(col)
		if err != nil {
			t.Fatal(err)
		}
		var pages []pageInfo
		for pr.Next() {
			p := pr.Page()
			info := pageInfo{
				dictionary: p.Type() == file.PageTypeDictionaryPage,
				encoding:   pq.Encoding(p.Encoding()), values: int(p.NumValues()), bytes: len(p.Data()),
			}
			if dp, ok := p.(file.DataPage); ok {
				st := dp.Statistics()
				info.stats = st.HasMin || st.HasMax
			}
			pages = append(pages, info)
		}
		if err := pr.Err(); err != nil {
			t.Fatal(err)
		}
		out = append(out, pages)
	}
	return out
}

// writeFlat writes recs with table properties props into one file; it
// returns the file and its bytes. The test schemas are flat: the native
// encoder writes them.
func writeFlat(t *testing.T, props map[string]string, sc *arrow.Schema, recs []arrow.RecordBatch) (File, []byte) {
	t.Helper()
	return writeFlatWith(t, propOptions(t, props), sc, recs)
}

// writeFlatWith is writeFlat with options.
func writeFlatWith(t *testing.T, opts Options, sc *arrow.Schema, recs []arrow.RecordBatch) (File, []byte) {
	t.Helper()
	fs := newMemFS()
	f := writeAll(t, fs, sc, opts, recs)[0]
	return f, fs.bytes(t, f.Path)
}

// propOptions are the options of table properties props.
func propOptions(t *testing.T, props map[string]string) Options {
	t.Helper()
	opts, err := OptionsFromProperties(props)
	if err != nil {
		t.Fatal(err)
	}
	return opts
}

func isDictEncoding(e pq.Encoding) bool {
	return e == pq.Encodings.RLEDict || e == pq.Encodings.PlainDict
}

// dictionaryUse summarises a chunk: its dictionary page size (-1 without
// one) and its data pages written with and without the dictionary.
func dictionaryUse(pages []pageInfo) (dictBytes, dictPages, plainPages, entries int) {
	dictBytes = -1
	for _, p := range pages {
		switch {
		case p.dictionary:
			dictBytes, entries = p.bytes, p.values
		case isDictEncoding(p.encoding):
			dictPages++
		default:
			plainPages++
		}
	}
	return dictBytes, dictPages, plainPages, entries
}

func TestDictionaryFallsBackToPlainPastDictSizeBytes(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := bloomBatches(t, !ec.flat, 1, 30000)
		write := func(props map[string]string) []byte {
			props[PropDictEnabledPrefix+"s"] = "true" // past the per-file decision
			opts, err := OptionsFromProperties(props)
			if err != nil {
				t.Fatal(err)
			}
			fs := newMemFS()
			f := writeAll(t, fs, sc, ec.opts(opts), recs)[0]
			return fs.bytes(t, f.Path)
		}
		const limit = 8192
		small := write(map[string]string{PropDictPageBytes: "8192"})
		for _, pages := range chunkPages(t, small, "s") {
			dict, onDict, plain, entries := dictionaryUse(pages)
			// arrow-go checks the limit after each batch of 1024 values
			// (and drops a dictionary that overflows before the first page:
			// no dictionary page at all); the native encoder after each run
			// of dictChunkRows values.
			over := 1024 * 16
			if dict > limit+over || plain == 0 || (dict < 0) != (onDict == 0) {
				t.Errorf("dict-size-bytes %d: dictionary of %d bytes, %d dictionary pages, %d plain pages; want a fallback",
					limit, dict, onDict, plain)
			}
			if !ec.flat {
				continue
			}
			// The native encoder counts the entries plain-encoded, lengths
			// included, as the dictionary page holds them: the page ends
			// at most one run's new entries (up to 15 bytes each here)
			// past the limit.
			if dict > limit+dictChunkRows*15 || onDict == 0 {
				t.Errorf("native: dictionary of %d bytes (%d entries) over %d pages, limit %d", dict, entries, onDict, limit)
			}
		}
		for _, pages := range chunkPages(t, write(map[string]string{}), "s") {
			if dict, onDict, plain, _ := dictionaryUse(pages); dict <= limit || onDict == 0 || plain != 0 {
				t.Errorf("default dict-size-bytes: dictionary of %d bytes, %d dictionary pages, %d plain pages; want no fallback",
					dict, onDict, plain)
			}
		}
		// A low-cardinality column never reaches the limit.
		for _, pages := range chunkPages(t, small, "cat") {
			if dict, _, plain, _ := dictionaryUse(pages); dict < 0 || plain != 0 {
				t.Errorf("cat: dictionary of %d bytes, %d plain pages", dict, plain)
			}
		}
	})
}

func TestPerColumnDictionaryPropertyOverridesTheFileDecision(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := bloomBatches(t, !ec.flat, 1, 30000)
		write := func(props map[string]string) []byte {
			opts, err := OptionsFromProperties(props)
			if err != nil {
				t.Fatal(err)
			}
			fs := newMemFS()
			f := writeAll(t, fs, sc, ec.opts(opts), recs)[0]
			return fs.bytes(t, f.Path)
		}
		hasDict := func(data []byte, path string) bool {
			t.Helper()
			pages := chunkPages(t, data, path)
			dict, _, _, _ := dictionaryUse(pages[0])
			return dict >= 0
		}
		cases := map[string]bool{"s": false, "cat": true} // the file decision
		if !ec.flat {
			cases["tags.list.element"] = true
		}
		base := write(map[string]string{})
		for path, want := range cases {
			if got := hasDict(base, path); got != want {
				t.Fatalf("without properties %s: dictionary %v, want %v", path, got, want)
			}
		}
		props := map[string]string{PropDictEnabledPrefix + "s": "true", PropDictEnabledPrefix + "cat": "false"}
		if !ec.flat {
			props[PropDictEnabledPrefix+"tags.element"] = "false"
		}
		flipped := write(props)
		for path, want := range cases {
			if got := hasDict(flipped, path); got == want {
				t.Errorf("with %s: dictionary %v, want %v", PropDictEnabledPrefix+path, got, !want)
			}
		}
		// The data is unchanged.
		a, b := readBack(t, base), readBack(t, flipped)
		defer a.Release()
		defer b.Release()
		for c := 0; c < int(a.NumCols()); c++ {
			if columnJSON(t, a.Column(c).Data().Chunks()) != columnJSON(t, b.Column(c).Data().Chunks()) {
				t.Errorf("column %d differs", c)
			}
		}
	})
}

func TestNativeCutsPagesAtPageRowLimit(t *testing.T) {
	sc, recs := bloomBatches(t, false, 2, 25000)
	for _, c := range []struct {
		props map[string]string
		limit int
	}{
		{map[string]string{}, 20000}, // Iceberg's default
		{map[string]string{PropPageRowLimit: "1000"}, 1000},
	} {
		_, data := writeFlat(t, c.props, sc, recs)
		for _, path := range []string{"id", "cat", "plain"} {
			for _, pages := range chunkPages(t, data, path) {
				rows, n := 0, 0
				for _, p := range pages {
					if p.dictionary {
						continue
					}
					n++
					rows += p.values
					if p.values > c.limit {
						t.Errorf("limit %d: %s page of %d rows", c.limit, path, p.values)
					}
				}
				if n < (rows+c.limit-1)/c.limit {
					t.Errorf("limit %d: %s has %d pages for %d rows", c.limit, path, n, rows)
				}
			}
		}
	}
}

func TestPagesAreCutAtPageSizeBytes(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := bloomBatches(t, !ec.flat, 1, 40000)
		const pageBytes = 8192
		opts, err := OptionsFromProperties(map[string]string{PropPageBytes: "8192", PropDictEnabledPrefix + "id": "false"})
		if err != nil {
			t.Fatal(err)
		}
		fs := newMemFS()
		f := writeAll(t, fs, sc, ec.opts(opts), recs)[0]
		// arrow-go checks the page size after each batch of 1024 values;
		// native pages stop at the size (plus their level bytes).
		slack := 64
		if !ec.flat {
			slack = 1024 * 8
		}
		for _, path := range []string{"id", "s"} {
			for _, pages := range chunkPages(t, fs.bytes(t, f.Path), path) {
				total, n := 0, 0
				for _, p := range pages {
					if p.dictionary {
						continue
					}
					n++
					total += p.bytes
					if p.bytes > pageBytes+slack {
						t.Errorf("%s: page of %d bytes, page size %d", path, p.bytes, pageBytes)
					}
				}
				if n < total/(pageBytes+slack) || n < 2 {
					t.Errorf("%s: %d pages for %d bytes", path, n, total)
				}
			}
		}
	})
}

// TestPagesHaveNoStatisticsButChunksDo: min/max are computed once per page
// for the column index and the chunk statistics, not a second time for
// page headers.
func TestPagesHaveNoStatisticsButChunksDo(t *testing.T) {
	sc, recs := bloomBatches(t, false, 2, 25000)
	f, data := writeFlat(t, map[string]string{PropPageRowLimit: "1000"}, sc, recs)
	for _, path := range []string{"id", "cat", "plain"} {
		for _, pages := range chunkPages(t, data, path) {
			for _, p := range pages {
				if p.stats {
					t.Fatalf("%s: a page header has statistics", path)
				}
			}
		}
	}
	for _, id := range []int{1, 2, 6} {
		if f.Lower[id] == nil || f.Upper[id] == nil {
			t.Errorf("field %d: no bounds in the file's metrics: %v %v", id, f.Lower, f.Upper)
		}
	}
}

// TestColumnIndexHasRealBoundsOrNone: a page index entry that claims a
// page holds values must give that page's real min and max (readers skip
// pages by them); a column whose bounds the encoder does not compute has
// no column index at all.
func TestColumnIndexHasRealBoundsOrNone(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := bloomBatches(t, false, 2, 25000)
		opts, err := OptionsFromProperties(map[string]string{PropPageRowLimit: "1000"})
		if err != nil {
			t.Fatal(err)
		}
		fs := newMemFS()
		f := writeAll(t, fs, sc, ec.opts(opts), recs)[0]
		rdr, err := file.NewParquetReader(bytes.NewReader(fs.bytes(t, f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Close()
		pir := rdr.GetPageIndexReader()
		for rg := 0; rg < rdr.NumRowGroups(); rg++ {
			rgr, err := pir.RowGroup(rg)
			if err != nil {
				t.Fatal(err)
			}
			if rgr == nil {
				continue
			}
			for c := 0; c < rdr.MetaData().Schema.NumColumns(); c++ {
				col := rdr.MetaData().Schema.Column(c)
				ci, err := rgr.GetColumnIndex(c)
				if err != nil {
					t.Fatalf("%s: %v", col.Path(), err)
				}
				if ci == nil {
					continue
				}
				mins, maxs, nulls := ci.GetMinValues(), ci.GetMaxValues(), ci.GetNullPages()
				for p := range nulls {
					if nulls[p] {
						continue
					}
					switch col.PhysicalType() {
					case pq.Types.FixedLenByteArray:
						if w := col.TypeLength(); len(mins[p]) != w || len(maxs[p]) != w {
							t.Fatalf("%s page %d: bounds of %d and %d bytes for a %d-byte type", col.Path(), p, len(mins[p]), len(maxs[p]), w)
						}
					case pq.Types.ByteArray:
					default:
						if len(mins[p]) == 0 || len(maxs[p]) == 0 {
							t.Fatalf("%s page %d: empty bounds", col.Path(), p)
						}
					}
				}
			}
		}
	})
}

// TestColumnsWithoutDictionaryUseDeltaEncodings: with the dictionary off
// (high-cardinality random data), integer columns (ints, longs, dates,
// times, timestamps, decimals up to 18 digits) are DELTA_BINARY_PACKED and
// byte arrays DELTA_LENGTH_BYTE_ARRAY, unless the delta encodings are
// switched off, when every page is PLAIN; both read back equal.
func TestColumnsWithoutDictionaryUseDeltaEncodings(t *testing.T) {
	sc, recs := encoderCase{"native", true}.batches(t, 1, 20000, 3)
	want := map[string]pq.Encoding{
		"i": pq.Encodings.DeltaBinaryPacked, "l": pq.Encodings.DeltaBinaryPacked,
		"dec9": pq.Encodings.DeltaBinaryPacked, "dec18": pq.Encodings.DeltaBinaryPacked,
		"date": pq.Encodings.DeltaBinaryPacked, "time": pq.Encodings.DeltaBinaryPacked,
		"ts": pq.Encodings.DeltaBinaryPacked, "tstz": pq.Encodings.DeltaBinaryPacked,
		"s": pq.Encodings.DeltaLengthByteArray, "bin": pq.Encodings.DeltaLengthByteArray,
		"b": pq.Encodings.Plain, "d": pq.Encodings.Plain, "dec38": pq.Encodings.Plain,
	}
	for _, delta := range []string{"true", "false"} {
		props := map[string]string{PropDeltaEncodings: delta}
		for name := range want {
			props[PropDictEnabledPrefix+name] = "false"
		}
		_, data := writeFlat(t, props, sc, recs)
		for name, enc := range want {
			if delta == "false" {
				enc = pq.Encodings.Plain
			}
			for _, pages := range chunkPages(t, data, name) {
				for _, p := range pages {
					if p.dictionary || p.encoding != enc {
						t.Errorf("delta-encodings=%s: column %s has a page %v (dictionary %v), want %v",
							delta, name, p.encoding, p.dictionary, enc)
						break
					}
				}
			}
		}
		tbl := readBack(t, data)
		for i, f := range sc.Fields() {
			if got, w := columnJSON(t, tbl.Column(i).Data().Chunks()), columnJSON(t, []arrow.Array{recs[0].Column(i)}); got != w {
				t.Errorf("delta-encodings=%s: column %s differs after read back", delta, f.Name)
			}
		}
		tbl.Release()
	}
}
