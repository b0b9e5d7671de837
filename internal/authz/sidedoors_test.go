package authz

import (
	"context"
	"encoding/json"
	"fmt"
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

// Image IDs of the fake Engine: the classic store's config digests.
var (
	id22    = "sha256:" + strings.Repeat("2", 64)
	id27    = "sha256:" + strings.Repeat("1", 64)
	id28    = "sha256:" + strings.Repeat("3", 64)
	idLocal = "sha256:" + strings.Repeat("4", 64)
)

// hostImages are the images of the fake Engine's store, by ID.
var hostImages = map[string]host.Image{
	id22:    {ID: id22, RepoTags: []string{repo + ":1.22.6"}, RepoDigests: []string{repo + "@" + digestOf("1.22.6")}, Labels: map[string]string{image.LabelVersion: "1.22.6"}, OS: "linux", Arch: "amd64"},
	id27:    {ID: id27, RepoTags: []string{repo + ":1.27.3"}, RepoDigests: []string{repo + "@" + digestOf("1.27.3")}, Labels: map[string]string{image.LabelVersion: "1.27.3"}, OS: "linux", Arch: "amd64"},
	id28:    {ID: id28, RepoTags: []string{repo + ":1.28.0"}, RepoDigests: []string{repo + "@" + digestOf("1.28.0")}, Labels: map[string]string{image.LabelVersion: "1.28.0"}, OS: "linux", Arch: "amd64"},
	idLocal: {ID: idLocal, RepoTags: []string{repo + ":9.9.9"}, Labels: map[string]string{image.LabelVersion: "9.9.9"}, OS: "linux", Arch: "amd64"},
}

// fakeEngine resolves references and IDs as an Engine does, from tags
// (which the test may point elsewhere, as docker tag does), and holds
// swarm services.
type fakeEngine struct {
	tags     map[string]string // "repo:tag" → image ID
	services map[string][2]host.Container
	asked    []string
}

func (f *fakeEngine) InspectImage(_ context.Context, ref string) (host.Image, error) {
	f.asked = append(f.asked, ref)
	if id, ok := f.tags[ref]; ok {
		return hostImages[id], nil
	}
	var found []host.Image
	for id, img := range hostImages {
		if strings.HasPrefix(id, ref) || strings.HasPrefix(strings.TrimPrefix(id, "sha256:"), ref) {
			found = append(found, img)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return host.Image{}, fmt.Errorf("no such image: %s: %w", ref, image.ErrNotFound)
}

func (f *fakeEngine) InspectService(_ context.Context, id string) (host.Container, host.Container, error) {
	s, ok := f.services[id]
	if !ok {
		return host.Container{}, host.Container{}, fmt.Errorf("service %s: %w", id, image.ErrNotFound)
	}
	return s[0], s[1], nil
}

func newFakeEngine() *fakeEngine {
	return &fakeEngine{tags: map[string]string{repo + ":1.22.6": id22, repo + ":1.27.3": id27, repo + ":1.28.0": id28, repo + ":9.9.9": idLocal}, services: map[string][2]host.Container{}}
}

// sideHost: module forge's forgejo runs 1.27.3 (a replica labelled
// pin.module=forge, forgejo itself was removed); tmp (1.22.6), new (1.28.0)
// and local (a local build) were created under names no module covers.
func sideHost() (*host.Snapshot, error) {
	var imgs []host.Image
	for _, id := range []string{id22, id27, id28, idLocal} {
		imgs = append(imgs, hostImages[id])
	}
	return &host.Snapshot{Host: "mesh", ImageStore: "classic", Containers: []host.Container{
		{ID: "c1" + strings.Repeat("a", 62), Name: "forgejo-2", Image: repo + ":1.27.3", ImageID: id27, State: "running", Labels: map[string]string{"pin.module": "forge"}},
		{ID: "c2" + strings.Repeat("b", 62), Name: "tmp", Image: repo + ":1.22.6", ImageID: id22, State: "created"},
		{ID: "c3" + strings.Repeat("c", 62), Name: "new", Image: repo + ":1.28.0", ImageID: id28, State: "created"},
		{ID: "c4" + strings.Repeat("d", 62), Name: "local", Image: repo + ":9.9.9", ImageID: idLocal, State: "created"},
		{ID: "c5" + strings.Repeat("e", 62), Name: "same", Image: id27, ImageID: id27, State: "created"},
	}, Images: imgs}, nil
}

func sideServer(t *testing.T) (*Server, *fakeEngine) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "catalogue.hcl")
	os.WriteFile(p, []byte(`host "mesh" {
  docker = "unix:///nowhere.sock"
}

module "forge" {
  image  = "`+repo+`"
  policy = "at-least-running"
  runs_on "mesh" { container = "forgejo" }
}
`), 0o644)
	cat, diags := catalogue.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := &enforce.Enforcer{Catalogue: cat, Hosts: map[string]observe.Host{"mesh": hostFunc(sideHost)},
		Registry: func(string) resolve.Registry { return fakeRegistry{} }, Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }}
	eng := newFakeEngine()
	return &Server{Enforcer: e, Host: "mesh", Engine: eng}, eng
}

