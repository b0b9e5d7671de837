package faultproxy

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Broken Docker Engines, on unix sockets, for the host faults: each
// returns the address to give a host ("unix:///…/engine.sock") and stops
// when the test ends. Socket paths are kept short (unix socket paths are
// limited to 108 bytes), in a folder of their own under os.TempDir.

// socketPath makes a folder for one socket and returns the socket's path.
func socketPath(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pin-eng")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "engine.sock")
}

func listen(t testing.TB) (net.Listener, string) {
	t.Helper()
	p := socketPath(t)
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	return l, "unix://" + p
}

// StaleSocket is a socket file that nothing listens on, as a crashed
// engine leaves behind: connecting is refused.
func StaleSocket(t testing.TB) string {
	t.Helper()
	l, addr := listen(t)
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	return addr
}

// MissingSocket is an address whose socket does not exist.
func MissingSocket(t testing.TB) string {
	t.Helper()
	return "unix://" + socketPath(t)
}

// SilentEngine accepts connections and never answers, nor closes them.
func SilentEngine(t testing.TB) string {
	t.Helper()
	l, addr := listen(t)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return addr
}

// RawEngine answers every connection with raw bytes, whatever was asked,
// and closes it: something that is not an HTTP server at all.
func RawEngine(t testing.TB, raw []byte) string {
	t.Helper()
	l, addr := listen(t)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				c.Read(buf) // the request, or its start
				c.Write(raw)
			}()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return addr
}

// Engine serves h on a unix socket: an HTTP server that answers what a
// test wants, garbage included.
func Engine(t testing.TB, h http.Handler) string {
	t.Helper()
	l, addr := listen(t)
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return addr
}
