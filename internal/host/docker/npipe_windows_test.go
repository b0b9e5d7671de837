//go:build windows

package docker

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/go-winio"
)

// TestNamedPipeDialer: for an npipe:// endpoint the Moby client's
// transport, the one pin owns, dials the named pipe: Observe reads a stub
// engine served on a pipe of the test's own, as Docker Desktop serves
// its engine.
func TestNamedPipeDialer(t *testing.T) {
	name := fmt.Sprintf(`\\.\pipe\pin-test-%d`, time.Now().UnixNano())
	l, err := winio.ListenPipe(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.45")
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/_ping"):
			io.WriteString(w, "OK")
		case strings.HasSuffix(r.URL.Path, "/info"):
			io.WriteString(w, `{"ID":"desktop","Driver":"windowsfilter"}`)
		case strings.HasSuffix(r.URL.Path, "/containers/json"):
			io.WriteString(w, `[{"Id":"c1","Names":["/forgejo"],"Image":"registry.example.org/forge/forgejo:1.27.3","ImageID":"sha256:`+strings.Repeat("a", 64)+`","State":"running"}]`)
		case strings.Contains(r.URL.Path, "/images/"):
			io.WriteString(w, `{"Id":"sha256:`+strings.Repeat("a", 64)+`","RepoDigests":["registry.example.org/forge/forgejo@sha256:`+strings.Repeat("b", 64)+`"],"Os":"windows","Architecture":"amd64"}`)
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })

	addr := "npipe://" + strings.ReplaceAll(name, `\`, "/")
	e, err := Host{Name: "desktop", Addr: addr}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	_, tr, err := Host{Name: "desktop", Addr: addr}.client(e, time.Second)
	if err != nil || tr.DialContext == nil {
		t.Fatalf("client for %s: dialer set %v, %v", addr, tr != nil && tr.DialContext != nil, err)
	}
	snap, err := Host{Name: "desktop", Addr: addr}.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe over %s: %v", addr, err)
	}
	if len(snap.Containers) != 1 || snap.Containers[0].Name != "forgejo" || snap.Containers[0].Image != "registry.example.org/forge/forgejo:1.27.3" {
		t.Errorf("snapshot: %+v", snap.Containers)
	}
}
