package authz

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/resolve"
)

const repo = "registry.example.org/forge/forgejo"

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

type fakeRegistry struct{}

func (fakeRegistry) Tags(context.Context, string) ([]string, error) { return nil, nil }
func (fakeRegistry) Image(_ context.Context, _, ref, _ string) (image.Image, error) {
	for _, tag := range []string{"1.22.6", "1.27.3", "1.28.0"} {
		if ref == tag || ref == digestOf(tag) {
			return image.Image{Repository: repo, Digest: digestOf(tag), Labels: map[string]string{image.LabelVersion: tag}}, nil
		}
	}
	return image.Image{}, image.ErrNotFound
}

type hostFunc func() (*host.Snapshot, error)

func (f hostFunc) Observe(context.Context) (*host.Snapshot, error) { return f() }

// engine: Compose renamed forgejo (1.27.3) before creating its successor;
// a one_way database runs 1.27.3 by label.
func engine() (*host.Snapshot, error) {
	id := "sha256:" + strings.Repeat("1", 64)
	compose := map[string]string{ComposeProject: "forge", ComposeService: "forgejo"}
	return &host.Snapshot{Host: "mesh", ImageStore: "classic", Containers: []host.Container{
		{ID: "c1", Name: "0a1b_forgejo", Image: repo + ":1.27.3", ImageID: id, State: "running", Labels: compose},
		{ID: "c2", Name: "db", Image: repo + ":1.27.3", ImageID: id, State: "exited", Labels: map[string]string{"pin.module": "db"}},
	}, Images: []host.Image{{ID: id, RepoDigests: []string{repo + "@" + digestOf("1.27.3")}, Labels: map[string]string{image.LabelVersion: "1.27.3"}}}}, nil
}

func create(name, tag string, labels ...string) Request {
	l := map[string]string{}
	for _, kv := range labels {
		k, v, _ := strings.Cut(kv, "=")
		l[k] = v
	}
	body := `{"Image":"` + repo + ":" + tag + `","Labels":{`
	first := true
	for k, v := range l {
		if !first {
			body += ","
		}
		first = false
		body += `"` + k + `":"` + v + `"`
	}
	return Request{RequestMethod: "POST", RequestURI: "/v1.41/containers/create?name=" + name, RequestBody: []byte(body + "}}")}
}

func TestAuthorize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "catalogue.hcl")
	os.WriteFile(p, []byte(`host "mesh" {
  docker = "unix:///nowhere.sock"
}

module "forge" {
  image  = "`+repo+`"
  policy = "at-least-running"
  runs_on "mesh" { container = "forgejo" }
}

module "db" {
  image   = "`+repo+`"
  policy  = "at-least-running"
  one_way = true
  runs_on "mesh" {}
}
`), 0o644)
	cat, diags := catalogue.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := &enforce.Enforcer{Catalogue: cat, Hosts: map[string]observe.Host{"mesh": hostFunc(engine)},
		Registry: func(string) resolve.Registry { return fakeRegistry{} }, Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }}
	s := &Server{Enforcer: e, Host: "mesh"}
	ctx := context.Background()
	compose := []string{ComposeProject + "=forge", ComposeService + "=forgejo"}
	for _, tt := range []struct {
		name  string
		req   Request
		allow bool
		says  string
	}{
		{"not a create", Request{RequestMethod: "GET", RequestURI: "/v1.41/containers/json"}, true, ""},
		{"compose replaces forgejo with an older image", create("forgejo", "1.22.6", compose...), false, "older than what mesh/0a1b_forgejo runs"},
		{"compose replaces it with a newer one", create("forgejo", "1.28.0", compose...), true, ""},
		{"same labels, another project", create("forgejo-2", "1.22.6", ComposeProject+"=other", ComposeService+"=forgejo"), true, ""},
		{"labelled with the reason", create("forgejo", "1.22.6", append(compose, enforce.AllowDowngradeKey+"=rollback")...), true, ""},
		{"one_way: the reason without the restore", create("db2", "1.22.6", "pin.module=db", enforce.AllowDowngradeKey+"=rollback"), false, "pin.dev/restore"},
		{"one_way: with the restore", create("db2", "1.22.6", "pin.module=db", enforce.AllowDowngradeKey+"=rollback", enforce.RestoreKey+"=snap-1"), true, ""},
		{"unknown image", create("forgejo", "weird", compose...), false, "cannot be ordered"},
	} {
		r := s.Authorize(ctx, tt.req)
		if r.Allow != tt.allow || !strings.Contains(r.Msg, tt.says) {
			t.Errorf("%s: %+v", tt.name, r)
		}
	}
}