func createOf(name, img string, labels map[string]string) Request {
	body, _ := json.Marshal(createBody{Image: img, Labels: labels})
	return Request{RequestMethod: "POST", RequestURI: "/v1.41/containers/create?name=" + name, RequestBody: body}
}

// TestCreateSideDoors: a name with its leading "/", an image given by ID
// (full or short), a tag retagged on the Engine, a local build, and a
// create whose body the Engine did not pass are all judged as what they
// put under module forge's name.
func TestCreateSideDoors(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name     string
		req      Request
		retag    bool // repo:1.28.0 is the 1.22.6 image on the Engine (docker tag)
		failOpen bool
		allow    bool
		says     []string
	}{
		{name: "older, the name as stored", req: createOf("forgejo", repo+":1.22.6", nil), says: []string{"older than what mesh/forgejo-2 runs"}},
		{name: "older, the name with its slash", req: createOf("/forgejo", repo+":1.22.6", nil), says: []string{"older than what mesh/forgejo-2 runs"}},
		{name: "newer, the name with its slash", req: createOf("/forgejo", repo+":1.28.0", nil), allow: true},
		{name: "older by full image ID", req: createOf("forgejo", id22, nil), says: []string{"refusing a downgrade", "older than what mesh/forgejo-2 runs", "version 1.22.6 < 1.27.3"}},
		{name: "older by short image ID", req: createOf("forgejo", id22[:19], nil), says: []string{"refusing a downgrade", "version 1.22.6 < 1.27.3"}},
		{name: "newer by image ID", req: createOf("forgejo", id28, nil), allow: true},
		{name: "an image ID the Engine does not hold", req: createOf("forgejo", "sha256:"+strings.Repeat("9", 64), nil),
			says: []string{`container "forgejo" runs sha256:9999`, `module "forge" covers`, "the Engine holds no image", "repository@sha256:"}},
		{name: "an older image retagged as a newer tag", req: createOf("forgejo", repo+":1.28.0", nil), retag: true, says: []string{"refusing", "the tag says 1.28.0, the label says 1.22.6"}},
		{name: "a local build labelled newer", req: createOf("forgejo", repo+":9.9.9", nil), says: []string{"cannot be ordered", "image ID sha256:444444444444"}},
		{name: "the image that runs, by ID", req: createOf("forgejo", id27, nil), allow: true},
		{name: "no body, fail open", req: Request{RequestMethod: "POST", RequestURI: "/v1.41/containers/create?name=/forgejo"}, failOpen: true,
			says: []string{"passed pin no body", `container "forgejo", which module "forge" covers`, "with or without --fail-open", "application/json", "1 MiB"}},
		{name: "no body, a name no module covers, fail open", req: Request{RequestMethod: "POST", RequestURI: "/v1.41/containers/create?name=scratch"}, failOpen: true,
			says: []string{"passed pin no body", "nor its labels"}},
		{name: "a body the Engine would not read either", req: Request{RequestMethod: "POST", RequestURI: "/containers/create?name=forgejo", RequestBody: []byte(`[`)}, failOpen: true,
			says: []string{"cannot read this create's body"}},
		{name: "what the Engine reads of the body: its first value", req: Request{RequestMethod: "POST", RequestURI: "/containers/create?name=forgejo",
			RequestBody: []byte(`{"Image":"` + repo + `:1.22.6"} {"Image":"` + repo + `:1.28.0"}`)}, failOpen: true, says: []string{"refusing a downgrade"}},
		{name: "a name no module covers", req: createOf("scratch", repo+":1.22.6", nil), allow: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, eng := sideServer(t)
			s.FailOpen = tt.failOpen
			if tt.retag {
				eng.tags[repo+":1.28.0"] = id22
			}
			r := s.Authorize(ctx, tt.req)
			if r.Allow != tt.allow {
				t.Fatalf("allow %v, want %v: %s", r.Allow, tt.allow, r.Msg)
			}
			for _, w := range tt.says {
				if !strings.Contains(r.Msg, w) {
					t.Errorf("want %q in:\n%s", w, r.Msg)
				}
			}
		})
	}
}

