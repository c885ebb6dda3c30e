package gotests

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/scan"
)

// viewSource is rows first..first+n-1 with their names as a string view
// column whose values lie in several data buffers (as polars hands them
// over), and a list of such strings.
func viewSource(t testing.TB, first, n int64) array.RecordReader {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.StringView, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	names := b.Field(1).(*array.StringViewBuilder)
	names.SetBlockSize(64)
	for id := first; id < first+n; id++ {
		b.Field(0).(*array.Int64Builder).Append(id)
		names.Append(fmt.Sprintf("a name long enough not to be inlined %d", id))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if nb := len(rec.Column(1).Data().Buffers()); nb < 4 {
		t.Fatalf("the view column has %d buffers, want several data buffers", nb)
	}
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	return rdr
}

// A merge source whose strings come as views in several data buffers:
// the rows it takes from the source are gathered without arrow-go's
// compute kernels, whose spans hold at most three buffers (they panicked
// on a goroutine of their own, which ended the process).
func TestMergeSourceWithViewColumns(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t"}, rowsReader(t, 0, 20, 1))
	merge := &request.Merge{On: "source.id = target.id", Clauses: []request.MergeClause{
		{When: request.WhenMatched, Action: request.ActionUpdate, Set: map[string]string{"name": "source.name"}},
		{When: request.WhenNotMatched, Action: request.ActionInsert, Set: map[string]string{"id": "source.id", "name": "source.name"}},
	}}
	r := mustWrite(t, s, request.Request{Op: request.OpMerge, Table: "db.t", Merge: merge}, viewSource(t, 10, 20))
	if r.Summary["total-records"] != "30" {
		t.Fatalf("summary %v", r.Summary)
	}
	rows := readRows(t, s, "db.t", nil)
	for _, rw := range rows {
		if rw.ID >= 10 && (rw.Name == nil || *rw.Name != fmt.Sprintf("a name long enough not to be inlined %d", rw.ID)) {
			t.Fatalf("row %d: name %v", rw.ID, rw.Name)
		}
	}
}

func TestMergeSourceWithListOfViews(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "tags", Type: arrow.LargeListOf(arrow.BinaryTypes.StringView), Nullable: true},
	}, nil)
	mk := func(first, n int64) array.RecordReader {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		lb := b.Field(1).(*array.LargeListBuilder)
		vb := lb.ValueBuilder().(*array.StringViewBuilder)
		vb.SetBlockSize(64)
		for id := first; id < first+n; id++ {
			b.Field(0).(*array.Int64Builder).Append(id)
			lb.Append(true)
			vb.Append(fmt.Sprintf("a tag long enough not to be inlined %d", id))
			vb.Append(fmt.Sprintf("another tag long enough not to be inlined %d", id))
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		return rdr
	}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t"}, mk(0, 20))
	merge := &request.Merge{On: "source.id = target.id", Clauses: []request.MergeClause{
		{When: request.WhenMatched, Action: request.ActionUpdateAll},
		{When: request.WhenNotMatched, Action: request.ActionInsertAll},
	}}
	r := mustWrite(t, s, request.Request{Op: request.OpMerge, Table: "db.t", Merge: merge}, mk(10, 20))
	if r.Summary["total-records"] != "30" {
		t.Fatalf("summary %v", r.Summary)
	}
}

// Arrow lets a null list slot span elements, and a fixed-size list's null
// slot always does (an embedding column with a missing row); the Parquet
// writer refused them ("lists with non-zero length null components"). The
// conformer leaves those elements out.
func TestNullListSlotsWithElements(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mem := memory.DefaultAllocator
	fsl := array.NewFixedSizeListBuilder(mem, 2, arrow.PrimitiveTypes.Float32)
	defer fsl.Release()
	lst := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
	defer lst.Release()
	ids := array.NewInt64Builder(mem)
	defer ids.Release()
	for i := range 6 {
		ids.Append(int64(i))
		fsl.Append(i%3 != 1)
		fsl.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(i), -float32(i)}, nil)
		lst.Append(true)
		lst.ValueBuilder().(*array.Int64Builder).AppendValues([]int64{int64(i), int64(10 * i)}, nil)
	}
	lists := lst.NewListArray()
	defer lists.Release()
	// Null slots 1 and 4 of the list, keeping their two elements.
	valid := []byte{0b101101}
	ld := array.NewData(lists.DataType(), 6, []*memory.Buffer{memory.NewBufferBytes(valid), lists.Data().Buffers()[1]},
		lists.Data().Children(), 2, 0)
	defer ld.Release()
	la := array.MakeFromData(ld)
	defer la.Release()
	fa, ia := fsl.NewArray(), ids.NewArray()
	defer fa.Release()
	defer ia.Release()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "emb", Type: fa.DataType(), Nullable: true},
		{Name: "l", Type: la.DataType(), Nullable: true},
	}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{ia, fa, la}, 6)
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t"}, rdr)
	rdr2, err := scan.Read(ctxT(t), s, &request.Request{Op: request.OpScan, Table: "db.t"}, memory.DefaultAllocator, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr2.Release()
	var got []string
	for rdr2.Next() {
		rec := rdr2.RecordBatch()
		for i := range int(rec.NumRows()) {
			got = append(got, fmt.Sprintf("%s %s %s", rec.Column(0).ValueStr(i), rec.Column(1).ValueStr(i), rec.Column(2).ValueStr(i)))
		}
	}
	if err := rdr2.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"0 [0,-0] [0,0]", "1 (null) (null)", "2 [2,-2] [2,20]", "3 [3,-3] [3,30]", "4 (null) (null)", "5 [5,-5] [5,50]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read back %q\nwant %q", got, want)
	}
}
