package docker

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestObserve runs containers on the real engine and reads them back: a
// running one and a stopped one from a pulled image, and a created one from
// a loaded image.
func TestObserve(t *testing.T) {
	t.Parallel()
	reg := testenv.Registry(t)
	cli, addr := engine(t)
	id := unique(t)

	created := time.Date(2026, 9, 17, 8, 30, 0, 0, time.UTC)
	labels := map[string]string{"org.opencontainers.image.version": "1.27.3", "org.pin-tool.test": id}
	img := sleeper(t, created, labels)
	ref := reg + "/docker/" + id + ":1.27.3"
	dig := testimage.Push(t, ref, img)
	pull(t, cli, ref)
	web := run(t, cli, id+"-web", ref, map[string]string{"pin.module": id + "-web"}, true) // unique: other tests share the engine
	old := run(t, cli, id+"-old", ref, nil, true)
	if err := cli.ContainerStop(context.Background(), old, container.StopOptions{}); err != nil {
		t.Fatalf("stopping %s: %v", old, err)
	}

	limg := sleeper(t, time.Time{}, map[string]string{"org.pin-tool.test": id + "-loaded"})
	lref := "pin.test/loaded/" + id + ":v1"
	load(t, cli, lref, limg)
	loaded := run(t, cli, id+"-loaded", lref, nil, false)

	snap, err := Host{Name: "mesh-test", Addr: addr}.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	if snap.Host != "mesh-test" || snap.Schema != host.SnapshotSchema || snap.ImageStore != "classic" {
		t.Errorf("snapshot host, schema, store = %q, %d, %q; want mesh-test, %d, classic", snap.Host, snap.Schema, snap.ImageStore, host.SnapshotSchema)
	}

	imgID := configDigest(t, img)
	limgID := configDigest(t, limg)
	// A container's labels are its image's, and its own on top.
	webLabels := maps.Clone(labels)
	webLabels["pin.module"] = id + "-web"
	want := []host.Container{
		{ID: web, Name: id + "-web", Image: ref, ImageID: imgID, State: "running", Labels: webLabels},
		{ID: old, Name: id + "-old", Image: ref, ImageID: imgID, State: "exited", Labels: labels},
		{ID: loaded, Name: id + "-loaded", Image: lref, ImageID: limgID, State: "created", Labels: map[string]string{"org.pin-tool.test": id + "-loaded"}},
	}
	for _, w := range want {
		got, ok := findContainer(snap, w.Name)
		if !ok {
			t.Errorf("container %s not observed", w.Name)
			continue
		}
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("container %s (-want +got):\n%s", w.Name, d)
		}
	}

	got, ok := snap.Image(imgID)
	if !ok {
		t.Fatalf("image %s not observed; images: %+v", imgID, snap.Images)
	}
	if !slices.Contains(got.RepoDigests, dig.String()) {
		t.Errorf("RepoDigests = %v, want to contain %s", got.RepoDigests, dig)
	}
	if !slices.Contains(got.RepoTags, ref) {
		t.Errorf("RepoTags = %v, want to contain %s", got.RepoTags, ref)
	}
	if !got.Created.Equal(created) || got.Created.Location() != time.UTC {
		t.Errorf("Created = %v, want %v in UTC", got.Created, created)
	}
	if d := cmp.Diff(labels, got.Labels); d != "" {
		t.Errorf("image labels (-want +got):\n%s", d)
	}
	if p := got.Platform(); p != "linux/"+runtime.GOARCH {
		t.Errorf("Platform = %q, want linux/%s", p, runtime.GOARCH)
	}

	lgot, ok := snap.Image(limgID)
	if !ok {
		t.Fatalf("loaded image %s not observed", limgID)
	}
	if len(lgot.RepoDigests) != 0 {
		t.Errorf("loaded image RepoDigests = %v, want none (it was never pulled)", lgot.RepoDigests)
	}
	if !slices.Equal(lgot.RepoTags, []string{lref}) {
		t.Errorf("loaded image RepoTags = %v, want [%s]", lgot.RepoTags, lref)
	}
}

