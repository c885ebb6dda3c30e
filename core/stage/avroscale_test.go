package stage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
)

// fakeAvro is an Avro container header with these metadata entries, a sync
// marker and some block bytes after it.
func fakeAvro(entries [][2]string, tail string) []byte {
	var b bytes.Buffer
	b.WriteString("Obj\x01")
	put := func(v int64) { b.Write(binary.AppendVarint(nil, v)) }
	put(int64(len(entries)))
	for _, e := range entries {
		put(int64(len(e[0])))
		b.WriteString(e[0])
		put(int64(len(e[1])))
		b.WriteString(e[1])
	}
	put(0)
	b.WriteString("0123456789abcdef")
	b.WriteString(tail)
	return b.Bytes()
}

type memWriter struct{ bytes.Buffer }

func (m *memWriter) Close() error { return nil }

// Found by tests/py/test_model.py: a decimal(P,0) partition field's Avro
// type had no "scale", which PyIceberg 0.12 cannot read and DuckDB crashes on.
func TestScaleWriterAddsZeroScalesAtTheSameLength(t *testing.T) {
	schema := `{"fields":[{"doc":"Content type","field-id":134,"name":"content","type":"int"},` +
		`{"field-id":102,"name":"partition","type":{"fields":[` +
		`{"field-id":1000,"name":"d","type":["null",{"logicalType":"decimal","name":"fixed","precision":10,"size":5,"type":"fixed"}]},` +
		`{"field-id":1001,"name":"e","type":["null",{"logicalType":"decimal","name":"fixed2","precision":9,"scale":2,"size":4,"type":"fixed"}]}` +
		`],"name":"r102","type":"record"}}],"name":"manifest_entry","type":"record"}`
	in := fakeAvro([][2]string{{"avro.schema", schema}, {"avro.codec", "deflate"}}, "BLOCKS<>&")
	for _, chunk := range []int{1, 7, 64, len(in)} {
		var out memWriter
		w := &scaleWriter{FileWriter: &out}
		for off := 0; off < len(in); off += chunk {
			if _, err := w.Write(in[off:min(off+chunk, len(in))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got := out.Bytes()
		if len(got) != len(in) {
			t.Fatalf("chunk %d: %d bytes, want %d", chunk, len(got), len(in))
		}
		n, ok := avroHeaderLen(got)
		if !ok || string(got[n:]) != "BLOCKS<>&" || string(got[n-16:n]) != "0123456789abcdef" {
			t.Fatalf("chunk %d: header %d %v, tail %q", chunk, n, ok, got[n:])
		}
		i := bytes.Index(got, []byte(`{"fields"`))
		var tree map[string]any
		dec := json.NewDecoder(bytes.NewReader(got[i : i+len(schema)]))
		if err := dec.Decode(&tree); err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		js := string(got[i : i+len(schema)])
		if strings.Count(js, `"scale":0`) != 1 || strings.Count(js, `"scale":2`) != 1 || strings.Contains(js, `"doc"`) {
			t.Errorf("chunk %d: schema %s", chunk, js)
		}
	}
	// Nothing to patch, no doc to give, or not Avro: unchanged.
	for _, in := range [][]byte{
		fakeAvro([][2]string{{"avro.schema", `{"name":"x","type":"fixed","size":5,"logicalType":"decimal","precision":10,"scale":0}`}}, "t"),
		fakeAvro([][2]string{{"avro.schema", `{"logicalType":"decimal","name":"fixed","precision":10,"size":5,"type":"fixed"}`}}, "t"),
		[]byte("PAR1 not avro"),
	} {
		var out memWriter
		w := &scaleWriter{FileWriter: &out}
		if _, err := w.Write(in); err != nil {
			t.Fatal(err)
		}
		_ = w.Close()
		if !bytes.Equal(out.Bytes(), in) {
			t.Errorf("changed %q into %q", in, out.Bytes())
		}
	}
}
