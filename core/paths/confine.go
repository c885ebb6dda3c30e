package paths

import (
	icebergio "github.com/apache/iceberg-go/io"
)

// Confine returns fs that refuses to create or write a file outside the
// data root r (Root.Check): the last line of defence, at the point where a
// data or delete file is opened, against a path that would leave the
// table. Reads and removes pass through.
func Confine(fs icebergio.WriteFileIO, r Root) icebergio.WriteFileIO {
	return confined{WriteFileIO: fs, root: r}
}

type confined struct {
	icebergio.WriteFileIO
	root Root
}

func (c confined) Create(name string) (icebergio.FileWriter, error) {
	if err := c.root.Check(name); err != nil {
		return nil, err
	}
	return c.WriteFileIO.Create(name)
}

func (c confined) WriteFile(name string, p []byte) error {
	if err := c.root.Check(name); err != nil {
		return err
	}
	return c.WriteFileIO.WriteFile(name, p)
}
