// Package bench holds pin's benchmarks: the fleet benchmark (./run, the
// pinbench and pinprof commands) and, here, the latency of one decision
// of pin admit and pin authz.
package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"

	"github.com/pin-tool/pin/internal/admit"
	"github.com/pin-tool/pin/internal/authz"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// fixture is a registry (go-containerregistry's, in memory, over loopback
// HTTP) holding 1.27.3, which runs, and 1.28.0, the new image; snapshots
// of a Kubernetes namespace and a Docker Engine where forgejo runs 1.27.3;
// and a catalogue whose module forge takes both over.
type fixture struct {
	dir, repo string
	digests   map[string]string
}

// digest is the digest pushed for tag.
func (f fixture) digest(b *testing.B, tag string) string {
	d, ok := f.digests[tag]
	if !ok {
		b.Fatalf("no image %s", tag)
	}
	return d
}

func newFixture(b *testing.B) fixture {
	b.Helper()
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	b.Cleanup(srv.Close)
	repo := strings.TrimPrefix(srv.URL, "http://") + "/bench/forgejo"
	digests := map[string]string{}
	for _, v := range []struct{ tag, date string }{{"1.27.3", "2026-09-01"}, {"1.28.0", "2026-10-01"}} {
		created, _ := time.Parse("2006-01-02", v.date)
		img := testimage.Build(b, testimage.Options{Content: v.tag, Created: created, Labels: map[string]string{"org.opencontainers.image.version": v.tag}})
		digests[v.tag] = testimage.Push(b, repo+":"+v.tag, img).DigestStr()
	}
	dir := b.TempDir()
	running := digests["1.27.3"]
	write := func(name string, s *host.Snapshot) {
		s.Normalise()
		data, err := s.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// Three replicas and a sidecar, as host/kubernetes reads them.
	kube := &host.Snapshot{Schema: host.SnapshotSchema, Host: "prod", Images: []host.Image{{ID: running, RepoDigests: []string{repo + "@" + running}}}}
	for i := range 3 {
		pod := fmt.Sprintf("forgejo-6d9f-%d", i)
		kube.Containers = append(kube.Containers, host.Container{ID: pod + "/forgejo", Name: "forgejo", Image: repo + ":1.27.3", ImageID: running,
			State: "running", Labels: map[string]string{"app": "forgejo"}, Workload: "deployment/forgejo", Pod: pod})
	}
	write("prod.json", kube)
	write("mesh.json", &host.Snapshot{Schema: host.SnapshotSchema, Host: "mesh", ImageStore: "classic",
		Containers: []host.Container{{ID: "c1", Name: "forgejo", Image: repo + ":1.27.3", ImageID: "sha256:" + strings.Repeat("1", 64), State: "running"}},
		Images: []host.Image{{ID: "sha256:" + strings.Repeat("1", 64), RepoDigests: []string{repo + "@" + running}, Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC),
			Labels: map[string]string{"org.opencontainers.image.version": "1.27.3"}, OS: "linux", Arch: "amd64"}}})
	cat := fmt.Sprintf(`host "prod" {
  snapshot = "prod.json"
}

host "mesh" {
  snapshot = "mesh.json"
}

module "forge" {
  image  = %q
  policy = "at-least-running"
  runs_on "prod" {
    workload  = "deployment/forgejo"
    container = "forgejo"
  }
  runs_on "mesh" {
    container = "forgejo"
  }
}
`, repo)
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		b.Fatal(err)
	}
	return fixture{dir: dir, repo: repo, digests: digests}
}

// enforcer loads the fixture with an empty cache of its own.
func (f fixture) enforcer(b *testing.B) *enforce.Enforcer {
	cache, err := os.MkdirTemp(f.dir, "cache-")
	if err != nil {
		b.Fatal(err)
	}
	e, _, err := enforce.Load(filepath.Join(f.dir, "catalogue.hcl"), filepath.Join(f.dir, "pin.lock.hcl"),
		source.Options{CacheDir: cache, Concurrency: 8, Timeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// review is an UPDATE of Deployment forgejo from 1.27.3 to 1.28.0.
func (f fixture) review() []byte { return f.reviewTo("1.28.0") }

// reviewTo is an UPDATE of Deployment forgejo from 1.27.3 to tag.
func (f fixture) reviewTo(tag string) []byte {
	obj := func(tag string) string {
		return fmt.Sprintf(`{"metadata":{"name":"forgejo","namespace":"apps"},"spec":{"selector":{"matchLabels":{"app":"forgejo"}},
"template":{"metadata":{"labels":{"app":"forgejo"}},"spec":{"containers":[{"name":"forgejo","image":"%s:%s"}]}}}}`, f.repo, tag)
	}
	return fmt.Appendf(nil, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"apps","version":"v1","kind":"Deployment"},
"namespace":"apps","name":"forgejo","operation":"UPDATE","object":%s,"oldObject":%s}}`, obj(tag), obj("1.27.3"))
}

// measure runs one decision per iteration and reports the 50th and 99th
// percentiles of their latencies; each must be allowed.
func measure(b *testing.B, decide func(int) string) {
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		out := decide(i)
		ds = append(ds, time.Since(start))
		if !strings.Contains(out, `"allowed":true`) && !strings.Contains(out, `"Allow":true`) {
			b.Fatalf("not allowed: %s", out)
		}
	}
	b.StopTimer()
	slices.Sort(ds)
	pct := func(p float64) float64 { return float64(ds[int(float64(len(ds)-1)*p)]) / float64(time.Millisecond) }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

func serveAdmit(s *admit.Server, body []byte) string {
	req := httptest.NewRequest(http.MethodPost, "/validate?timeout=10s", bytes.NewReader(body))
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	return w.Body.String()
}

// BenchmarkAdmitWarm: the decision of pin admit once the digests are
// known: the namespace read (here a snapshot file), the new tag asked of
// the registry, the rest from memory. Target: p99 under 50 ms.
func BenchmarkAdmitWarm(b *testing.B) {
	f := newFixture(b)
	s := &admit.Server{Enforcer: f.enforcer(b), Namespaces: map[string]string{"apps": "prod"}}
	body := f.review()
	serveAdmit(s, body)
	measure(b, func(int) string { return serveAdmit(s, body) })
}

// BenchmarkAdmitCold: the first decision of a fresh pin admit, with an
// empty cache: every digest is asked. It must fit the webhook's timeout.
func BenchmarkAdmitCold(b *testing.B) {
	f := newFixture(b)
	body := f.review()
	var servers []*admit.Server
	measure(b, func(i int) string {
		b.StopTimer()
		for len(servers) <= i {
			servers = append(servers, &admit.Server{Enforcer: f.enforcer(b), Namespaces: map[string]string{"apps": "prod"}})
		}
		b.StartTimer()
		return serveAdmit(servers[i], body)
	})
}

// BenchmarkAuthzWarm: pin authz's decision on docker run --name forgejo
// with 1.28.0, the Engine read from a snapshot file.
func BenchmarkAuthzWarm(b *testing.B) {
	f := newFixture(b)
	s := &authz.Server{Enforcer: f.enforcer(b), Host: "mesh"}
	req := authz.Request{RequestMethod: "POST", RequestURI: "/v1.41/containers/create?name=forgejo",
		RequestBody: []byte(`{"Image":"` + f.repo + `:1.28.0"}`)}
	decide := func(int) string {
		r := s.Authorize(context.Background(), req)
		if !r.Allow {
			return r.Msg
		}
		return `"Allow":true`
	}
	decide(0)
	measure(b, decide)
}
