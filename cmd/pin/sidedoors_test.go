package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The side doors of the lock and the ordering, each on the repository's
// own incident (offline: the layout mirror and a snapshot of mesh-1). Each
// case exited 0 on the main branch with a lock, or a verdict, that goes
// below a floor.

// TestRenamedModuleKeepsItsFloor: module "forge", locked at 1.27.3 (what
// mesh-1/forgejo ran), is renamed "git" with the same image while its
// container is gone. The lock keeps 1.27.3 for git, the plan says which
// entry git took over, and a removed module's entry stays in the lock,
// retired, until a module takes it over.
func TestRenamedModuleKeepsItsFloor(t *testing.T) {
	dir := incidentLocked(t)
	editFile(t, filepath.Join(dir, "mesh-1.json"), func(s string) string {
		return strings.Replace(s, `"name": "forgejo"`, `"name": "forgejo-old"`, 1)
	})
	rename := func(s string) string { return strings.Replace(s, `module "forge" {`, `module "git" {`, 1) }
	editFile(t, filepath.Join(dir, "catalogue.hcl"), rename)

	r := pin(t, dir, "resolve")
	if r.code != 0 || lockedDigest(t, readLock(t, dir), "git") != forge1273 {
		t.Fatalf("resolve after the rename: exit %d, git %s\n%s%s", r.code, lockedDigest(t, readLock(t, dir), "git"), r.stdout, r.stderr)
	}
	for _, want := range []string{
		"git (at-least-running): add 1.27.3",
		`inherits module "forge" 1.27.3@sha256:fe63af8ae93d (version 1.27.3, built 2026-09-01): its floor is this module's`,
		`forge (at-least-running): taken-over 1.27.3`,
		`module "git" takes over its floor: the entry leaves the lock`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the plan does not say %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(readLock(t, dir), `"forge"`) {
		t.Errorf("forge's entry stayed after git took it over:\n%s", readLock(t, dir))
	}
	if r := pin(t, dir, "resolve", "--check"); r.code != 0 {
		t.Errorf("resolve --check right after: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// exact with the old pin: refused, naming the rule and what to write.
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `module "git" {`, `module "git2" {`, 1)
	})
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `policy  = "at-least-running"`, `policy  = "exact"`, 1)
	})
	before := readLock(t, dir)
	r = pin(t, dir, "resolve")
	if r.code != 1 || !strings.Contains(r.stderr, `module "git2": refusing a downgrade: the exact pin is older than what the previous lock's entry for module "git" names`) ||
		!strings.Contains(r.stderr, "a rename or removal frees no floor") {
		t.Errorf("exact 1.22.6 renamed again: exit %d\n%s", r.code, r.stderr)
	}
	if readLock(t, dir) != before {
		t.Error("a refused run rewrote the lock")
	}
}