// TestRenameSideDoors: renaming a container into a module's name is judged
// as creating it there; renaming one away, or into a name no module
// covers, is not.
func TestRenameSideDoors(t *testing.T) {
	ctx := context.Background()
	rename := func(id, name string) Request {
		return Request{RequestMethod: "POST", RequestURI: "/v1.41/containers/" + id + "/rename?name=" + name}
	}
	for _, tt := range []struct {
		name  string
		req   Request
		allow bool
		says  []string
	}{
		{"older into forgejo, by name", rename("tmp", "forgejo"), false, []string{"renaming container tmp to forgejo puts its image under module \"forge\"'s name", "refusing a downgrade",
			"older than what mesh/forgejo-2 runs", "create the container with the label pin.dev/allow-downgrade"}},
		{"older into /forgejo, by ID prefix", rename("c2bbb", "/forgejo"), false, []string{"refusing a downgrade"}},
		{"older into forgejo, by full ID", rename("c2"+strings.Repeat("b", 62), "forgejo"), false, []string{"refusing a downgrade"}},
		{"a local build into forgejo", rename("local", "forgejo"), false, []string{"cannot be ordered"}},
		{"newer into forgejo", rename("new", "forgejo"), true, nil},
		{"the same image into forgejo, created by ID", rename("same", "forgejo"), true, nil},
		{"older into a name no module covers", rename("tmp", "scratch"), true, nil},
		{"forgejo-2 away from nothing", rename("forgejo-2", "forgejo-old"), true, nil},
		{"no such container", rename("nothing", "forgejo"), true, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := sideServer(t)
			r := s.Authorize(ctx, tt.req)
			if r.Allow != tt.allow {
				t.Fatalf("allow %v, want %v: %s", r.Allow, tt.allow, r.Msg)
			}
			for _, w := range tt.says {
				if !strings.Contains(r.Msg, w) {
					t.Errorf("want %q in:\n%s", w, r.Msg)
				}
			}
		})
	}
}

// TestServiceSideDoors: a swarm service whose tasks carry a module's label
// is judged on create, on update (also when the update drops the label),
// and on rollback (the previous spec, read from the Engine).
func TestServiceSideDoors(t *testing.T) {
	ctx := context.Background()
	spec := func(name, tag string, labels map[string]string) []byte {
		b, _ := json.Marshal(map[string]any{"Name": name, "TaskTemplate": map[string]any{"ContainerSpec": map[string]any{"Image": repo + ":" + tag, "Labels": labels}}})
		return b
	}
	forge := map[string]string{"pin.module": "forge"}
	svc := func(tag string, labels map[string]string) host.Container {
		return host.Container{Name: "web", Image: repo + ":" + tag, Labels: labels}
	}
	post := func(uri string, body []byte) Request {
		return Request{RequestMethod: "POST", RequestURI: uri, RequestBody: body}
	}
	for _, tt := range []struct {
		name    string
		current host.Container
		prev    host.Container
		req     Request
		allow   bool
		says    string
	}{
		{name: "create, older, labelled", req: post("/v1.41/services/create", spec("web", "1.22.6", forge)), says: "service web: module \"forge\": refusing a downgrade"},
		{name: "create, newer, labelled", req: post("/v1.41/services/create", spec("web", "1.28.0", forge)), allow: true},
		{name: "create, older, not labelled", req: post("/v1.41/services/create", spec("web", "1.22.6", nil)), allow: true},
		{name: "create without a body", req: post("/v1.41/services/create", nil), says: "passed pin no body"},
		{name: "update to older", current: svc("1.27.3", forge), req: post("/v1.41/services/web/update?version=3", spec("web", "1.22.6", forge)), says: "refusing a downgrade"},
		{name: "update to older dropping the label", current: svc("1.27.3", forge), req: post("/v1.41/services/web/update?version=3", spec("web", "1.22.6", nil)), says: "refusing a downgrade"},
		{name: "update, the image unchanged", current: svc("1.22.6", forge), req: post("/v1.41/services/web/update?version=3", spec("web", "1.22.6", forge)), allow: true},
		{name: "rollback to older", current: svc("1.27.3", forge), prev: svc("1.22.6", forge), req: post("/v1.41/services/web/update?version=3&rollback=previous", spec("web", "1.27.3", forge)), says: "refusing a downgrade"},
		{name: "rollback to older, the reason in the spec it restores", current: svc("1.27.3", forge), prev: svc("1.22.6", map[string]string{"pin.module": "forge", enforce.AllowDowngradeKey: "bad release"}),
			req: post("/v1.41/services/web/update?rollback=previous", nil), allow: true},
		{name: "rollback to older, a reason on the service as it is", current: svc("1.27.3", map[string]string{"pin.module": "forge", enforce.AllowDowngradeKey: "bad release"}), prev: svc("1.22.6", forge),
			req: post("/v1.41/services/web/update?rollback=previous", nil), says: "docker service update --container-label-add"},
		{name: "rollback to an older spec no module covered", current: svc("1.27.3", forge), prev: svc("1.22.6", nil),
			req: post("/v1.41/services/web/update?rollback=previous", nil), says: "refusing a downgrade"},
		{name: "rollback to newer", current: svc("1.22.6", forge), prev: svc("1.28.0", forge), req: post("/v1.41/services/web/update?rollback=previous", nil), allow: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, eng := sideServer(t)
			s.FailOpen = true
			eng.services["web"] = [2]host.Container{tt.current, tt.prev}
			r := s.Authorize(ctx, tt.req)
			if r.Allow != tt.allow || !strings.Contains(r.Msg, tt.says) {
				t.Errorf("allow %v, want %v, with %q:\n%s", r.Allow, tt.allow, tt.says, r.Msg)
			}
		})
	}
}
