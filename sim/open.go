package sim

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// openTrace opens a trace file, decompressing it when it is gzip (detected by
// its magic bytes, not its name).
func openTrace(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("opening trace: %w", err)
	}
	br := bufio.NewReaderSize(f, 1<<16)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: looks gzip-compressed but is not readable as gzip: %w", path, err)
		}
		return zr, func() error { zr.Close(); return f.Close() }, nil
	}
	return br, f.Close, nil
}
