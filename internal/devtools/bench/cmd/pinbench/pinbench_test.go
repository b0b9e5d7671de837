package main

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/version"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == childFlag && os.Args[3] == "--" {
		os.Exit(childMain(os.Args[2], os.Args[4:]))
	}
	os.Exit(m.Run())
}

// TestRunPinRSS: the peak RSS runPin reports is the child's, not the
// memory of the large process that started it (Linux carries that into a
// child's ru_maxrss at execve).
func TestRunPinRSS(t *testing.T) {
	big := make([]byte, 300<<20)
	for i := 0; i < len(big); i += 4096 { // every page resident
		big[i] = 1
	}
	dir := t.TempDir()
	_, rss, _, exit, _, err := runPin("/bin/sh", dir, filepath.Join(dir, "sh"), "-c", "exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if exit != 3 {
		t.Errorf("exit %d, want 3", exit)
	}
	if rss <= 0 || rss > 100<<20 {
		t.Errorf("peak RSS of sh reported as %d MiB; the parent holds %d MiB", rss>>20, len(big)>>20)
	}
	runtime.KeepAlive(big)
}

// TestFleet checks the generated projects: deterministic, T tags each,
// and the tag the lock must name is the newest release of the pin's
// variant, newer than the pin.
func TestFleet(t *testing.T) {
	for _, running := range []bool{false, true} {
		for i := range 60 {
			p := genProject(i, 30, running, 1)
			if q := genProject(i, 30, running, 1); !reflect.DeepEqual(p, q) {
				t.Fatalf("%s: not deterministic", p.Repo)
			}
			if len(p.Tags) != 30 || len(p.TagImage) != 30 {
				t.Fatalf("%s: %d tags, want 30", p.Repo, len(p.Tags))
			}
			if p.image(p.Pin) == nil || p.image(p.Want) == nil {
				t.Fatalf("%s: pin %q or want %q is not a tag", p.Repo, p.Pin, p.Want)
			}
			if p.Follow != "" {
				continue
			}
			s, err := version.ParseScheme(p.Versioning)
			if err != nil {
				t.Fatal(err)
			}
			pv, ok := s.Parse(p.Pin)
			if !ok {
				t.Fatalf("%s: pin %q is no version", p.Repo, p.Pin)
			}
			var newest string
			var nv version.Version
			for _, tag := range p.Tags {
				v, ok := s.Parse(tag)
				if !ok || v.Prerelease() || v.Variant() != pv.Variant() {
					continue
				}
				if newest == "" || version.Compare(v, nv) > 0 {
					newest, nv = tag, v
				}
			}
			if newest != p.Want {
				t.Errorf("%s (%s): newest of variant %s is %q, the fleet says %q", p.Repo, p.Shape, pv.Variant(), newest, p.Want)
			}
			if version.Compare(nv, pv) <= 0 {
				t.Errorf("%s: want %q is not newer than the pin %q", p.Repo, p.Want, p.Pin)
			}
			// What pin fetches is never shared with another repository.
			if p.image(p.Want).Shared || p.image(p.Pin).Shared {
				t.Errorf("%s: the pin or the newest release is a shared image", p.Repo)
			}
		}
	}
	shapes := map[string]bool{}
	for i := range 20 {
		shapes[shapeFor(i)] = true
	}
	if len(shapes) != 6 {
		t.Errorf("shapes in 20 repositories: %v", shapes)
	}
}

// TestProxy runs go-containerregistry through the proxy in front of an
// in-memory registry: the token dance works and requests are counted by
// kind. Counts are deterministic; times are not asserted.
func TestProxy(t *testing.T) {
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	projects := []*project{genProject(16, 12, false, 1)} // multi-arch
	fleet, st, err := seed(context.Background(), addr, projects, 2, true, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if st.Repos != 1 || st.Tags != 12 {
		t.Fatalf("seeded %+v", st)
	}

	px, err := startProxy(addr, time.Millisecond, true)
	if err != nil {
		t.Fatal(err)
	}
	defer px.close()
	p := fleet[0].p
	repo, err := name.NewRepository(px.addr+"/"+p.Repo, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	puller, err := remote.NewPuller()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tags, err := puller.List(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tags, p.Want) {
		t.Fatalf("tags %v lack %s", tags, p.Want)
	}
	desc, err := puller.Get(ctx, repo.Tag(p.Want))
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest.String() != fleet[0].at(p.Want).digest {
		t.Errorf("digest %s, want %s", desc.Digest, fleet[0].at(p.Want).digest)
	}
	if _, err := puller.Head(ctx, repo.Tag(p.Want)); err != nil {
		t.Fatal(err)
	}
	c := px.take()
	want := [nKinds]int64{kPing: 1, kToken: 1, kTags: 1, kManifestGET: 1, kManifestHEAD: 1}
	if c.Kind != want {
		t.Errorf("counts %v, want %v", c.Kind, want)
	}
	if c.Errors != 0 {
		t.Errorf("%d error answers", c.Errors)
	}

	// Without a token the registry is not reached.
	if _, err := remote.List(repo, remote.WithAuth(&authn.Bearer{Token: "nope"})); err == nil {
		t.Error("a forged token was let through")
	}
	// Nor with a token for another repository.
	tok := tokenFor(t, px.addr, "other/repo")
	req, _ := http.NewRequest(http.MethodGet, "http://"+px.addr+"/v2/"+p.Repo+"/tags/list", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a token for other/repo read %s: %s", p.Repo, resp.Status)
	}
	req.Header.Set("Authorization", "Bearer "+tokenFor(t, px.addr, "other/repo "+p.Repo))
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a token for other/repo and %s read it: %s", p.Repo, resp.Status)
	}
}

// tokenFor asks the proxy for a token for the repositories, space-separated.
func tokenFor(t *testing.T, addr, repos string) string {
	t.Helper()
	q := url.Values{}
	for _, r := range strings.Fields(repos) {
		q.Add("scope", "repository:"+r+":pull")
	}
	resp, err := http.Get("http://" + addr + "/token?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Token
}
