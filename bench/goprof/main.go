// Command goprof profiles the core's write path on a Parquet input without
// Python in the way: go run ./bench/goprof -in lineitem.parquet -part month:l_shipdate
//
// With -work it runs an operation on the table local.bench.lineitem of an
// existing SQLite catalog (bench/dml.py's scratch copy) instead, D1 or D2:
//
//	go run ./bench/goprof -work bench/.data/work/dml-sf1 -op overwritePartitions -in bench/.data/dml-sf1/d1-input.parquet
//	go run ./bench/goprof -work bench/.data/work/dml-sf1 -op delete -filter "<d2_condition of setup.json>"
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pyiceberg-go/pyiceberg-go/capi/czstd"
	"github.com/pyiceberg-go/pyiceberg-go/core/config"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

func main() {
	in := flag.String("in", "", "input Parquet file")
	part := flag.String("part", "", "transform:column, e.g. month:l_shipdate")
	cpu := flag.String("cpuprofile", "", "write a CPU profile here")
	heap := flag.String("heapprofile", "", "write a heap profile here, -heapafter into the write")
	heapAfter := flag.Duration("heapafter", 20*time.Second, "when to take the heap profile")
	allocs := flag.String("allocprofile", "", "write heap profiles here (.base, before the write, and the file itself after it): go tool pprof -sample_index=alloc_space -diff_base <f>.base <f> shows what the write allocated")
	work := flag.String("work", "", "run -op on local.bench.lineitem of the SQLite catalog in this directory")
	op := flag.String("op", request.OpAppend, "the operation with -work")
	filter := flag.String("filter", "", "the filter of -op delete, update or overwrite")
	traceOut := flag.String("trace", "", "write an execution trace of the operation here")
	commits := flag.Int("commits", 0, "W4: append the input's first rows in this many commits of -rows rows each (profiles cover all of them)")
	rowsPer := flag.Int("rows", 1000, "rows per commit with -commits")
	purego := flag.Bool("purego", false, "compress zstd with klauspost/compress (the core alone) instead of the C library the shared library installs (capi/czstd)")
	required := flag.Bool("required", false, "create the table with the input's required columns (use-nullable-query-schema=false, as bench/run.py's append table), not Spark's all-optional default")
	inMemory := flag.Bool("inmemory", false, "say the input stays in memory (request input_in_memory, as the Python package says for a pyarrow Table): an unpartitioned write then encodes from it in place")
	flag.Parse()
	if !*purego {
		czstd.Install()
	}
	if *commits > 0 {
		smallAppends(*in, *commits, *rowsPer, *cpu)
		return
	}
	if *work != "" {
		runOn(*work, *op, *filter, *in, *cpu, *traceOut)
		return
	}

	tbl := readTable(*in)
	fmt.Println("rows", tbl.NumRows())

	dir, _ := os.MkdirTemp("", "goprof")
	defer os.RemoveAll(dir)
	cat := map[string]string{"type": "sql", "uri": "sqlite:///" + filepath.Join(dir, "c.db"), "warehouse": "file://" + filepath.Join(dir, "wh")}
	if *required {
		cat["use-nullable-query-schema"] = "false"
	}
	s, err := session.Open(config.Session{Catalogs: map[string]map[string]string{"local": cat}})
	if err != nil {
		log.Fatal(err)
	}
	req := &request.Request{Op: request.OpCreate, Table: "local.b.t", InputInMemory: *inMemory}
	if *part != "" {
		tr, col, _ := strings.Cut(*part, ":")
		req.PartitionBy = []request.PartitionField{{Transform: tr, Column: col}}
	}
	if *cpu != "" {
		pf, _ := os.Create(*cpu)
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	if *heap != "" {
		go func() {
			time.Sleep(*heapAfter)
			// The profile shows the heap as of the last collection.
			runtime.GC()
			hf, _ := os.Create(*heap)
			pprof.WriteHeapProfile(hf)
			hf.Close()
		}()
	}
	writeHeap := func(path string) {
		hf, err := os.Create(path)
		if err != nil {
			log.Fatal(err)
		}
		runtime.GC() // the profile holds what the last collection published
		pprof.Lookup("allocs").WriteTo(hf, 0)
		hf.Close()
	}
	if *allocs != "" {
		writeHeap(*allocs + ".base")
	}
	var input array.RecordReader = array.NewTableReader(tbl, 128<<10)
	if *traceOut != "" {
		tf, _ := os.Create(*traceOut)
		trace.Start(tf)
		defer trace.Stop()
	}
	start := time.Now()
	u0 := usage()
	res, err := ops.Execute(context.Background(), s, req, input, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(usage().since(u0))
	if *allocs != "" {
		writeHeap(*allocs)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("%.2fs %+v heap-sys %d MB total-alloc %d MB\n", time.Since(start).Seconds(), res.(*ops.Result).Metrics, ms.HeapSys>>20, ms.TotalAlloc>>20)
	_ = arrow.PrimitiveTypes
}

// readTable reads a Parquet file into memory.
func readTable(path string) arrow.Table {
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		log.Fatal(err)
	}
	rdr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: 128 << 10}, memory.DefaultAllocator)
	if err != nil {
		log.Fatal(err)
	}
	tbl, err := rdr.ReadTable(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	return tbl
}

// runOn runs op on the benchmark table of the catalog in dir, profiled or
// traced, as bench/dml.py's child does: the catalog is opened first.
func runOn(dir, op, filter, in, cpu, traceOut string) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		log.Fatal(err)
	}
	s, err := session.Open(config.Session{Catalogs: map[string]map[string]string{"local": {
		"type": "sql", "uri": "sqlite:///" + filepath.Join(dir, "catalog.db"), "warehouse": "file://" + filepath.Join(dir, "wh")}}})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	const ident = "local.bench.lineitem"
	if _, err := ops.Execute(ctx, s, &request.Request{Op: request.OpSnapshots, Table: ident}, nil, nil); err != nil {
		log.Fatal(err)
	}
	var input array.RecordReader
	if in != "" {
		input = array.NewTableReader(readTable(in), 128<<10)
	}
	if cpu != "" {
		pf, _ := os.Create(cpu)
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	if traceOut != "" {
		tf, _ := os.Create(traceOut)
		trace.Start(tf)
		defer trace.Stop()
	}
	start := time.Now()
	u0 := usage()
	res, err := ops.Execute(ctx, s, &request.Request{Op: op, Table: ident, Filter: filter}, input, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(usage().since(u0))
	fmt.Printf("%s %.3fs %+v\n", op, time.Since(start).Seconds(), res.(*ops.Result).Metrics)
}

// rusage is the process's CPU time and page faults so far.
type rusage syscall.Rusage

func usage() rusage {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return rusage(u)
}

// since formats the user and system CPU and the page faults between u0 and u.
func (u rusage) since(u0 rusage) string {
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return fmt.Sprintf("user %.2fs sys %.2fs minor faults %d", sec(u.Utime)-sec(u0.Utime), sec(u.Stime)-sec(u0.Stime), u.Minflt-u0.Minflt)
}

// smallAppends is W4 in the core alone: an empty table, then commits
// appends of rowsPer rows each, with the latency of every tenth printed.
func smallAppends(in string, commits, rowsPer int, cpu string) {
	tbl := readTable(in)
	dir, _ := os.MkdirTemp("", "goprof")
	defer os.RemoveAll(dir)
	s, err := session.Open(config.Session{Catalogs: map[string]map[string]string{"local": {
		"type": "sql", "uri": "sqlite:///" + filepath.Join(dir, "c.db"), "warehouse": "file://" + filepath.Join(dir, "wh"),
		"use-nullable-query-schema": "false"}}})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	slice := func(off, n int64) array.RecordReader {
		cols := make([]arrow.Column, tbl.NumCols())
		for i := range cols {
			cols[i] = *array.NewColumnSlice(tbl.Column(i), off, off+n)
		}
		return array.NewTableReader(array.NewTable(tbl.Schema(), cols, n), n+1)
	}
	if _, err := ops.Execute(ctx, s, &request.Request{Op: request.OpCreate, Table: "local.b.t"}, slice(0, 0), nil); err != nil {
		log.Fatal(err)
	}
	if cpu != "" {
		pf, _ := os.Create(cpu)
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	u0 := usage()
	lat := make([]time.Duration, commits)
	for i := range commits {
		start := time.Now()
		if _, err := ops.Execute(ctx, s, &request.Request{Op: request.OpAppend, Table: "local.b.t"}, slice(int64(i*rowsPer), int64(rowsPer)), nil); err != nil {
			log.Fatal(err)
		}
		lat[i] = time.Since(start)
		if i%(max(1, commits/10)) == 0 || i == commits-1 {
			fmt.Printf("commit %d: %.1f ms\n", i, lat[i].Seconds()*1000)
		}
	}
	fmt.Println(usage().since(u0))
	slices.Sort(lat)
	fmt.Printf("p50 %.1f ms, p95 %.1f ms\n", lat[commits/2].Seconds()*1000, lat[commits*95/100].Seconds()*1000)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("live heap after the commits: %d MB (the input: %d MB)\n", ms.HeapAlloc>>20, tableBytes(tbl)>>20)
}

// tableBytes is the size of tbl's buffers.
func tableBytes(tbl arrow.Table) uint64 {
	var n uint64
	for i := range int(tbl.NumCols()) {
		for _, c := range tbl.Column(i).Data().Chunks() {
			for _, b := range c.Data().Buffers() {
				if b != nil {
					n += uint64(b.Len())
				}
			}
		}
	}
	return n
}
