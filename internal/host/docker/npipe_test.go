package docker

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/docker/docker/client"
)

// pipe is Docker Desktop's engine on Windows.
const pipe = "npipe:////./pipe/docker_engine"

// TestNamedPipeEndpoint: an npipe:// address is found as the Docker CLI
// finds it (the host's address, DOCKER_HOST, a context), with no TLS;
// on Windows it is the endpoint, elsewhere it is refused with ErrNamedPipe
// before any connection, saying what to use instead.
func TestNamedPipeEndpoint(t *testing.T) {
	cfg := t.TempDir()
	writeContext(t, cfg, "desktop-windows", pipe, nil)
	for _, tc := range []struct {
		name string
		h    Host
		env  map[string]string
	}{
		{"the host's address", Host{Name: "win", Addr: pipe}, nil},
		{"DOCKER_HOST", Host{Name: "win"}, map[string]string{client.EnvOverrideHost: pipe, envConfig: cfg}},
		{"a context", Host{Name: "win", Context: "desktop-windows"}, map[string]string{envConfig: cfg}},
		{"DOCKER_CONTEXT", Host{Name: "win"}, map[string]string{envContext: "desktop-windows", envConfig: cfg}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(client.EnvOverrideHost, "")
			t.Setenv(envContext, "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			e, err := tc.h.find()
			if err != nil || e.addr != pipe || e.tls != nil {
				t.Fatalf("find: %+v, %v", e, err)
			}
			e, err = tc.h.resolve()
			if runtime.GOOS == "windows" {
				if err != nil || e.addr != pipe {
					t.Fatalf("resolve on Windows: %+v, %v", e, err)
				}
				return
			}
			if !errors.Is(err, ErrNamedPipe) || !strings.Contains(err.Error(), "give the engine a tcp:// (with TLS) or ssh:// address") {
				t.Fatalf("resolve outside Windows: %v", err)
			}
			_, err = tc.h.Observe(context.Background())
			if !errors.Is(err, ErrNamedPipe) || !strings.Contains(err.Error(), "host win (") || !strings.Contains(err.Error(), pipe+"): configuring the client") {
				t.Errorf("Observe outside Windows: %v", err)
			}
		})
	}
}