// TestObserveRemovedImage: a container whose image was removed is still
// reported, with the reference it was created from, and without an image.
func TestObserveRemovedImage(t *testing.T) {
	t.Parallel()
	cli, addr := engine(t)
	id := unique(t)
	img := sleeper(t, time.Time{}, map[string]string{"org.pin-tool.test": id})
	imgID := configDigest(t, img)
	ref := "pin.test/removed/" + id + ":v1"
	load(t, cli, ref, img)
	ctr := run(t, cli, id, ref, nil, false)
	// -f removes an image that only stopped or created containers use.
	if _, err := cli.ImageRemove(context.Background(), imgID, image.RemoveOptions{Force: true}); err != nil {
		t.Fatalf("removing %s: %v", imgID, err)
	}

	var rt countingTransport
	snap, err := Host{Name: "mesh-test", Addr: addr, wrap: rt.wrap}.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	got, ok := findContainer(snap, id)
	if !ok {
		t.Fatalf("container %s not observed", id)
	}
	if got.ID != ctr || got.ImageID != imgID || got.State != "created" {
		t.Errorf("container = %+v, want ID %s, image ID %s, state created", got, ctr, imgID)
	}
	// With no image left, the engine's list names it by ID; one inspect
	// of the container recovers the reference.
	if listed := rt.listed(t)[ctr]; listed.Image != imgID {
		t.Errorf("the engine listed the container's Image as %q, want the image ID %s", listed.Image, imgID)
	}
	if got.Image != ref {
		t.Errorf("container Image = %q, want %s", got.Image, ref)
	}
	if n := rt.counts()["GET /containers/"+ctr+"/json"]; n != 1 {
		t.Errorf("the container was inspected %d times, want 1", n)
	}
	if _, ok := snap.Image(imgID); ok {
		t.Errorf("removed image %s observed", imgID)
	}
}

// TestObserveMovedTag: a container whose tag was pushed again and pulled
// since it was created still reports the tag, recovered by one inspect of
// that container and of no other; and its image ID stays the old image's.
func TestObserveMovedTag(t *testing.T) {
	t.Parallel()
	reg := testenv.Registry(t)
	cli, addr := engine(t)
	id := unique(t)
	ref := reg + "/moved/" + id + "/app:1.22"
	a := sleeper(t, time.Time{}, map[string]string{"org.opencontainers.image.version": "1.22.5", "org.pin-tool.test": id + "-a"})
	b := sleeper(t, time.Time{}, map[string]string{"org.opencontainers.image.version": "1.22.6", "org.pin-tool.test": id + "-b"})
	aID, bID := configDigest(t, a), configDigest(t, b)

	testimage.Push(t, ref, a)
	pull(t, cli, ref)
	old := run(t, cli, id+"-old", ref, nil, true)
	testimage.Push(t, ref, b)
	pull(t, cli, ref)
	current := run(t, cli, id+"-new", ref, nil, true)

	var rt countingTransport
	var calls Calls
	snap, err := Host{Name: "mesh-test", Addr: addr, Calls: &calls, wrap: rt.wrap}.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}

	// The engine's behaviour that makes the inspect needed.
	listed := rt.listed(t)
	if l := listed[old]; l.Image != aID || l.ImageID != aID {
		t.Errorf("the engine listed the old container as Image %q, ImageID %q; want image A's ID %s for both", l.Image, l.ImageID, aID)
	}
	if l := listed[current]; l.Image != ref || l.ImageID != bID {
		t.Errorf("the engine listed the new container as Image %q, ImageID %q; want %s, %s", l.Image, l.ImageID, ref, bID)
	}

	for _, w := range []host.Container{
		{ID: old, Name: id + "-old", Image: ref, ImageID: aID, State: host.StateRunning},
		{ID: current, Name: id + "-new", Image: ref, ImageID: bID, State: host.StateRunning},
	} {
		got, ok := findContainer(snap, w.Name)
		if !ok {
			t.Errorf("container %s not observed", w.Name)
			continue
		}
		got.Labels = nil
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("container %s (-want +got):\n%s", w.Name, d)
		}
	}
	if _, ok := snap.Image(aID); !ok {
		t.Errorf("image A %s, which the old container runs untagged, is not observed", aID)
	}

	// One inspect per container the list named by image ID, none for the
	// others: ours, and any other test's on the shared engine.
	counts := rt.counts()
	if n := counts["GET /containers/"+old+"/json"]; n != 1 {
		t.Errorf("the old container was inspected %d times, want 1", n)
	}
	if n := counts["GET /containers/"+current+"/json"]; n != 0 {
		t.Errorf("the new container was inspected %d times, want 0", n)
	}
	byID := 0
	for cid, l := range listed {
		want := 0
		if l.Image == l.ImageID {
			want = 1
			byID++
		}
		if n := counts["GET /containers/"+cid+"/json"]; n != want {
			t.Errorf("container %s (listed as %s) inspected %d times, want %d", cid, l.Image, n, want)
		}
	}
	images := map[string]bool{}
	for _, l := range listed {
		images[l.ImageID] = true
	}
	if got, want := calls.Counts(), (CallCounts{Ping: 1, ContainerList: 1, ContainerInspect: byID, ImageInspect: len(images)}); got != want {
		t.Errorf("Calls = %+v, want %+v", got, want)
	}
}

