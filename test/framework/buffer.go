package framework

import (
	"bytes"
	"fmt"
	"sync"
)

// Buffer is a bytes.Buffer that many goroutines write while a spec reads
// it: a command's or a process's output, or a log.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Printf appends a formatted line.
func (b *Buffer) Printf(format string, args ...any) { fmt.Fprintf(b, format, args...) }

// Println appends a line of args.
func (b *Buffer) Println(args ...any) { fmt.Fprintln(b, args...) }

// Take returns what was written and empties the buffer.
func (b *Buffer) Take() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	data := bytes.Clone(b.buf.Bytes())
	b.buf.Reset()
	return data
}
