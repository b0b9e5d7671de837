package export

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/imageref"
	"github.com/pin-tool/pin/lock"
)

const forgeManifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: forge}
spec:
  template:
    spec:
      containers:
      - name: forge
        image: registry.example.org/forge/forgejo:1.27
`

// TestKustomizeKeepsComments: comments on the images: line and inside
// the list stay, with the order of the entries and their other keys; the
// locked entry's values change where they are, a missing key is added to
// it, and a second run changes nothing.
func TestKustomizeKeepsComments(t *testing.T) {
	cov, _ := fixture(t)
	refs, _, err := imageref.ManifestRefs("deploy.yaml", []byte(forgeManifest))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, old, want string }{
		{"an entry to update", `resources:
- deploy.yaml
images: # pinned by pin export; busybox by hand
# the shell, held back on purpose
- name: busybox   # see the runbook
  newTag: "1.36"
# forge, from the lock
- name: registry.example.org/forge/forgejo
  newName: registry.example.org/forge/forgejo   # same registry
  newTag: '1.22.6'  # was the pin
# end of images
namespace: forge
`, `resources:
- deploy.yaml
images: # pinned by pin export; busybox by hand
# the shell, held back on purpose
- name: busybox   # see the runbook
  newTag: "1.36"
# forge, from the lock
- name: registry.example.org/forge/forgejo
  newName: registry.example.org/forge/forgejo   # same registry
  newTag: '1.27.3'  # was the pin
  digest: ` + d3 + `
# end of images
namespace: forge
`},
		{"an entry to add, the list indented", `images:
  # by hand
  - name: busybox
    newTag: "1.36"   # held back
resources: [deploy.yaml]
`, `images:
  # by hand
  - name: busybox
    newTag: "1.36"   # held back
  - name: registry.example.org/forge/forgejo
    newName: registry.example.org/forge/forgejo
    newTag: "1.27.3"
    digest: ` + d3 + `
resources: [deploy.yaml]
`},
		{"a flow list", `images: [{name: busybox, newTag: "1.36"}]  # none pinned yet
resources:
- deploy.yaml
`, `images: # none pinned yet
- name: busybox
  newTag: "1.36"
- name: registry.example.org/forge/forgejo
  newName: registry.example.org/forge/forgejo
  newTag: "1.27.3"
  digest: ` + d3 + `
resources:
- deploy.yaml
`},
		{"no list", "resources:\n- deploy.yaml", "resources:\n- deploy.yaml\nimages:\n- name: registry.example.org/forge/forgejo\n  newName: registry.example.org/forge/forgejo\n  newTag: \"1.27.3\"\n  digest: " + d3 + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Kustomize("kustomization.yaml", cov, refs, []byte(tc.old))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(r.Files[0].Bytes)); d != "" {
				t.Fatalf("kustomization (-want +got):\n%s", d)
			}
			again, err := Kustomize("kustomization.yaml", cov, refs, r.Files[0].Bytes)
			if err != nil || again.Files[0].Changed() {
				t.Fatalf("a second run changes it (%v):\n%s", err, again.Files[0].Bytes)
			}
		})
	}
}

// TestKustomizeRuns: the reference a kustomization makes a manifest's
// reference run, as kustomize's images: transformer does it: each entry
// applied in turn to what the ones before made; newName replaces the
// repository only; newTag, digest or both replace the tag and the digest
// together; tagSuffix is appended to the tag; no entry, or one that sets
// nothing, leaves the manifest's. Where is the entry's line when it set
// the tag or digest, else the manifest's.
func TestKustomizeRuns(t *testing.T) {
	const d = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	ref := imageref.Ref{File: "d.yaml", Line: 7, Value: "nginx:1.7.9@" + d}
	for _, c := range []struct {
		images    string
		want, wAt string
	}{
		{"", "nginx:1.7.9@" + d, "d.yaml:7"},
		{"images:\n- name: nginx\n", "nginx:1.7.9@" + d, "d.yaml:7"},
		{"images:\n- name: other\n  newTag: \"9\"\n", "nginx:1.7.9@" + d, "d.yaml:7"},
		{"images:\n- name: nginx\n  newName: mirror/nginx\n", "mirror/nginx:1.7.9@" + d, "d.yaml:7"},
		{"images:\n- name: nginx\n  newTag: 1.22.1\n", "nginx:1.22.1", "k.yaml:2"},
		{"images:\n- name: nginx\n  digest: sha256:22\n", "nginx@sha256:22", "k.yaml:2"},
		{"images:\n- name: nginx\n  newTag: 1.22.1\n  digest: sha256:22\n", "nginx:1.22.1@sha256:22", "k.yaml:2"},
		{"images:\n- name: nginx\n  newName: mirror/nginx\n- name: mirror/nginx\n  newTag: 1.22.1\n", "mirror/nginx:1.22.1", "k.yaml:4"},
		{"images:\n- name: nginx\n  newTag: \"1.8\"\n- name: nginx\n  newTag: 1.22.1\n", "nginx:1.22.1", "k.yaml:4"},
		{"images:\n- name: nginx\n  tagSuffix: -alpine\n", "nginx:1.7.9-alpine@" + d, "k.yaml:2"},
		{"images: [{name: nginx, newTag: 1.22.1}]\n", "nginx:1.22.1", "k.yaml:1"},
	} {
		l, err := readImages("k.yaml", []byte(c.images))
		if err != nil {
			t.Fatalf("%q: %v", c.images, err)
		}
		if got := l.runs(ref); got.Ref != c.want || got.At != c.wAt {
			t.Errorf("%q: %+v, want %s at %s", c.images, got, c.want, c.wAt)
		}
	}
}

// TestKustomizeJudgesEveryReference: the images: entry written for a name
// applies to every manifest reference of it, so each is judged, even one
// whose own module is not locked (left unwritten): its Named is among the
// entry's.
func TestKustomizeJudgesEveryReference(t *testing.T) {
	cat, diags := catalogue.Parse(catalogue.Source{Filename: "c.hcl", Bytes: []byte(`
host "k" {
  kubernetes = { context = "test", namespace = "default" }
}
module "a" {
  image  = "nginx"
  policy = "at-least-running"
  runs_on "k" {
    workload  = "deployment/a"
    container = "nginx"
  }
}
module "b" {
  image  = "nginx"
  policy = "at-least-running"
  runs_on "k" {
    workload  = "deployment/b"
    container = "nginx"
  }
}
`)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cov := NewCoverage(cat, &lock.Lock{Modules: []*lock.Module{{Name: "a", Image: "index.docker.io/library/nginx", Tag: "1.7.9", Digest: d1}}})
	manifest := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.7.9\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b}\nspec:\n  template:\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.22.1\n")
	refs, _, err := imageref.ManifestRefs("d.yaml", manifest)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Kustomize("kustomization.yaml", cov, refs, []byte("resources:\n- d.yaml\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 || !slices.Contains(r.Entries[0].Named, Named{"nginx:1.22.1", "d.yaml:19"}) || !slices.Contains(r.Entries[0].Named, Named{"nginx:1.7.9", "d.yaml:9"}) {
		t.Errorf("entries %+v: want one, naming both references", r.Entries)
	}
}