// TestObserveRequests counts what Observe asks the engine.
func TestObserveRequests(t *testing.T) {
	t.Parallel()
	cli, addr := engine(t)
	id := unique(t)
	img := sleeper(t, time.Time{}, map[string]string{"org.pin-tool.test": id})
	ref := "pin.test/requests/" + id + ":v1"
	load(t, cli, ref, img)
	ours := []string{run(t, cli, id+"-a", ref, nil, false), run(t, cli, id+"-b", ref, nil, false)}

	var rt countingTransport
	snap, err := Host{Name: "mesh-test", Addr: addr, wrap: rt.wrap}.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	// The engine is shared with the other tests running now, so the number
	// of image inspects is one per distinct image ID of all the containers
	// listed, not only of ours. On an engine that holds just these two
	// containers it is exactly 3 requests:
	//	HEAD /_ping                   API version negotiation (dockerd 20.10: 1.41,
	//	                              so the classic image store: no /info)
	//	GET  /v1.41/containers/json   the one list, all=1
	//	GET  /v1.41/images/{id}/json  one inspect for both containers
	// Other tests' containers named by image ID (moved tags, removed
	// images) add one container inspect each; ours add none.
	want := map[string]int{"HEAD /_ping": 1, "GET /containers/json": 1}
	for _, c := range rt.listed(t) {
		want["GET /images/"+c.ImageID+"/json"] = 1
		if c.Image == c.ImageID {
			want["GET /containers/"+c.ID+"/json"] = 1
		}
	}
	if len(rt.listed(t)) != len(snap.Containers) {
		t.Errorf("%d containers listed, %d observed", len(rt.listed(t)), len(snap.Containers))
	}
	if d := cmp.Diff(want, rt.counts()); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	for _, c := range ours {
		if n := rt.counts()["GET /containers/"+c+"/json"]; n != 0 {
			t.Errorf("container %s, listed by its reference, was inspected %d times", c, n)
		}
	}
	if n := rt.counts()["GET /images/"+configDigest(t, img)+"/json"]; n != 1 {
		t.Errorf("our image was inspected %d times for its 2 containers, want 1", n)
	}
	t.Logf("%d requests for %d containers", rt.total(), len(snap.Containers))
}

// TestObserveEngineDown: a socket that does not exist gives an error that
// names the host, at once.
func TestObserveEngineDown(t *testing.T) {
	t.Parallel()
	start := time.Now()
	_, err := Host{Name: "gone", Addr: "unix:///nonexistent/docker.sock"}.Observe(context.Background())
	if err == nil {
		t.Fatal("Observe of a missing socket: no error")
	}
	if !strings.HasPrefix(err.Error(), "host gone (unix:///nonexistent/docker.sock): ") {
		t.Errorf("error %q does not start with the host's name and address", err)
	}
	if !client.IsErrConnectionFailed(err) {
		t.Errorf("error %q: want a connection failure in its chain", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Observe took %v to fail", d)
	}
	t.Logf("error: %v", err)
}

// TestObserveFromEnv: an empty address is DOCKER_HOST's.
func TestObserveFromEnv(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/env.sock")
	_, err := Host{Name: "env"}.Observe(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "host env (unix:///nonexistent/env.sock): ") {
		t.Errorf("Observe with DOCKER_HOST set: error %v, want one naming unix:///nonexistent/env.sock", err)
	}
}

// TestObserveTimeout: an engine that accepts but never answers is given up
// after Timeout.
func TestObserveTimeout(t *testing.T) {
	t.Parallel()
	stall := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stall }))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stall) }) // runs first: Close waits for handlers
	addr := srv.Listener.Addr().String()
	start := time.Now()
	_, err := Host{Name: "slow", Addr: "tcp://" + addr, Timeout: 200 * time.Millisecond}.Observe(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want a deadline exceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Observe took %v with a 200ms timeout", d)
	}
}

// TestObserveTLS: a tcp:// host with CertPath speaks TLS and verifies the
// engine against CertPath/ca.pem. No engine here: the listener only records
// that requests came over TLS, then refuses them.
func TestObserveTLS(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	overTLS := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.TLS != nil {
			overTLS++
		}
		mu.Unlock()
		http.Error(w, "not an engine", http.StatusServiceUnavailable)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	addr := "tcp://" + srv.Listener.Addr().String()

	good := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(good, "ca.pem"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Host{Name: "tls", Addr: addr, CertPath: good, TLSVerify: true}.Observe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not an engine") {
		t.Errorf("error %v, want the listener's answer", err)
	}
	mu.Lock()
	if overTLS == 0 {
		t.Errorf("no request reached the listener over TLS")
	}
	mu.Unlock()

	// With no ca.pem, the system roots do not know the listener.
	_, err = Host{Name: "tls", Addr: addr, CertPath: t.TempDir(), TLSVerify: true}.Observe(context.Background())
	var uerr x509.UnknownAuthorityError
	if !errors.As(err, &uerr) {
		t.Errorf("error %v, want an unknown authority", err)
	}
}

