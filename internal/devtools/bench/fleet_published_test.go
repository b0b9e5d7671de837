//go:build unix

package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/host/fleet"
	"github.com/pin-tool/pin/internal/host/published"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
	"github.com/pin-tool/pin/internal/verify"
)

// kinds counts a run's registry requests by kind ("HEAD manifest",
// "GET blob", "ping", …).
type kinds struct {
	mu sync.Mutex
	n  map[string]int
}

func (k *kinds) RoundTrip(req *http.Request) (*http.Response, error) {
	what := req.Method + " other"
	switch p := req.URL.Path; {
	case p == "/v2/" || p == "/v2":
		what = "ping"
	case strings.Contains(p, "/manifests/"):
		what = req.Method + " manifest"
	case strings.Contains(p, "/blobs/"):
		what = req.Method + " blob"
	}
	k.mu.Lock()
	k.n[what]++
	k.mu.Unlock()
	return remote.DefaultTransport.RoundTrip(req)
}

func (k *kinds) total() (n int) {
	for w, c := range k.n {
		if w != "ping" {
			n += c
		}
	}
	return n
}

// publishFleet pushes n signed observations to repo, 16 at a time.
func publishFleet(t testing.TB, repo string, n int, k verifytest.Key, at time.Time) {
	t.Helper()
	s, err := published.NewSigner(k.Priv)
	if err != nil {
		t.Fatal(err)
	}
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			id := "sha256:" + fmt.Sprintf("%064x", i)
			o := &published.Observation{Host: hostName(i), Platform: "linux/amd64", ReadAt: at, Snapshot: &host.Snapshot{
				Containers: []host.Container{{ID: "c", Name: "app", Image: "registry.example.org/app:1.0.0", ImageID: id, State: host.StateRunning}},
				Images:     []host.Image{{ID: id, RepoTags: []string{"registry.example.org/app:1.0.0"}}},
			}}
			if _, err := published.Push(context.Background(), repo, o, s, published.PushOptions{}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// readPublished is one run: a new registry client over the shared cache,
// every host read through fleet.Read.
func readPublished(t testing.TB, addr, repo string, n int, pub, cacheDir string, now time.Time) (*kinds, time.Duration) {
	t.Helper()
	k := &kinds{n: map[string]int{}}
	reg := registry.NewRemote(registry.RemoteOptions{Host: addr, Cache: registry.NewCache(cacheDir), Transport: k})
	cache := published.NewCache(cacheDir)
	hosts := map[string]fleet.Observer{}
	for i := range n {
		hosts[hostName(i)] = &published.Host{Name: hostName(i), Location: published.OCIScheme + repo, Trust: verify.Spec{Keys: []string{pub}},
			Registry: reg, Cache: cache, Now: func() time.Time { return now }}
	}
	start := time.Now()
	got := fleet.Read(context.Background(), hosts, fleet.Options{Concurrency: 8, Timeout: time.Minute})
	wall := time.Since(start)
	for name, r := range got {
		if r.Err != nil {
			t.Fatalf("%s: %v", name, r.Err)
		}
	}
	return k, wall
}

// TestFleetPublishedWarm: a warm run reads n published observations with
// one HEAD each and nothing else, whatever n (flat per host).
func TestFleetPublishedWarm(t *testing.T) {
	addr := testenv.Registry(t)
	key := verifytest.NewKey(t)
	at := time.Now().UTC().Truncate(time.Second)
	for _, n := range []int{10, 40} {
		repo := fmt.Sprintf("%s/bench/observations-%d-%d", addr, n, at.UnixNano())
		publishFleet(t, repo, n, key, at)
		cacheDir := t.TempDir()
		cold, _ := readPublished(t, addr, repo, n, key.Path, cacheDir, at.Add(time.Minute))
		warm, _ := readPublished(t, addr, repo, n, key.Path, cacheDir, at.Add(time.Minute))
		if warm.total() != n || warm.n["HEAD manifest"] != n {
			t.Errorf("%d hosts warm: %v, want %d manifest HEADs and nothing else", n, warm.n, n)
		}
		if cold.total() <= warm.total() {
			t.Errorf("%d hosts cold: %v", n, cold.n)
		}
	}
}

// BenchmarkFleetPublished publishes PINBENCH_OBSERVATIONS (default
// 1,000) signed observations to the real registry and reads them, cold
// and warm, reporting requests per host and wall time.
//
//	CI=true ./scripts/test -run XXX -bench FleetPublished -benchtime 1x ./internal/bench
func BenchmarkFleetPublished(b *testing.B) {
	addr := testenv.Registry(b)
	key := verifytest.NewKey(b)
	at := time.Now().UTC().Truncate(time.Second)
	for b.Loop() {
		for _, n := range []int{10, 100, envInt("PINBENCH_OBSERVATIONS", 1000)} {
			repo := fmt.Sprintf("%s/bench/observations-%d-%d", addr, n, time.Now().UnixNano())
			publishFleet(b, repo, n, key, at)
			cacheDir := b.TempDir()
			cold, coldWall := readPublished(b, addr, repo, n, key.Path, cacheDir, at.Add(time.Minute))
			warm, warmWall := readPublished(b, addr, repo, n, key.Path, cacheDir, at.Add(time.Minute))
			fmt.Fprintf(os.Stderr, "fleet published: %d hosts: cold %.2f requests/host in %s, warm %.2f requests/host (%v) in %s, peak RSS %d MiB\n",
				n, float64(cold.total())/float64(n), coldWall.Round(time.Millisecond),
				float64(warm.total())/float64(n), warm.n, warmWall.Round(time.Millisecond), maxRSS()/1024)
			b.ReportMetric(float64(warm.total())/float64(n), fmt.Sprintf("warm-requests/host@%d", n))
		}
	}
}
