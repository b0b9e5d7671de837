package docker

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
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

// TestObserveStoreWithoutInfo: /info is asked only where the ping cannot
// say the image store. Each stub engine's /info names the containerd
// store, so a store read from it where it should not be asked shows, and
// so does a count. Oracle: the Engine API's version history (v1.48: the
// Descriptor and ImageManifestDescriptor fields, set only by the
// containerd store) and the engines' ages (no containerd store before API
// 1.42).
func TestObserveStoreWithoutInfo(t *testing.T) {
	const (
		id   = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
		desc = `{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"` + id + `","size":1}`
	)
	for _, tc := range []struct {
		name       string
		api, fixed string // the engine's newest API; DOCKER_API_VERSION
		list       string // the container list's one entry's extra fields
		inspect    string // the image inspect's extra fields; "" answers 404
		want       string
		info       int
	}{
		{name: "1.41: an engine older than the containerd store", api: "1.41", inspect: `,"RepoDigests":[]`, want: "classic"},
		{name: "1.45: /info says", api: "1.45", inspect: `,"RepoDigests":[]`, want: "containerd", info: 1},
		{name: "1.48: the inspect's descriptor", api: "1.48", inspect: `,"Descriptor":` + desc, want: "containerd"},
		{name: "1.48: no descriptor anywhere", api: "1.48", inspect: `,"RepoDigests":[]`, want: "classic"},
		{name: "1.51: the list's descriptor, the image gone", api: "1.51", list: `,"ImageManifestDescriptor":` + desc, want: "containerd"},
		{name: "1.51 spoken at 1.41 (DOCKER_API_VERSION): /info says", api: "1.51", fixed: "1.41", inspect: `,"RepoDigests":[]`, want: "containerd", info: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("DOCKER_API_VERSION", tc.fixed)
			if tc.fixed == "" {
				os.Unsetenv("DOCKER_API_VERSION")
			}
			var infos atomic.Int32
			addr := faultproxy.Engine(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Api-Version", tc.api)
				w.Header().Set("Content-Type", "application/json")
				switch p := r.URL.Path; {
				case strings.HasSuffix(p, "/_ping"):
					io.WriteString(w, "OK")
				case strings.HasSuffix(p, "/info"):
					infos.Add(1)
					io.WriteString(w, `{"ID":"stub","Driver":"overlayfs","DriverStatus":[["driver-type","io.containerd.snapshotter.v1"]]}`)
				case strings.HasSuffix(p, "/containers/json"):
					io.WriteString(w, `[{"Id":"c1","Names":["/app"],"Image":"r.example/app:1","ImageID":"`+id+`","State":"running"`+tc.list+`}]`)
				case strings.HasSuffix(p, "/images/"+id+"/json") && tc.inspect != "":
					io.WriteString(w, `{"Id":"`+id+`","RepoTags":["r.example/app:1"]`+tc.inspect+`}`)
				default:
					w.WriteHeader(http.StatusNotFound)
					io.WriteString(w, `{"message":"no such image"}`)
				}
			}))
			var calls Calls
			snap, err := Host{Name: "stub", Addr: addr, Calls: &calls}.Observe(context.Background())
			if err != nil {
				t.Fatalf("Observe: %v", err)
			}
			if snap.ImageStore != tc.want {
				t.Errorf("image store %q, want %q", snap.ImageStore, tc.want)
			}
			if n := int(infos.Load()); n != tc.info || calls.Counts().Info != tc.info {
				t.Errorf("/info asked %d times (counted %d), want %d", n, calls.Counts().Info, tc.info)
			}
		})
	}
}