// --- helpers -----------------------------------------------------------------

// engine returns a Moby client for the test engine, and its address.
func engine(t *testing.T) (*client.Client, string) {
	t.Helper()
	addr := testenv.DockerHost(t)
	cli, err := client.NewClientWithOpts(client.WithHost(addr), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli, addr
}

// unique makes a lowercase name for the test's containers and repositories.
func unique(t *testing.T) string {
	s := regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(t.Name()), "-")
	return strings.Trim(s, "-") + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// sleeper builds a runnable image; distinct labels give distinct IDs.
func sleeper(t *testing.T, created time.Time, labels map[string]string) v1.Image {
	return testimage.Build(t, testimage.Options{
		Layer:      testimage.Sleeper(t),
		Entrypoint: []string{testimage.SleeperPath},
		Created:    created,
		Labels:     labels,
	})
}

func configDigest(t *testing.T, img v1.Image) string {
	t.Helper()
	h, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func pull(t *testing.T, cli *client.Client, ref string) {
	t.Helper()
	rc, err := cli.ImagePull(context.Background(), ref, image.PullOptions{})
	if err != nil {
		t.Fatalf("pulling %s: %v", ref, err)
	}
	defer rc.Close()
	drain(t, "pulling "+ref, rc)
}

// load writes img as a docker save tarball tagged ref and loads it into the
// engine, as `docker load` does: no registry, so no repo digest.
func load(t *testing.T, cli *client.Client, ref string, img v1.Image) {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tarball.Write(tag, img, &buf); err != nil {
		t.Fatalf("writing tarball of %s: %v", ref, err)
	}
	resp, err := cli.ImageLoad(context.Background(), &buf, client.ImageLoadWithQuiet(true))
	if err != nil {
		t.Fatalf("loading %s: %v", ref, err)
	}
	defer resp.Body.Close()
	drain(t, "loading "+ref, resp.Body)
}

// drain reads an engine's JSON message stream, which carries errors inside.
func drain(t *testing.T, what string, r io.Reader) {
	t.Helper()
	dec := json.NewDecoder(r)
	for {
		var m struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			return
		} else if err != nil {
			t.Fatalf("%s: reading the engine's answer: %v", what, err)
		}
		if m.Error != "" {
			t.Fatalf("%s: %s", what, m.Error)
		}
	}
}

// run creates a container named name from ref with no network, removed
// when the test ends, and starts it if start is set. It returns its ID.
func run(t *testing.T, cli *client.Client, name, ref string, labels map[string]string, start bool) string {
	t.Helper()
	ctx := context.Background()
	c, err := cli.ContainerCreate(ctx, &container.Config{Image: ref, Labels: labels},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, name)
	if err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}); err != nil {
			t.Logf("removing %s: %v", name, err)
		}
	})
	if start {
		if err := cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
			t.Fatalf("starting %s: %v", name, err)
		}
	}
	return c.ID
}

func findContainer(s *host.Snapshot, name string) (host.Container, bool) {
	for _, c := range s.Containers {
		if c.Name == name {
			return c, true
		}
	}
	return host.Container{}, false
}

// countingTransport counts requests by method and path, the API version
// prefix left out.
type countingTransport struct {
	mu   sync.Mutex
	n    map[string]int
	list []byte // the last answer to GET /containers/json
}

var versionPrefix = regexp.MustCompile(`^/v[0-9.]+/`)

func (c *countingTransport) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		path := versionPrefix.ReplaceAllString(r.URL.Path, "/")
		c.mu.Lock()
		if c.n == nil {
			c.n = map[string]int{}
		}
		c.n[r.Method+" "+path]++
		c.mu.Unlock()
		resp, err := next.RoundTrip(r)
		if err != nil || path != "/containers/json" {
			return resp, err
		}
		// Keep the list's answer, for listed.
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		c.mu.Lock()
		c.list = body
		c.mu.Unlock()
		return resp, nil
	})
}

// listed returns what the engine's last container list said, by
// container ID.
func (c *countingTransport) listed(t *testing.T) map[string]container.Summary {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var list []container.Summary
	if err := json.Unmarshal(c.list, &list); err != nil {
		t.Fatalf("reading the engine's container list: %v", err)
	}
	out := map[string]container.Summary{}
	for _, s := range list {
		out[s.ID] = s
	}
	return out
}

func (c *countingTransport) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

func (c *countingTransport) total() int {
	n := 0
	for _, v := range c.counts() {
		n += v
	}
	return n
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
