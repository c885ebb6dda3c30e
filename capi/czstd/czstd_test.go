package czstd

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	kzstd "github.com/klauspost/compress/zstd"
)

// The C compressor's frames decode with klauspost/compress (the decoder
// arrow-go, PyIceberg's pyarrow and Spark's zstd-jni all agree with), from
// many goroutines at once, for empty, incompressible and text pages; dst's
// capacity is reused; and the level is honoured (19 is smaller than 1).
func TestZstdCompressorFramesDecodeAndHonourTheLevel(t *testing.T) {
	dec, err := kzstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var text bytes.Buffer
	for i := range 20000 {
		fmt.Fprintf(&text, "carefully regular deposits %d haggle furiously; ", i%977)
	}
	noise := make([]byte, 300_000)
	for i := range noise {
		noise[i] = byte(i*7919 + i*i*31)
	}
	pages := [][]byte{nil, noise, text.Bytes()}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(pages))
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst []byte
			for _, p := range pages {
				var err error
				dst, err = Compress(dst[:0], p, 1)
				if err != nil {
					errs <- err
					return
				}
				got, err := dec.DecodeAll(dst, nil)
				if err != nil || !bytes.Equal(got, p) {
					errs <- fmt.Errorf("page of %d bytes: round trip failed: %v", len(p), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fast, err := Compress(nil, text.Bytes(), 1)
	if err != nil {
		t.Fatal(err)
	}
	small, err := Compress(make([]byte, 0, 1<<20), text.Bytes(), 19)
	if err != nil {
		t.Fatal(err)
	}
	if len(small) >= len(fast) {
		t.Errorf("level 19 gave %d bytes, level 1 %d: the level is not passed on", len(small), len(fast))
	}
	if cap(small) != 1<<20 {
		t.Errorf("dst's capacity was not reused")
	}
}

// After Install, arrow-go's zstd codec is the C library's: it decodes its
// own frames and klauspost's, falls back to klauspost for what the C
// library rejects without panicking, and the flat encoders compress
// through Compress.
func TestInstallReplacesArrowsCodec(t *testing.T) {
	Install()
	Install() // idempotent: does not wrap itself
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	ac, ok := c.(arrowCodec)
	if !ok {
		t.Fatalf("codec %T, want the C library's", c)
	}
	if _, twice := ac.Codec.(arrowCodec); twice {
		t.Fatal("Install wrapped its own codec")
	}
	page := bytes.Repeat([]byte("final packages sleep blithely "), 5000)
	enc := c.EncodeLevel(make([]byte, 0, c.CompressBound(int64(len(page)))), page, 1)
	kenc, err := kzstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, frame := range map[string][]byte{"C": enc, "klauspost": kenc.EncodeAll(page, nil)} {
		got, err := compress.Decode(c, make([]byte, len(page)), frame)
		if err != nil || !bytes.Equal(got, page) {
			t.Errorf("%s frame: decoded %d bytes, err %v", name, len(got), err)
		}
	}
	if _, err := compress.Decode(c, make([]byte, 10), []byte("not zstd at all")); err == nil {
		t.Error("garbage decoded without an error")
	}
}

// Frames without a content size (a streaming writer's, as Spark writes)
// decode into the memory of dst when it has room, as arrow-go's V2 page
// reader needs, and into new memory when it has not.
func TestDecompressWritesIntoDstsMemory(t *testing.T) {
	page := bytes.Repeat([]byte("ironic requests nag quickly "), 4000)
	var frame bytes.Buffer
	w, err := kzstd.NewWriter(&frame)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(page); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(page))
	got, err := Decompress(buf, frame.Bytes())
	if err != nil || !bytes.Equal(got, page) {
		t.Fatalf("decoded %d bytes, err %v", len(got), err)
	}
	if &got[0] != &buf[0] {
		t.Error("decoded into new memory although dst had room")
	}
	small, err := Decompress(make([]byte, 10), frame.Bytes())
	if err != nil || !bytes.Equal(small, page) {
		t.Fatalf("into a small dst: %d bytes, err %v", len(small), err)
	}
	if _, err := Decompress(buf, nil); err == nil {
		t.Error("an empty page decoded without an error")
	}
}
