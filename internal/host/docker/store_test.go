package docker

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/testkit/faultproxy"
)

// TestObserveContainerdStore: Debian's dockerd (20.10) cannot run the
// containerd image store (Docker Engine 24 and later, the
// "containerd-snapshotter" feature), so the detection is shown on a stub
// engine answering /info as such an engine does: DriverStatus holds
// ["driver-type", "io.containerd.snapshotter.v1"].
func TestObserveContainerdStore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status, want string
	}{
		{`[["driver-type","io.containerd.snapshotter.v1"]]`, "containerd"},
		{`[["Backing Filesystem","extfs"]]`, "classic"},
	} {
		addr := faultproxy.Engine(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Api-Version", "1.45")
			w.Header().Set("Content-Type", "application/json")
			switch {
			case strings.HasSuffix(r.URL.Path, "/_ping"):
				io.WriteString(w, "OK")
			case strings.HasSuffix(r.URL.Path, "/info"):
				io.WriteString(w, `{"ID":"stub","Driver":"overlayfs","DriverStatus":`+tc.status+`}`)
			case strings.HasSuffix(r.URL.Path, "/containers/json"):
				io.WriteString(w, `[]`)
			default:
				http.NotFound(w, r)
			}
		}))
		snap, err := Host{Name: "stub", Addr: addr}.Observe(context.Background())
		if err != nil {
			t.Fatalf("Observe: %v", err)
		}
		if snap.ImageStore != tc.want {
			t.Errorf("DriverStatus %s: image store %q, want %q", tc.status, snap.ImageStore, tc.want)
		}
	}
}
