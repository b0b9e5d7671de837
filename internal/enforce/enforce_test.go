package enforce

import (
	"context"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/resolve"
)

func TestParseRef(t *testing.T) {
	const d = "sha256:0123456789012345678901234567890123456789012345678901234567890123"
	for ref, want := range map[string]image.Image{
		"alpine":                          {Repository: "index.docker.io/library/alpine", Tag: "latest"},
		"127.0.0.1:5000/forge/f:1.2":      {Repository: "127.0.0.1:5000/forge/f", Tag: "1.2"},
		"127.0.0.1:5000/forge/f@" + d:     {Repository: "127.0.0.1:5000/forge/f", Digest: d},
		"registry.example.org/f:1.2@" + d: {Repository: "registry.example.org/f", Tag: "1.2", Digest: d},
	} {
		got, err := ParseRef(ref)
		if err != nil || got.Repository != want.Repository || got.Tag != want.Tag || got.Digest != want.Digest {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", ref, got, err, want)
		}
	}
	if _, err := ParseRef("UPPER/case"); err == nil {
		t.Error("an invalid reference was read")
	}
}

type countingRegistry struct{ calls map[string]int }

func (c *countingRegistry) Tags(context.Context, string) ([]string, error) { return nil, nil }
func (c *countingRegistry) Image(_ context.Context, repo, ref, _ string) (image.Image, error) {
	c.calls[ref]++
	if ref == "sha256:gone" {
		return image.Image{}, image.ErrNotFound
	}
	return image.Image{Repository: repo, Digest: ref, Labels: map[string]string{"k": "v"}}, nil
}

// TestMemo: a digest is asked once; tags and errors are asked each time;
// callers cannot change what the memo keeps.
func TestMemo(t *testing.T) {
	reg := &countingRegistry{calls: map[string]int{}}
	m := NewMemo(func(string) resolve.Registry { return reg }, 2)
	ctx := context.Background()
	r := m.For("repo")
	for range 3 {
		img, _ := r.Image(ctx, "repo", "sha256:a", "")
		img.Labels["k"] = "changed"
		r.Image(ctx, "repo", "1.2", "")
		r.Image(ctx, "repo", "sha256:gone", "")
	}
	if img, _ := r.Image(ctx, "repo", "sha256:a", ""); img.Labels["k"] != "v" {
		t.Error("a caller changed the memo's answer")
	}
	if reg.calls["sha256:a"] != 1 || reg.calls["1.2"] != 3 || reg.calls["sha256:gone"] != 3 || m.Asked() != 7 {
		t.Errorf("calls %v, asked %d", reg.calls, m.Asked())
	}
	// Bounded: past its size it starts again.
	r.Image(ctx, "repo", "sha256:b", "")
	r.Image(ctx, "repo", "sha256:c", "")
	r.Image(ctx, "repo", "sha256:a", "")
	if reg.calls["sha256:a"] != 2 {
		t.Errorf("the memo grew past its size: %v", reg.calls)
	}
	if NewMemo(func(string) resolve.Registry { return nil }, 0).For("x") != nil {
		t.Error("no registry became one")
	}
}

// TestCovering uses observe's rules: runs_on container, workload with
// container, selector, and the pin.module label.
func TestCovering(t *testing.T) {
	sel, _ := catalogue.ParseSelector("app=db")
	mods := []*catalogue.Module{
		{Name: "byname", RunsOn: []catalogue.RunsOn{{Host: "h", Container: "forgejo"}}},
		{Name: "byworkload", RunsOn: []catalogue.RunsOn{{Host: "k", Workload: "deployment/web", Container: "web"}}},
		{Name: "byselector", RunsOn: []catalogue.RunsOn{{Host: "k", Selector: sel, SelectorText: "app=db"}}},
		{Name: "bylabel"},
	}
	e := &Enforcer{Catalogue: &catalogue.Catalogue{Modules: mods}}
	names := func(ms []*catalogue.Module) (out []string) {
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	for _, tt := range []struct {
		host string
		c    Candidate
		want string
	}{
		{"h", Candidate{Name: "forgejo"}, "[byname]"},
		{"other", Candidate{Name: "forgejo"}, "[]"},
		{"k", Candidate{Name: "web", Workload: "deployment/web", Pod: "web-(new)"}, "[byworkload]"},
		{"k", Candidate{Name: "sidecar", Workload: "deployment/web", Pod: "web-(new)"}, "[]"},
		{"k", Candidate{Name: "pg", Labels: map[string]string{"app": "db"}, Workload: "statefulset/db", Pod: "db-(new)"}, "[byselector]"},
		{"h", Candidate{Name: "x", Labels: map[string]string{"pin.module": "bylabel"}}, "[bylabel]"},
	} {
		if got := names(e.Covering(tt.host, tt.c)); fmtList(got) != tt.want {
			t.Errorf("%s %+v: %v, want %s", tt.host, tt.c, got, tt.want)
		}
	}
}

func fmtList(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}
