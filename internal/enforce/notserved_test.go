package enforce

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/resolve"
)

// TestNotServed judges, against a registry (go-containerregistry's in
// memory, and the real one of scripts/test), references its registry
// does not have: a tag, a digest. Each is refused saying that the
// registry has no such tag or manifest, with the reference as given;
// the same repository's tag it has is judged as before; and a Judge that
// is not refused says nothing of it.
func TestNotServed(t *testing.T) {
	hosts := map[string]string{}
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	hosts["memory"] = strings.TrimPrefix(srv.URL, "http://")
	if os.Getenv(testenv.EnvRegistry) != "" || os.Getenv("CI") != "" {
		hosts["real"] = testenv.Registry(t)
	}
	for name, addr := range hosts {
		t.Run(name, func(t *testing.T) {
			repo := addr + "/enforce/notserved-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
			running := testimage.PushRelease(t, repo, "1.27.3", "2026-09-01", testimage.Options{})
			newer := testimage.PushRelease(t, repo, "1.28.0", "2026-10-01", testimage.Options{})
			e := enforcer(t, addr, repo, running.DigestStr())
			ctx := context.Background()
			seen := e.Observe(ctx, "h")
			m := e.Catalogue.Modules[0]
			missing := "sha256:" + strings.Repeat("5", 64)
			for _, ref := range []string{repo + ":9.9.9", repo + "@" + missing, repo + ":1.28.0@" + missing} {
				j, err := e.Judge(ctx, seen, m, ref, resolve.Override{})
				if err != nil {
					t.Fatalf("%s: %v", ref, err)
				}
				if !j.NotServed || j.Allowed() || j.Refusal.Kind != resolve.KindNotServed {
					t.Fatalf("%s: %+v, want refused as not served", ref, j)
				}
				text := j.Refusal.Error()
				if strings.Contains(text, "allow-downgrade") || strings.Contains(text, "versioning") || strings.Contains(text, "image ID") {
					t.Errorf("%s: the refusal speaks of an override, versioning or an image ID:\n%s", ref, text)
				}
				for _, want := range []string{"refusing: " + addr + " has no image " + ref + " (no ", "h/app runs: " + repo + ":1.27.3@" + running.DigestStr()} {
					if !strings.Contains(text, want) {
						t.Errorf("%s: the refusal lacks %q:\n%s", ref, want, text)
					}
				}
				t.Log(text)
			}
			if j, err := e.Judge(ctx, seen, m, repo+":1.28.0", resolve.Override{}); err != nil || !j.Allowed() || j.NotServed {
				t.Errorf("1.28.0 (%s), served and newer: %+v, %v", newer.DigestStr(), j, err)
			}
		})
	}
}

// enforcer is an Enforcer for one module of repo on host "h", which runs
// digest, its registry at addr read as pin reads registries.
func enforcer(t *testing.T, addr, repo, digest string) *Enforcer {
	t.Helper()
	p := filepath.Join(t.TempDir(), "catalogue.hcl")
	if err := os.WriteFile(p, []byte(`host "h" {
  snapshot = "unused.json"
}

module "app" {
  image  = "`+repo+`"
  policy = "at-least-running"
  runs_on "h" {
    container = "app"
  }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, diags := catalogue.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	h := hostFunc(func(context.Context) (*host.Snapshot, error) {
		id := "sha256:" + strings.Repeat("1", 64)
		return &host.Snapshot{Host: "h", Containers: []host.Container{{ID: "c1", Name: "app", Image: repo + ":1.27.3", ImageID: id, State: "running"}},
			Images: []host.Image{{ID: id, RepoDigests: []string{repo + "@" + digest}}}}, nil
	})
	reg := registry.NewRemote(registry.RemoteOptions{Host: addr, Timeout: 10 * time.Second})
	return &Enforcer{Catalogue: cat, Hosts: map[string]observe.Host{"h": h}, Registry: func(string) resolve.Registry { return reg }}
}

type hostFunc func(context.Context) (*host.Snapshot, error)

func (f hostFunc) Observe(ctx context.Context) (*host.Snapshot, error) { return f(ctx) }
