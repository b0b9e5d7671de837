package docker

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/testkit/faultproxy"
)

// TestObserveRecoversReference, without dockerd: an engine (API 1.41, as
// dockerd 20.10 answers) lists one container by its reference and four by
// image ID: one whose inspect gives its reference, two removed between the
// list and the inspect (dockerd's 404; Podman's 500 "no such container",
// which it answers when the removal comes between its lookup and its
// inspect), one created from the image ID. Observe inspects the four and
// only them, and each keeps what the engine last said.
func TestObserveRecoversReference(t *testing.T) {
	t.Parallel()
	idA, idB := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	list := `[
	 {"Id":"c-tag","Names":["/tag"],"Image":"r.example/app:1.22","ImageID":"` + idB + `","State":"running"},
	 {"Id":"c-moved","Names":["/moved"],"Image":"` + idA + `","ImageID":"` + idA + `","State":"exited"},
	 {"Id":"c-gone","Names":["/gone"],"Image":"` + idA + `","ImageID":"` + idA + `","State":"running"},
	 {"Id":"c-podgone","Names":["/podgone"],"Image":"` + idA + `","ImageID":"` + idA + `","State":"running"},
	 {"Id":"c-byid","Names":["/byid"],"Image":"` + idA + `","ImageID":"` + idA + `","State":"created"}]`
	inspect := map[string]string{
		"c-moved": `{"Id":"c-moved","Image":"` + idA + `","Config":{"Image":"r.example/app:1.22"}}`,
		"c-byid":  `{"Id":"c-byid","Image":"` + idA + `","Config":{"Image":"` + idA + `"}}`,
	}
	var mu sync.Mutex
	seen := map[string]int{}
	addr := faultproxy.Engine(t, infoOK(func(w http.ResponseWriter, r *http.Request) {
		path := versionPrefix.ReplaceAllString(r.URL.Path, "/")
		mu.Lock()
		seen[path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch cid, ok := strings.CutPrefix(path, "/containers/"); {
		case path == "/containers/json":
			io.WriteString(w, list)
		case ok && inspect[strings.TrimSuffix(cid, "/json")] != "":
			io.WriteString(w, inspect[strings.TrimSuffix(cid, "/json")])
		case cid == "c-podgone/json":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"cause":"no such container","message":"container c-podgone does not exist in database: no such container","response":500}`)
		default: // c-gone, and both images: removed
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"No such object"}`)
		}
	}))

	var calls Calls
	snap, err := Host{Name: "fake", Addr: addr, Calls: &calls}.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	want := []host.Container{
		{ID: "c-byid", Name: "byid", Image: idA, ImageID: idA, State: "created"},
		{ID: "c-gone", Name: "gone", Image: idA, ImageID: idA, State: "running"},
		{ID: "c-moved", Name: "moved", Image: "r.example/app:1.22", ImageID: idA, State: "exited"},
		{ID: "c-podgone", Name: "podgone", Image: idA, ImageID: idA, State: "running"},
		{ID: "c-tag", Name: "tag", Image: "r.example/app:1.22", ImageID: idB, State: "running"},
	}
	if d := cmp.Diff(want, snap.Containers); d != "" {
		t.Errorf("containers (-want +got):\n%s", d)
	}
	wantSeen := map[string]int{
		"/containers/json":           1,
		"/containers/c-moved/json":   1,
		"/containers/c-gone/json":    1,
		"/containers/c-byid/json":    1,
		"/containers/c-podgone/json": 1,
		"/images/" + idA + "/json":   1,
		"/images/" + idB + "/json":   1,
	}
	if d := cmp.Diff(wantSeen, seen); d != "" {
		t.Errorf("requests past /info (-want +got):\n%s", d)
	}
	if got, want := calls.Counts(), (CallCounts{Ping: 1, ContainerList: 1, ContainerInspect: 4, ImageInspect: 2}); got != want {
		t.Errorf("Calls = %+v, want %+v", got, want)
	}

	// A second Observe adds to the same Calls; a nil one counts nothing.
	if _, err := (Host{Name: "fake", Addr: addr, Calls: &calls}).Observe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := calls.Counts().ContainerInspect; got != 8 {
		t.Errorf("after two Observes, ContainerInspect = %d, want 8", got)
	}
	if got := (*Calls)(nil).Counts(); got != (CallCounts{}) {
		t.Errorf("nil Calls counts %+v", got)
	}
}