// TestRemovedModuleIsRetired: a module removed from the catalogue leaves a
// retired block in the lock, shown in every plan, and its floor holds when
// it comes back.
func TestRemovedModuleIsRetired(t *testing.T) {
	dir := incidentLocked(t)
	cat := filepath.Join(dir, "catalogue.hcl")
	full, err := os.ReadFile(cat)
	if err != nil {
		t.Fatal(err)
	}
	editFile(t, filepath.Join(dir, "mesh-1.json"), func(s string) string {
		return strings.Replace(s, `"name": "forgejo"`, `"name": "forgejo-old"`, 1)
	})
	editFile(t, cat, func(s string) string {
		i := strings.Index(s, "# Pinned at 1.22.6")
		j := strings.Index(s, "# Pinned at 6.10.1")
		return s[:i] + s[j:]
	})
	r := pin(t, dir, "resolve", "--format", "json")
	if r.code != 0 {
		t.Fatalf("resolve without forge: exit %d\n%s", r.code, r.stderr)
	}
	var out planOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	last := out.Modules[len(out.Modules)-1]
	if last.Name != "forge" || last.Change != "retire" || last.Old == nil || last.Old.Digest != forge1273 || !strings.Contains(last.Why, `retired "forge"`) {
		t.Errorf("forge in the plan: %+v", last)
	}
	lock := readLock(t, dir)
	if !strings.Contains(lock, "\nretired \"forge\" {\n") || lockedRetired(t, lock, "forge") != forge1273 {
		t.Fatalf("no retired block for forge:\n%s", lock)
	}
	r = pin(t, dir, "resolve")
	if r.code != 0 || !strings.Contains(r.stdout, "forge (at-least-running): retired 1.27.3") || !strings.Contains(r.stdout, "1 retired") || readLock(t, dir) != lock {
		t.Errorf("the next resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// forge comes back, as it was written: its floor holds.
	writeFile(t, cat, string(full))
	r = pin(t, dir, "resolve")
	if r.code != 0 || lockedDigest(t, readLock(t, dir), "forge") != forge1273 || strings.Contains(readLock(t, dir), "retired") {
		t.Errorf("forge added back: exit %d\n%s%s\n%s", r.code, r.stdout, r.stderr, readLock(t, dir))
	}
}

// lockedRetired is the digest line of retired entry name in a lock.
func lockedRetired(t *testing.T, lock, name string) string {
	t.Helper()
	return lockedDigest(t, strings.Replace(lock, "retired \""+name+"\" {", "module \""+name+"\" {", 1), name)
}

// incidentMirror is a fresh incident (nothing locked) whose layout mirror
// and snapshot are copies in its folder, so that a test may add images
// and edit what mesh-1 runs.
func incidentMirror(t *testing.T) (dir string, p layout.Path) {
	t.Helper()
	dir = incidentDir(t, func(s string) string {
		s = strings.Replace(s, repoRoot+`/examples/incident/mesh-1.json`, "mesh-1.json", 1)
		return strings.Replace(s, repoRoot+`/examples/incident/registry`, "registry", 1)
	})
	if err := os.CopyFS(filepath.Join(dir, "registry"), os.DirFS(filepath.Join(repoRoot, "examples/incident/registry"))); err != nil {
		t.Fatal(err)
	}
	snap, err := os.ReadFile(filepath.Join(repoRoot, "examples/incident/mesh-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "mesh-1.json"), string(snap))
	p, err = layout.FromPath(filepath.Join(dir, "registry"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, p
}

// layoutImage reads the image of manifest digest d from the layout.
func layoutImage(t *testing.T, p layout.Path, d string) v1.Image {
	t.Helper()
	h, err := v1.NewHash(d)
	if err != nil {
		t.Fatal(err)
	}
	img, err := p.Image(h)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// addIndex writes an untagged index of the platforms and images given, in
// that order, to the layout, and returns its digest.
func addIndex(t *testing.T, p layout.Path, entries ...any) string {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for i := 0; i < len(entries); i += 2 {
		pl := entries[i].(v1.Platform)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: entries[i+1].(v1.Image), Descriptor: v1.Descriptor{Platform: &pl}})
	}
	if err := p.AppendIndex(idx); err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// TestMixedIndexPin: forge's exact pin names an index whose linux/amd64
// entry is the 1.22.6 manifest and whose linux/arm64 entry is the 1.27.3
// manifest mesh-1 (linux/amd64) runs. An amd64 pull gets 1.22.6: resolve
// refuses it, and a lock that names it anyway (allow_downgrade) is a
// DOWNGRADE for plan and behind-running for outdated, never SAME. An index
// that lists linux/amd64 twice is refused, naming both entries.
func TestMixedIndexPin(t *testing.T) {
	dir, p := incidentMirror(t)
	root, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := v1.NewHash(forge1273)
	forge, err := root.ImageIndex(h)
	if err != nil {
		t.Fatal(err)
	}
	im, err := forge.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	amd := im.Manifests[0].Digest.String() // the linux/amd64 manifest of 1.27.3
	running, err := forge.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	old := layoutImage(t, p, forge1226)
	linuxAMD := v1.Platform{OS: "linux", Architecture: "amd64"}
	linuxARM := v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	mixed := addIndex(t, p, linuxAMD, old, linuxARM, running)
	twice := addIndex(t, p, linuxAMD, old, linuxAMD, running)
	// mesh-1 runs 1.27.3 by its linux/amd64 manifest (pulled by digest).
	editFile(t, filepath.Join(dir, "mesh-1.json"), func(s string) string {
		s = strings.Replace(s, `"registry.example.org/forge/forgejo:1.27.3"`, `"registry.example.org/forge/forgejo@`+amd+`"`, 1)
		return strings.Replace(s, `"registry.example.org/forge/forgejo@`+forge1273+`"`, `"registry.example.org/forge/forgejo@`+amd+`"`, 1)
	})
	exact := func(pinned, extra string) {
		editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
			i := strings.Index(s, `module "forge" {`)
			j := i + strings.Index(s[i:], "\n}\n")
			return s[:i] + `module "forge" {
  image   = "registry.example.org/forge/forgejo"
  policy  = "exact"
  pin     = "` + pinned + `"
  one_way = true` + extra + `
  runs_on "mesh-1" { container = "forgejo" }` + s[j:]
		})
	}

	exact(mixed, "")
	r := pin(t, dir, "resolve")
	if r.code != 1 || !strings.Contains(r.stderr, `module "forge": refusing a downgrade: the exact pin is older than what mesh-1/forgejo runs`) || !strings.Contains(r.stderr, "(an index: a pull on linux/amd64 gets its entry sha256:e8cb3b3125e6, which is what was ordered)") {
		t.Errorf("exact pin of the mixed index: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "pin.lock.hcl")); err == nil {
		t.Error("a refused run wrote the lock")
	}

	exact(mixed, "\n  allow_downgrade = \"testing the plan\"\n  restore = \"none\"")
	if r := pin(t, dir, "resolve"); r.code != 0 || lockedDigest(t, readLock(t, dir), "forge") != mixed {
		t.Fatalf("with allow_downgrade: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pin(t, dir, "plan", "mesh-1")
	if r.code != 1 || !strings.Contains(r.stdout, "mesh-1/forgejo (module forge): DOWNGRADE") {
		t.Errorf("plan mesh-1 against the mixed index: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pin(t, dir, "outdated")
	if r.code != 1 || !strings.Contains(r.stdout, "behind-running") {
		t.Errorf("outdated against the mixed index: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	os.Remove(filepath.Join(dir, "pin.lock.hcl"))
	exact(twice, "")
	r = pin(t, dir, "resolve")
	if r.code != 3 || !strings.Contains(r.stderr, "lists linux/amd64 twice, as entry 1 (sha256:e8cb3b3125e6) and entry 2 ("+amd[:len("sha256:")+12]+")") {
		t.Errorf("an index listing linux/amd64 twice: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// addImage writes an unlabelled linux/amd64 image built on created to the
// layout as repo:tag, and returns its manifest digest and config digest.
func addImage(t *testing.T, p layout.Path, repo, tag, created string, labels ...string) (string, string) {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	when, err := time.Parse("2006-01-02", created)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", "amd64", v1.Time{Time: when}
	for i := 0; i+1 < len(labels); i += 2 {
		if cf.Config.Labels == nil {
			cf.Config.Labels = map[string]string{}
		}
		cf.Config.Labels[labels[i]] = labels[i+1]
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"io.containerd.image.name": repo + ":" + tag})); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	c, _ := img.ConfigName()
	return d.String(), c.String()
}

// TestHostLocalTag: app's images carry no version label. mesh-1 runs the
// 2024 build the registry serves as 1.22.6, tagged 1.30.0 on the host
// ("docker tag"; the registry has no 1.30.0), mesh-2 runs 1.27.3. The
// host's tag is a claim: resolve refuses it (unknown order), lock
// --from-host does not move the lock from 1.27.3 to it, and plan calls the
// cutover UNKNOWN, as it does for the lock's own claims.
func TestHostLocalTag(t *testing.T) {
	dir, p := incidentMirror(t)
	const repo = "registry.example.org/team/app"
	old, oldCfg := addImage(t, p, repo, "1.22.6", "2024-03-01")
	cur, curCfg := addImage(t, p, repo, "1.27.3", "2026-09-01")
	snapshot := func(hostName, tag, digest, cfg, created string) string {
		return `{"schema": 1, "host": "` + hostName + `", "image_store": "classic",
  "containers": [{"id": "` + strings.Repeat("a", 64) + `", "name": "app", "image": "` + repo + `:` + tag + `", "image_id": "` + cfg + `", "state": "running"}],
  "images": [{"id": "` + cfg + `", "repo_tags": ["` + repo + `:` + tag + `"], "repo_digests": ["` + repo + `@` + digest + `"], "created": "` + created + `T00:00:00Z", "os": "linux", "architecture": "amd64"}]}`
	}
	writeFile(t, filepath.Join(dir, "app-1.json"), snapshot("app-1", "1.27.3", cur, curCfg, "2026-09-01"))
	writeFile(t, filepath.Join(dir, "app-2.json"), snapshot("app-2", "1.27.3", cur, curCfg, "2026-09-01"))
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return s + `
host "app-1" {
  snapshot = "app-1.json"
}

host "app-2" {
  snapshot = "app-2.json"
}

module "app" {
  image  = "` + repo + `"
  policy = "at-least-running"
  runs_on "app-1" { container = "app" }
  runs_on "app-2" { container = "app" }
}
`
	})
	if r := pin(t, dir, "resolve"); r.code != 0 || lockedDigest(t, readLock(t, dir), "app") != cur {
		t.Fatalf("resolve with 1.27.3 on both hosts: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	locked := readLock(t, dir)

	// app-1 now runs the 2024 build, tagged 1.30.0 on the host.
	writeFile(t, filepath.Join(dir, "app-1.json"), snapshot("app-1", "1.30.0", old, oldCfg, "2024-03-01"))
	r := pin(t, dir, "lock", "--from-host", "app-1")
	if r.code != 1 || !strings.Contains(r.stderr, `module "app": refusing`) ||
		!strings.Contains(r.stderr, "only the tag 1.30.0 says the version of "+old[:len("sha256:")+12]) || !strings.Contains(r.stderr, "the registry has no such tag") {
		t.Errorf("lock --from-host app-1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if readLock(t, dir) != locked {
		t.Errorf("lock --from-host moved the lock to the host's claim:\n%s", readLock(t, dir))
	}
	r = pin(t, dir, "resolve")
	if r.code != 1 || !strings.Contains(r.stderr, "only the tag 1.30.0") || readLock(t, dir) != locked {
		t.Errorf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pin(t, dir, "plan", "app-1")
	if r.code != 1 || !strings.Contains(r.stdout, "app-1/app (module app): UNKNOWN") {
		t.Errorf("plan app-1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// editSnapshot rewrites the snapshot file at path through edit, on its
// JSON decoded as maps.
func editSnapshot(t *testing.T, path string, edit func(snap map[string]any)) {
	t.Helper()
	var snap map[string]any
	if err := json.Unmarshal([]byte(readFileT(t, path)), &snap); err != nil {
		t.Fatal(err)
	}
	edit(snap)
	b, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b))
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runForge makes the snapshot's forgejo container run forge tag (a
// manifest of the layout), named name, with labels.
func runForge(t *testing.T, p layout.Path, snap map[string]any, tag, name string, labels map[string]string) {
	t.Helper()
	root, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := root.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	const repo = "registry.example.org/forge/forgejo"
	var img v1.Image
	var d v1.Hash // what the host pulled: the index digest of a multi-platform image
	for _, desc := range im.Manifests {
		if desc.Annotations["io.containerd.image.name"] != repo+":"+tag {
			continue
		}
		d = desc.Digest
		if !desc.MediaType.IsIndex() {
			if img, err = root.Image(desc.Digest); err != nil {
				t.Fatal(err)
			}
			break
		}
		ii, err := root.ImageIndex(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		child, err := ii.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if img, err = ii.Image(child.Manifests[0].Digest); err != nil { // linux/amd64
			t.Fatal(err)
		}
	}
	if img == nil {
		t.Fatalf("no %s:%s in the layout", repo, tag)
	}
	cfgName, _ := img.ConfigName()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	ctr := map[string]any{"id": strings.Repeat("f", 64), "name": name, "image": repo + ":" + tag, "image_id": cfgName.String(), "state": "running"}
	if labels != nil {
		ctr["labels"] = labels
	}
	var ctrs []any
	for _, c := range snap["containers"].([]any) {
		if c.(map[string]any)["name"] != "forgejo" {
			ctrs = append(ctrs, c)
		}
	}
	snap["containers"] = append(ctrs, ctr)
	snap["images"] = append(snap["images"].([]any), map[string]any{"id": cfgName.String(), "repo_tags": []string{repo + ":" + tag},
		"repo_digests": []string{repo + "@" + d.String()}, "created": cf.Created.Time.UTC().Format(time.RFC3339), "labels": cf.Config.Labels,
		"os": "linux", "architecture": "amd64"})
}

// TestResolveModuleRecordsOnlyWhatItDecided: the catalogue gains host
// mesh-2, where a container labelled pin.module=forge runs 1.27.3; mesh-1
// runs forge 1.26.1, locked. "pin resolve packages" decides packages
// alone: the lock's hosts line must not say mesh-2 was read for forge, so
// that "pin lock --from-host mesh-1" refuses forge (naming mesh-2) rather
// than keep it below what mesh-2 runs.
func TestResolveModuleRecordsOnlyWhatItDecided(t *testing.T) {
	dir, p := incidentMirror(t)
	editSnapshot(t, filepath.Join(dir, "mesh-1.json"), func(s map[string]any) { runForge(t, p, s, "1.26.1", "forgejo", nil) })
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, filepath.Join(dir, "mesh-2.json"), `{"schema": 1, "host": "mesh-2", "image_store": "classic", "containers": [], "images": []}`)
	editSnapshot(t, filepath.Join(dir, "mesh-2.json"), func(s map[string]any) {
		s["containers"], s["images"] = []any{}, []any{}
		runForge(t, p, s, "1.27.3", "forgejo-canary", map[string]string{"pin.module": "forge"})
	})
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return s + "\nhost \"mesh-2\" {\n  snapshot = \"mesh-2.json\"\n}\n"
	})
	if r := pin(t, dir, "resolve", "packages"); r.code != 0 || !strings.Contains(readLock(t, dir), "\nhosts = [\"mesh-1\"]\n") {
		t.Fatalf("resolve packages: exit %d\n%s%s\n%s", r.code, r.stdout, r.stderr, readLock(t, dir))
	}
	before := readLock(t, dir)
	r := pin(t, dir, "lock", "--from-host", "mesh-1")
	if r.code != 1 || !strings.Contains(r.stderr, `module "forge": refusing: lock --from-host mesh-1 reads mesh-1 alone, and the lock has no record of what mesh-2 run(s)`) {
		t.Errorf("lock --from-host mesh-1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if readLock(t, dir) != before {
		t.Error("a refused run rewrote the lock")
	}
}

// TestFromHostNothingThereStillRefuses: forge's runs_on gains mesh-2 (a
// host the lock was held against, which ran nothing of forge then, and
// runs 1.27.3 now), while forge's container on mesh-1 is gone: lock
// --from-host mesh-1 reads nothing that changes forge's entry, and still
// refuses, naming mesh-2 (plan mesh-2 says DOWNGRADE), rather than say the
// lock is up to date.
func TestFromHostNothingThereStillRefuses(t *testing.T) {
	dir, p := incidentMirror(t)
	editSnapshot(t, filepath.Join(dir, "mesh-1.json"), func(s map[string]any) { runForge(t, p, s, "1.26.1", "forgejo", nil) })
	// mesh-2 is a host of the catalogue, read by every resolve, running
	// nothing yet.
	writeFile(t, filepath.Join(dir, "mesh-2.json"), `{"schema": 1, "host": "mesh-2", "image_store": "classic", "containers": [], "images": []}`)
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return s + "\nhost \"mesh-2\" {\n  snapshot = \"mesh-2.json\"\n}\n"
	})
	if r := pin(t, dir, "resolve"); r.code != 0 || !strings.Contains(readLock(t, dir), "\nhosts = [\"mesh-1\", \"mesh-2\"]\n") {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	editSnapshot(t, filepath.Join(dir, "mesh-1.json"), func(s map[string]any) {
		var ctrs []any
		for _, c := range s["containers"].([]any) {
			if c.(map[string]any)["name"] != "forgejo" {
				ctrs = append(ctrs, c)
			}
		}
		s["containers"] = ctrs
	})
	editSnapshot(t, filepath.Join(dir, "mesh-2.json"), func(s map[string]any) { runForge(t, p, s, "1.27.3", "forgejo", nil) })
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `  runs_on "mesh-1" { container = "forgejo" }`, `  runs_on "mesh-1" { container = "forgejo" }
  runs_on "mesh-2" { container = "forgejo" }`, 1)
	})
	if r := pin(t, dir, "plan", "mesh-2"); r.code != 1 || !strings.Contains(r.stdout, "DOWNGRADE") {
		t.Fatalf("precondition: plan mesh-2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	before := readLock(t, dir)
	r := pin(t, dir, "lock", "--from-host", "mesh-1")
	if r.code != 1 || !strings.Contains(r.stderr, `module "forge": refusing: lock --from-host mesh-1 reads mesh-1 alone, and the lock has no record of what mesh-2 run(s)`) || strings.Contains(r.stdout, "up to date") {
		t.Errorf("lock --from-host mesh-1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if readLock(t, dir) != before {
		t.Error("a refused run rewrote the lock")
	}
}

// TestConflictingCandidateSkipped: tool follows upstream with nothing
// running; its newest tag 2.0.0 names an image labelled 1.0.0. That
// image's version is unknown: resolve skips it, visibly, for the newest
// tag whose signals agree; outdated reports it (unknown-order), never
// current; with no other tag, resolve refuses.
func TestConflictingCandidateSkipped(t *testing.T) {
	dir, p := incidentMirror(t)
	const repo = "registry.example.org/team/tool"
	one, _ := addImage(t, p, repo, "1.0.0", "2026-01-01", "org.opencontainers.image.version", "1.0.0")
	two, _ := addImage(t, p, repo, "2.0.0", "2026-02-01", "org.opencontainers.image.version", "1.0.0")
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return s + "\nmodule \"tool\" {\n  image  = \"" + repo + "\"\n  policy = \"track-upstream\"\n}\n"
	})
	r := pin(t, dir, "resolve")
	if r.code != 0 || lockedDigest(t, readLock(t, dir), "tool") != one ||
		!strings.Contains(r.stdout, "  skipped  2.0.0@"+two[:len("sha256:")+12]+": conflicting versions: the tag says 2.0.0, the label says 1.0.0, so its version is unknown") {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	validate(t, compileSchemas(t)["plan.schema.json"], "resolve, a candidate skipped", pin(t, dir, "resolve", "--format", "json").stdout)
	r = pin(t, dir, "outdated")
	if r.code != 1 || !strings.Contains(r.stdout, "unknown-order") || !strings.Contains(r.stdout, "upstream offers 2.0.0") {
		t.Errorf("outdated: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Nothing but the conflicting tag, nothing running, nothing locked.
	os.Remove(filepath.Join(dir, "pin.lock.hcl"))
	editFile(t, filepath.Join(dir, "registry", "index.json"), func(s string) string {
		return strings.Replace(s, `"`+repo+`:1.0.0"`, `"`+repo+`-gone:1.0.0"`, 1)
	})
	r = pin(t, dir, "resolve")
	if r.code != 1 || !strings.Contains(r.stderr, `module "tool": refusing: every upstream tag of `+repo+` pin tried (1, newest first) names an image whose own label contradicts it`) {
		t.Errorf("resolve with only the conflicting tag: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestInvisibleDowngradeReason: forge's exact pin 1.22.6 is below the
// 1.27.3 mesh-1 runs; allow_downgrade and restore hold only a zero-width
// space or a word joiner. A reason must contain visible words: the
// catalogue is refused at the line, as a blank reason is, and nothing is
// written.
func TestInvisibleDowngradeReason(t *testing.T) {
	for _, tc := range []struct{ allow, restore, line string }{
		{`\u200b`, "snapshot 2026-09-16", `allow_downgrade = "\u200b"`},
		{"the 1.27 migration broke search", `\u2060`, `restore = "\u2060"`},
	} {
		dir := incidentDir(t, func(s string) string {
			return strings.Replace(s, `policy  = "at-least-running"
  pin     = "1.22.6@`, `policy  = "exact"
  allow_downgrade = "`+tc.allow+`"
  restore = "`+tc.restore+`"
  pin     = "1.22.6@`, 1)
		})
		r := pin(t, dir, "resolve")
		if r.code != 2 || !strings.Contains(r.stderr, "in words (letters or digits)") {
			t.Errorf("%s: exit %d\n%s%s", tc.line, r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "pin.lock.hcl")); err == nil {
			t.Errorf("%s: a refused run wrote the lock", tc.line)
		}
	}
}
