package testenv

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for one goroutine to write while another
// reads: the stderr of a command, or the log of a server, that a test
// watches while it runs. The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
